/**
 * Time source. Injected everywhere time matters so expiry, freshness and quotas
 * are testable. A process has two (see README "Two clocks"): the wall clock for
 * everything about callers (keys, rate windows, quotas, `health.time`) and the
 * market clock for the market and the times it produces (simulated in the demo).
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = {
  now: () => new Date(),
};

/** A clock that moves only when told to: for tests and deterministic tools. */
export class ManualClock implements Clock {
  private current: number;

  constructor(start: Date | string | number) {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  set(to: Date | string | number): void {
    this.current = new Date(to).getTime();
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

export interface ScaledClockOptions {
  /** The clock's instant at the moment it is made. */
  anchor: Date | number;
  /** Clock milliseconds per real millisecond (60: an hour per real minute; 1: real time). */
  speed: number;
  /** The real time source (injected in tests). */
  real?: Clock;
}

/**
 * Time running `speed` times faster than a real clock from an anchor:
 * now = anchor + (real − real at construction) × speed. The market clock is
 * one: SIM_SPEED × real time in the live demo, 1× from where the store's data
 * left off otherwise (see upstream/configured-upstream.ts).
 */
export class ScaledClock implements Clock {
  readonly anchor: number;
  readonly speed: number;
  private readonly real: Clock;
  private readonly realStart: number;

  constructor(options: ScaledClockOptions) {
    if (!(options.speed > 0 && Number.isFinite(options.speed))) {
      throw new RangeError(`clock speed must be a positive number, got ${options.speed}`);
    }
    this.anchor = new Date(options.anchor).getTime();
    if (Number.isNaN(this.anchor)) throw new RangeError('clock anchor is not a valid instant');
    this.speed = options.speed;
    this.real = options.real ?? systemClock;
    this.realStart = this.real.now().getTime();
  }

  now(): Date {
    return new Date(Math.floor(this.anchor + (this.real.now().getTime() - this.realStart) * this.speed));
  }

  /** Real milliseconds until the clock reaches `clockMs` (0 when already past). */
  realDelayUntil(clockMs: number): number {
    return Math.max(0, (clockMs - this.now().getTime()) / this.speed);
  }
}

export { DAY_MS, HOUR_MS, MINUTE_MS } from '../domain/time.ts';

/** `YYYY-MM-DD` of an instant, in UTC. */
export function isoDate(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 10);
}
