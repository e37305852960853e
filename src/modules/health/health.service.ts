import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Dialect } from '../../platform/db/database.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { Limits, LimitsStatus } from '../../platform/limits/limits.ts';
import { latestSequence } from '../events/event-log.ts';
import type { DataVersion } from '../freshness/data-version.ts';
import type { RefreshPort } from '../freshness/refresh-port.ts';
import { probeDatabase } from './health.repository.ts';
import type { Backfill, BackgroundJob, Health, Liveness } from './health.schema.ts';
import type { ReadinessComponent, ReadinessRegistry } from './readiness.ts';

/**
 * Whether this node is ready: every dependency a request needs answers
 * (`checks`) and every component has done its preparation (`pending` names
 * the ones that have not; `components` says how each stands).
 */
/** The backfill as health reports it before any coverage can be read (none yet, or the store unreadable). */
export function noBackfillCoverage(running: boolean): Backfill {
  return { firstDate: null, lastDate: null, targetFirstDate: null, percent: 0, complete: false, running };
}

export interface ReadinessCheck {
  ready: boolean;
  checks: { database: 'ok' | 'unreachable'; limits: LimitsStatus['status'] };
  pending: ReadinessComponent[];
  components: Record<ReadinessComponent, { ready: boolean; detail?: string }>;
}

/** A background job as `Jobs.status()` reports it; `progress` when the job measures its own. */
export interface BackgroundJobStatus {
  name: string;
  running: boolean;
  lastRunAt: string | null;
  nextRunAt: string | null;
  lastError: { at: string; kind: string } | null;
  progress?: Readonly<Record<string, string | number | boolean | null>> | null;
}

/** The daily market-snapshot coverage as the snapshot job records it (`readCoverage`). */
export interface BackfillCoverage {
  firstDate: string;
  lastDate: string;
  targetFirstDate: string;
}

/** Where health learns about this node's preparation and background work. */
export interface HealthSources {
  readiness: ReadinessRegistry;
  /** Every background job (`Jobs.status()`); empty before the jobs exist. */
  jobs(): readonly BackgroundJobStatus[];
  /** The history backfill's coverage; null before its first chunk. */
  coverage(): Promise<BackfillCoverage | null>;
}

/** Name of the job that materializes (and backfills) the daily market snapshots. */
const BACKFILL_JOB = 'market-snapshots';
const DAY_MS = 86_400_000;

/**
 * The service's health as `GET /health` reports it: the database's
 * reachability and latency, the limits backend, each dataset's age, and the
 * refresh pipeline. Uptime and `time` are wall-clock facts about the process;
 * dataset ages are measured on the service clock the data was written with.
 *
 * Needed dependencies — the ones without which requests fail — are the
 * database and the limits backend; `status` is `degraded` and readiness false
 * while either is away. The upstream is reported, not needed: reads are served
 * from the store while it fails.
 *
 * `ready` also needs this node prepared: every component in the readiness
 * registry (schema, demo load, search index, market caches) reports ready.
 * `live` is true in every answer. Background work (history backfill, jobs) is
 * reported as progress and never makes a node unready: the node serves
 * meanwhile, and a backfill of 24 months must not keep it out of a balancer.
 */
