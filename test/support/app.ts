import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { buildApp, compose, type RefresherParts, type Services } from '../../src/app.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { TIERS } from '../../src/domain/tiers.ts';
import type { HttpApp } from '../../src/http/server.ts';
import type { RefreshPort } from '../../src/modules/freshness/refresh-port.ts';
import { type Clock, ManualClock } from '../../src/platform/clock.ts';
import type { Store } from '../../src/platform/db/database.ts';
import { syncAreas } from '../../src/reference/areas-store.ts';
import { loadDemoMarketFromTemplate } from './demo-template.ts';
import { dropRedisNamespace, isolatedLimitsEnv } from './server-process.ts';
import { createTestStore, onThisThread, TEST_DIALECT } from './store.ts';

/** The instant every test market is generated at and the test clock starts from. */
export const TEST_NOW = new Date('2026-11-01T15:00:00.000Z');
export const TEST_SEED = 7;

/** Rate windows and monthly quotas out of the way, for every tier: for tests that are not about limits. */
export const UNLIMITED: Readonly<Record<string, string>> = Object.fromEntries(
  TIERS.flatMap((tier) => [
    [`RATE_LIMIT_${tier}`, '1000000'],
    [`MONTHLY_QUOTA_${tier}`, '1000000'],
  ]),
);

export interface TestApp {
  app: HttpApp;
  /** Every service of the app, as the composition root built them. */
  ctx: Services;
  store: Store;
  /**
   * The wall clock, set to TEST_NOW; also the market clock unless the test
   * gave one (`marketClock`), so moving it moves both.
   */
  clock: ManualClock;
  config: Config;
  /** Base URL of the listening server (real HTTP over loopback). */
  url: string;
  /** An INTERNAL-tier key issued for the test; `get` sends it unless told otherwise. */
  internalKey: string;
  /** GET as the internal key (functional tests are not about limits). */
  get(path: string, init?: RequestInit): Promise<Response>;
  /** GET with the given key, or anonymously with null. */
  getAs(key: string | null, path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Demo market scale to load; 0 loads no market (areas only). */
  scale?: number;
  seed?: number;
  env?: Record<string, string>;
  /**
   * The refresh pipeline as read paths see it (default: none, a read-only store);
   * a factory receives the app's store, clock and data version.
   */
  refresher?: RefreshPort | ((parts: RefresherParts) => RefreshPort);
  /** A market clock apart from the wall clock (e.g. a fast one over it); default: the wall clock itself. */
  marketClock?: (wall: ManualClock) => Clock;
  /**
   * Index builds and market figures on worker threads, as a deployment over a
   * shared store runs them (PostgreSQL only: an in-memory SQLite store has
   * none). Default: on this thread (`onThisThread`).
   */
  workerThreads?: boolean;
}

/**
 * One harness for route tests: a fresh store on the dialect under test, the
 * area tree, optionally a small demo market (the loader's rows, copied from
 * a template: ./demo-template.ts), the app listening on a random
 * loopback port, and a manual clock set to TEST_NOW.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const store = await createTestStore();
  const scale = options.scale ?? 0.02;
  if (scale > 0)
    await loadDemoMarketFromTemplate(store, { seed: options.seed ?? TEST_SEED, scale, now: TEST_NOW });
  else await syncAreas(store);
  const clock = new ManualClock(TEST_NOW);
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: TEST_DIALECT === 'postgres' ? process.env.DATABASE_URL : 'sqlite::memory:',
    PUBLIC_URL: 'http://stoop.test',
    // Functional tests call as INTERNAL; its window must not be what they hit.
    RATE_LIMIT_INTERNAL: '1000000',
    // CI's PostgreSQL pass also runs the limits on Redis.
    REDIS_URL: process.env.REDIS_URL ?? '',
    BACKGROUND_PRIORITY: process.env.BACKGROUND_PRIORITY ?? 'nice',
    ...options.env,
  });
  // Its own Redis namespace unless the test chose one (REDIS_PREFIX), removed on close.
  const ownNamespace = options.env?.REDIS_PREFIX === undefined ? `stoop-test:${randomUUID()}` : undefined;
  const composition = await compose({
    config,
    store: options.workerThreads ? store : onThisThread(store),
    wallClock: clock,
    marketClock: options.marketClock?.(clock) ?? clock,
    limitsNamespace: ownNamespace ?? config.redisPrefix,
    ...(options.refresher ? { refresher: options.refresher } : {}),
  });
  const ctx = composition.services;
  const app = await buildApp(ctx, { logger: false });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const internalKey = (await ctx.subscriptions.issue({ accountId: 'stoop-tests', tier: 'INTERNAL' })).key;
  const getAs = (key: string | null, path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (key !== null && !headers.has('authorization')) headers.set('authorization', `Bearer ${key}`);
    return fetch(`${address}${path}`, { ...init, headers });
  };
  return {
    app,
    ctx,
    store,
    clock,
    config,
    url: address,
    internalKey,
    get: (path, init) => getAs(internalKey, path, init),
    getAs,
    close: async () => {
      await app.close();
      await composition.close();
      await store.close();
      if (ownNamespace && config.redisUrl) await dropRedisNamespace(ownNamespace, config.redisUrl);
    },
  };
}

/**
 * A test app with its own limits namespace (and Redis when the run has one),
 * started before the enclosing block's tests and closed and cleaned after them.
 * Call it in a `describe` body; `get()` is the app once it has started.
 */
export function limitsApp(env: Record<string, string>): { get(): TestApp } {
  let t: TestApp;
  const isolated = isolatedLimitsEnv();
  beforeAll(async () => {
    t = await createTestApp({ scale: 0, env: { ...isolated, ...env } });
  });
  afterAll(async () => {
    await t?.close();
    if (isolated.REDIS_URL) await dropRedisNamespace(`stoop:${isolated.DATABASE_SCHEMA}`, isolated.REDIS_URL);
  });
  return { get: () => t };
}

export async function getJson<T = unknown>(
  testApp: TestApp,
  path: string,
): Promise<{ status: number; body: T; headers: Headers }> {
  const response = await testApp.get(path);
  return { status: response.status, body: (await response.json()) as T, headers: response.headers };
}

/** The body of a GET that must answer 200 (the failure names the path). */
export async function okJson<T = unknown>(testApp: TestApp, path: string): Promise<T> {
  const response = await testApp.get(path);
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}
