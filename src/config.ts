import { resolve } from 'node:path';

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
  });
}