export class HealthService {
  private readonly startedAt = Date.now();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    /** The wall clock: `time`. */
    private readonly clock: Clock,
    private readonly dataVersion: DataVersion,
    private readonly refresher: RefreshPort,
    private readonly limits: Pick<Limits, 'status'>,
    private readonly sources: HealthSources,
    private readonly version: string,
    /** The market clock the data was written with: dataset ages. */
    private readonly marketClock: Clock,
  ) {}

  /** Database round trip in ms, or null when it does not answer within the probe's bound. */
  private async databaseLatency(): Promise<number | null> {
    try {
      return await probeDatabase(this.db);
    } catch {
      return null;
    }
  }

  /**
   * The readiness probe: both needed dependencies, probed at once, each
   * bounded, and every component's preparation (asked of the registry, no I/O).
   */
  async readiness(): Promise<ReadinessCheck> {
    const [latencyMs, limits] = await Promise.all([this.databaseLatency(), this.limits.status()]);
    return this.readinessOf(latencyMs, limits.status);
  }

  private readinessOf(latencyMs: number | null, limits: LimitsStatus['status']): ReadinessCheck {
    const database = latencyMs === null ? 'unreachable' : 'ok';
    const pending = this.sources.readiness.pending();
    return {
      ready: database === 'ok' && limits === 'ok' && pending.length === 0,
      checks: { database, limits },
      pending,
      components: this.sources.readiness.states(),
    };
  }

  /** Coverage of the history backfill, as dates and a share of the target range. */
  private async backfill(dbOk: boolean, running: boolean): Promise<Backfill> {
    const coverage = dbOk ? await this.sources.coverage().catch(() => null) : null;
    if (coverage === null) return noBackfillCoverage(running);
    const days = (from: string, to: string) =>
      Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS) + 1);
    const target = days(coverage.targetFirstDate, coverage.lastDate);
    const covered = days(coverage.firstDate, coverage.lastDate);
    const complete = coverage.firstDate <= coverage.targetFirstDate;
    return {
      ...coverage,
      percent: complete || target === 0 ? 100 : Math.min(99.9, Math.floor((covered / target) * 1000) / 10),
      complete,
      running,
    };
  }

  /** Every background job, with the share done when the job measures it. */
  private jobs(): BackgroundJob[] {
    return this.sources.jobs().map((job) => ({
      name: job.name,
      running: job.running,
      lastRunAt: job.lastRunAt,
      nextRunAt: job.nextRunAt,
      // The kind only: an error message may name upstream details.
      lastError: job.lastError ? { at: job.lastError.at, kind: job.lastError.kind } : null,
      progress: job.progress ? { ...job.progress } : null,
    }));
  }

  liveness(): Liveness {
    return { status: 'live', uptimeSeconds: this.uptimeSeconds() };
  }

  private uptimeSeconds(): number {
    return Math.floor((Date.now() - this.startedAt) / 1000);
  }

  async check(): Promise<Health> {
    const [latencyMs, limits] = await Promise.all([this.databaseLatency(), this.limits.status()]);
    const dbOk = latencyMs !== null;
    const now = this.clock.now();
    const [searchRentals, searchSales, buildings] = dbOk
      ? await Promise.all([
          this.dataVersion.refreshedAt('search:rental'),
          this.dataVersion.refreshedAt('search:sale'),
          this.dataVersion.refreshedAt('buildings'),
        ])
      : [null, null, null];
    const latestEventSequence = dbOk ? await latestSequence(this.db) : null;
    const jobs = this.jobs();
    const backfill = await this.backfill(
      dbOk,
      jobs.some((job) => job.name === BACKFILL_JOB && job.running),
    );
    const readiness = this.readinessOf(latencyMs, limits.status);
    const stamps = [searchRentals, searchSales, buildings].filter((s): s is string => s !== null);
    const oldest = stamps.length > 0 ? Math.min(...stamps.map((s) => Date.parse(s))) : null;
    return {
      status: dbOk && limits.status === 'ok' ? 'ok' : 'degraded',
      live: true,
      ready: readiness.ready,
      readiness: { pending: readiness.pending, components: readiness.components },
      version: this.version,
      uptimeSeconds: this.uptimeSeconds(),
      time: now.toISOString(),
      database: { dialect: this.dialect, status: dbOk ? 'ok' : 'unreachable', latencyMs },
      limits,
      data: {
        searchRentals,
        searchSales,
        buildings,
        oldestAgeSeconds:
          oldest === null
            ? null
            : Math.max(0, Math.floor((this.marketClock.now().getTime() - oldest) / 1000)),
      },
      pipeline: { ...this.refresher.status(), latestEventSequence },
      background: { backfill, jobs },
    };
  }
}
