/**
 * The environment this service reads, declared once. Each entry is the single
 * source of a variable's name, TypeBox type (bounds, enum, pattern, format),
 * default, meaning and group:
 *
 * - `read-environment.ts` parses and validates a variable against its entry;
 * - `docs.ts` renders the README's Configuration table from the entries;
 * - `../config.ts` turns the parsed values into the frozen `Config`, adding what
 *   is derived (dialect, origins, per-tier limits).
 *
 * Adding a variable here documents it (`npm run docs:config` rewrites README.md;
 * a test fails until it does).
 */
import { KindGuard, type Static, type TSchema, Type } from '@sinclair/typebox';
import { DEFAULT_TIER_LIMITS, TIERS, type Tier } from '../domain/tiers.ts';
import { BACKGROUND_PRIORITIES } from '../platform/worker/background-priority.ts';

/** Sections of the Configuration table, in the order they are documented. */
export const CONFIG_GROUPS = {
  server: 'HTTP server',
  storage: 'Storage and search',
  access: 'API keys, rate limits and quotas',
  upstream: 'Upstream feed and refresh',
  demo: 'Demo market and simulator',
  photos: 'Photos',
  webhooks: 'Webhooks',
} as const;
export type ConfigGroup = keyof typeof CONFIG_GROUPS;

/**
 * A default computed in `loadConfig` from other variables. `rule` is the
 * default as the docs state it (e.g. `http://HOST:PORT`); reading such a
 * variable when it is unset gives `undefined`, and `loadConfig` applies the rule.
 */
export class DerivedDefault {
  readonly rule: string;
  constructor(rule: string) {
    this.rule = rule;
  }
}

/**
 * Formats the environment reader knows how to check (registered with TypeBox
 * in `read-environment.ts`); a schema naming any other format fails every value.
 */
export const ABSOLUTE_URL = 'absolute-url';
export const HTTP_URL = 'http-url';
export const IP_OR_CIDR = 'ip-or-cidr';

/**
 * One variable. Unset and empty both mean "use the default"; `default` is a
 * value of the variable's type, a `DerivedDefault`, or `undefined` for
 * "none" (the value is then `undefined`).
 */
export interface VariableDeclaration<T extends TSchema = TSchema, D = unknown> {
  readonly group: ConfigGroup;
  /** Integer/Number (with minimum/maximum), Boolean, Union of string literals, String (pattern/format), or Array of those strings (comma list). */
  readonly type: T;
  readonly default: D;
  /** Meaning, as the docs show it (Markdown). */
  readonly description: string;
  /**
   * Accepted values in words, where the schema alone would read poorly (a
   * pattern, a format): plain text, used by the docs and in error messages.
   */
  readonly accepts?: string;
}

/**
 * A family of variables, one per tier: the key holds `<TIER>`, replaced by a
 * tier name to give each variable's name (`RATE_LIMIT_<TIER>` → `RATE_LIMIT_PRO`).
 */
export interface TierVariableDeclaration<T extends TSchema = TSchema> {
  readonly group: ConfigGroup;
  readonly type: T;
  readonly defaultByTier: Readonly<Record<Tier, Static<T>>>;
  readonly description: string;
}

export type Declaration = VariableDeclaration | TierVariableDeclaration;

export const TIER_PLACEHOLDER = '<TIER>';

/** Declares one variable, checking (at compile time) that a value default fits its type. */
function variable<T extends TSchema, const D extends Static<T> | DerivedDefault | undefined>(
  declaration: VariableDeclaration<T, D>,
): VariableDeclaration<T, D> {
  return declaration;
}

function perTier<T extends TSchema>(declaration: TierVariableDeclaration<T>): TierVariableDeclaration<T> {
  return declaration;
}

function derived(rule: string): DerivedDefault {
  return new DerivedDefault(rule);
}

