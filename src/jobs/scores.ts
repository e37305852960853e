/**
 * Recomputes building scores from the imported open data (see
 * src/modules/opendata/scores.ts) once a week, and sooner when a dataset was
 * imported after the last computation (e.g. by a CLI run against the same
 * store). The last run is recorded as the `scores` marker (data-version.ts), so a
 * restart does not recompute early. With no open data imported a run writes
 * nothing (the demo market keeps its synthetic scores).
 */
import type { Kysely } from 'kysely';
import { readScope } from '../modules/freshness/data-version.ts';
import { computeScores, SCORES_SCOPE, type ScoresRunSummary } from '../modules/opendata/scores.ts';
import { type Clock, DAY_MS, HOUR_MS } from '../platform/clock.ts';
import type { Database } from '../platform/db/tables.ts';
import { type JobEnvironment, PeriodicJob } from '../platform/jobs/periodic-job.ts';
import type { AreaTree } from '../reference/areas.ts';

export const DEFAULT_SCORES_INTERVAL_MS = 7 * DAY_MS;
export const DEFAULT_SCORES_CHECK_MS = HOUR_MS;

export interface ScoresJobOptions {
  /** Time between computations (default one week). */
  intervalMs?: number;
  /** How often the schedule is checked (default hourly). */
  checkEveryMs?: number;
}

/**
 * The work: decides whether scores are due and computes them. Scheduling lives
 * in `createScoresSchedule`.
 */
export class ScoresJob {
  readonly intervalMs: number;
  readonly checkEveryMs: number;
  private running: Promise<ScoresRunSummary> | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly areaTree: AreaTree,
    private readonly clock: Clock,
    options: ScoresJobOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? DEFAULT_SCORES_INTERVAL_MS;
    this.checkEveryMs = options.checkEveryMs ?? DEFAULT_SCORES_CHECK_MS;
  }

  /**
   * Computes when due; null when not. `signal`: a check aborted (the schedule
   * stopped) between its due check and its computation does not start one.
   */
  async tick(options: { signal?: AbortSignal } = {}): Promise<ScoresRunSummary | null> {
    if (!(await this.isDue()) || options.signal?.aborted) return null;
    return this.runOnce();
  }

  /** Computes now, whatever the schedule; concurrent calls share one run. */
  runOnce(): Promise<ScoresRunSummary> {
    if (!this.running) {
      this.running = computeScores(this.db, this.areaTree, this.clock).finally(() => {
        this.running = null;
      });
    }
    return this.running;
  }

  /** Due when never run, when the interval has passed, or when a dataset was imported since. */
  async isDue(): Promise<boolean> {
    const last = await this.lastComputedAt();
    const latestImport = await this.db
      .selectFrom('open_data_imports')
      .select((eb) => eb.fn.max('imported_at').as('at'))
      .executeTakeFirst();
    if (!latestImport?.at) return false;
    if (last === null) return true;
    if (latestImport.at > last) return true;
    return this.clock.now().getTime() - Date.parse(last) >= this.intervalMs;
  }

  /** When scores were last computed (the `scores` marker of the data-version module); null when never. */
  async lastComputedAt(): Promise<string | null> {
    return (await readScope(this.db, SCORES_SCOPE))?.at ?? null;
  }
}

/**
 * The scores schedule, not started: checks every `checkEveryMs` (clock time)
 * and computes when due — weekly, or sooner after an import. The first check
 * comes at once when the last computation is at least one check interval old
 * (or there is none), else when that interval is up.
 */
export function createScoresSchedule(
  job: Pick<ScoresJob, 'tick' | 'lastComputedAt' | 'checkEveryMs'>,
  environment: JobEnvironment = {},
): PeriodicJob {
  return new PeriodicJob({
    ...environment,
    name: 'scores',
    run: (signal) => job.tick({ signal }),
    interval: job.checkEveryMs,
    lastRunAt: () => job.lastComputedAt(),
  });
}
