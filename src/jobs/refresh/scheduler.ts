/**
 * Scheduled refresh cycles (SPEC "Data freshness rules" 2): search every 4–6 h
 * (a fresh random delay each time, so nodes and cycles do not synchronise),
 * buildings every 24 h. Both are PeriodicJobs, so intervals are in clock time
 * (the demo's simulated clock speeds the schedule up with it), and both run at
 * once on start when overdue, judged by when their dataset was last refreshed.
 */
import type { Logger } from 'pino';
import type { DataVersion } from '../../modules/freshness/data-version.ts';
import { HOUR_MS } from '../../platform/clock.ts';
import { type JobEnvironment, PeriodicJob } from '../../platform/jobs/periodic-job.ts';
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

export interface RefreshSchedulesOptions extends Omit<JobEnvironment, 'onError'> {
  /** The cycles run, and the failures recorded for health. */
  refresher: Pick<Refresher, 'replicate' | 'refreshBuildings' | 'recordFailure'>;
  /** When each dataset was last refreshed (the data-version reader): decides overdue at start. */
  dataVersion: Pick<DataVersion, 'refreshedAt'>;
  schedule?: RefreshSchedule;
  log?: Pick<Logger, 'warn'>;
}

export interface RefreshSchedules {
  /** `refresh:search`: `replicate()` every 4–6 h; overdue at start once 4 h old. */
  search: PeriodicJob;
  /** `refresh:buildings`: `refreshBuildings()` every 24 h; overdue at start once 24 h old. */
  buildings: PeriodicJob;
}

/**
 * The two refresh jobs, not started. A failed cycle is recorded on the
 * refresher (health) and logged; the next attempt comes on schedule.
 */
export function createRefreshSchedules(options: RefreshSchedulesOptions): RefreshSchedules {
  const { refresher, dataVersion, log, schedule = DEFAULT_SCHEDULE, ...environment } = options;
  const random = environment.random ?? Math.random;
  const onFailure = (cycle: string) => (error: unknown) => {
    refresher.recordFailure(error);
    log?.warn({ err: error }, `scheduled ${cycle} refresh failed; next attempt on schedule`);
  };
  return {
    search: new PeriodicJob({
      ...environment,
      name: 'refresh:search',
      run: () => refresher.replicate(),
      interval: () => schedule.searchMinMs + random() * (schedule.searchMaxMs - schedule.searchMinMs),
      overdueAfterMs: schedule.searchMinMs,
      lastRunAt: () => dataVersion.refreshedAt('search:rental'),
      onError: onFailure('search'),
    }),
    buildings: new PeriodicJob({
      ...environment,
      name: 'refresh:buildings',
      run: () => refresher.refreshBuildings(),
      interval: schedule.buildingsMs,
      lastRunAt: () => dataVersion.refreshedAt('buildings'),
      onError: onFailure('buildings'),
    }),
  };
}
