import { type Clock, systemClock } from '../../platform/clock.ts';

export interface ScaledClockOptions {
  /** The simulated instant at the moment the clock is made. */
  anchor: Date | number;
  /** Simulated milliseconds per real millisecond (60: a simulated hour per real minute). */
  speed: number;
  /** The real time source (injected in tests). */
  real?: Clock;
}

/**
 * Simulated time running `speed` times faster than a real clock from an
 * anchor: simulated = anchor + (real − real at construction) × speed. The demo
 * runs the market simulator and the refresh schedule on one such clock.
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

  /** Real milliseconds until the simulated clock reaches `simulatedMs` (0 when already past). */
  realDelayUntil(simulatedMs: number): number {
    return Math.max(0, (simulatedMs - this.now().getTime()) / this.speed);
  }
}
