import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Database } from '../db/tables.ts';
import { BufferedQuotaStore } from './buffered-quota.ts';

/** The outcome of one rate-limit consumption. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms when the current window ends. */
  resetAt: number;
}

/**
 * Per-minute request windows, via rate-limiter-flexible. Counters are atomic:
 * in-process for the embedded store, in Redis (one Lua script per consume)
 * when several processes must share one budget.
 */
export interface RateLimiter {
  consume(bucket: string, limitPerMinute: number): Promise<RateDecision>;
  /** Current window without consuming (for `/usage`-style reads). */
  peek(bucket: string, limitPerMinute: number): Promise<RateDecision>;
  close(): Promise<void>;
}

/** The outcome of counting one request against a monthly quota. */
export interface QuotaDecision {
  allowed: boolean;
  used: number;
}

/**
 * Monthly request counters. `increment` adds one unless `used` already reached
 * `ceiling` (quota + overage); a refused request is not counted.
 */
export interface QuotaStore {
  increment(bucket: string, period: string, ceiling: number): Promise<QuotaDecision>;
  used(bucket: string, period: string): Promise<number>;
  close(): Promise<void>;
}

const WINDOW_SECONDS = 60;

type Flexible = RateLimiterMemory | RateLimiterRedis;

class FlexibleRateLimiter implements RateLimiter {
  /** One limiter per distinct limit (tiers differ only in points). */
  private readonly limiters = new Map<number, Flexible>();

  constructor(
    private readonly create: (points: number) => Flexible,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {}

  private limiter(points: number): Flexible {
    let limiter = this.limiters.get(points);
    if (!limiter) {
      limiter = this.create(points);
      this.limiters.set(points, limiter);
    }
    return limiter;
  }

  async consume(bucket: string, limitPerMinute: number): Promise<RateDecision> {
    try {
      const res = await this.limiter(limitPerMinute).consume(bucket, 1);
      return decision(true, limitPerMinute, res);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return decision(false, limitPerMinute, rejection);
      throw rejection;
    }
  }

  async peek(bucket: string, limitPerMinute: number): Promise<RateDecision> {
    const res = await this.limiter(limitPerMinute).get(bucket);
    if (!res)
      return {
        allowed: true,
        limit: limitPerMinute,
        remaining: limitPerMinute,
        resetAt: Date.now() + WINDOW_SECONDS * 1000,
      };
    return decision(res.consumedPoints <= limitPerMinute, limitPerMinute, res);
  }

  close(): Promise<void> {
    return this.onClose();
  }
}

function decision(allowed: boolean, limit: number, res: RateLimiterRes): RateDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, res.remainingPoints),
    resetAt: Date.now() + res.msBeforeNext,
  };
}

export function memoryRateLimiter(): RateLimiter {
  return new FlexibleRateLimiter(
    (points) => new RateLimiterMemory({ points, duration: WINDOW_SECONDS, keyPrefix: `rl${points}` }),
  );
}

export function redisRateLimiter(redis: Redis, namespace: string): RateLimiter {
  return new FlexibleRateLimiter(
    (points) =>
      new RateLimiterRedis({
        storeClient: redis,
        points,
        duration: WINDOW_SECONDS,
        keyPrefix: `${namespace}:rl:${points}`,
      }),
  );
}

/** Quotas in the database: an atomic conditional upsert per counted request. */
export class SqlQuotaStore implements QuotaStore {
  constructor(private readonly db: Kysely<Database>) {}

  async increment(bucket: string, period: string, ceiling: number): Promise<QuotaDecision> {
    const row = await this.db
      .insertInto('usage_counters')
      .values({ bucket, period, used: 1 })
      .onConflict((oc) =>
        oc
          .columns(['bucket', 'period'])
          .doUpdateSet((eb) => ({ used: eb('usage_counters.used', '+', 1) }))
          .where('usage_counters.used', '<', ceiling),
      )
      .returning('used')
      .executeTakeFirst();
    if (row) return { allowed: true, used: row.used };
    return { allowed: false, used: await this.used(bucket, period) };
  }

  async used(bucket: string, period: string): Promise<number> {
    const row = await this.db
      .selectFrom('usage_counters')
      .select('used')
      .where('bucket', '=', bucket)
      .where('period', '=', period)
      .executeTakeFirst();
    return row?.used ?? 0;
  }

  async close(): Promise<void> {}
}

/** Quotas in Redis: a Lua script makes the check-and-increment atomic across processes. */
export class RedisQuotaStore implements QuotaStore {
  private static readonly SCRIPT = `
    local used = tonumber(redis.call('GET', KEYS[1]) or '0')
    if used >= tonumber(ARGV[1]) then return {0, used} end
    used = redis.call('INCR', KEYS[1])
    redis.call('EXPIRE', KEYS[1], ARGV[2])
    return {1, used}`;

  constructor(
    private readonly redis: Redis,
    private readonly namespace: string,
  ) {}

  private key(bucket: string, period: string): string {
    return `${this.namespace}:quota:${period}:${bucket}`;
  }

  async increment(bucket: string, period: string, ceiling: number): Promise<QuotaDecision> {
    // Counters outlive their month by a margin, so late readers still see the total.
    const ttlSeconds = 40 * 86_400;
    const [allowed, used] = (await this.redis.eval(
      RedisQuotaStore.SCRIPT,
      1,
      this.key(bucket, period),
      String(ceiling),
      String(ttlSeconds),
    )) as [number, number];
    return { allowed: allowed === 1, used };
  }

  async used(bucket: string, period: string): Promise<number> {
    return Number((await this.redis.get(this.key(bucket, period))) ?? 0);
  }

  async close(): Promise<void> {}
}

export interface Limits {
  rate: RateLimiter;
  quota: QuotaStore;
  close(): Promise<void>;
}

/**
 * Chosen once at boot: with a Redis URL every process shares one budget;
 * otherwise windows live in this process and quotas in the database.
 */
export function createLimits(options: {
  redisUrl?: string | undefined;
  namespace: string;
  db: Kysely<Database>;
}): Limits {
  if (!options.redisUrl) {
    const rate = memoryRateLimiter();
    // One process: count in memory, persist in the background (no write per request).
    const quota = new BufferedQuotaStore(options.db);
    return { rate, quota, close: () => quota.close() };
  }
  const redis = new Redis(options.redisUrl, {
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    lazyConnect: false,
  });
  // Without a listener ioredis prints an "Unhandled error event" line on every failed
  // reconnect. Commands still fail while Redis is away, so requests fail closed (500,
  // logged with their request id) rather than running unmetered.
  redis.on('error', () => {});
  return {
    rate: redisRateLimiter(redis, options.namespace),
    quota: new RedisQuotaStore(redis, options.namespace),
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
