/**
 * When a failed delivery is attempted again: a schedule kept as data (the
 * delay before each attempt; the first is immediate), spread by jitter so a
 * receiver coming back is not hit by every retry at once, and never sooner
 * than the receiver's own `Retry-After`. Past the schedule the delivery fails
 * for good (retryable by hand).
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Delay before attempt n+1 (index n): 8 attempts over about 28 hours. */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
];

/** Relative spread of a retry delay: uniform in ±this share. */
export const RETRY_JITTER = 0.1;
/** A `Retry-After` longer than this is not waited for in full. */
export const MAX_RETRY_AFTER_MS = 24 * HOUR;
/** An endpoint whose deliveries have failed for this long is deactivated. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * HOUR;

/** `Retry-After` in ms (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, now: Date): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * SECOND, MAX_RETRY_AFTER_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now.getTime()), MAX_RETRY_AFTER_MS);
}

/**
 * Delay before the next attempt after `attemptsMade` attempts, or null when
 * the schedule is spent. `random` is uniform in [0, 1).
 */
export function nextRetryDelay(
  attemptsMade: number,
  retryAfter: number | undefined,
  random: () => number,
  schedule: readonly number[] = RETRY_SCHEDULE_MS,
): number | null {
  if (attemptsMade >= schedule.length) return null;
  const base = schedule[attemptsMade] ?? 0;
  const jittered = Math.round(base * (1 + RETRY_JITTER * (2 * random() - 1)));
  return Math.max(jittered, retryAfter ?? 0);
}
