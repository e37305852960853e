import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Dialect } from '../../platform/db/database.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { Limits, LimitsStatus } from '../../platform/limits/limits.ts';
import { latestSequence } from '../events/event-log.ts';
import type { DataVersion } from '../freshness/data-version.ts';
import type { RefreshPort } from '../freshness/refresh-port.ts';
import { probeDatabase } from './health.repository.ts';
import type { Health, Liveness } from './health.schema.ts';

/** Whether every dependency a request needs answers, and how each one stands. */
export interface ReadinessCheck {
  ready: boolean;
  checks: { database: 'ok' | 'unreachable'; limits: LimitsStatus['status'] };
}

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
 */
export class HealthService {
  private readonly startedAt = Date.now();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly clock: Clock,
    private readonly dataVersion: DataVersion,
    private readonly refresher: RefreshPort,
    private readonly limits: Pick<Limits, 'status'>,
    private readonly version: string,
  ) {}

  /** Database round trip in ms, or null when it does not answer within the probe's bound. */
  private async databaseLatency(): Promise<number | null> {
    try {
      return await probeDatabase(this.db);
    } catch {
      return null;
    }
  }

  /** The readiness probe: both needed dependencies, probed at once, each bounded. */
  async readiness(): Promise<ReadinessCheck> {
    const [latencyMs, limits] = await Promise.all([this.databaseLatency(), this.limits.status()]);
    const database = latencyMs === null ? 'unreachable' : 'ok';
    return {
      ready: database === 'ok' && limits.status === 'ok',
      checks: { database, limits: limits.status },
    };
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
    const stamps = [searchRentals, searchSales, buildings].filter((s): s is string => s !== null);
    const oldest = stamps.length > 0 ? Math.min(...stamps.map((s) => Date.parse(s))) : null;
    return {
      status: dbOk && limits.status === 'ok' ? 'ok' : 'degraded',
      version: this.version,
      uptimeSeconds: this.uptimeSeconds(),
      time: now.toISOString(),
      database: { dialect: this.dialect, status: dbOk ? 'ok' : 'unreachable', latencyMs },
      limits,
      data: {
        searchRentals,
        searchSales,
        buildings,
        oldestAgeSeconds: oldest === null ? null : Math.max(0, Math.floor((now.getTime() - oldest) / 1000)),
      },
      pipeline: { ...this.refresher.status(), latestEventSequence },
    };
  }
}
