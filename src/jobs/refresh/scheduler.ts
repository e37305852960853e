/**
 * Scheduled refresh cycles (SPEC "Data freshness rules" 2): search every 4–6 h
 * (a fresh random delay each time, so nodes and cycles do not synchronise),
 * buildings every 24 h. Intervals are in clock time; `speed` converts them to
 * real timer delays, so the demo's simulated clock (SIM_SPEED) speeds the
 * schedule up with it.
 */
import type { Logger } from 'pino';
import { type Clock, HOUR_MS } from '../../platform/clock.ts';
import type { Refresher } from './refresher.ts';

export interface RefreshSchedule {
  searchMinMs: number;
  searchMaxMs: number;
  buildingsMs: number;
}

export const DEFAULT_SCHEDULE: RefreshSchedule = Object.freeze({
  searchMinMs: 4 * HOUR_MS,
  searchMaxMs: 6 * HOUR_MS,
  buildingsMs: 24 * HOUR_MS,
});

export interface SchedulerOptions {
  schedule?: RefreshSchedule;
  /** Clock milliseconds per real millisecond (1 outside the simulated demo). */
  speed?: number;
  random?: () => number;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** When the data was last refreshed: a cycle overdue at start runs at once. */
  lastSearchRefresh?: () => Promise<string | null>;
}

export class RefreshScheduler {
  private readonly schedule: RefreshSchedule;
  private readonly speed: number;
  private readonly random: () => number;
  private readonly log: Pick<Logger, 'info' | 'warn' | 'error'> | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = true;

  constructor(
    private readonly refresher: Refresher,
    private readonly clock: Clock,
    private readonly options: SchedulerOptions = {},
  ) {
    this.schedule = options.schedule ?? DEFAULT_SCHEDULE;
    this.speed = options.speed ?? 1;
    this.random = options.random ?? Math.random;
    this.log = options.log;
  }

  /** The clock-time delay before the next search cycle: uniform in [min, max]. */
  nextSearchDelayMs(): number {
    const { searchMinMs, searchMaxMs } = this.schedule;
    return searchMinMs + this.random() * (searchMaxMs - searchMinMs);
  }

  async start(): Promise<void> {
    this.stopped = false;
    const last = (await this.options.lastSearchRefresh?.()) ?? null;
    const overdue =
      last === null || this.clock.now().getTime() - Date.parse(last) >= this.schedule.searchMinMs;
    this.after(overdue ? 0 : this.nextSearchDelayMs(), () => this.searchCycle());
    this.after(this.schedule.buildingsMs, () => this.buildingsCycle());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.refresher.idle();
  }

  private async searchCycle(): Promise<void> {
    try {
      await this.refresher.replicate();
    } catch (error) {
      this.refresher.recordFailure(error);
      this.log?.warn({ err: error }, 'scheduled search refresh failed; next attempt on schedule');
    }
    this.after(this.nextSearchDelayMs(), () => this.searchCycle());
  }

  private async buildingsCycle(): Promise<void> {
    try {
      await this.refresher.refreshBuildings();
    } catch (error) {
      this.refresher.recordFailure(error);
      this.log?.warn({ err: error }, 'scheduled buildings refresh failed; next attempt on schedule');
    }
    this.after(this.schedule.buildingsMs, () => this.buildingsCycle());
  }

  private after(clockMs: number, run: () => Promise<void>): void {
    if (this.stopped) return;
    // setTimeout's ceiling is 2^31-1 ms; a longer wait would fire at once.
    const delay = Math.min(2 ** 31 - 1, Math.max(0, Math.round(clockMs / this.speed)));
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void run();
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }
}
