/**
 * One runtime for every scheduled background job: a named async `run()`
 * repeated on an interval, with the same rules everywhere.
 *
 * - **Clock time.** Intervals, jitter and `lastRunAt` are in the service's clock
 *   time. The real timer waits `clock delay / speed`, where `speed` is clock
 *   milliseconds per real millisecond: 1 in production, SIM_SPEED in the demo,
 *   whose simulated market clock runs faster than real time. This is the only
 *   place that conversion happens.
 * - **Overdue at start.** `start()` reads `lastRunAt()`: a job that never ran, or
 *   whose last run is at least `overdueAfterMs` old, runs at once; otherwise it
 *   waits only the rest of its interval (never more than one interval).
 * - **Spacing.** The next delay is measured from the end of a run, so a slow run
 *   never makes runs pile up.
 * - **Single-flight.** A run never overlaps itself. `trigger()` during a run
 *   coalesces into one follow-up run started as soon as the current one ends.
 * - **Errors** go to `onError` (and `status().lastError`); the schedule goes on.
 * - **Stop** clears the timer, aborts the running run's signal (a long run may
 *   end early at a safe point) and resolves once that run has finished.
 */
import { type Clock, systemClock } from '../clock.ts';

/** setTimeout's ceiling: a longer delay is waited in steps of at most this. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Timer functions, injectable so tests can drive time. Delays are real milliseconds. */
export interface TimerApi {
  set(callback: () => void, delayMs: number): unknown;
  clear(handle: unknown): void;
}

