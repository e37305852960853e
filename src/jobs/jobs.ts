/**
 * Every background job of a serving process, in one place: the scheduled
 * refresh cycles (when an upstream is configured and scheduled refresh is on),
 * the hourly market snapshots and the building-scores check. The composition
 * root builds it with `createJobs`, starts it once the server listens and
 * stops it before closing the store.
 */
import type { Logger } from 'pino';
import type { DataVersion } from '../modules/freshness/data-version.ts';
import type { Clock } from '../platform/clock.ts';
import type { PeriodicJob, PeriodicJobStatus, TimerApi } from '../platform/jobs/periodic-job.ts';
import { createMarketSnapshotSchedule, type MarketSnapshotJob } from './market-snapshots.ts';
import type { Refresher } from './refresh/refresher.ts';
import { createRefreshSchedules } from './refresh/scheduler.ts';
import { createScoresSchedule, type ScoresJob } from './scores.ts';

export interface JobsDependencies {
  /** The refresh pipeline; absent when there is no upstream (then no refresh jobs). */
  refresher?: Pick<Refresher, 'replicate' | 'refreshBuildings' | 'recordFailure' | 'idle'> | undefined;
  /** Whether the refresh cycles run on their schedule (config `refresh`). */
  scheduledRefresh: boolean;
  /** When each dataset was last refreshed: decides whether a refresh cycle is overdue at start. */
  dataVersion: Pick<DataVersion, 'refreshedAt'>;
  /** The service clock (simulated in the demo). */
  clock: Clock;
  /** Clock ms per real ms: the upstream's speed (SIM_SPEED in the demo), 1 otherwise. */
  speed: number;
  log: Pick<Logger, 'warn' | 'error'>;
  /** The market snapshot work (`ctx.marketSnapshots`). */
  marketSnapshots: Pick<MarketSnapshotJob, 'run'> & Partial<Pick<MarketSnapshotJob, 'progress'>>;
  /** The building-scores work. */
  scores: Pick<ScoresJob, 'tick' | 'lastComputedAt' | 'checkEveryMs'>;
  /** Tests only: drive time. */
  timers?: TimerApi;
  /** Tests only: the random source of the search window. */
  random?: () => number;
}

export interface Jobs {
  /** Starts every job (an overdue one runs at once); resolves once all are armed. */
  start(): Promise<void>;
  /**
   * Stops every job and resolves once each running run has finished (a
   * snapshot backfill ends after its current chunk) and the refresher's
   * background refreshes have settled.
   */
  stop(): Promise<void>;
  /** One entry per job, for health: running state, last/next run, last error and progress. */
  status(): PeriodicJobStatus[];
  /**
   * Runs the named job now (see PeriodicJob.trigger: coalesces with a run in
   * progress) and resolves when that run has finished; its errors go to the
   * job's error reporting, not to the caller. Rejects for an unknown name.
   * Operators' tools, benchmarks and tests.
   */
  trigger(name: string): Promise<void>;
}

export function createJobs(deps: JobsDependencies): Jobs {
  const { refresher, clock, speed, log } = deps;
  const environment = {
    clock,
    speed,
    ...(deps.timers ? { timers: deps.timers } : {}),
    ...(deps.random ? { random: deps.random } : {}),
  };
  const jobs: PeriodicJob[] = [];
  if (refresher && deps.scheduledRefresh) {
    const refresh = createRefreshSchedules({ ...environment, refresher, dataVersion: deps.dataVersion, log });
    jobs.push(refresh.search, refresh.buildings);
  }
  jobs.push(
    createMarketSnapshotSchedule(deps.marketSnapshots, {
      ...environment,
      onError: (error) => log.error({ err: error }, 'market snapshot job failed'),
    }),
    createScoresSchedule(deps.scores, {
      ...environment,
      onError: (error) => log.error({ err: error }, 'building scores job failed'),
    }),
  );
  return {
    start: async () => {
      await Promise.all(jobs.map((job) => job.start()));
    },
    stop: async () => {
      await Promise.all(jobs.map((job) => job.stop()));
      await refresher?.idle();
    },
    status: () => jobs.map((job) => job.status()),
    trigger: (name) => {
      const job = jobs.find((j) => j.name === name);
      return job ? job.trigger() : Promise.reject(new RangeError(`no background job is named ${name}`));
    },
  };
}
