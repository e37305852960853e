import { type Clock, systemClock } from '../../platform/clock.ts';
import { memoryRateLimiter, type RateLimiter } from '../../platform/limits/limits.ts';

/**
 * Why a render was not started: the client spent its per-minute render budget
 * (`budget`), or already has as many renders under way as it may (`pending`).
 * An expected outcome, returned as a value; the routes answer it with 429.
 */
export interface RenderRefusal {
  readonly refused: 'budget' | 'pending';
  /** The limit that refused: renders per minute, or renders under way at once. */
  readonly limit: number;
  /** Seconds until the client may render again (Retry-After). */
  readonly retryAfterSeconds: number;
}

export function isRenderRefusal(value: object): value is RenderRefusal {
  return 'refused' in value;
}

/** A render the client may start; `release` when it is done (rendered and written, or failed). */
export interface RenderTicket {
  release(): void;
}

export interface RenderBudgetOptions {
  /** The limits backend's windows (in memory, or Redis shared by every process). */
  readonly limiter: RateLimiter;
  /** New renders a client may cause per one-minute window (PHOTO_RENDERS_PER_MINUTE). */
  readonly perMinute: number;
  /** Renders of one client under way at once (waiting for a render slot or running). */
  readonly maxPendingPerClient: number;
  /** How long to wait for the limiter before counting in this process instead. */
  readonly limiterDeadlineMs?: number;
  /**
   * The limiter failed or missed its deadline, and the render was counted in
   * this process. Told of the first failure, then at most once a minute while
   * failures go on (an outage must not log once per image).
   */
  readonly onLimiterFailure?: (error: unknown) => void;
  /** The wall clock the limiter's reset times are on (Retry-After is measured against it). */
  readonly wallClock?: Clock;
}

/** Renders per client are counted under this prefix, apart from the request windows in the same backend. */
const BUDGET_PREFIX = 'photo-render:';
const DEFAULT_LIMITER_DEADLINE_MS = 500;
const FAILURE_REPORT_INTERVAL_MS = 60_000;

/**
 * Admission of new renders (cache misses), per client. Hits never come here:
 * serving what is on disk is cheap and stays unmetered, so a page of
 * thumbnails loads; a miss costs a render (CPU, a libuv thread, memory for the
 * original) and a file that takes cache space, so each client gets
 * `perMinute` of them and at most `maxPendingPerClient` at once.
 *
 * The budget lives where the request windows do (`limits.rate`: in memory, or
 * Redis shared by every process). When that backend fails or is slow, the
 * render is counted in this process instead, with the same budget: renders
 * stay metered, and images keep loading while Redis is away.
 */
export class RenderAdmission {
  private readonly pending = new Map<string, number>();
  private readonly local: RateLimiter;
  private readonly wallClock: Clock;
  private readonly deadlineMs: number;
  private lastFailureReport = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: RenderBudgetOptions) {
    this.deadlineMs = options.limiterDeadlineMs ?? DEFAULT_LIMITER_DEADLINE_MS;
    this.wallClock = options.wallClock ?? systemClock;
    this.local = memoryRateLimiter(this.wallClock);
  }

  /** A ticket for one render charged to `client`, or why not. */
  async admit(client: string): Promise<RenderTicket | RenderRefusal> {
    const { maxPendingPerClient, perMinute } = this.options;
    const pending = this.pending.get(client) ?? 0;
    if (pending >= maxPendingPerClient) {
      return { refused: 'pending', limit: maxPendingPerClient, retryAfterSeconds: 1 };
    }
    // Held while the budget is asked, so concurrent misses cannot all pass the check above.
    this.pending.set(client, pending + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.pending.get(client) ?? 1) - 1;
      if (left > 0) this.pending.set(client, left);
      else this.pending.delete(client);
    };
    const decision = await this.consume(`${BUDGET_PREFIX}${client}`, perMinute);
    if (decision.allowed) return { release };
    release();
    return {
      refused: 'budget',
      limit: perMinute,
      retryAfterSeconds: Math.max(1, Math.ceil((decision.resetAt - this.wallClock.now().getTime()) / 1000)),
    };
  }

  private async consume(bucket: string, perMinute: number): Promise<{ allowed: boolean; resetAt: number }> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`render budget limiter did not answer within ${this.deadlineMs} ms`)),
        this.deadlineMs,
      );
    });
    try {
      return await Promise.race([this.options.limiter.consume(bucket, perMinute), deadline]);
    } catch (error) {
      const now = Date.now();
      if (now - this.lastFailureReport >= FAILURE_REPORT_INTERVAL_MS) {
        this.lastFailureReport = now;
        this.options.onLimiterFailure?.(error);
      }
      return this.local.consume(bucket, perMinute);
    } finally {
      clearTimeout(timer);
    }
  }
}
