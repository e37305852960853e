import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, seedDemoIfEmpty, startServer } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import type { ErrorBody } from '../src/http/errors.ts';
import {
  LISTINGS_HIGH_WATER_MARK,
  writeHighWaterMark,
} from '../src/jobs/refresh/pipeline-state.repository.ts';
import { markChanged, markConfirmed } from '../src/modules/freshness/data-version.ts';
import type { IssuedApiKeyView } from '../src/modules/keys/keys.schema.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, ScaledClock } from '../src/platform/clock.ts';
import { openConfiguredStore, prepareStore } from '../src/prepared-store.ts';
import { createTestApp, TEST_NOW, type TestApp } from './support/app.ts';
import { cliStore, runStoop } from './support/cli.ts';
import { isolatedLimitsEnv } from './support/server-process.ts';

/**
 * Two clocks (README "Two clocks"): the market clock moves the market, the wall
 * clock everything about callers. Here the market runs 100× a manual wall clock.
 */
const SPEED = 100;
const DECEMBER = Date.parse('2026-12-01T00:00:00.000Z');

interface HealthJson {
  time: string;
  data: { oldestAgeSeconds: number | null };
}

describe('two clocks: the market 100× faster than the wall clock', () => {
  let t: TestApp;
  let market: ScaledClock;

  beforeAll(async () => {
    t = await createTestApp({
      scale: 0.005,
      env: { MONTHLY_QUOTA_STARTER: '3', OVERAGE_LIMIT_STARTER: '0', RATE_LIMIT_STARTER: '1000' },
      marketClock: (wall) => {
        market = new ScaledClock({ anchor: TEST_NOW, speed: SPEED, real: wall });
        return market;
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function status(key: string, path = '/v1/usage'): Promise<{ status: number; code?: string }> {
    const response = await t.getAs(key, path);
    const body = (await response.json()) as Partial<ErrorBody>;
    return { status: response.status, ...(body.error ? { code: body.error.code } : {}) };
  }

  async function createKey(
    body: Record<string, unknown>,
  ): Promise<{ status: number; key?: IssuedApiKeyView }> {
    const response = await t.get('/v1/admin/keys', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { data?: IssuedApiKeyView };
    return { status: response.status, ...(json.data ? { key: json.data } : {}) };
  }

  it('a key made to end in 2 real hours works now and after 2 market hours, and ends after 2 real hours', async () => {
    t.clock.set(TEST_NOW);
    const endsAt = TEST_NOW.getTime() + 2 * HOUR_MS;
    const created = await createKey({
      account: 'clocks-expiry',
      tier: 'PRO',
      subscriptionEndsAt: new Date(endsAt).toISOString(),
    });
    expect(created.status).toBe(201);
    const key = created.key!.key;
    expect(created.key!.createdAt).toBe(TEST_NOW.toISOString());
    try {
      expect(await status(key)).toEqual({ status: 200 });

      // 2 market hours (and more) pass in 1.2 real minutes: the key still works.
      t.clock.advance((2 * HOUR_MS) / SPEED + MINUTE_MS);
      expect(market.now().getTime()).toBeGreaterThan(endsAt);
      expect(await status(key)).toEqual({ status: 200 });

      t.clock.set(endsAt - 1);
      expect(await status(key)).toEqual({ status: 200 });
      t.clock.set(endsAt);
      expect(await status(key)).toEqual({ status: 401, code: 'EXPIRED_API_KEY' });
    } finally {
      t.clock.set(TEST_NOW);
    }
  });

  it('the admin API judges a new subscription end by the wall clock, and stamps keys with it', async () => {
    t.clock.set(TEST_NOW.getTime() + MINUTE_MS);
    try {
      // The market is 100 minutes on; an end 30 real minutes ahead is still in the future.
      expect(market.now().getTime() - TEST_NOW.getTime()).toBe(100 * MINUTE_MS);
      const wallNow = t.clock.now().getTime();
      const created = await createKey({
        account: 'clocks-admin',
        tier: 'PRO',
        subscriptionEndsAt: new Date(wallNow + 30 * MINUTE_MS).toISOString(),
      });
      expect(created.status).toBe(201);
      expect(created.key!.createdAt).toBe(new Date(wallNow).toISOString());
      expect(await status(created.key!.key)).toEqual({ status: 200 });
      const past = await createKey({
        account: 'clocks-admin',
        tier: 'PRO',
        subscriptionEndsAt: new Date(wallNow - 1000).toISOString(),
      });
      expect(past.status).toBe(400);
    } finally {
      t.clock.set(TEST_NOW);
    }
  });

  it('quotas roll over on the real calendar month, not the market month', async () => {
    t.clock.set(TEST_NOW);
    const { key } = await t.ctx.subscriptions.issue({ accountId: 'clocks-quota', tier: 'STARTER' });
    try {
      for (let n = 0; n < 3; n++) expect(await status(key, '/v1/areas?perPage=1')).toEqual({ status: 200 });
      const refused = await t.getAs(key, '/v1/areas?perPage=1');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe(String((DECEMBER - TEST_NOW.getTime()) / 1000));

      // 8 real hours: the market is in December, the callers' month is still November.
      t.clock.advance(8 * HOUR_MS);
      expect(market.now().toISOString().slice(0, 7)).toBe('2026-12');
      expect(await status(key, '/v1/areas?perPage=1')).toEqual({ status: 429, code: 'QUOTA_EXCEEDED' });
      const usage = (await (await t.getAs(key, '/v1/usage')).json()) as {
        data: { used: number; periodStart: string; periodEnd: string };
      };
      expect(usage.data).toMatchObject({
        used: 3,
        periodStart: '2026-11-01T00:00:00.000Z',
        periodEnd: '2026-12-01T00:00:00.000Z',
      });

      t.clock.set(DECEMBER);
      const december = await t.getAs(key, '/v1/areas?perPage=1');
      expect(december.status).toBe(200);
      expect(december.headers.get('x-quota-used')).toBe('1');
    } finally {
      t.clock.set(TEST_NOW);
    }
  });

  it('health.time is the wall clock; dataset ages are measured on the market clock', async () => {
    t.clock.set(TEST_NOW.getTime() + MINUTE_MS);
    try {
      const response = await t.get('/v1/health');
      expect(response.status).toBe(200);
      const health = (await response.json()) as HealthJson;
      expect(health.time).toBe(t.clock.now().toISOString());
      // The demo market was loaded as of TEST_NOW; one real minute is 100 market minutes.
      expect(health.data.oldestAgeSeconds).toBe(100 * 60);
    } finally {
      t.clock.set(TEST_NOW);
    }
  });

  it('X-RateLimit-Reset is within the minute after the wall clock, whatever the market time', async () => {
    t.clock.set(TEST_NOW.getTime() + HOUR_MS);
    try {
      const response = await t.getAs(null, '/v1/areas?perPage=1');
      expect(response.status).toBe(200);
      const reset = Number(response.headers.get('x-ratelimit-reset'));
      const wallSeconds = t.clock.now().getTime() / 1000;
      expect(reset).toBeGreaterThanOrEqual(Math.floor(wallSeconds));
      expect(reset).toBeLessThanOrEqual(Math.ceil(wallSeconds) + 60);
    } finally {
      t.clock.set(TEST_NOW);
    }
  });
});

/**
 * Boot level: a store a live demo ran ahead of real time (its data stamped 9–10
 * market days on), then restarts as `npm start` does — with the simulator and
 * without it — and a key made by the real `stoop keys create --expires`.
 */
describe('restarts after the market clock ran ahead', () => {
  const cli = cliStore('clocks', {
    ...isolatedLimitsEnv(),
    HOST: '127.0.0.1',
    PORT: '0',
    DEMO: 'true',
    DEMO_SCALE: '0.005',
    DEMO_SEED: '7',
    REFRESH: 'false',
    SIM_LATENCY: 'false',
  });
  const config = (live: boolean) => loadConfig({ ...cli.env, DEMO_UPSTREAM: live ? 'true' : 'false' });
  const AHEAD_MS = 10 * DAY_MS;
  let server: RunningServer | undefined;

  beforeAll(async () => {
    const store = await openConfiguredStore(config(false));
    try {
      await prepareStore(store);
      await seedDemoIfEmpty(store, config(false), () => {});
      // What a live run at SIM_SPEED leaves behind: data confirmed and changed days ahead of real time.
      const now = Date.now();
      const searchAt = new Date(now + AHEAD_MS);
      const buildingsAt = new Date(now + AHEAD_MS - DAY_MS);
      await markChanged(store.db, 'search:rental', searchAt);
      await markConfirmed(store.db, ['search:rental', 'search:sale'], searchAt);
      await markConfirmed(store.db, ['buildings'], buildingsAt);
      await writeHighWaterMark(store.db, LISTINGS_HIGH_WATER_MARK, searchAt.toISOString(), searchAt);
    } finally {
      await store.close();
    }
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    rmSync(cli.dataDir, { recursive: true, force: true });
  });

  async function health(url: string): Promise<HealthJson> {
    return (await (await fetch(`${url}/v1/health`)).json()) as HealthJson;
  }

  async function usageStatus(url: string, key: string): Promise<{ status: number; code?: string }> {
    const response = await fetch(`${url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await response.json()) as Partial<ErrorBody>;
    return { status: response.status, ...(body.error ? { code: body.error.code } : {}) };
  }

  it('`stoop keys create --expires` in 2 real hours is accepted, and the key works on the live and the static restart; ages are never negative', async () => {
    const expires = new Date(Date.now() + 2 * HOUR_MS).toISOString();
    const created = await runStoop(cli.env, [
      'keys',
      'create',
      '--tier',
      'pro',
      '--account',
      'clocks',
      '--expires',
      expires,
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).not.toMatch(/in the past/);
    const key = (JSON.parse(created.stdout) as IssuedApiKeyView).key;

    // Live restart: the simulator's market clock resumes 10 days on; callers stay on real time.
    const liveStartedAt = Date.now();
    server = await startServer(config(true));
    const live = await health(server.url);
    expect(Math.abs(Date.parse(live.time) - Date.now())).toBeLessThan(MINUTE_MS);
    expect(live.data.oldestAgeSeconds).toBeGreaterThanOrEqual(DAY_MS / 1000);
    expect(await usageStatus(server.url, key)).toEqual({ status: 200 });
    await server.close();
    server = undefined;

    // Static restart: no simulator, the market clock still resumes where the data left off (1×).
    server = await startServer(config(false));
    const restarted = await health(server.url);
    expect(Math.abs(Date.parse(restarted.time) - Date.now())).toBeLessThan(MINUTE_MS);
    // The buildings were confirmed a market day before the search data: a day old, not 0 (from the future).
    expect(restarted.data.oldestAgeSeconds).toBeGreaterThanOrEqual(DAY_MS / 1000);
    // Plus what the market clock moved since: at most SIM_SPEED× the real time since the live start
    // (the live run's market time is kept across the restart), and a minute of slack.
    const movedAtMost = ((Date.now() - liveStartedAt) / 1000) * config(true).simulator.speed;
    expect(restarted.data.oldestAgeSeconds).toBeLessThan(DAY_MS / 1000 + movedAtMost + 60);
    expect(await usageStatus(server.url, key)).toEqual({ status: 200 });
  }, 120_000);
});
