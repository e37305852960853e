import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { KindGuard, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import {
  concreteVariables,
  type Declaration,
  DerivedDefault,
  ENVIRONMENT,
  isTierDeclaration,
} from '../src/config/declaration.ts';
import { configurationTableIn, renderConfigurationTable } from '../src/config/docs.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { DEFAULT_TIER_LIMITS, TIERS } from '../src/domain/tiers.ts';

const README = new URL('../README.md', import.meta.url);

/** Loading must fail with a ConfigError whose message names the variable. */
function expectRejected(env: Record<string, string>, variable: string): void {
  expect(() => loadConfig(env)).toThrow(ConfigError);
  expect(() => loadConfig(env)).toThrow(variable);
}

describe('config', () => {
  it('defaults to the embedded store on 127.0.0.1:8080 and is frozen', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      dialect: 'sqlite',
      publicUrl: 'http://127.0.0.1:8080',
    });
    expect(config.databaseUrl).toMatch(/^sqlite:.*data\/stoop\.sqlite$/);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.demo)).toBe(true);
  });

  it('switches to PostgreSQL with a postgres:// DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@127.0.0.1:5432/x' }).dialect).toBe('postgres');
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ BACKGROUND_PRIORITY: 'low' }, 'BACKGROUND_PRIORITY'],
    [{ DEMO: 'perhaps' }, 'DEMO'],
    [{ DEMO_SCALE: '0' }, 'DEMO_SCALE'],
    [{ DEMO_SCALE: '2' }, 'DEMO_SCALE'],
    [{ DATABASE_SCHEMA: 'Robert"; drop' }, 'DATABASE_SCHEMA'],
    [{ HTTP_BODY_LIMIT_BYTES: '10' }, 'HTTP_BODY_LIMIT_BYTES'],
  ])('rejects %o naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(variable);
  });

  it('keeps the defaults it had before the environment was declared', () => {
    const dataDir = resolve('data');
    expect(loadConfig({}, '9.9.9')).toEqual({
      host: '127.0.0.1',
      port: 8080,
      publicUrl: 'http://127.0.0.1:8080',
      dataDir,
      databaseUrl: `sqlite:${resolve(dataDir, 'stoop.sqlite')}`,
      dialect: 'sqlite',
      databaseSchema: undefined,
      databaseQueryTimeoutMs: 10_000,
      searchIndex: true,
      logLevel: 'info',
      backgroundPriority: 'idle',
      demo: { enabled: true, seed: 20261121, scale: 1 },
      version: '9.9.9',
      redisUrl: undefined,
      redisPrefix: 'stoop',
      apiKeyPrefix: 'STOOP',
      apiKeyCacheMs: 1_000,
      trustedProxies: [],
      http: {
        requestTimeoutMs: 30_000,
        headersTimeoutMs: 10_000,
        keepAliveTimeoutMs: 5_000,
        idleTimeoutMs: 60_000,
        maxConnections: 1024,
        bodyLimitBytes: 64 * 1024,
      },
      tierLimits: DEFAULT_TIER_LIMITS,
      photoBaseUrl: 'http://127.0.0.1:8080',
      photoCacheDir: resolve(dataDir, 'photos'),
      photoCacheMaxBytes: 2048 * 1024 * 1024,
      photoMemoryCacheMaxBytes: 32 * 1024 * 1024,
      photoRendersPerMinute: 120,
      upstream: { url: undefined, token: undefined, timeoutMs: 10_000, liveTimeoutMs: 5_000, retries: 3 },
      simulator: { enabled: true, speed: 60, faultRate: 0, latency: true, port: 0 },
      refresh: true,
      webhooks: { allowHttp: false, allowedHosts: [] },
    });
  });

  it('reads set values, derives the rest from them, and ignores variables it does not declare', () => {
    const config = loadConfig({
      HOST: '::1',
      PORT: '9000',
      DATA_DIR: '/srv/stoop',
      LOG_LEVEL: 'warn',
      DEMO: 'off',
      SEARCH_INDEX: 'No',
      REFRESH: '0',
      SIM_LATENCY: 'YES',
      DEMO_SCALE: '0.5',
      TRUSTED_PROXIES: ' 10.0.0.1, 192.168.0.0/16 ,::1/128 ',
      UPSTREAM_URL: 'https://feed.example/odata/',
      PHOTO_BASE_URL: 'https://cdn.example/photos/',
      RATE_LIMIT_PRO: '7',
      OVERAGE_LIMIT_FREE: '0',
      MONTHLY_QUOTA_INTERNAL: '1',
      PATH: '/usr/bin',
      PORT_OF_CALL: 'not a port',
      RATE_LIMIT_GOLD: 'not a tier',
      UPSTREAM_TOKEN: '',
    });
    expect(config).toMatchObject({
      host: '::1',
      port: 9000,
      publicUrl: 'http://[::1]:9000',
      dataDir: '/srv/stoop',
      databaseUrl: 'sqlite:/srv/stoop/stoop.sqlite',
      photoCacheDir: '/srv/stoop/photos',
      logLevel: 'warn',
      demo: { enabled: false, scale: 0.5 },
      searchIndex: false,
      refresh: false,
      simulator: { latency: true },
      trustedProxies: ['10.0.0.1', '192.168.0.0/16', '::1/128'],
      upstream: { url: 'https://feed.example/odata', token: undefined },
      photoBaseUrl: 'https://cdn.example/photos',
    });
    expect(config.tierLimits.PRO).toEqual({ ...DEFAULT_TIER_LIMITS.PRO, ratePerMinute: 7 });
    expect(config.tierLimits.INTERNAL.monthlyQuota).toBe(1);
    expect(Object.isFrozen(config.tierLimits.PRO)).toBe(true);
    expect(Object.isFrozen(config.trustedProxies)).toBe(true);
  });

  it('never gives the headers longer than the whole request', () => {
    const config = loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '5000', HTTP_HEADERS_TIMEOUT_MS: '6000' });
    expect(config.http).toMatchObject({ requestTimeoutMs: 5000, headersTimeoutMs: 5000 });
  });

  it('keeps only the origin of PUBLIC_URL and checks the one it derives from HOST', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://stoop.example/api/' }).publicUrl).toBe('https://stoop.example');
    expectRejected({ HOST: 'not a host' }, 'PUBLIC_URL');
  });

  it.each([
    ['integer', { UPSTREAM_RETRIES: '1.5' }, 'UPSTREAM_RETRIES'],
    ['integer', { SIM_PORT: '0x10' }, 'SIM_PORT'],
    ['number', { SIM_SPEED: 'fast' }, 'SIM_SPEED'],
    ['boolean', { REFRESH: 'sometimes' }, 'REFRESH'],
    ['enum', { LOG_LEVEL: 'INFO' }, 'LOG_LEVEL'],
    ['pattern', { API_KEY_PREFIX: 'stoop' }, 'API_KEY_PREFIX'],
    ['pattern', { REDIS_URL: 'http://cache:6379' }, 'REDIS_URL'],
    ['pattern', { REDIS_PREFIX: 'has space' }, 'REDIS_PREFIX'],
    ['URL', { PUBLIC_URL: '/relative' }, 'PUBLIC_URL'],
    ['http(s) URL', { UPSTREAM_URL: 'ftp://feed.example' }, 'UPSTREAM_URL'],
    ['http(s) URL', { PHOTO_BASE_URL: 'cdn.example' }, 'PHOTO_BASE_URL'],
    ['CIDR list', { TRUSTED_PROXIES: '10.0.0.1,10.0.0.0/33' }, 'TRUSTED_PROXIES'],
    ['CIDR list', { TRUSTED_PROXIES: '10.0.0.1,,10.0.0.2' }, 'TRUSTED_PROXIES'],
    ['per-tier integer', { RATE_LIMIT_BUSINESS: 'many' }, 'RATE_LIMIT_BUSINESS'],
  ])('rejects a bad %s: %o naming %s', (_kind, env, variable) => {
    expectRejected(env, variable);
  });

  it('names the offending entry of a list', () => {
    expect(() => loadConfig({ TRUSTED_PROXIES: '10.0.0.1, 300.0.0.1' })).toThrow('"300.0.0.1"');
  });

  describe('swept from the declaration', () => {
    const variables = concreteVariables();

    it('declares every variable the service reads, tiers expanded', () => {
      expect(variables.map((variable) => variable.name)).toEqual(
        expect.arrayContaining(['PORT', 'DEMO_SCALE', ...TIERS.map((tier) => `OVERAGE_LIMIT_${tier}`)]),
      );
      expect(new Set(variables.map((variable) => variable.name)).size).toBe(variables.length);
    });

    it('has value defaults that pass their own schema', () => {
      for (const [name, declaration] of Object.entries(ENVIRONMENT) as [string, Declaration][]) {
        const defaults = isTierDeclaration(declaration)
          ? Object.values(declaration.defaultByTier)
          : [declaration.default];
        for (const value of defaults) {
          if (value === undefined || value instanceof DerivedDefault) continue;
          expect(Value.Check(declaration.type, value), `default of ${name}`).toBe(true);
        }
      }
    });

    const numeric = variables.flatMap(({ name, type }) =>
      KindGuard.IsInteger(type) || KindGuard.IsNumber(type) ? [{ name, type }] : [],
    );

    it.each(numeric)('accepts $name at its bounds and rejects it past them', ({ name, type }) => {
      expect(type.minimum, `${name} declares a minimum`).toBeDefined();
      expect(type.maximum, `${name} declares a maximum`).toBeDefined();
      for (const bound of [type.minimum, type.maximum]) {
        if (bound !== undefined) expect(() => loadConfig({ [name]: String(bound) })).not.toThrow();
      }
      if (type.minimum !== undefined) expectRejected({ [name]: String(type.minimum - 1) }, name);
      if (type.maximum !== undefined) expectRejected({ [name]: String(type.maximum + 1) }, name);
    });

    /** Every declared type except free text (a string without a pattern or format) constrains its values. */
    function constrains(type: TSchema): boolean {
      return !KindGuard.IsString(type) || type.pattern !== undefined || type.format !== undefined;
    }
    const constrained = variables.filter(({ type }) => constrains(type));

    it.each(constrained)('rejects a malformed $name, naming it', ({ name }) => {
      expectRejected({ [name]: 'not valid!' }, name);
    });
  });

  describe('README', () => {
    const readme = readFileSync(README, 'utf8');

    it('holds the configuration table rendered from the declaration', () => {
      expect(
        configurationTableIn(readme),
        'README.md configuration table differs from src/config/declaration.ts: run `npm run docs:config` and commit README.md',
      ).toBe(renderConfigurationTable());
    });

    it('documents every declared variable in a row of its own', () => {
      const documented = configurationTableIn(readme)
        .split('\n')
        .map((line) => /^\| `([^`]+)` \|/.exec(line)?.[1])
        .filter((name) => name !== undefined);
      expect(documented.sort()).toEqual(Object.keys(ENVIRONMENT).sort());
    });
  });
});
