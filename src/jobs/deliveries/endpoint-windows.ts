/**
 * How many attempts the delivery worker keeps in flight to each endpoint (a
 * subscription): a window that opens while the endpoint answers 2xx quickly
 * (1, 2, 4, … up to `max`) and closes back to one on any failure or slow
 * answer, as TCP's congestion window does.
 *
 * One attempt at a time per endpoint made a burst (a refresh cycle writes
 * hundreds to thousands of events at once) wait for as many round trips in a
 * row: ~2 ms each on loopback, so seconds from the refresh commit to the last
 * delivery. A healthy receiver now takes a burst in parallel, while a slow or
 * failing one still holds a single slot of the pool, as before.
 *
 * Order was never promised (a retry reorders anyway): receivers order by the
 * payload's `sequence` and deduplicate on `webhook-id`.
 */

/** What an attempt said about its endpoint. */
export type EndpointSignal = 'fast' | 'slow' | 'failed';

/** Most attempts in flight to one endpoint, reached after three quick 2xx answers in a row. */
export const ENDPOINT_WINDOW_MAX = 8;
/** A 2xx answer slower than this closes the window as a failure does. */
export const SLOW_ANSWER_MS = 1_000;

export class EndpointWindows {
  private readonly windows = new Map<string, number>();
  private readonly taken = new Map<string, number>();
  private takenTotal = 0;

  constructor(
    readonly max: number = ENDPOINT_WINDOW_MAX,
    readonly slowMs: number = SLOW_ANSWER_MS,
  ) {}

  /** Slots taken across every endpoint: attempts in flight plus claims being made. */
  get used(): number {
    return this.takenTotal;
  }

  /** Slots `subscriptionId` may still take. */
  free(subscriptionId: string): number {
    return this.windowOf(subscriptionId) - (this.taken.get(subscriptionId) ?? 0);
  }

  /** Endpoints with no free slot: a pass claims nothing for them. */
  full(): string[] {
    const ids: string[] = [];
    for (const [id, n] of this.taken) if (n >= this.windowOf(id)) ids.push(id);
    return ids;
  }

  take(subscriptionId: string, slots = 1): void {
    if (slots <= 0) return;
    this.taken.set(subscriptionId, (this.taken.get(subscriptionId) ?? 0) + slots);
    this.takenTotal += slots;
  }

  give(subscriptionId: string, slots = 1): void {
    if (slots <= 0) return;
    const left = (this.taken.get(subscriptionId) ?? 0) - slots;
    this.takenTotal -= slots;
    if (left > 0) this.taken.set(subscriptionId, left);
    else this.taken.delete(subscriptionId);
  }

  /** A quick 2xx doubles the window (up to `max`); a slow answer or a failure closes it to one. */
  signal(subscriptionId: string, signal: EndpointSignal): void {
    if (signal === 'fast') {
      this.windows.set(subscriptionId, Math.min(this.max, this.windowOf(subscriptionId) * 2));
    } else {
      // One is every endpoint's default: nothing to remember.
      this.windows.delete(subscriptionId);
    }
  }

  /** What a 2xx answer after `latencyMs` says: quick enough to open the window further, or not. */
  classifyAnswer(latencyMs: number): EndpointSignal {
    return latencyMs < this.slowMs ? 'fast' : 'slow';
  }

  windowOf(subscriptionId: string): number {
    return this.windows.get(subscriptionId) ?? 1;
  }

  /** Forgets an endpoint that has nothing in flight (deleted subscriptions do not pile up). */
  forget(subscriptionId: string): void {
    if (!this.taken.has(subscriptionId)) this.windows.delete(subscriptionId);
  }
}
