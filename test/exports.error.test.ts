import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/http/errors.ts';
import { createTestApp, type TestApp, UNLIMITED } from './support/app.ts';

let t: TestApp;
let freeKey: string;
let buildingId: string;

beforeAll(async () => {
  t = await createTestApp({ scale: 0.01, env: { ...UNLIMITED } });
  freeKey = (await t.ctx.subscriptions.issue({ accountId: 'exports-free', tier: 'FREE' })).key;
  const listing = await t.store.db
    .selectFrom('listings')
    .select('building_id')
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
  buildingId = listing.building_id;
});
afterAll(async () => {
  await t?.close();
});

async function errorOf(
  path: string,
  headers: Record<string, string> = {},
  key: string | null = t.internalKey,
): Promise<{ status: number; headers: Headers; body: ErrorBody }> {
  const response = await t.getAs(key, path, { headers });
  expect(response.headers.get('content-type'), path).toBe('application/json; charset=utf-8');
  expect(response.headers.get('content-disposition'), path).toBeNull();
  const body = (await response.json()) as ErrorBody;
  expect(body.error.status, path).toBe(response.status);
  expect(body.error.requestId, path).toBe(response.headers.get('x-request-id'));
  return { status: response.status, headers: response.headers, body };
}

const bases = () => ['/v1/search/rentals', '/v1/search/sales', `/v1/building/${buildingId}/listings`];

describe('406 when Accept allows none of JSON, CSV and GeoJSON', () => {
  const unacceptable = [
    'text/html',
    'application/xml, image/*',
    'text/csv;q=0',
    'application/json;q=0, text/csv;q=0, application/geo+json;q=0',
    'text/*;q=0, application/*;q=0',
    'application/vnd.ms-excel',
  ];

  it('answers the error envelope naming the media types it serves, with the limit headers', async () => {
    for (const base of bases()) {
      for (const accept of unacceptable) {
        const { status, headers, body } = await errorOf(`${base}?perPage=2`, { accept });
        expect(status, `${base} ${accept}`).toBe(406);
        expect(body.error.code).toBe('NOT_ACCEPTABLE');
        expect(body.error.message).toContain('text/csv');
        expect(body.error.message).toContain('format=');
        expect(body.error.details?.acceptable).toEqual([
          'application/json',
          'text/csv',
          'application/geo+json',
        ]);
        expect(headers.get('vary')).toContain('Accept');
        expect(headers.get('x-ratelimit-limit')).toBeTruthy();
        expect(headers.get('x-quota-used')).toBeTruthy();
      }
    }
  });

  it('a malformed Accept (bad q-value, no subtype) allows nothing: 406, not a guess', async () => {
    for (const accept of ['text/csv;q=2', 'csv', 'text/csv;q=abc', '*/csv']) {
      const { status, body } = await errorOf('/v1/search/rentals?perPage=1', { accept });
      expect(status, accept).toBe(406);
      expect(body.error.code).toBe('NOT_ACCEPTABLE');
    }
  });

  it('a bad parameter is the same 400 whatever Accept says', async () => {
    const { status, body } = await errorOf('/v1/search/rentals?minPrice=-1', { accept: 'text/html' });
    expect(status).toBe(400);
    expect(body.error.details?.params?.[0]?.parameter).toBe('minPrice');
  });
});

describe('errors of CSV and GeoJSON requests are the JSON envelope', () => {
  it('an unknown format is a 400 naming the parameter and the allowed values', async () => {
    for (const base of bases()) {
      for (const format of ['xml', 'CSVX', 'xlsx', '']) {
        const { status, body } = await errorOf(`${base}?format=${format}`);
        expect(status, `${base} format=${format}`).toBe(400);
        expect(body.error.code).toBe('INVALID_PARAMS');
        expect(body.error.details?.params?.[0]?.parameter).toBe('format');
        expect(body.error.message).toContain('"format"');
        for (const allowed of ['json', 'csv', 'geojson']) expect(body.error.message).toContain(allowed);
      }
    }
  });

  it('invalid parameters, a page past the end and the result window: 400 in JSON', async () => {
    for (const format of ['csv', 'geojson']) {
      for (const accept of [undefined, format === 'csv' ? 'text/csv' : 'application/geo+json']) {
        const headers: Record<string, string> = accept ? { accept } : {};
        const q = accept ? '' : `format=${format}&`;
        const bad = await errorOf(`/v1/search/rentals?${q}maxBeds=nope`, headers);
        expect(bad.status).toBe(400);
        expect(bad.body.error.details?.params?.[0]?.parameter).toBe('maxBeds');
        const past = await errorOf(`/v1/search/sales?${q}page=100000&perPage=1&areas=100`, headers);
        expect(past.status).toBe(400);
        expect(past.body.error.details?.params?.[0]?.parameter).toBe('page');
        const beyond = await errorOf(`/v1/building/${buildingId}/listings?${q}page=99999`, headers);
        expect(beyond.status).toBe(400);
        expect(beyond.body.error.details?.params?.[0]?.rule).toBe('page_range');
      }
    }
  });

  it('building listings: missing key 401, Free tier 403, unknown building 404, bad id 400', async () => {
    for (const format of ['csv', 'geojson']) {
      const path = `/v1/building/${buildingId}/listings?format=${format}`;
      const missing = await errorOf(path, {}, null);
      expect(missing.status).toBe(401);
      expect(missing.body.error.code).toBe('MISSING_API_KEY');
      const free = await errorOf(path, {}, freeKey);
      expect(free.status).toBe(403);
      expect(free.body.error.code).toBe('TIER_RESTRICTED');
      const unknown = await errorOf(`/v1/building/999999999/listings?format=${format}`);
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('NOT_FOUND');
      const badId = await errorOf(`/v1/building/abc/listings?format=${format}`);
      expect(badId.status).toBe(400);
    }
  });

  it('access errors come before negotiation: an unacceptable Accept without a key is a 401', async () => {
    const { status } = await errorOf(`/v1/building/${buildingId}/listings`, { accept: 'text/html' }, null);
    expect(status).toBe(401);
  });
});
