/** Time source. Injected everywhere time matters so expiry, freshness and quotas are testable. */
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

export { DAY_MS, HOUR_MS, MINUTE_MS } from '../domain/time.ts';

/** `YYYY-MM-DD` of an instant, in UTC. */
export function isoDate(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 10);
}
