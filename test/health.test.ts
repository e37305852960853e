import type { Static } from '@sinclair/typebox';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, compose } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { loadDemoMarket } from '../src/demo/market/load.ts';
import type { HealthResponse } from '../src/modules/health/health.schema.ts';
import { ReadinessRegistry } from '../src/modules/health/readiness.ts';
import { ManualClock } from '../src/platform/clock.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { createTestApp, getJson, TEST_NOW, TEST_SEED, type TestApp } from './support/app.ts';
import { createTestStore, TEST_DIALECT } from './support/store.ts';

type Health = Static<typeof HealthResponse>;

interface ErrorJson {
  error: {
    code: string;
    status: number;
    message?: string;
    retryAfter?: number;
    details?: { checks?: unknown; pending?: unknown };
  };
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005 });
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/health', () => {
  it('reports status, version, database and data age', async () => {
    t.clock.advance(90_000);
    const { status, body, headers } = await getJson<Static<typeof HealthResponse>>(t, '/v1/health');
    expect(status).toBe(200);
    expect(headers.get('x-request-id')).toBeTruthy();
    expect(body).toMatchObject({
      status: 'ok',
      version: '0.1.0',
      database: { dialect: t.store.dialect, status: 'ok' },
      limits: { backend: t.config.redisUrl ? 'redis' : 'memory', status: 'ok' },
      data: { oldestAgeSeconds: 90 },
      // No upstream wired into this app: nothing refreshes, nothing logged yet.
      pipeline: { upstream: null, lastFailure: null, backgroundPending: 0, latestEventSequence: 0 },
    });
    expect(body.data.searchRentals ?? '').toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  it('says live and ready apart, with every component prepared', async () => {
    const { body } = await getJson<Health>(t, '/v1/health');
    expect(body).toMatchObject({ live: true, ready: true, readiness: { pending: [] } });
    expect(body.readiness.components).toEqual({
      schema: { ready: true },
      demo: { ready: true },
      searchIndex: { ready: true },
      marketCaches: { ready: true },
    });
  });

  it('reports the history backfill: nothing yet, then part of the target range, then complete', async () => {
    // The one job that starts by itself, the summary warm-up after the index is built, done first.
    await vi.waitUntil(
      () => {
        const warm = t.ctx.search.summaryWarmStatus();
        return !warm.running && warm.lastWarmedAt !== null;
      },
      { timeout: 20_000 },
    );
    const before = (await getJson<Health>(t, '/v1/health')).body.background;
    expect(before.backfill).toEqual({
      firstDate: null,
      lastDate: null,
      targetFirstDate: null,
      percent: 0,
      complete: false,
      running: false,
    });
    // Every job of the node is listed, none running (this app never starts the scheduled ones).
    expect(before.jobs.map((job) => job.name)).toEqual(expect.arrayContaining(['market-snapshots']));
    expect(before.jobs.every((job) => !job.running)).toBe(true);

    // 11 of 101 target days written.
    await t.store.db
      .insertInto('market_snapshot_coverage')
      .values({
        id: 'daily',
        first_date: '2026-10-21',
        last_date: '2026-10-31',
        target_first_date: '2026-07-23',
        updated_at: TEST_NOW.toISOString(),
      })
      .execute();
    const partial = (await getJson<Health>(t, '/v1/health')).body;
    expect(partial.background.backfill).toEqual({
      firstDate: '2026-10-21',
      lastDate: '2026-10-31',
      targetFirstDate: '2026-07-23',
      percent: 10.8,
      complete: false,
      running: false,
    });
    // Background work is progress, not readiness.
    expect(partial.ready).toBe(true);

    await t.ctx.marketSnapshots.run();
    const done = (await getJson<Health>(t, '/v1/health')).body.background.backfill;
    expect(done).toMatchObject({ percent: 100, complete: true, running: false });
    expect(done.firstDate! <= done.targetFirstDate!).toBe(true);
  });
});

/**
 * A node composed the way boot.ts does it, over a small demo market, with its
 * readiness registry in the test's hands and its background jobs startable.
 */
async function composeNode(readiness: ReadinessRegistry) {
  const store = await createTestStore();
  await syncAreas(store);
  await loadDemoMarket(store, { seed: TEST_SEED, scale: 0.005, now: TEST_NOW });
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: TEST_DIALECT === 'postgres' ? process.env.DATABASE_URL : 'sqlite::memory:',
    REDIS_URL: '',
  });
  const clock = new ManualClock(TEST_NOW);
  const composition = await compose({ config, store, marketClock: clock, wallClock: clock, readiness });
  const app = await buildApp(composition.services, { logger: false });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    composition,
    url,
    health: async () => (await (await fetch(`${url}/v1/health`)).json()) as Health,
    close: async () => {
      await composition.jobs.stop();
      await app.close();
      await composition.close();
      await store.close();
    },
  };
}

