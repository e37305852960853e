/**
 * Recomputes building scores from the imported open data (see
 * src/modules/opendata/scores.ts) once a week, and sooner when a dataset was
 * imported after the last computation (e.g. by a CLI run against the same
 * store). The last run is recorded in `sync_state` (scope `scores`), so a
 * restart does not recompute early. With no open data imported a run writes
 * nothing (the demo market keeps its synthetic scores).
 */
import type { Kysely } from 'kysely';
import { computeScores, SCORES_SCOPE, type ScoresRunSummary } from '../modules/opendata/scores.ts';
import { type Clock, DAY_MS, HOUR_MS } from '../platform/clock.ts';
import type { Database } from '../platform/db/tables.ts';
import type { AreaTree } from '../reference/areas.ts';

export const DEFAULT_SCORES_INTERVAL_MS = 7 * DAY_MS;
export const DEFAULT_SCORES_CHECK_MS = HOUR_MS;

export interface ScoresJobOptions {
  /** Time between computations (default one week). */
  intervalMs?: number;
  /** How often the schedule is checked (default hourly). */
  checkEveryMs?: number;
}

export class ScoresJob {
  readonly intervalMs: number;
  readonly checkEveryMs: number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<ScoresRunSummary> | null = null;
  /** The scheduled check in flight (it may be between its due check and its run). */
  private checking: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly areaTree: AreaTree,
    private readonly clock: Clock,
    options: ScoresJobOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? DEFAULT_SCORES_INTERVAL_MS;
    this.checkEveryMs = options.checkEveryMs ?? DEFAULT_SCORES_CHECK_MS;
  }

  /** Checks now (in the background) and then every `checkEveryMs`; runs when due. */
  start(onError: (error: unknown) => void = () => {}): void {
    if (this.timer) return;
    this.stopped = false;
    const check = () => {
      if (this.checking) return;
      this.checking = (async () => {
        // A check that was already under way when stop() came must not start a run.
        if ((await this.isDue()) && !this.stopped) await this.runOnce();
      })()
        .catch(onError)
        .finally(() => {
          this.checking = null;
        });
    };
    check();
    this.timer = setInterval(check, this.checkEveryMs);
    this.timer.unref();
  }

  /** Stops scheduling and waits for a check or computation in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.checking;
    await this.running?.catch(() => {});
  }

  /** Computes when due; null when not. */
  async tick(): Promise<ScoresRunSummary | null> {
    if (!(await this.isDue())) return null;
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
    const last = await this.db
      .selectFrom('sync_state')
      .select('refreshed_at')
      .where('scope', '=', SCORES_SCOPE)
      .executeTakeFirst();
    const latestImport = await this.db
      .selectFrom('open_data_imports')
      .select((eb) => eb.fn.max('imported_at').as('at'))
      .executeTakeFirst();
    if (!latestImport?.at) return false;
    if (!last) return true;
    if (latestImport.at > last.refreshed_at) return true;
    return this.clock.now().getTime() - Date.parse(last.refreshed_at) >= this.intervalMs;
  }
}
