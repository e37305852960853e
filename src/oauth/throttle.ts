import type { Clock } from '../platform/clock.ts';
import type { Limits } from '../platform/limits/limits.ts';
import { OAuthError } from './errors.ts';

/**
 * Per-IP budgets of the OAuth endpoints, outside the REST key metering: they
 * bound registration spam, token-endpoint hammering and API-key guessing on
 * the consent page (counted by failures only).
 */
export const OAUTH_RATES = {
  register: 20,
  token: 60,
  authorize: 60,
  failedKeys: 10,
} as const;

function unavailable(): OAuthError {
  return new OAuthError(
    'temporarily_unavailable',
    'Rate limiting is temporarily unavailable; retry shortly',
    {
      status: 503,
      retryAfter: 1,
    },
  );
}

function refused(resetAt: number, clock: Clock, what: string): OAuthError {
  const retryAfter = Math.max(1, Math.ceil((resetAt - clock.now().getTime()) / 1000));
  return new OAuthError('slow_down', `Too many ${what} from this address; retry in ${retryAfter} s`, {
    status: 429,
    retryAfter,
  });
}

/** Counts one request in the bucket; throws a 429 past `perMinute` (a 503 when the backend is away). */
export async function throttle(
  limits: Limits,
  clock: Clock,
  bucket: string,
  perMinute: number,
  what: string,
): Promise<void> {
  let decision: Awaited<ReturnType<Limits['rate']['consume']>>;
  try {
    decision = await limits.rate.consume(bucket, perMinute);
  } catch {
    throw unavailable();
  }
  if (!decision.allowed) throw refused(decision.resetAt, clock, what);
}

/** Whether the bucket is already past `perMinute`, without counting (throws like `throttle`). */
export async function assertNotThrottled(
  limits: Limits,
  clock: Clock,
  bucket: string,
  perMinute: number,
  what: string,
): Promise<void> {
  let decision: Awaited<ReturnType<Limits['rate']['peek']>>;
  try {
    decision = await limits.rate.peek(bucket, perMinute);
  } catch {
    throw unavailable();
  }
  if (decision.remaining <= 0) throw refused(decision.resetAt, clock, what);
}
