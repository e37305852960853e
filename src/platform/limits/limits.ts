import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { type Clock, systemClock } from '../clock.ts';
import type { Database } from '../db/tables.ts';
import { BufferedQuotaStore } from './buffered-quota.ts';
import type { ProcessLease } from './process-lease.ts';

/** The outcome of one rate-limit consumption. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms when the current window ends, on the wall clock. */
  resetAt: number;
}

/**
 * Per-minute request windows, via rate-limiter-flexible. Counters are atomic:
 * in-process for the embedded store, in Redis (one Lua script per consume)
 * when several processes must share one budget.
 *
 * A bucket has one window whatever limit it is judged by: callers of
 * different tiers sharing a bucket (keys of one account) draw on the same
 * count, each refused once the count passes its own `limitPerMinute`.
 * Refused requests count too, so hammering does not reopen the window early.
 */
export interface RateLimiter {
  consume(bucket: string, limitPerMinute: number): Promise<RateDecision>;
  /** Current window without consuming (for `/usage`-style reads). */
  peek(bucket: string, limitPerMinute: number): Promise<RateDecision>;
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
/**
 * The limiter never refuses by itself: the window is a plain counter and each
 * consume is judged against the caller's own limit (see RateLimiter).
 */
const UNBOUNDED_POINTS = Number.MAX_SAFE_INTEGER;

type Flexible = RateLimiterMemory | RateLimiterRedis;

/**
 * Windows run for real minutes (the limiter's own timers, or Redis TTLs) and
 * their ends are told on the wall clock it is given, never the market clock.
 */
class FlexibleRateLimiter implements RateLimiter {
  constructor(
    private readonly window: Flexible,
    private readonly clock: Clock,
  ) {}

  async consume(bucket: string, limitPerMinute: number): Promise<RateDecision> {
    return decision(limitPerMinute, await this.window.consume(bucket, 1), this.clock);
  }