/** Node's timers, unref'd: a pending background job never keeps the process alive. */
export const realTimers: TimerApi = {
  set: (callback, delayMs) => {
    const timer = setTimeout(callback, delayMs);
    timer.unref();
    return timer;
  },
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Random spread added to every delay, so nodes (and jobs) started together do
 * not run in lockstep: the delay becomes uniform in [delay − s, delay + s] with
 * s = `ratio` × delay or s = `ms`, and never below 0.
 */
export type Jitter = { readonly ratio: number } | { readonly ms: number };

/** A failed run as health reports it. */
export interface JobFailure {
  /** Clock time of the failure (ISO 8601). */
  at: string;
  /** The error's `kind` when it has one (e.g. an upstream error), else 'internal'. */
  kind: string;
  /** The error message; may name upstream details, so expose it only to operators. */
  message: string;
}

export interface PeriodicJobStatus {
  name: string;
  /** Whether a run is in progress. */
  running: boolean;
  /** Clock time the latest run started, or the persisted last run read at start; null when never. */
  lastRunAt: string | null;
  /** The most recent failure (kept after later successes; compare `at` with `lastRunAt`). */
  lastError: JobFailure | null;
  /** Clock time the next scheduled run is due; null while running or stopped. */
  nextRunAt: string | null;
  /** What the job's work reports of its progress (e.g. a backfill's coverage); null when it reports none. */
  progress: JobProgress | null;
}

/** A job's progress as health shows it: flat, serializable figures named by the job. */
export type JobProgress = Readonly<Record<string, string | number | boolean | null>>;

/** What every schedule shares: the time source and error reporting. */
export interface JobEnvironment {
  /** The service clock (simulated in the demo); default: the system clock. */
  clock?: Clock;
  /** Clock milliseconds per real millisecond; default 1. Must be positive. */
  speed?: number;
  /** Called with every error a run throws (and a failed `lastRunAt()` read); must not throw. */
  onError?: (error: unknown) => void;
  timers?: TimerApi;
  /** Uniform in [0, 1); drives jitter. Default Math.random. */
  random?: () => number;
}

export interface PeriodicJobOptions extends JobEnvironment {
  /** Names the job in status and logs. */
  name: string;
  /**
   * The work. `signal` aborts when the job is stopped: a long run should end at
   * its next safe point. A rejection is reported and the schedule continues.
   */
  run: (signal: AbortSignal) => Promise<unknown>;
  /** Clock ms from the end of one run to the next: fixed, or a function drawing each delay. */
  interval: number | (() => number);
  jitter?: Jitter;
  /**
   * When the job last ran, as persisted by its work (null: never). Without it
   * the job runs at once on start.
   */
  lastRunAt?: () => Promise<Date | string | null>;
  /**
   * Age (clock ms) of the last run from which the job is overdue at start;
   * default: the first drawn delay. Set it to the window's minimum when the
   * interval is a random window.
   */
  overdueAfterMs?: number;
  /** The work's progress for `status()`, read when status is asked; must be cheap and not throw. */
  progress?: () => JobProgress | null;
}

interface FollowUp {
  promise: Promise<void>;
  resolve: () => void;
}

export class PeriodicJob {
  readonly name: string;
  private readonly options: PeriodicJobOptions;
  private readonly clock: Clock;
  private readonly speed: number;
  private readonly timers: TimerApi;
  private readonly random: () => number;
  private active = false;
  /** Changes on every start and stop: a start that was overtaken by them gives up. */
  private generation = 0;
  private controller: AbortController | null = null;
  private timer: unknown = null;
  private nextRunAtMs: number | null = null;
  private current: Promise<void> | null = null;
  private followUp: FollowUp | null = null;
  private lastRunAtMs: number | null = null;
  private lastError: JobFailure | null = null;

  constructor(options: PeriodicJobOptions) {
    const speed = options.speed ?? 1;
    if (!(speed > 0) || !Number.isFinite(speed))
      throw new RangeError(`job ${options.name}: speed must be > 0`);
    if (typeof options.interval === 'number') assertDelay(options.name, options.interval);
    if (options.jitter) {
      const spread = 'ratio' in options.jitter ? options.jitter.ratio : options.jitter.ms;
      const max = 'ratio' in options.jitter ? 1 : Number.POSITIVE_INFINITY;
      if (!(spread >= 0 && spread <= max)) throw new RangeError(`job ${options.name}: invalid jitter`);
    }
    this.name = options.name;
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.speed = speed;
    this.timers = options.timers ?? realTimers;
    this.random = options.random ?? Math.random;
  }

  /**
   * Starts the schedule: reads `lastRunAt()` and arms the first run (at once
   * when overdue). Resolves once armed, not when the first run ends. A second
   * call while started does nothing.
   */
  async start(): Promise<void> {
    if (this.active) return;
    this.active = true;
    const generation = ++this.generation;
    this.controller = new AbortController();
    const firstDelay = await this.firstDelay();
    if (!this.active || generation !== this.generation) return;
    // A trigger() while we read lastRunAt already ran (or arms the next run when it ends).
    if (this.current !== null || this.timer !== null) return;
    this.arm(firstDelay);
  }

  /**
   * Clears the timer, aborts the running run's signal and resolves once that
   * run has finished. A coalesced follow-up is dropped (its trigger resolves).
   */
  async stop(): Promise<void> {
    this.active = false;
    this.generation++;
    this.disarm();
    this.controller?.abort();
    await this.current;
  }

  /**
   * Runs now, out of schedule; the next scheduled run then counts from its end.
   * During a run it coalesces: however many triggers arrive, one follow-up run
   * starts when the current run ends. Resolves when the run that serves this
   * trigger has finished (its errors go to `onError`, never to the caller). A
   * job that is not started ignores it.
   */
  trigger(): Promise<void> {
    if (!this.active) return Promise.resolve();
    if (this.current === null) return this.execute();
    if (!this.followUp) {
      let resolve: () => void = () => {};
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.followUp = { promise, resolve };
    }
    return this.followUp.promise;
  }

  status(): PeriodicJobStatus {
    return {
      name: this.name,
      running: this.current !== null,
      lastRunAt: isoOrNull(this.lastRunAtMs),
      lastError: this.lastError,
      nextRunAt: isoOrNull(this.nextRunAtMs),
      progress: this.options.progress?.() ?? null,
    };
  }

  // ---- internals -----------------------------------------------------------

  /** The clock-time wait before the first run. */
  private async firstDelay(): Promise<number> {
    let last: number | null = null;
    if (this.options.lastRunAt) {
      try {
        last = toEpochMs(await this.options.lastRunAt());
      } catch (error) {
        // Unknown is treated as never: running once too often beats never running.
        this.recordFailure(error);
      }
    }
    if (last === null) return 0;
    this.lastRunAtMs = last;
    const delay = this.drawDelay();
    const elapsed = this.clock.now().getTime() - last;
    if (elapsed >= (this.options.overdueAfterMs ?? delay)) return 0;
    // A last run "in the future" (clock skew, a restarted simulated clock) waits one interval at most.
    return Math.min(delay, Math.max(0, delay - elapsed));
  }

  /** The next interval with jitter applied, in clock ms. */
  private drawDelay(): number {
    const { interval, jitter } = this.options;
    const base = typeof interval === 'number' ? interval : interval();
    assertDelay(this.name, base);
    if (!jitter) return base;
    const spread = 'ratio' in jitter ? jitter.ratio * base : jitter.ms;
    return Math.max(0, base + (this.random() * 2 - 1) * spread);
  }

  /** Arms the timer for a run `clockDelayMs` of clock time from now. */
  private arm(clockDelayMs: number): void {
    this.nextRunAtMs = this.clock.now().getTime() + clockDelayMs;
    this.armReal(Math.max(0, Math.round(clockDelayMs / this.speed)));
  }

  /** Arms the timer `realMs` (a whole number) from now, in steps the timer can take. */
  private armReal(realMs: number): void {
    const step = Math.min(MAX_TIMER_MS, realMs);
    this.timer = this.timers.set(() => {
      this.timer = null;
      if (realMs - step > 0) this.armReal(realMs - step);
      else if (this.active && this.current === null) void this.execute();
    }, step);
  }

  private disarm(): void {
    if (this.timer !== null) this.timers.clear(this.timer);
    this.timer = null;
    this.nextRunAtMs = null;
  }

  /** Starts a run; the caller has checked that none is in progress. */
  private execute(): Promise<void> {
    this.disarm();
    const signal = (this.controller ?? new AbortController()).signal;
    this.lastRunAtMs = this.clock.now().getTime();
    const done = this.invoke(signal).then(() => this.afterRun());
    this.current = done;
    return done;
  }

  private async invoke(signal: AbortSignal): Promise<void> {
    try {
      await this.options.run(signal);
    } catch (error) {
      this.recordFailure(error);
    }
  }

  private afterRun(): void {
    this.current = null;
    const followUp = this.followUp;
    this.followUp = null;
    if (!this.active) {
      followUp?.resolve();
      return;
    }
    if (followUp) {
      void this.execute().then(followUp.resolve);
      return;
    }
    try {
      this.arm(this.drawDelay());
    } catch (error) {
      // Only an interval function returning nonsense gets here: report it, stay unscheduled.
      this.recordFailure(error);
    }
  }

  private recordFailure(error: unknown): void {
    this.lastError = {
      at: this.clock.now().toISOString(),
      kind: errorKind(error),
      message: error instanceof Error ? error.message : String(error),
    };
    try {
      this.options.onError?.(error);
    } catch {
      // A failing error reporter must not break the schedule.
    }
  }
}

function assertDelay(name: string, delay: number): void {
  if (!(delay >= 0) || !Number.isFinite(delay))
    throw new RangeError(`job ${name}: interval must be a finite number ≥ 0, got ${delay}`);
}

function toEpochMs(value: Date | string | null): number | null {
  if (value === null) return null;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function errorKind(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'kind' in error && typeof error.kind === 'string')
    return error.kind;
  return 'internal';
}
