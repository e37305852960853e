import { EventSource } from 'eventsource';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { TIERS, type Tier } from '../src/domain/tiers.ts';
import { Refresher } from '../src/jobs/refresh/refresher.ts';
import { readEvents } from '../src/modules/events/event-log.ts';
import { LIVE_BUDGET_MS } from '../src/modules/listings/listing-stream.service.ts';
import { ListingDetailResponse, ListingDetailSchema } from '../src/modules/property/property.schema.ts';
import type { ListingRow } from '../src/platform/db/tables.ts';
import { type CallOptions, UpstreamError, type UpstreamListing } from '../src/upstream/source.ts';
import { createTestApp, type TestApp, UNLIMITED } from './support/app.ts';
import { expectSchema } from './support/schema.ts';
import { ListingOnlySource } from './support/upstream.ts';

type Mode = 'ok' | 'fail' | 'not_found' | 'hang';

/**
 * An upstream at the edge of the test, with faults on demand: it answers a
 * listing fetch with the stored listing at a new price, or fails, says it has
 * no such listing, or hangs until the caller's own timeout.
 */
class FaultySource extends ListingOnlySource {
  readonly name = 'faulty';
  mode: Mode = 'ok';
  /** When set, fetches wait for it first (the test holds upstream "busy"). */
  gate: Promise<unknown> | null = null;
  fetches = 0;
  newPrice = 0;

  constructor(private readonly stored: (id: string) => Promise<ListingRow | undefined>) {
    super();
  }

  async fetchListing(id: string, options: CallOptions = {}): Promise<UpstreamListing> {
    this.fetches++;
    if (this.gate) await this.gate;
    if (this.mode === 'fail') throw new UpstreamError('unavailable', 'upstream answered 503', 503);
    if (this.mode === 'hang') {
      await new Promise((resolve) => setTimeout(resolve, options.timeoutMs ?? 10_000));
      throw new UpstreamError('timeout', 'upstream timed out');
    }
    const row = await this.stored(id);
    if (this.mode === 'not_found' || !row) throw new UpstreamError('not_found', `no listing ${id}`, 404);
    const { price_delta: _d, rank_score: _r, refreshed_at: _f, created_at, updated_at, ...listing } = row;
    this.newPrice = row.price + 100;
    return {
      listing: { ...listing, price: this.newPrice },
      modifiedAt: new Date(Date.parse(updated_at) + 60_000).toISOString(),
      createdAt: created_at,
    };
  }
}

const HIGH_LIMITS: Record<string, string> = { ...UNLIMITED, UPSTREAM_LIVE_TIMEOUT_MS: '60000' };

