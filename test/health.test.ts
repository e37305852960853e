import type { Static } from '@sinclair/typebox';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HealthResponse } from '../src/modules/health/health.schema.ts';
import { createTestApp, getJson, type TestApp } from './support/app.ts';

interface ErrorJson {
  error: { code: string; status: number; retryAfter?: number; details?: { checks?: unknown } };
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