function defaultsByTier(limit: 'ratePerMinute' | 'monthlyQuota' | 'overageLimit'): Record<Tier, number> {
  return Object.fromEntries(TIERS.map((tier) => [tier, DEFAULT_TIER_LIMITS[tier][limit]])) as Record<
    Tier,
    number
  >;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const TIER_LIMIT = Type.Integer({ minimum: 1, maximum: 1_000_000_000 });
const PORT_NUMBER = Type.Integer({ minimum: 0, maximum: 65535 });

/** Every variable, in documentation order within its group. */
export const ENVIRONMENT = {
  HOST: variable({
    group: 'server',
    type: Type.String(),
    default: '127.0.0.1',
    description: 'listen address',
    accepts: 'host name or IP address',
  }),
  PORT: variable({
    group: 'server',
    type: PORT_NUMBER,
    default: 8080,
    description: 'listen port',
  }),
  PUBLIC_URL: variable({
    group: 'server',
    type: Type.String({ format: ABSOLUTE_URL }),
    default: derived('http://HOST:PORT'),
    description: 'public origin used in links (pagination, OAuth discovery); only the origin is kept',
    accepts: 'an absolute URL',
  }),
  LOG_LEVEL: variable({
    group: 'server',
    type: Type.Union(LOG_LEVELS.map((level) => Type.Literal(level))),
    default: 'info',
    description: 'log verbosity (`silent`: no logs)',
  }),
  BACKGROUND_PRIORITY: variable({
    group: 'server',
    type: Type.Union(BACKGROUND_PRIORITIES.map((priority) => Type.Literal(priority))),
    default: 'idle',
    description:
      'CPU priority of the read-model rebuild threads (search index, market statistics) beside the request thread, on Linux: `idle` runs them in the `SCHED_IDLE` class (a request that arrives takes their CPU at once), `nice` at nice 10 (they keep about a tenth of a busy CPU and may hold it for a scheduler slice of a few ms while a request waits). Writers (refresh cycles, backfill, deliveries) always run at nice 10: a starved writer could hold the SQLite write lock requests wait for',
  }),
  TRUSTED_PROXIES: variable({
    group: 'server',
    type: Type.Array(Type.String({ format: IP_OR_CIDR })),
    default: undefined,
    description: 'proxies whose `X-Forwarded-For` is believed; unset: the socket address is the client',
    accepts: 'a comma list of IP addresses or CIDRs',
  }),
  HTTP_REQUEST_TIMEOUT_MS: variable({
    group: 'server',
    type: Type.Integer({ minimum: 100, maximum: 600_000 }),
    default: 30_000,
    description:
      'time a client has to send a whole request, headers and body; then 408 `REQUEST_TIMEOUT` and the connection is closed',
  }),
  HTTP_HEADERS_TIMEOUT_MS: variable({
    group: 'server',
    type: Type.Integer({ minimum: 100, maximum: 600_000 }),
    default: 10_000,
    description:
      'time a client has to send the request line and headers (capped at `HTTP_REQUEST_TIMEOUT_MS`); then 408 and the connection is closed',
  }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: variable({
    group: 'server',
    type: Type.Integer({ minimum: 100, maximum: 600_000 }),
    default: 5_000,
    description:
      "how long an idle kept-alive connection stays open between requests (behind a proxy that reuses connections, set it above the proxy's idle timeout)",
  }),
  HTTP_IDLE_TIMEOUT_MS: variable({
    group: 'server',
    type: Type.Integer({ minimum: 1_000, maximum: 3_600_000 }),
    default: 60_000,
    description:
      'a connection on which nothing moves for this long, either way (a stalled upload, a client not reading its answer), is closed',
  }),
  HTTP_MAX_CONNECTIONS: variable({
    group: 'server',
    type: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    default: 1024,
    description: 'open connections served at once; connections past it are closed as they arrive',
  }),
  HTTP_BODY_LIMIT_BYTES: variable({
    group: 'server',
    type: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024 }),
    default: 64 * 1024,
    description:
      'largest request body accepted; a larger one is 413 `PAYLOAD_TOO_LARGE` and the connection is closed',
  }),

  DATA_DIR: variable({
    group: 'storage',
    type: Type.String(),
    default: './data',
    description: 'where the embedded SQLite store (and, by default, the photo cache) lives',
    accepts: 'a directory path',
  }),
  DATABASE_URL: variable({
    group: 'storage',
    type: Type.String({ pattern: '^(postgres(ql)?://|sqlite:)' }),
    default: derived('sqlite:$DATA_DIR/stoop.sqlite'),
    description: '`postgres://user@host:5432/db` switches to PostgreSQL',
    accepts: 'a postgres:// (or postgresql://) URL, or sqlite: followed by a file path',
  }),
  DATABASE_SCHEMA: variable({
    group: 'storage',
    type: Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' }),
    default: undefined,
    description: 'PostgreSQL schema to use (created if missing; tests isolate runs with a fresh one)',
    accepts: 'a lowercase SQL identifier of at most 63 characters',
  }),
  DATABASE_QUERY_TIMEOUT_MS: variable({
    group: 'storage',
    type: Type.Integer({ minimum: 100, maximum: 600_000 }),
    default: 10_000,
    description:
      'PostgreSQL: deadline of every statement (client and server side; connecting waits at most the smaller of it and 5 s); past it the request is 503 `SERVICE_UNAVAILABLE`',
  }),
  SEARCH_INDEX: variable({
    group: 'storage',
    type: Type.Boolean(),
    default: true,
    description: 'answer every search from the in-memory read model (`false`: always SQL)',
  }),

  API_KEY_PREFIX: variable({
    group: 'access',
    type: Type.String({ pattern: '^[A-Z][A-Z0-9]{1,15}$' }),
    default: 'STOOP',
    description: 'the word before the UUID in API keys (`STOOP-<uuid>`)',
    accepts: '2–16 uppercase letters or digits, starting with a letter',
  }),
  API_KEY_CACHE_MS: variable({
    group: 'access',
    type: Type.Integer({ minimum: 0, maximum: 60_000 }),
    default: 1_000,
    description:
      'how long a process reuses an API key it looked up before reading it again: revoking, disabling or re-tiering a key takes effect at once on the process that did it and within this time on every other (other nodes, the CLI); `0`: read the key on every request',
  }),
  REDIS_URL: variable({
    group: 'access',
    type: Type.String({ pattern: '^rediss?://' }),
    default: undefined,
    description:
      '`redis://host:6379`: rate windows and quotas shared by every process; unset: embedded (memory and database)',
    accepts: 'a redis:// or rediss:// URL',
  }),
  REDIS_PREFIX: variable({
    group: 'access',
    type: Type.String({ pattern: '^[A-Za-z0-9:_-]{1,64}$' }),
    default: 'stoop',
    description: "prefix of this deployment's Redis keys (deployments sharing a Redis need distinct ones)",
    accepts: '1–64 letters, digits, ":", "_" or "-"',
  }),
  'RATE_LIMIT_<TIER>': perTier({
    group: 'access',
    type: TIER_LIMIT,
    defaultByTier: defaultsByTier('ratePerMinute'),
    description: 'requests per one-minute window of a key of that tier',
  }),
  'MONTHLY_QUOTA_<TIER>': perTier({
    group: 'access',
    type: TIER_LIMIT,
    defaultByTier: defaultsByTier('monthlyQuota'),
    description: 'counted requests per calendar month (UTC) of a key of that tier',
  }),
  'OVERAGE_LIMIT_<TIER>': perTier({
    group: 'access',
    type: Type.Integer({ minimum: 0, maximum: 1_000_000_000 }),
    defaultByTier: defaultsByTier('overageLimit'),
    description:
      'requests allowed past the monthly quota (answered with `X-Quota-Overage: true`; then 429 until next month)',
  }),

  UPSTREAM_URL: variable({
    group: 'upstream',
    type: Type.String({ format: HTTP_URL }),
    default: undefined,
    description:
      "RESO Web API service root of a licensed feed; unset: the demo's in-process market simulator (with `DEMO` on), else no upstream",
    accepts: 'an absolute http or https URL',
  }),
  UPSTREAM_TOKEN: variable({
    group: 'upstream',
    type: Type.String(),
    default: undefined,
    description: 'bearer token for the upstream (never logged; `stoop origin` requires it when set)',
    accepts: 'a token',
  }),
  UPSTREAM_TIMEOUT_MS: variable({
    group: 'upstream',
    type: Type.Integer({ minimum: 100, maximum: 600_000 }),
    default: 10_000,
    description: 'per-request timeout of list pages and background fetches, ms',
  }),
  UPSTREAM_LIVE_TIMEOUT_MS: variable({
    group: 'upstream',
    type: Type.Integer({ minimum: 100, maximum: 60_000 }),
    default: 5_000,
    description: 'deadline of a live listing read (Business/Internal `GET /v1/property/{id}`), ms',
  }),
  UPSTREAM_RETRIES: variable({
    group: 'upstream',
    type: Type.Integer({ minimum: 0, maximum: 10 }),
    default: 3,
    description:
      'retries of a retryable failure (timeout, 5xx, network), with exponential backoff and jitter',
  }),
  REFRESH: variable({
    group: 'upstream',
    type: Type.Boolean(),
    default: true,
    description:
      'run the scheduled refresh cycles (search 4–6 h, buildings 24 h; scaled by `SIM_SPEED` in the demo)',
  }),

  DEMO: variable({
    group: 'demo',
    type: Type.Boolean(),
    default: true,
    description: 'load the demo market into an empty store on first start',
  }),
  DEMO_SEED: variable({
    group: 'demo',
    type: Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 }),
    default: 20261121,
    description: 'demo generator seed',
  }),
  DEMO_SCALE: variable({
    group: 'demo',
    type: Type.Number({ minimum: 0.001, maximum: 1.25 }),
    default: 1,
    description: 'demo market size multiplier (1 ≈ 25,000 active rentals)',
  }),
  DEMO_UPSTREAM: variable({
    group: 'demo',
    type: Type.Boolean(),
    default: true,
    description: 'run the market simulator for the demo; `false` serves the demo market as loaded',
  }),
  SIM_SPEED: variable({
    group: 'demo',
    type: Type.Number({ minimum: 0.001, maximum: 100_000 }),
    default: 60,
    description:
      'simulated seconds per real second of the demo market clock (listing dates, price events, data times, refresh schedule); keys, rate limits, quotas and `health.time` always run on real time',
  }),
  SIM_LATENCY: variable({
    group: 'demo',
    type: Type.Boolean(),
    default: true,
    description: 'inject realistic simulator latency (detail fetch 0.5–3 s)',
  }),
  SIM_FAULT_RATE: variable({
    group: 'demo',
    type: Type.Number({ minimum: 0, maximum: 1 }),
    default: 0,
    description: 'share of simulator requests that fail (half time out, half answer 5xx)',
  }),
  SIM_PORT: variable({
    group: 'demo',
    type: PORT_NUMBER,
    default: 0,
    description: 'port of `stoop origin` (0 = any free port)',
  }),

  PHOTO_BASE_URL: variable({
    group: 'photos',
    type: Type.String({ format: HTTP_URL }),
    default: derived('PUBLIC_URL'),
    description:
      'origin of photo URLs in responses (`{PHOTO_BASE_URL}/fp/<key>-<size>.webp`; a path prefix is kept)',
    accepts: 'an absolute http or https URL',
  }),
  PHOTO_CACHE_DIR: variable({
    group: 'photos',
    type: Type.String(),
    default: derived('$DATA_DIR/photos'),
    description: 'where rendered photo variants are cached',
    accepts: 'a directory path',
  }),
  PHOTO_CACHE_MAX_MB: variable({
    group: 'photos',
    type: Type.Number({ minimum: 0.01, maximum: 100_000_000 }),
    default: 2048,
    description:
      'bound on the photo cache, in MiB (bytes of the cached files); the least recently used variants are evicted to stay within it',
  }),
  PHOTO_MEMORY_CACHE_MB: variable({
    group: 'photos',
    type: Type.Number({ minimum: 0, maximum: 1_000_000 }),
    default: 32,
    description:
      'bound on the photo variants kept in memory, in MiB (0 = none): the most recently served ones are answered without reading the disk cache',
  }),
  PHOTO_RENDERS_PER_MINUTE: variable({
    group: 'photos',
    type: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
    default: 120,
    description:
      'new photo renders (cache misses) a client may cause per one-minute window: by IP on `/fp/`, by account with a key; past it a miss is a 429, a cached photo is still served',
  }),
  // --- Webhooks (src/platform/outbound): both off by default; for local development and tests.
  WEBHOOK_ALLOW_HTTP: variable({
    group: 'webhooks',
    type: Type.Boolean(),
    default: false,
    description: 'accept plain `http://` webhook URLs (local development); otherwise https only',
  }),
  WEBHOOK_ALLOWED_HOSTS: variable({
    group: 'webhooks',
    type: Type.Array(Type.String({ pattern: '^[A-Za-z0-9._:-]{1,253}$' })),
    default: undefined,
    description:
      'webhook hosts let through the public-address check (e.g. `127.0.0.1,localhost` for a local receiver); matched against the URL host exactly',
    accepts: 'a comma list of host names or IP addresses',
  }),
} satisfies Record<string, Declaration>;

