import { resolve } from 'node:path';
import { ConfigError, type Env, readTierVariable, readVariable } from './config/read-environment.ts';
import { DEFAULT_TIER_LIMITS, TIERS, type Tier, type TierLimits } from './domain/tiers.ts';
import type { BackgroundPriority } from './platform/worker/background-priority.ts';

export { ConfigError } from './config/read-environment.ts';

/**
 * Process configuration, parsed once from the environment and frozen.
 *
 * Contract: every variable is validated here, at boot; a bad value stops the
 * process with a message naming the variable, instead of surfacing later as a
 * confusing runtime failure. Variables are declared (type, bounds, default,
 * meaning) once, in `config/declaration.ts`; this module derives the values
 * that depend on several of them.
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
  /** PostgreSQL: deadline of every statement, ms (client and server side); bounds connecting too. */
  readonly databaseQueryTimeoutMs: number;
  /** Serve default (ACTIVE-only) searches from the in-memory index; off = always SQL. */
  readonly searchIndex: boolean;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** How read-model rebuild threads yield the CPU to the request thread (platform/worker/threads.ts). */
  readonly backgroundPriority: BackgroundPriority;
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
  /** How long a looked-up API key is reused (0: every request reads it). */
  readonly apiKeyCacheMs: number;
  /** Peers whose X-Forwarded-For is believed (IPs or CIDRs); empty: use the socket address. */
  readonly trustedProxies: readonly string[];
  /** Bounds of the HTTP edge: what one client may hold of the server, and for how long. */
  readonly http: {
    /** Time to receive a whole request (headers and body), ms; then 408 and the connection closes. */
    readonly requestTimeoutMs: number;
    /** Time to receive the request line and headers, ms; capped at `requestTimeoutMs`. */
    readonly headersTimeoutMs: number;
    /** Idle time allowed between two requests on a kept-alive connection, ms. */
    readonly keepAliveTimeoutMs: number;
    /** Inactivity (no byte either way) after which a connection is closed, ms. */
    readonly idleTimeoutMs: number;
    /** Connections served at once; more are closed as they arrive. */
    readonly maxConnections: number;
    /** Largest request body accepted, bytes (413 beyond). */
    readonly bodyLimitBytes: number;
  };
  readonly tierLimits: Readonly<Record<Tier, TierLimits>>;
  /** Origin of photo URLs in responses: `{photoBaseUrl}/fp/<key>-<size>.webp`. Defaults to PUBLIC_URL. */
  readonly photoBaseUrl: string;
  /** Where rendered photo variants are cached on disk. */
  readonly photoCacheDir: string;
  /** Bound on the bytes of the photo cache's files (PHOTO_CACHE_MAX_MB); LRU eviction keeps within it. */
  readonly photoCacheMaxBytes: number;
  /** Bound on the bytes of recently served photo variants kept in memory (PHOTO_MEMORY_CACHE_MB); 0: none. */
  readonly photoMemoryCacheMaxBytes: number;
  /** New photo renders (cache misses) a client may cause per minute: by IP on `/fp/`, by account with a key. */
  readonly photoRendersPerMinute: number;
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
  /** Outbound webhook deliveries (SSRF policy): both off by default. */
  readonly webhooks: {
    /** Plain http URLs accepted (local development). */
    readonly allowHttp: boolean;
    /** Hosts let through the public-address check, lowercased. */
    readonly allowedHosts: readonly string[];
  };
}

/**
 * Parses the environment into a frozen Config. Variables the declaration does
 * not name are ignored (the process environment holds many).
 */
