/**
 * Background threads give way to the request thread while it serves.
 *
 * The request thread counts the requests it begins (`noteServingRequest`)
 * into memory it shares with every worker thread it starts
 * (`startModuleWorker` hands the buffer over in `workerData`). A background
 * worker (`runBehindRequests` in ./threads.ts) reads the count between its
 * slices of work (`yieldToEventLoop`, ../yield.ts): while requests keep
 * arriving it rests after each slice, so it works at most `BACKGROUND_DUTY`
 * of the time; when they stop it runs flat out again.
 *
 * Why not the scheduler alone (the workers run at nice 10): on the VMs this
 * runs on, a niced worker still got 60–75% of a CPU under load, because the
 * request thread and the load generator leave the other vCPU idle between
 * requests, and a busy sibling vCPU still slows the request thread (shared
 * core, caches and memory bandwidth; its garbage collection runs on V8's
 * helper thread at normal priority). Measured with `/v1/areas` at 10
 * connections during the market-history backfill: see README, "Background
 * work gives way to requests".
 */

/** Share of the time a background thread works while requests arrive. */
export const BACKGROUND_DUTY = 0.25;
/** Requests seen within this window mean the request thread is serving. */
const SERVING_WINDOW_MS = 100;
/** The longest rest taken at once: a slice that ran long is not repaid in one stall of the job. */
const MAX_REST_MS = 40;

/** The count of requests begun by this process's request thread (wraps around; only changes matter). */
const serving = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));

/** Called by the request thread for every request it begins. */
export function noteServingRequest(): void {
  Atomics.add(serving, 0, 1);
}

/** The shared count, for a worker thread to pace itself by (`BackgroundPacer`). */
export function servingActivityBuffer(): SharedArrayBuffer {
  return serving.buffer as SharedArrayBuffer;
}

/**
 * How long a background thread rests before its next slice. Time worked while
 * the request thread serves becomes a debt of rest (`(1 − duty) / duty` of it);
 * the debt is paid in rests of at least a millisecond (a timer's resolution),
 * so many short slices rest as much as one long one. Only a quiet request
 * thread, `SERVING_WINDOW_MS` without a new request, clears the debt.
 */
export class BackgroundPacer {
  private readonly activity: Int32Array;
  private seen: number;
  private lastServingAt = Number.NEGATIVE_INFINITY;
  private sliceStart: number;
  private debtMs = 0;

  constructor(
    buffer: SharedArrayBuffer,
    private readonly duty: number = BACKGROUND_DUTY,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.activity = new Int32Array(buffer);
    this.seen = Atomics.load(this.activity, 0);
    this.sliceStart = this.now();
  }

  /** Milliseconds to rest now, at the end of a slice (0: go on at once). */
  restMs(): number {
    const now = this.now();
    const count = Atomics.load(this.activity, 0);
    if (count !== this.seen) {
      this.seen = count;
      this.lastServingAt = now;
    }
    if (now - this.lastServingAt > SERVING_WINDOW_MS) {
      this.debtMs = 0;
      this.sliceStart = now;
      return 0;
    }
    this.debtMs += (Math.max(0, now - this.sliceStart) * (1 - this.duty)) / this.duty;
    if (this.debtMs < 1) {
      this.sliceStart = now;
      return 0;
    }
    const rest = Math.min(MAX_REST_MS, this.debtMs);
    this.debtMs -= rest;
    // The next slice starts when the rest ends.
    this.sliceStart = now + rest;
    return rest;
  }
}
