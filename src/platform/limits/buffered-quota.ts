import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { QuotaDecision, QuotaStore } from './limits.ts';

interface Counter {
  used: number;
  /** Counted here but not yet written to the database. */
  pending: number;
  touchedAt: number;
}

/** Idle counters with nothing pending are dropped after this long (anonymous IPs come and go). */
const IDLE_MS = 10 * 60_000;

/**
 * Monthly quotas for a single process over the database: counts are kept in
 * memory, so checking and counting a request costs no write, and the
 * increments are added to `usage_counters` in the background (every
 * `flushMs`, and on close).
 *
 * Contract: exact within one process (JavaScript runs one increment at a
 * time); a crash loses at most `flushMs` of counts. Several processes sharing
 * one budget need REDIS_URL (RedisQuotaStore), where every increment is atomic
 * in Redis.
 */
export class BufferedQuotaStore implements QuotaStore {
  private readonly counters = new Map<string, Counter>();
  private readonly loading = new Map<string, Promise<Counter>>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    flushMs = 1000,
  ) {
    this.timer = setInterval(() => {
      void this.flush();
    }, flushMs);
    this.timer.unref();
  }

  async increment(bucket: string, period: string, ceiling: number): Promise<QuotaDecision> {
    const counter = await this.counter(bucket, period);
    counter.touchedAt = Date.now();
    if (counter.used >= ceiling) return { allowed: false, used: counter.used };
    counter.used++;
    counter.pending++;
    return { allowed: true, used: counter.used };
  }

  async used(bucket: string, period: string): Promise<number> {
    return (await this.counter(bucket, period)).used;
  }

  private counter(bucket: string, period: string): Counter | Promise<Counter> {
    const key = `${period}\u0000${bucket}`;
    const existing = this.counters.get(key);
    if (existing) return existing;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.db
        .selectFrom('usage_counters')
        .select('used')
        .where('bucket', '=', bucket)
        .where('period', '=', period)
        .executeTakeFirst()
        .then((row) => {
          const counter = { used: row?.used ?? 0, pending: 0, touchedAt: Date.now() };
          this.counters.set(key, counter);
          return counter;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  /** Writes pending increments; one at a time, so a slow write never doubles up. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writePending()).catch(() => undefined);
    return this.flushing;
  }

  private async writePending(): Promise<void> {
    const now = Date.now();
    const batch: { key: string; bucket: string; period: string; delta: number }[] = [];
    for (const [key, counter] of this.counters) {
      if (counter.pending > 0) {
        const [period, bucket] = key.split('\u0000') as [string, string];
        batch.push({ key, bucket, period, delta: counter.pending });
        counter.pending = 0;
      } else if (now - counter.touchedAt > IDLE_MS) {
        this.counters.delete(key);
      }
    }
    if (batch.length === 0) return;
    try {
      await this.db.transaction().execute(async (trx) => {
        for (const { bucket, period, delta } of batch) {
          await trx
            .insertInto('usage_counters')
            .values({ bucket, period, used: delta })
            .onConflict((oc) =>
              oc
                .columns(['bucket', 'period'])
                .doUpdateSet((eb) => ({ used: eb('usage_counters.used', '+', delta) })),
            )
            .execute();
        }
      });
    } catch (error) {
      // Keep the counts for the next attempt rather than losing them.
      for (const { key, delta } of batch) {
        const counter = this.counters.get(key);
        if (counter) counter.pending += delta;
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