type Environment = typeof ENVIRONMENT;
export type DeclaredName = keyof Environment;

/** Names of single variables (not per-tier families). */
export type VariableName = {
  [K in DeclaredName]: Environment[K] extends VariableDeclaration ? K : never;
}[DeclaredName];

export type TierFamilyName = Exclude<DeclaredName, VariableName>;

/** What reading a variable gives: its type, or `undefined` too when its default is none or derived. */
export type VariableValue<N extends VariableName> =
  Environment[N] extends VariableDeclaration<infer T, infer D>
    ? Static<T> | (D extends DerivedDefault | undefined ? undefined : never)
    : never;

export type TierVariableValue<F extends TierFamilyName> =
  Environment[F] extends TierVariableDeclaration<infer T> ? Static<T> : never;

export function isTierDeclaration(declaration: Declaration): declaration is TierVariableDeclaration {
  return 'defaultByTier' in declaration;
}

export function tierVariableName(family: string, tier: Tier): string {
  return family.replace(TIER_PLACEHOLDER, tier);
}

/** One concrete environment variable: a single variable, or one tier's member of a family. */
export interface ConcreteVariable {
  readonly name: string;
  /** The key it is declared under (the family's, for a per-tier variable). */
  readonly declaredAs: DeclaredName;
  readonly type: TSchema;
  readonly tier: Tier | undefined;
}

/** Every variable name the service reads, families expanded (for checks and tests). */
export function concreteVariables(): readonly ConcreteVariable[] {
  return (Object.entries(ENVIRONMENT) as [DeclaredName, Declaration][]).flatMap(
    ([key, declaration]): ConcreteVariable[] =>
      isTierDeclaration(declaration)
        ? TIERS.map((tier) => ({
            name: tierVariableName(key, tier),
            declaredAs: key,
            type: declaration.type,
            tier,
          }))
        : [{ name: key, declaredAs: key, type: declaration.type, tier: undefined }],
  );
}

/** The members of a union of literals (the declaration's enum form). */
export function literalsOf(schema: TSchema): string[] {
  if (!KindGuard.IsUnion(schema)) return [];
  return schema.anyOf.filter((member) => KindGuard.IsLiteral(member)).map((member) => String(member.const));
}
