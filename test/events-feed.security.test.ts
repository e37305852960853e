import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIERS, type Tier } from '../src/domain/tiers.ts';
import { appendEvents, latestSequence, lockEventLog } from '../src/modules/events/event-log.ts';
import { createTestApp, TEST_NOW, type TestApp, UNLIMITED } from './support/app.ts';

interface ErrorJson {
  error: { code: string; details?: { requiredTier?: string; currentTier?: string } };
}

const HIGH_LIMITS: Record<string, string> = { ...UNLIMITED };

let t: TestApp;
const keys = {} as Record<Tier, string>;
let listingId: string;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005, env: HIGH_LIMITS });
  for (const tier of TIERS) {
    keys[tier] = (await t.ctx.subscriptions.issue({ accountId: `feed-sec-${tier}`, tier })).key;
  }
  listingId = (await t.store.db.selectFrom('listings').select('id').limit(1).executeTakeFirstOrThrow()).id;
});
afterAll(async () => {
  await t?.close();
});

const STREAM = { accept: 'text/event-stream' };
const ROUTES = [
  { name: 'GET /v1/events', path: () => '/v1/events?limit=1', headers: {}, stream: false },
  { name: 'GET /v1/events/stream', path: () => '/v1/events/stream', headers: STREAM, stream: true },
  { name: 'GET /v1/listing/{id}', path: () => `/v1/listing/${listingId}`, headers: STREAM, stream: true },
];

/** Sends the request and reads a JSON body, or only the headers of a stream (then hangs up). */
async function call(key: string | null, path: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const response = await t.getAs(key, path, { headers, signal: controller.signal });
  const type = response.headers.get('content-type') ?? '';
  const body = type.startsWith('application/json') ? ((await response.json()) as ErrorJson) : null;
  controller.abort();
  return { status: response.status, type, body, headers: response.headers };
}

describe('tier gating: Pro, Business and Internal only; errors are JSON, never a stream', () => {
  for (const route of ROUTES) {
    it(`${route.name}: anonymous is 401 MISSING_API_KEY with the discovery pointer`, async () => {
      const { status, body, headers } = await call(null, route.path(), route.headers);
      expect(status).toBe(401);
      expect(body?.error.code).toBe('MISSING_API_KEY');
      expect(headers.get('www-authenticate')).toContain('resource_metadata=');
      expect(headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    });

    it(`${route.name}: a key no account has is 401 INVALID_API_KEY`, async () => {
      const { status, body } = await call(
        'STOOP-00000000-0000-4000-8000-000000000000',
        route.path(),
        route.headers,
      );
      expect(status).toBe(401);
      expect(body?.error.code).toBe('INVALID_API_KEY');
    });

    it(`${route.name}: Free and Starter are 403 TIER_RESTRICTED naming PRO`, async () => {
      for (const tier of ['FREE', 'STARTER'] as const) {
        const { status, body, headers } = await call(keys[tier], route.path(), route.headers);
        expect(status, tier).toBe(403);
        expect(body?.error.code).toBe('TIER_RESTRICTED');
        expect(body?.error.details).toMatchObject({ requiredTier: 'PRO', currentTier: tier });
        expect(headers.get('x-quota-used')).toMatch(/^\d+$/);
      }
    });

    it(`${route.name}: Pro, Business and Internal get access`, async () => {
      for (const tier of ['PRO', 'BUSINESS', 'INTERNAL'] as const) {
        const { status, type } = await call(keys[tier], route.path(), route.headers);
        expect(status, tier).toBe(200);
        expect(type).toMatch(route.stream ? /^text\/event-stream/ : /^application\/json/);
      }
    });
  }
});

describe('metering', () => {
  it('a stream counts one request when it opens, however long it runs and whatever it carries', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'feed-sec-quota', tier: 'PRO' })).key;
    const used = async () => {
      const response = await t.getAs(key, '/v1/usage');
      return ((await response.json()) as { data: { used: number } }).data.used;
    };
    expect(await used()).toBe(0);
    const after = await latestSequence(t.store.db);
    const controller = new AbortController();
    const response = await t.getAs(key, `/v1/events/stream?after=${after}`, {
      headers: STREAM,
      signal: controller.signal,
    });
    expect(response.headers.get('x-quota-used')).toBe('1');
    const listing = await t.store.db
      .selectFrom('listings')
      .select(['id', 'building_id', 'listing_type'])
      .limit(1)
      .executeTakeFirstOrThrow();
    await t.store.db.transaction().execute(async (trx) => {
      await lockEventLog(trx, t.store.dialect);
      await appendEvents(
        trx,
        Array.from({ length: 5 }, (_, i) => ({
          type: 'listing.price_increased' as const,
          listingId: listing.id,
          buildingId: listing.building_id,
          listingType: listing.listing_type,
          areaId: null,
          oldValue: i,
          newValue: i + 1,
          occurredAt: TEST_NOW.toISOString(),
        })),
        TEST_NOW.toISOString(),
      );
    });
    const reader = response.body!.getReader();
    let text = '';
    while ((text.match(/^id: /gm) ?? []).length < 5)
      text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(await used()).toBe(1);
  });

  it('a caller past its rate window gets a JSON 429 instead of a stream', async () => {
    const limited = await createTestApp({ scale: 0, env: { RATE_LIMIT_PRO: '2' } });
    try {
      const key = (await limited.ctx.subscriptions.issue({ accountId: 'feed-sec-rate', tier: 'PRO' })).key;
      const controllers: AbortController[] = [];
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const controller = new AbortController();
        controllers.push(controller);
        const response = await limited.getAs(key, '/v1/events/stream', {
          headers: STREAM,
          signal: controller.signal,
        });
        statuses.push(response.status);
        if (response.status === 429) {
          const body = (await response.json()) as ErrorJson;
          expect(body.error.code).toBe('RATE_LIMIT_EXCEEDED');
          expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
        }
      }
      for (const controller of controllers) controller.abort();
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('no credentials leak into streams', () => {
  it('the stream never echoes the key', async () => {
    const controller = new AbortController();
    const response = await t.getAs(keys.PRO, `/v1/listing/${listingId}`, {
      headers: STREAM,
      signal: controller.signal,
    });
    const text = await response.text();
    expect(text).toContain('event: done');
    expect(text).not.toContain(keys.PRO);
    expect(text).not.toContain(keys.PRO.slice(6));
  });
});
