import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingRow } from '../src/platform/db/tables.ts';
import { createTestApp, type TestApp, UNLIMITED } from './support/app.ts';

const HIGH_LIMITS: Record<string, string> = { ...UNLIMITED };

let t: TestApp;
let business: string;
let listing: ListingRow;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005, env: HIGH_LIMITS });
  business = (await t.ctx.subscriptions.issue({ accountId: 'w-error', tier: 'BUSINESS' })).key;
  listing = await t.store.db
    .selectFrom('listings')
    .selectAll()
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
});
afterAll(async () => {
  await t?.close();
});

interface ErrorBody {
  error: {
    code: string;
    status: number;
    message: string;
    details?: { params?: { parameter: string; rule: string; location: string }[] };
  };
}

async function send(
  method: string,
  path: string,
  body?: unknown,
  key = business,
  headers: Record<string, string> = {},
) {
  const response = await t.getAs(key, path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: (text ? JSON.parse(text) : null) as ErrorBody & { data: { id: string } },
  };
}

function expectParam(answer: { status: number; body: ErrorBody }, parameter: string, status = 400): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.error.message).toContain(parameter);
  expect(answer.body.error.details?.params?.[0]?.parameter, JSON.stringify(answer.body)).toBe(parameter);
}

describe('POST /v1/watchers', () => {
  it('refuses a poll interval under the tier minimum, naming pollInterval', async () => {
    const business299 = await send('POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: listing.id,
      pollInterval: 299,
    });
    expectParam(business299, 'pollInterval');
    expect(business299.body.error.message).toContain('300');
    const internal59 = await send(
      'POST',
      '/v1/watchers',
      { watchType: 'listing', listingId: listing.id, pollInterval: 59 },
      t.internalKey,
    );
    expectParam(internal59, 'pollInterval');
    expect(internal59.body.error.message).toContain('60');
    const internal60 = await send(
      'POST',
      '/v1/watchers',
      { watchType: 'listing', listingId: listing.id, pollInterval: 60 },
      t.internalKey,
    );
    expect(internal60.status).toBe(201);
    expectParam(
      await send('POST', '/v1/watchers', {
        watchType: 'listing',
        listingId: listing.id,
        pollInterval: 86_401,
      }),
      'pollInterval',
    );
    expectParam(
      await send('POST', '/v1/watchers', {
        watchType: 'listing',
        listingId: listing.id,
        pollInterval: '600',
      }),
      'pollInterval',
    );
    expectParam(
      await send('POST', '/v1/watchers', {
        watchType: 'listing',
        listingId: listing.id,
        pollInterval: 300.5,
      }),
      'pollInterval',
    );
  });

  it('needs a known watchType and exactly its target field', async () => {
    expectParam(await send('POST', '/v1/watchers', { listingId: listing.id }), 'watchType');
    const unknown = await send('POST', '/v1/watchers', { watchType: 'area', listingId: listing.id });
    expectParam(unknown, 'watchType');
    expect(unknown.body.error.message).toMatch(/listing.*building.*search/);
    expectParam(await send('POST', '/v1/watchers', { watchType: 'listing' }), 'listingId');
    expectParam(
      await send('POST', '/v1/watchers', { watchType: 'building', listingId: listing.id }),
      'listingId',
    );
    expectParam(await send('POST', '/v1/watchers', { watchType: 'search' }), 'searchFilters');
    expectParam(await send('POST', '/v1/watchers', { watchType: 'listing', listingId: 'abc' }), 'listingId');
    expectParam(await send('POST', '/v1/watchers', { watchType: 'listing', listingId: 42 }), 'listingId');
    const extra = await send('POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: listing.id,
      color: 'red',
    });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toContain('color');
  });

  it('answers 404 for a listing or building the store does not have', async () => {
    const noListing = await send('POST', '/v1/watchers', { watchType: 'listing', listingId: '999999999' });
    expect(noListing.status).toBe(404);
    expect(noListing.body.error.message).toContain('999999999');
    const noBuilding = await send('POST', '/v1/watchers', { watchType: 'building', buildingId: '999999999' });
    expect(noBuilding.status).toBe(404);
  });

  it('checks searchFilters like the search endpoints, naming the filter', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ listingType: 'rental', minPrice: 5000, maxPrice: 1000 }, 'searchFilters.minPrice'],
      [{ listingType: 'rental', areas: '77777' }, 'searchFilters.areas'],
      [{ listingType: 'rental', listedAfter: '2026-02-30' }, 'searchFilters.listedAfter'],
      [{ listingType: 'sale', noFee: true }, 'searchFilters.noFee'],
      [{ listingType: 'rental', saleType: 'RESALE' }, 'searchFilters.saleType'],
    ];
    for (const [searchFilters, parameter] of cases) {
      expectParam(await send('POST', '/v1/watchers', { watchType: 'search', searchFilters }), parameter);
    }
    for (const searchFilters of [
      { minPrice: 1000 },
      { listingType: 'rental', minPrice: '1000' },
      { listingType: 'rental', page: 2 },
      { listingType: 'rental', noFee: 'true' },
    ]) {
      const answer = await send('POST', '/v1/watchers', { watchType: 'search', searchFilters });
      expect(answer.status, JSON.stringify(searchFilters)).toBe(400);
      expect(answer.body.error.message, JSON.stringify(answer.body)).toContain('searchFilters');
    }
  });

  it('answers a bad JSON body with 400, never a 500', async () => {
    const response = await t.getAs(business, '/v1/watchers', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"watchType":',
    });
    expect(response.status).toBe(400);
    for (const body of [null, [], 'listing', 7]) {
      expect((await send('POST', '/v1/watchers', body)).status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe('PATCH, GET, DELETE /v1/watchers/{id}', () => {
  it('checks the change, naming the field', async () => {
    const { body } = await send('POST', '/v1/watchers', { watchType: 'listing', listingId: listing.id });
    const path = `/v1/watchers/${body.data.id}`;
    expect((await send('PATCH', path, {})).status).toBe(400);
    expectParam(await send('PATCH', path, { status: 'stopped' }), 'status');
    expectParam(await send('PATCH', path, { pollInterval: 10 }), 'pollInterval');
    expectParam(await send('PATCH', path, { active: false }), 'active');
  });

  it('answers 404 for an unknown id on every route', async () => {
    for (const [method, body] of [['GET'], ['PATCH', { status: 'paused' }], ['DELETE']] as const) {
      const answer = await send(method, '/v1/watchers/00000000-0000-4000-8000-000000000000', body);
      expect(answer.status, method).toBe(404);
      expect(answer.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('pages the list with 400 past the last page', async () => {
    expect((await send('GET', '/v1/watchers?page=50')).status).toBe(400);
    expectParam(await send('GET', '/v1/watchers?perPage=0'), 'perPage');
  });
});

describe('GET /v1/watchers/{id}/stream', () => {
  it('needs Accept: text/event-stream (406), a known watcher (404) and a numeric Last-Event-ID', async () => {
    const { body } = await send('POST', '/v1/watchers', { watchType: 'listing', listingId: listing.id });
    const path = `/v1/watchers/${body.data.id}/stream`;
    const plain = await send('GET', path);
    expect(plain.status).toBe(406);
    expect(plain.body.error.message).toContain('text/event-stream');
    const sse = { accept: 'text/event-stream' };
    expect((await send('GET', '/v1/watchers/none/stream', undefined, business, sse)).status).toBe(404);
    expectParam(
      await send('GET', path, undefined, business, { ...sse, 'last-event-id': 'abc' }),
      'last-event-id',
    );
    expectParam(await send('GET', `${path}?after=-1`, undefined, business, sse), 'after');
  });
});
