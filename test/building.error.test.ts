import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, getJson, type TestApp } from './support/app.ts';

interface ErrorJson {
  error: {
    code: string;
    message: string;
    details?: { params?: { parameter: string; location: string; rule: string }[]; requiredTier?: string };
  };
}

let t: TestApp;
let buildingId: string;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005 });
  buildingId = (
    await t.store.db.selectFrom('buildings').select('id').orderBy('id').limit(1).executeTakeFirstOrThrow()
  ).id;
});
afterAll(async () => {
  await t?.close();
});

const SUBRESOURCES = ['', '/listings', '/scores', '/violations'];

describe('unknown buildings', () => {
  it.each(SUBRESOURCES)('GET /v1/building/{id}%s is a 404 naming the id', async (suffix) => {
    const { status, body } = await getJson<ErrorJson>(t, `/v1/building/999999999${suffix}`);
    expect(status).toBe(404);
    expect(body.error.code).toBe('NOT_FOUND');
    expect(body.error.message).toBe('Building "999999999" was not found');
  });

  it('an unknown building is a 404 even with paging past any end', async () => {
    const { status } = await getJson<ErrorJson>(t, '/v1/building/999999999/listings?page=50');
    expect(status).toBe(404);
  });
});

describe('malformed ids', () => {
  const bad = ['abc', 'x1', '-5', '1e5', '1234567890123', '%20', 'the-carlyle'];
  for (const suffix of SUBRESOURCES) {
    it.each(bad)(`GET /v1/building/%s${suffix} is a 400 naming the path id`, async (id) => {
      const { status, body } = await getJson<ErrorJson>(t, `/v1/building/${id}${suffix}`);
      expect(status).toBe(400);
      expect(body.error.code).toBe('INVALID_PARAMS');
      expect(body.error.message).toContain('"id"');
      expect(body.error.message).toContain('building id');
      expect(body.error.details?.params?.[0]).toMatchObject({ parameter: 'id', location: 'path' });
    });
  }
});

describe('GET /v1/building/{id}/listings parameter errors', () => {
  it.each([
    ['status=SOLD', 'status'],
    ['status=ACTIVE,', 'status'],
    ['status=active,sold', 'status'],
    ['listingType=rentals', 'listingType'],
    ['perPage=0', 'perPage'],
    ['perPage=501', 'perPage'],
    ['perPage=ten', 'perPage'],
    ['page=0', 'page'],
    ['page=1e400', 'page'],
    ['page=Infinity', 'page'],
    ['page=-Infinity', 'page'],
    ['perPage=Infinity', 'perPage'],
    ['page=9999', 'page'],
  ])('%s is a 400 naming %s', async (query, parameter) => {
    const { status, body } = await getJson<ErrorJson>(t, `/v1/building/${buildingId}/listings?${query}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe('INVALID_PARAMS');
    expect(body.error.details?.params?.[0]?.parameter).toBe(parameter);
    expect(body.error.message).toContain(`"${parameter}"`);
  });
});

describe('access', () => {
  it('no key: 401; Free key: 403 naming Starter', async () => {
    const anonymous = await t.getAs(null, `/v1/building/${buildingId}`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as ErrorJson).error.code).toBe('MISSING_API_KEY');
    const { key } = await t.ctx.subscriptions.issue({ accountId: 'building-free', tier: 'FREE' });
    const free = await t.getAs(key, `/v1/building/${buildingId}/scores`);
    expect(free.status).toBe(403);
    expect(((await free.json()) as ErrorJson).error).toMatchObject({
      code: 'TIER_RESTRICTED',
      details: { requiredTier: 'STARTER' },
    });
  });
});