describe('readiness of a starting node', () => {
  it('is live but not ready until the demo is loaded, and says so', async () => {
    const readiness = new ReadinessRegistry();
    readiness.expect('demo', 'loading');
    const node = await composeNode(readiness);
    try {
      const health = await node.health();
      expect(health).toMatchObject({
        live: true,
        ready: false,
        status: 'ok',
        readiness: { pending: ['demo'], components: { demo: { ready: false, detail: 'loading' } } },
      });
      const ready = await fetch(`${node.url}/v1/health/ready`);
      expect(ready.status).toBe(503);
      const error = ((await ready.json()) as ErrorJson).error;
      expect(error.message).toBe('Not ready: demo loading');
      expect(error.details).toMatchObject({ checks: { database: 'ok', limits: 'ok' }, pending: ['demo'] });
      expect((await fetch(`${node.url}/v1/health/live`)).status).toBe(200);

      readiness.mark('demo');
      expect((await fetch(`${node.url}/v1/health/ready`)).status).toBe(200);
      expect((await node.health()).ready).toBe(true);
    } finally {
      await node.close();
    }
  });

  it('stays ready and live while the history backfill runs, and shows it running', async () => {
    const node = await composeNode(new ReadinessRegistry());
    try {
      await node.composition.jobs.start();
      // Starting schedules the backfill; it shows as running once its first slice is under way.
      let during = await node.health();
      for (
        let i = 0;
        i < 250 && !during.background.backfill.running && !during.background.backfill.complete;
        i++
      ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        during = await node.health();
      }
      expect(during).toMatchObject({ live: true, ready: true });
      expect(during.background.backfill).toMatchObject({ complete: false, running: true });
      expect(during.background.backfill.percent).toBeLessThan(100);
      expect(during.background.jobs.find((job) => job.name === 'market-snapshots')?.running).toBe(true);
      expect((await fetch(`${node.url}/v1/health/ready`)).status).toBe(200);
    } finally {
      await node.close();
    }
  });
});

describe('dependencies, readiness and liveness', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('reports the limits backend, with a measured latency when it is Redis', async () => {
    const { body } = await getJson<Static<typeof HealthResponse>>(t, '/v1/health');
    if (t.config.redisUrl) {
      expect(body.limits).toEqual({ backend: 'redis', status: 'ok', latencyMs: expect.any(Number) });
    } else {
      expect(body.limits).toEqual({ backend: 'memory', status: 'ok', latencyMs: null });
    }
  });

  it('is ready while every needed dependency answers, and live', async () => {
    const ready = await t.getAs(null, '/v1/health/ready');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', limits: 'ok' } });
    const live = await t.getAs(null, '/v1/health/live');
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'live', uptimeSeconds: expect.any(Number) });
    // Outside rate limits and quotas, like /v1/health.
    for (const response of [ready, live])
      for (const name of response.headers.keys()) expect(name).not.toMatch(/^x-(ratelimit|quota)-/);
  });

  it('is not ready while the search index is not built, and names it; still live and ok', async () => {
    vi.spyOn(t.ctx.search, 'indexStatus').mockReturnValue({ ready: false, version: null, building: true });
    const { body } = await getJson<Health>(t, '/v1/health');
    expect(body).toMatchObject({
      status: 'ok',
      live: true,
      ready: false,
      readiness: {
        pending: ['searchIndex'],
        components: { searchIndex: { ready: false, detail: 'building' } },
      },
    });
    const ready = await t.getAs(null, '/v1/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('1');
    const error = ((await ready.json()) as ErrorJson).error;
    expect(error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'Not ready: searchIndex building',
      details: { checks: { database: 'ok', limits: 'ok' }, pending: ['searchIndex'] },
    });
    expect((await t.getAs(null, '/v1/health/live')).status).toBe(200);
  });

  it('is not ready while the market caches are cold', async () => {
    vi.spyOn(t.ctx.market, 'isWarm').mockReturnValue(false);
    const { body } = await getJson<Health>(t, '/v1/health');
    expect(body).toMatchObject({ ready: false, readiness: { pending: ['marketCaches'] } });
    expect((await t.getAs(null, '/v1/health/ready')).status).toBe(503);
  });

  it('degrades, and stops being ready, while the limits backend is away; still live', async () => {
    vi.spyOn(t.ctx.limits, 'status').mockResolvedValue({
      backend: 'redis',
      status: 'unreachable',
      latencyMs: null,
    });
    const { status, body } = await getJson<Static<typeof HealthResponse>>(t, '/v1/health');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'degraded',
      database: { status: 'ok' },
      limits: { backend: 'redis', status: 'unreachable', latencyMs: null },
    });

    const ready = await t.getAs(null, '/v1/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('1');
    expect(ready.headers.get('x-request-id')).toBeTruthy();
    const error = ((await ready.json()) as ErrorJson).error;
    expect(error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      status: 503,
      retryAfter: 1,
      details: { checks: { database: 'ok', limits: 'unreachable' } },
    });
    expect((await t.getAs(null, '/v1/health/live')).status).toBe(200);
  });

  it('stops being ready when another process took the embedded-limits lease', async () => {
    vi.spyOn(t.ctx.limits, 'status').mockResolvedValue({
      backend: 'memory',
      status: 'lease_lost',
      latencyMs: null,
    });
    const { body } = await getJson<Static<typeof HealthResponse>>(t, '/v1/health');
    expect(body.status).toBe('degraded');
    const ready = await t.getAs(null, '/v1/health/ready');
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as ErrorJson).error.details?.checks).toEqual({
      database: 'ok',
      limits: 'lease_lost',
    });
  });
});