let t: TestApp;
let source: FaultySource;
const keys = {} as Record<Tier, string>;
let listing: ListingRow;
beforeAll(async () => {
  source = new FaultySource((id) =>
    t.store.db.selectFrom('listings').selectAll().where('id', '=', id).executeTakeFirst(),
  );
  t = await createTestApp({
    scale: 0.005,
    env: HIGH_LIMITS,
    refresher: (parts) => new Refresher({ ...parts, source }),
  });
  for (const tier of TIERS)
    keys[tier] = (await t.ctx.subscriptions.issue({ accountId: `ls-${tier}`, tier })).key;
  listing = await t.store.db
    .selectFrom('listings')
    .selectAll()
    .where('status', '=', 'ACTIVE')
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => {
  source.mode = 'ok';
  source.gate = null;
  source.fetches = 0;
});

interface Received {
  type: string;
  data: string;
  /** ms since the stream was opened. */
  at: number;
}

/** Reads one listing stream with EventSource until `done` (then closes it, as a client should). */
function stream(
  id: string,
  tier: Tier = 'PRO',
  onEvent: (event: Received) => void = () => {},
): Promise<{ events: Received[]; headers: Headers; ms: number }> {
  const started = performance.now();
  const events: Received[] = [];
  let headers = new Headers();
  return new Promise((resolve, reject) => {
    const es = new EventSource(`${t.url}/v1/listing/${id}`, {
      fetch: async (input, init) => {
        const response = await fetch(input, {
          ...init,
          headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${keys[tier]}` },
        });
        headers = response.headers;
        return response;
      },
    });
    const timer = setTimeout(() => {
      es.close();
      reject(new Error(`no done after 15 s: ${JSON.stringify(events)}`));
    }, 15_000);
    for (const type of ['cached', 'live', 'error', 'done']) {
      es.addEventListener(type, (event) => {
        // The transport's own errors are Events without data; the stream's `error` events carry JSON.
        if (!('data' in event)) {
          clearTimeout(timer);
          es.close();
          reject(new Error(`transport error: ${JSON.stringify(event)}`));
          return;
        }
        const received = { type, data: String(event.data), at: performance.now() - started };
        events.push(received);
        onEvent(received);
        if (type === 'done') {
          clearTimeout(timer);
          es.close();
          resolve({ events, headers, ms: performance.now() - started });
        }
      });
    }
  });
}

describe('GET /v1/listing/{id} as an event stream', () => {
  it('sends cached (from the store, not waiting for upstream), then live, then done', async () => {
    let release: () => void = () => {};
    source.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { events, headers } = await stream(listing.id, 'PRO', (event) => {
      // Upstream answers only once the cached copy has arrived.
      if (event.type === 'cached') release();
    });
    expect(events.map((e) => e.type)).toEqual(['cached', 'live', 'done']);
    expect(events[0]!.at).toBeLessThan(2000);
    const cached = JSON.parse(events[0]!.data) as ListingDetailResponse['data'];
    const live = JSON.parse(events[1]!.data) as ListingDetailResponse['data'];
    expectSchema(ListingDetailSchema, cached);
    expectSchema(ListingDetailSchema, live);
    expect(cached.id).toBe(listing.id);
    expect(live.id).toBe(listing.id);
    expect(live.price).toBe(source.newPrice);
    expect(live.price).not.toBe(cached.price);
    expect(JSON.parse(events[2]!.data)).toEqual({});
    expect(source.fetches).toBe(1);
    expect(headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(headers.get('x-accel-buffering')).toBe('no');
    expect(headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-quota-used']) {
      expect(headers.get(name), name).toMatch(/^\d+$/);
    }
    // The live read went through the pipeline: the change is stored and in the event log.
    const logged = await readEvents(t.store.db, { after: 0, limit: 100, listingId: listing.id });
    expect(logged.some((e) => e.type === 'listing.price_increased' && e.newValue === source.newPrice)).toBe(
      true,
    );
  });

  it('gives live data to Pro callers, which the JSON detail does not (unchanged without the Accept header)', async () => {
    const response = await t.getAs(keys.PRO, `/v1/property/${listing.id}`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await response.json()) as ListingDetailResponse;
    expectSchema(ListingDetailResponse, body);
    expect(body.meta.source).not.toBe('live');
    expect(source.fetches).toBe(0);
    const { events } = await stream(listing.id, 'PRO');
    expect(events.map((e) => e.type)).toEqual(['cached', 'live', 'done']);
  });

  it.each([
    ['fail', 'fetch_failed'],
    ['not_found', 'not_found'],
  ] as const)('upstream %s: error {code: %s} instead of live, then done', async (mode, code) => {
    source.mode = mode;
    const { events } = await stream(listing.id, 'BUSINESS');
    expect(events.map((e) => e.type)).toEqual(['cached', 'error', 'done']);
    expectSchema(ListingDetailSchema, JSON.parse(events[0]!.data));
    expect(JSON.parse(events[1]!.data)).toMatchObject({ code, message: expect.any(String) });
  });

  it('a failure while reading the fetched listing back is an error event too, and the stream still ends', async () => {
    const live = vi
      .spyOn(t.ctx.listingStream, 'live')
      .mockRejectedValueOnce(new Error('connection terminated'));
    try {
      const { events } = await stream(listing.id, 'PRO');
      expect(events.map((e) => e.type)).toEqual(['cached', 'error', 'done']);
      expect(JSON.parse(events[1]!.data)).toMatchObject({ code: 'fetch_failed' });
    } finally {
      live.mockRestore();
    }
  });

  it('a hung upstream: error {code: timeout} within the live budget, the whole stream under 10 s', async () => {
    source.mode = 'hang';
    const { events, ms } = await stream(listing.id, 'INTERNAL');
    expect(events.map((e) => e.type)).toEqual(['cached', 'error', 'done']);
    expect(JSON.parse(events[1]!.data)).toMatchObject({ code: 'timeout' });
    expect(ms).toBeGreaterThanOrEqual(LIVE_BUDGET_MS - 50);
    expect(ms).toBeLessThan(10_000);
    // The fetch outlives the stream by the port's grace; later tests must not join it (single-flight).
    await new Promise((resolve) => setTimeout(resolve, 500));
  }, 20_000);

  it('the server closes the stream after done', async () => {
    const response = await t.getAs(keys.PRO, `/v1/listing/${listing.id}`, {
      headers: { accept: 'text/event-stream' },
    });
    const text = await response.text();
    const names = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(names).toEqual(['cached', 'live', 'done']);
    expect(text.endsWith('event: done\ndata: {}\n\n')).toBe(true);
  });
});

describe('answers before the stream starts are JSON errors', () => {
  interface ErrorJson {
    error: { code: string; message: string; details?: { params?: { parameter: string }[] } };
  }

  it('without Accept: text/event-stream, 406 naming the media type', async () => {
    for (const accept of [undefined, 'application/json', '*/*']) {
      const response = await t.getAs(keys.PRO, `/v1/listing/${listing.id}`, {
        headers: accept === undefined ? {} : { accept },
      });
      expect(response.status, accept).toBe(406);
      const body = (await response.json()) as ErrorJson;
      expect(body.error.code).toBe('NOT_ACCEPTABLE');
      expect(body.error.message).toContain('text/event-stream');
      expect(response.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    }
    expect(source.fetches).toBe(0);
  });

  it('an unknown listing is a 404, a malformed id a 400', async () => {
    const headers = { accept: 'text/event-stream' };
    const missing = await t.getAs(keys.PRO, '/v1/listing/999999999999', { headers });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as ErrorJson).error.code).toBe('NOT_FOUND');
    const malformed = await t.getAs(keys.PRO, '/v1/listing/12a', { headers });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as ErrorJson).error.details?.params?.[0]?.parameter).toBe('id');
    expect(source.fetches).toBe(0);
  });

  it('Free and Starter are 403, anonymous 401, as JSON', async () => {
    const headers = { accept: 'text/event-stream' };
    for (const tier of ['FREE', 'STARTER'] as const) {
      const response = await t.getAs(keys[tier], `/v1/listing/${listing.id}`, { headers });
      expect(response.status).toBe(403);
      expect(((await response.json()) as ErrorJson).error.code).toBe('TIER_RESTRICTED');
    }
    const anonymous = await t.getAs(null, `/v1/listing/${listing.id}`, { headers });
    expect(anonymous.status).toBe(401);
    expect(source.fetches).toBe(0);
  });
});
