import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { DEFAULT_TIER_LIMITS, TIERS, type Tier, type TierLimits } from './domain/tiers.ts';

/**
 * Process configuration, parsed once from the environment and frozen.
 *
 * Contract: every variable is validated here, at boot; a bad value stops the
 * process with a message naming the variable, instead of surfacing later as a
 * confusing runtime failure.
 */
export interface Config {
  readonly host: string;
  readonly port: number;
  /** Public origin used in links (pagination, OAuth discovery). Defaults to http://HOST:PORT. */
  readonly publicUrl: string;
  readonly dataDir: string;
  /** `sqlite:<file>` (embedded, default) or a `postgres://` URL. */
  readonly databaseUrl: string;
  readonly dialect: 'sqlite' | 'postgres';
  /** PostgreSQL schema to use (tests isolate runs with a fresh schema). */
  readonly databaseSchema: string | undefined;
  /** Serve default (ACTIVE-only) searches from the in-memory index; off = always SQL. */
  readonly searchIndex: boolean;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly demo: {
    /** Load the built-in synthetic market into an empty store on first start. */
    readonly enabled: boolean;
    readonly seed: number;
    /** Multiplies listing volume: 1 is the full demo market (≈30k active rentals). */
    readonly scale: number;
  };
  readonly version: string;
  /** `redis://…`: rate limits and quotas shared by every process; unset: embedded (memory + database). */
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key this deployment writes: deployments sharing a Redis need distinct ones. */
  readonly redisPrefix: string;
  /** Word before the UUID in API keys (`STOOP-<uuid>`). */
  readonly apiKeyPrefix: string;
  /** Peers whose X-Forwarded-For is believed (IPs or CIDRs); empty: use the socket address. */
  readonly trustedProxies: readonly string[];
  readonly tierLimits: Readonly<Record<Tier, TierLimits>>;
  /** Origin of photo URLs in responses: `{photoBaseUrl}/fp/<key>-<size>.webp`. Defaults to PUBLIC_URL. */
  readonly photoBaseUrl: string;
  /** Where rendered photo variants are cached on disk. */
  readonly photoCacheDir: string;
  readonly upstream: {
    /**
     * RESO Web API service root (e.g. `https://feed.example/odata`). Unset with
     * DEMO on: the built-in market simulator runs in-process and the pipeline
     * talks to it over loopback HTTP. Unset with DEMO off: no upstream (the
     * store is served as loaded, e.g. from `stoop ingest`).
     */
    readonly url: string | undefined;
    /** Bearer token sent to the upstream; never logged. */
    readonly token: string | undefined;
    /** Per-request timeout for list pages and background fetches, ms. */
    readonly timeoutMs: number;
    /** Timeout of a live detail read (Business/Internal `GET /property/{id}`), ms. */
    readonly liveTimeoutMs: number;
    /** Retries of a retryable failure (timeout, 5xx, network) with exponential backoff and jitter. */
    readonly retries: number;
  };
  readonly simulator: {
    /**
     * Run the market simulator in-process as the demo's upstream (DEMO_UPSTREAM).
     * Off: the demo market is served as loaded, with no refreshes (benchmarks of
     * the read path use this).
     */
    readonly enabled: boolean;
    /** Simulated seconds per real second (the in-process demo's whole clock runs at this speed). */
    readonly speed: number;
    /** Share of upstream requests that fail (half time out, half answer 5xx). */
    readonly faultRate: number;
    /** Inject realistic response latency (detail fetch 0.5–3 s). */
    readonly latency: boolean;
    /** Port of `stoop origin` (0 = any free port, used in-process). */
    readonly port: number;
  };
  /** Run the scheduled refresh cycles (search 4–6 h, buildings 24 h, scaled by SIM_SPEED in the demo). */
  readonly refresh: boolean;
}

