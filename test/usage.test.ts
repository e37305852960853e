import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageResponse, UsageSchema } from '../src/modules/usage/usage.schema.ts';
import { createTestApp, TEST_NOW, type TestApp } from './support/app.ts';
import { expectSchema } from './support/schema.ts';
import { dropRedisNamespace, isolatedLimitsEnv } from './support/server-process.ts';

// The published response schema, with the Usage record inlined (test/support/schema.ts does not register it).
const UsageResponseInline = Type.Object(
  { data: UsageSchema, meta: UsageResponse.properties.meta },
  { additionalProperties: false },
);
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface UsageJson {
  data: Record<string, unknown> & { used: number; periodStart: string; periodEnd: string };
  meta: Record<string, unknown>;
}

let t: TestApp;
const isolated = isolatedLimitsEnv();
beforeAll(async () => {
  t = await createTestApp({ scale: 0, env: isolated });
});
afterAll(async () => {
  await t?.close();
  if (isolated.REDIS_URL) await dropRedisNamespace(`stoop:${isolated.DATABASE_SCHEMA}`, isolated.REDIS_URL);
});

async function usage(key: string | null): Promise<UsageJson> {
  const response = await t.getAs(key, '/v1/usage');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  for (const header of ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-quota-used'])
    expect(response.headers.has(header)).toBe(true);
  const body = (await response.json()) as UsageJson;
  expectSchema(UsageResponseInline, body);
  expect(Object.keys(body).sort()).toEqual(['data', 'meta']);
  expect(body.meta).toEqual({ dataAge: null, source: 'live' });
  expect(body.data.periodStart).toMatch(ISO_MS);
  expect(body.data.periodEnd).toMatch(ISO_MS);
  return body;
}

describe('GET /v1/usage', () => {
  it('reports the anonymous Free bucket of the client IP', async () => {
    t.clock.set(TEST_NOW);
    expect((await usage(null)).data).toEqual({
      tier: 'FREE',
      quota: 100,
      used: 0,
      remaining: 100,
      overageLimit: 0,
      percentUsed: 0,
      periodStart: '2026-11-01T00:00:00.000Z',
      periodEnd: '2026-12-01T00:00:00.000Z',
    });
    for (let n = 0; n < 3; n++) expect((await t.getAs(null, '/v1/areas?perPage=1')).status).toBe(200);
    expect((await usage(null)).data).toMatchObject({ used: 3, remaining: 97, percentUsed: 3 });
  });

  it("reports the usage of the key's account, counting only its counted requests", async () => {
    t.clock.set(TEST_NOW);
    const { key } = await t.ctx.subscriptions.issue({ accountId: 'usage', tier: 'STARTER' });
    for (let n = 0; n < 3; n++) expect((await t.getAs(key, '/v1/search/sales?perPage=1')).status).toBe(200);
    // Access control counts before validation: an invalid request that got past it counts too.
    expect((await t.getAs(key, '/v1/search/sales?perPage=0')).status).toBe(400);
    // Refused ones do not: a bad key is charged to nobody.
    const wrongKey = `${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`;
    expect((await t.getAs(wrongKey, '/v1/search/sales?perPage=1')).status).toBe(401);
    expect((await usage(key)).data).toEqual({
      tier: 'STARTER',
      quota: 5000,
      used: 4,
      remaining: 4996,
      overageLimit: 500,
      percentUsed: 0.08,
      periodStart: '2026-11-01T00:00:00.000Z',
      periodEnd: '2026-12-01T00:00:00.000Z',
    });
    // Reading usage never counts.
    expect((await usage(key)).data.used).toBe(4);
  });

  it('moves to the next period at the first instant of the next UTC month, across a year end', async () => {
    const { key } = await t.ctx.subscriptions.issue({ accountId: 'usage-december', tier: 'PRO' });
    t.clock.set('2026-12-31T23:59:59.999Z');
    expect((await t.getAs(key, '/v1/areas?perPage=1')).status).toBe(200);
    expect((await usage(key)).data).toMatchObject({
      tier: 'PRO',
      quota: 25000,
      overageLimit: 2500,
      used: 1,
      periodStart: '2026-12-01T00:00:00.000Z',
      periodEnd: '2027-01-01T00:00:00.000Z',
    });
    t.clock.set('2027-01-01T00:00:00.000Z');
    expect((await usage(key)).data).toMatchObject({
      used: 0,
      periodStart: '2027-01-01T00:00:00.000Z',
      periodEnd: '2027-02-01T00:00:00.000Z',
    });
    t.clock.set(TEST_NOW);
  });

  it('rejects a bad key instead of answering for the anonymous bucket', async () => {
    const response = await t.getAs('STOOP-00000000-0000-4000-8000-000000000000', '/v1/usage');
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('INVALID_API_KEY');
  });
});