  async peek(bucket: string, limitPerMinute: number): Promise<RateDecision> {
    const res = await this.window.get(bucket);
    if (!res)
      return {
        allowed: true,
        limit: limitPerMinute,
        remaining: limitPerMinute,
        resetAt: this.clock.now().getTime() + WINDOW_SECONDS * 1000,
      };
    return decision(limitPerMinute, res, this.clock);
  }
}

function decision(limit: number, res: RateLimiterRes, clock: Clock): RateDecision {
  return {
    allowed: res.consumedPoints <= limit,
    limit,
    remaining: Math.max(0, limit - res.consumedPoints),
    resetAt: clock.now().getTime() + res.msBeforeNext,
  };
}

/** `clock`: the wall clock the window ends are told on (default: real time). */
export function memoryRateLimiter(clock: Clock = systemClock): RateLimiter {
  return new FlexibleRateLimiter(
    new RateLimiterMemory({ points: UNBOUNDED_POINTS, duration: WINDOW_SECONDS, keyPrefix: 'rl' }),
    clock,
  );
}

export function redisRateLimiter(redis: Redis, namespace: string, clock: Clock = systemClock): RateLimiter {
  return new FlexibleRateLimiter(
    new RateLimiterRedis({
      storeClient: redis,
      points: UNBOUNDED_POINTS,
      duration: WINDOW_SECONDS,
      keyPrefix: `${namespace}:rl`,
      // Fail at once while disconnected (the caller answers 503), never wait for a reconnect.
      rejectIfRedisNotReady: true,
    }),
    clock,
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

/** What `/health` says about the limits backend. */
export interface LimitsStatus {
  /** `memory`: windows in this process, quotas in the database; `redis`: both in Redis. */
  backend: 'memory' | 'redis';
  /**
   * `unreachable`: Redis does not answer (metered routes answer 503);
   * `lease_lost`: another process took this store's embedded-limits lease, so
   * two processes would each admit a full budget.
   */
  status: 'ok' | 'unreachable' | 'lease_lost';
  /** Round trip of a PING (Redis); null in process or when unreachable. */
  latencyMs: number | null;
}

export interface Limits {
  rate: RateLimiter;
  quota: QuotaStore;
  /** A bounded probe of the backend (at most `REDIS_COMMAND_TIMEOUT_MS`); never throws. */
  status(): Promise<LimitsStatus>;
  close(): Promise<void>;
}

/**
 * Redis client choices, so an outage costs bounded memory and time and ends by itself:
 * - `enableOfflineQueue: false`: while disconnected every command fails at once
 *   (the request answers 503 with Retry-After); nothing queues up, however long
 *   Redis is away.
 * - `maxRetriesPerRequest: 0` and `autoResendUnfulfilledCommands: false`: a
 *   command in flight when the connection drops fails instead of being sent
 *   again after the reconnect (a resent increment could count a request twice).
 * - `commandTimeout`: a Redis that accepts but does not answer (stalled, swapping)
 *   fails each command after this long instead of holding the request.
 * - `retryStrategy`: reconnect for ever, backing off to one attempt every 2 s,
 *   so service resumes by itself within about 2 s of Redis returning.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;
const REDIS_CONNECT_TIMEOUT_MS = 2000;
const REDIS_MAX_RECONNECT_DELAY_MS = 2000;
/** How long boot waits for the first connection before serving without it (metered routes 503 until it comes). */
const REDIS_STARTUP_WAIT_MS = 5000;

export interface LimitsOptions {
  redisUrl?: string | undefined;
  namespace: string;
  db: Kysely<Database>;
  /** The wall clock (default: real time): window ends (`X-RateLimit-Reset`); never the market clock. */
  clock?: Clock | undefined;
  /**
   * Embedded limits only: the lease that makes this the one process counting
   * for the store (boot.ts claims it); released on close.
   */
  lease?: ProcessLease | undefined;
  log?: Pick<Logger, 'info' | 'warn' | 'error'> | undefined;
}

/**
 * Chosen once at boot: with a Redis URL every process shares one budget;
 * otherwise windows live in this process and quotas in the database, exact
 * only while one process serves the store (the lease says so).
 */
export async function createLimits(options: LimitsOptions): Promise<Limits> {
  if (!options.redisUrl) {
    const rate = memoryRateLimiter(options.clock);
    // One process: count in memory, persist in the background (no write per request).
    const quota = new BufferedQuotaStore(options.db);
    const { lease } = options;
    if (lease && options.log) lease.logTo(options.log);
    return {
      rate,
      quota,
      status: async () => ({
        backend: 'memory',
        status: lease && !lease.held() ? 'lease_lost' : 'ok',
        latencyMs: null,
      }),
      close: async () => {
        // Counts first, then the lease: a successor starts from the flushed totals.
        await quota.close();
        await lease?.release();
      },
    };
  }

  const redis = new Redis(options.redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 100, REDIS_MAX_RECONNECT_DELAY_MS),
  });
  const connection = watchConnection(redis, options.log);
  if (!(await firstConnection(redis, REDIS_STARTUP_WAIT_MS))) connection.unreachableAtStart();
  return {
    rate: redisRateLimiter(redis, options.namespace, options.clock),
    quota: new RedisQuotaStore(redis, options.namespace),
    status: async () => {
      const latencyMs = await pingRedis(redis);
      return { backend: 'redis', status: latencyMs === null ? 'unreachable' : 'ok', latencyMs };
    },
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * Logs each loss and each return of the connection once, not every failed
 * reconnect. (Without an 'error' listener ioredis prints "Unhandled error
 * event" on each attempt.)
 */
function watchConnection(redis: Redis, log: LimitsOptions['log']): { unreachableAtStart(): void } {
  let wasReady = false;
  /** When the current outage was reported; null while connected or not yet reported. */
  let lostAt: number | null = null;
  redis.on('error', () => {});
  redis.on('ready', () => {
    if (lostAt !== null) {
      log?.info({ downMs: Date.now() - lostAt }, 'limits backend (Redis) reachable again');
    }
    wasReady = true;
    lostAt = null;
  });
  redis.on('close', () => {
    if (!wasReady || lostAt !== null) return;
    lostAt = Date.now();
    log?.error('limits backend (Redis) unreachable: metered routes answer 503 until it returns');
  });
  return {
    unreachableAtStart: () => {
      if (wasReady || lostAt !== null) return;
      lostAt = Date.now();
      log?.error('limits backend (Redis) not reachable at start: metered routes answer 503 until it is');
    },
  };
}

function firstConnection(redis: Redis, waitMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ready);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), waitMs);
    redis.once('ready', onReady);
  });
}

/** Round trip of a PING in ms, or null when Redis is not connected or does not answer in time. */
async function pingRedis(redis: Redis): Promise<number | null> {
  if (redis.status !== 'ready') return null;
  const started = performance.now();
  try {
    await redis.ping();
  } catch {
    return null;
  }
  return Math.round((performance.now() - started) * 100) / 100;
}