export class ConfigError extends Error {
  constructor(variable: string, reason: string) {
    super(`Invalid configuration: ${variable} ${reason}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function numberVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new ConfigError(name, `must be a number, got "${raw}"`);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, `must be a boolean (true/false), got "${raw}"`);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: Env = process.env, version = '0.1.0'): Config {
  const host = env.HOST || '127.0.0.1';
  const port = intVar(env, 'PORT', 8080, 0, 65535);
  const dataDir = resolve(env.DATA_DIR || 'data');
  const databaseUrl = env.DATABASE_URL || `sqlite:${resolve(dataDir, 'stoop.sqlite')}`;
  let dialect: Config['dialect'];
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) dialect = 'postgres';
  else if (databaseUrl.startsWith('sqlite:')) dialect = 'sqlite';
  else throw new ConfigError('DATABASE_URL', `must start with postgres:// or sqlite:, got "${databaseUrl}"`);

  const databaseSchema = env.DATABASE_SCHEMA || undefined;
  if (databaseSchema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(databaseSchema)) {
    throw new ConfigError('DATABASE_SCHEMA', 'must be a lowercase SQL identifier');
  }

  const logLevel = (env.LOG_LEVEL || 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }

  let publicUrl = env.PUBLIC_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  try {
    publicUrl = new URL(publicUrl).origin;
  } catch {
    throw new ConfigError('PUBLIC_URL', `must be an absolute URL, got "${publicUrl}"`);
  }

  return Object.freeze({
    host,
    port,
    publicUrl,
    dataDir,
    databaseUrl,
    dialect,
    databaseSchema,
    logLevel,
    searchIndex: boolVar(env, 'SEARCH_INDEX', true),
    demo: Object.freeze({
      enabled: boolVar(env, 'DEMO', true),
      seed: intVar(env, 'DEMO_SEED', 20261121, 0, 2 ** 31 - 1),
      scale: numberVar(env, 'DEMO_SCALE', 1, 0.001, 1.25),
    }),
    version,
    redisUrl: redisUrl(env),
    redisPrefix: redisPrefix(env),
    apiKeyPrefix: apiKeyPrefix(env),
    trustedProxies: Object.freeze(trustedProxies(env)),
    tierLimits: Object.freeze(tierLimits(env)),
    photoBaseUrl: absoluteOrigin(env, 'PHOTO_BASE_URL', publicUrl),
    photoCacheDir: resolve(env.PHOTO_CACHE_DIR || resolve(dataDir, 'photos')),
    upstream: Object.freeze({
      url: upstreamUrl(env),
      token: env.UPSTREAM_TOKEN || undefined,
      timeoutMs: intVar(env, 'UPSTREAM_TIMEOUT_MS', 10_000, 100, 600_000),
      liveTimeoutMs: intVar(env, 'UPSTREAM_LIVE_TIMEOUT_MS', 5_000, 100, 60_000),
      retries: intVar(env, 'UPSTREAM_RETRIES', 3, 0, 10),
    }),
    simulator: Object.freeze({
      enabled: boolVar(env, 'DEMO_UPSTREAM', true),
      speed: numberVar(env, 'SIM_SPEED', 60, 0.001, 100_000),
      faultRate: numberVar(env, 'SIM_FAULT_RATE', 0, 0, 1),
      latency: boolVar(env, 'SIM_LATENCY', true),
      port: intVar(env, 'SIM_PORT', 0, 0, 65535),
    }),
    refresh: boolVar(env, 'REFRESH', true),
  });
}

/** An absolute http(s) URL without a trailing slash (a path prefix is kept, unlike PUBLIC_URL). */
function absoluteOrigin(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (!raw) return fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must be an http or https URL, got "${raw}"`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

function upstreamUrl(env: Env): string | undefined {
  if (!env.UPSTREAM_URL) return undefined;
  return absoluteOrigin(env, 'UPSTREAM_URL', '');
}

function redisUrl(env: Env): string | undefined {
  const raw = env.REDIS_URL || undefined;
  if (raw !== undefined && !/^rediss?:\/\//.test(raw)) {
    throw new ConfigError('REDIS_URL', `must start with redis:// or rediss://, got "${raw}"`);
  }
  return raw;
}

function redisPrefix(env: Env): string {
  const prefix = env.REDIS_PREFIX || 'stoop';
  if (!/^[A-Za-z0-9:_-]{1,64}$/.test(prefix)) {
    throw new ConfigError('REDIS_PREFIX', 'must be 1–64 letters, digits, ":", "_" or "-"');
  }
  return prefix;
}

function apiKeyPrefix(env: Env): string {
  const prefix = env.API_KEY_PREFIX || 'STOOP';
  if (!/^[A-Z][A-Z0-9]{1,15}$/.test(prefix)) {
    throw new ConfigError(
      'API_KEY_PREFIX',
      'must be 2–16 uppercase letters or digits, starting with a letter',
    );
  }
  return prefix;
}

function trustedProxies(env: Env): string[] {
  const raw = env.TRUSTED_PROXIES?.trim();
  if (!raw) return [];
  return raw.split(',').map((entry) => {
    const value = entry.trim();
    const [address, bits] = value.split('/');
    const family = isIP(address ?? '');
    const maxBits = family === 6 ? 128 : 32;
    if (family === 0 || (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= maxBits))) {
      throw new ConfigError('TRUSTED_PROXIES', `has an invalid IP address or CIDR "${value}"`);
    }
    return value;
  });
}

/** Per-tier limits, each overridable: RATE_LIMIT_<TIER>, MONTHLY_QUOTA_<TIER>, OVERAGE_LIMIT_<TIER>. */
function tierLimits(env: Env): Record<Tier, TierLimits> {
  const out = {} as Record<Tier, TierLimits>;
  for (const tier of TIERS) {
    const base = DEFAULT_TIER_LIMITS[tier];
    out[tier] = Object.freeze({
      ratePerMinute: intVar(env, `RATE_LIMIT_${tier}`, base.ratePerMinute, 1, 1_000_000_000),
      monthlyQuota: intVar(env, `MONTHLY_QUOTA_${tier}`, base.monthlyQuota, 1, 1_000_000_000),
      overageLimit: intVar(env, `OVERAGE_LIMIT_${tier}`, base.overageLimit, 0, 1_000_000_000),
      maxPerPage: base.maxPerPage,
    });
  }
  return out;
}
