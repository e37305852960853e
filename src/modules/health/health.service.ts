import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Dialect } from '../../platform/db/database.ts';
import type { Database } from '../../platform/db/tables.ts';
import { latestSequence } from '../events/event-log.ts';
import type { DataVersion } from '../freshness/data-version.ts';
import type { RefreshPort } from '../freshness/refresh-port.ts';
import { probeDatabase } from './health.repository.ts';
import type { Health } from './health.schema.ts';

/**
 * The service's health as `GET /health` reports it: the database's
 * reachability and latency, each dataset's age, and the refresh pipeline.
 * Uptime and `time` are wall-clock facts about the process; dataset ages are
 * measured on the service clock the data was written with.
 */
export class HealthService {
  private readonly startedAt = Date.now();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly clock: Clock,
    private readonly dataVersion: DataVersion,
    private readonly refresher: RefreshPort,
    private readonly version: string,
  ) {}

  async check(): Promise<Health> {
    let latencyMs: number | null = null;
    try {
      latencyMs = await probeDatabase(this.db);
    } catch {
      latencyMs = null;
    }
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
      status: dbOk ? 'ok' : 'degraded',
      version: this.version,
      uptimeSeconds: Math.floor((Date.now() - this.startedAt) / 1000),
      time: now.toISOString(),
      database: { dialect: this.dialect, status: dbOk ? 'ok' : 'unreachable', latencyMs },
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