export function loadConfig(env: Env = process.env, version = '0.1.0'): Config {
  const host = readVariable(env, 'HOST');
  const port = readVariable(env, 'PORT');
  const dataDir = resolve(readVariable(env, 'DATA_DIR'));
  const databaseUrl = readVariable(env, 'DATABASE_URL') ?? `sqlite:${resolve(dataDir, 'stoop.sqlite')}`;
  // The declared pattern admits only these two prefixes.
  const dialect: Config['dialect'] = /^postgres(ql)?:\/\//.test(databaseUrl) ? 'postgres' : 'sqlite';
  const publicUrl = originOf(
    'PUBLIC_URL',
    readVariable(env, 'PUBLIC_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
  );
  const photoBaseUrl = readVariable(env, 'PHOTO_BASE_URL');
  const upstreamUrl = readVariable(env, 'UPSTREAM_URL');

  return Object.freeze({
    host,
    port,
    publicUrl,
    dataDir,
    databaseUrl,
    dialect,
    databaseSchema: readVariable(env, 'DATABASE_SCHEMA'),
    databaseQueryTimeoutMs: readVariable(env, 'DATABASE_QUERY_TIMEOUT_MS'),
    logLevel: readVariable(env, 'LOG_LEVEL'),
    backgroundPriority: readVariable(env, 'BACKGROUND_PRIORITY'),
    searchIndex: readVariable(env, 'SEARCH_INDEX'),
    demo: Object.freeze({
      enabled: readVariable(env, 'DEMO'),
      seed: readVariable(env, 'DEMO_SEED'),
      scale: readVariable(env, 'DEMO_SCALE'),
    }),
    version,
    redisUrl: readVariable(env, 'REDIS_URL'),
    redisPrefix: readVariable(env, 'REDIS_PREFIX'),
    apiKeyPrefix: readVariable(env, 'API_KEY_PREFIX'),
    apiKeyCacheMs: readVariable(env, 'API_KEY_CACHE_MS'),
    trustedProxies: Object.freeze(readVariable(env, 'TRUSTED_PROXIES') ?? []),
    http: httpLimits(env),
    tierLimits: Object.freeze(tierLimits(env)),
    photoBaseUrl: photoBaseUrl === undefined ? publicUrl : withoutTrailingSlash(photoBaseUrl),
    photoCacheDir: resolve(readVariable(env, 'PHOTO_CACHE_DIR') ?? resolve(dataDir, 'photos')),
    photoCacheMaxBytes: Math.floor(readVariable(env, 'PHOTO_CACHE_MAX_MB') * 1024 * 1024),
    photoMemoryCacheMaxBytes: Math.floor(readVariable(env, 'PHOTO_MEMORY_CACHE_MB') * 1024 * 1024),
    photoRendersPerMinute: readVariable(env, 'PHOTO_RENDERS_PER_MINUTE'),
    upstream: Object.freeze({
      url: upstreamUrl === undefined ? undefined : withoutTrailingSlash(upstreamUrl),
      token: readVariable(env, 'UPSTREAM_TOKEN'),
      timeoutMs: readVariable(env, 'UPSTREAM_TIMEOUT_MS'),
      liveTimeoutMs: readVariable(env, 'UPSTREAM_LIVE_TIMEOUT_MS'),
      retries: readVariable(env, 'UPSTREAM_RETRIES'),
    }),
    simulator: Object.freeze({
      enabled: readVariable(env, 'DEMO_UPSTREAM'),
      speed: readVariable(env, 'SIM_SPEED'),
      faultRate: readVariable(env, 'SIM_FAULT_RATE'),
      latency: readVariable(env, 'SIM_LATENCY'),
      port: readVariable(env, 'SIM_PORT'),
    }),
    refresh: readVariable(env, 'REFRESH'),
    webhooks: Object.freeze({
      allowHttp: readVariable(env, 'WEBHOOK_ALLOW_HTTP'),
      allowedHosts: Object.freeze(
        (readVariable(env, 'WEBHOOK_ALLOWED_HOSTS') ?? []).map((host) =>
          host.toLowerCase().replace(/^\[(.*)\]$/, '$1'),
        ),
      ),
    }),
  });
}

/**
 * The origin of an absolute URL. PUBLIC_URL's format is checked when it is set,
 * but its default is built from HOST, which is not validated, so it is checked here.
 */
function originOf(variable: string, url: string): string {
  if (!URL.canParse(url)) throw new ConfigError(variable, `must be an absolute URL, got "${url}"`);
  return new URL(url).origin;
}

/** Origin and path of an (already validated) http(s) URL, without a trailing slash: a path prefix is kept. */
function withoutTrailingSlash(url: string): string {
  const { origin, pathname } = new URL(url);
  return `${origin}${pathname}`.replace(/\/+$/, '');
}

/** The HTTP edge's bounds. Headers are never given longer than the whole request (Node requires it). */
function httpLimits(env: Env): Config['http'] {
  const requestTimeoutMs = readVariable(env, 'HTTP_REQUEST_TIMEOUT_MS');
  return Object.freeze({
    requestTimeoutMs,
    headersTimeoutMs: Math.min(readVariable(env, 'HTTP_HEADERS_TIMEOUT_MS'), requestTimeoutMs),
    keepAliveTimeoutMs: readVariable(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS'),
    idleTimeoutMs: readVariable(env, 'HTTP_IDLE_TIMEOUT_MS'),
    maxConnections: readVariable(env, 'HTTP_MAX_CONNECTIONS'),
    bodyLimitBytes: readVariable(env, 'HTTP_BODY_LIMIT_BYTES'),
  });
}

/** Per-tier limits, each overridable: RATE_LIMIT_<TIER>, MONTHLY_QUOTA_<TIER>, OVERAGE_LIMIT_<TIER>. */
function tierLimits(env: Env): Record<Tier, TierLimits> {
  const entries = TIERS.map((tier) => {
    const limits: TierLimits = Object.freeze({
      ratePerMinute: readTierVariable(env, 'RATE_LIMIT_<TIER>', tier),
      monthlyQuota: readTierVariable(env, 'MONTHLY_QUOTA_<TIER>', tier),
      overageLimit: readTierVariable(env, 'OVERAGE_LIMIT_<TIER>', tier),
      maxPerPage: DEFAULT_TIER_LIMITS[tier].maxPerPage,
    });
    return [tier, limits] as const;
  });
  return Object.fromEntries(entries) as Record<Tier, TierLimits>;
}
