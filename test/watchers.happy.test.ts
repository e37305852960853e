import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markChanged } from '../src/modules/freshness/data-version.ts';
import {
  type WatcherChange,
  WatcherChangeSchema,
  WatcherSchema,
  type WatcherView,
} from '../src/modules/watchers/watchers.schema.ts';
import type { ListingRow } from '../src/platform/db/tables.ts';
import { createTestApp, type TestApp, UNLIMITED } from './support/app.ts';
import { expectSchema } from './support/schema.ts';
import { NEXT_LISTING_REVISION } from './support/store.ts';

const HIGH_LIMITS: Record<string, string> = { ...UNLIMITED, SEARCH_INDEX: 'false' };

let t: TestApp;
let business: string;
let listing: ListingRow;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005, env: HIGH_LIMITS });
  business = (await t.ctx.subscriptions.issue({ accountId: 'w-happy', tier: 'BUSINESS' })).key;
  listing = await t.store.db
    .selectFrom('listings')
    .selectAll()
    .where('status', '=', 'ACTIVE')
    .where('listing_type', '=', 'rental')
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
});
afterAll(async () => {
  await t?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  body: { data: WatcherView; meta: Record<string, unknown>; error?: { code: string; message: string } };
}

async function send(method: string, path: string, body?: unknown, key = business): Promise<Answer> {
  const response = await t.getAs(key, path, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

/** Changes a listing in the store as a refresh would, and tells the read paths. */
async function setPrice(id: string, price: number): Promise<void> {
  await t.store.db
    .updateTable('listings')
    .set({ price, revision: NEXT_LISTING_REVISION })
    .where('id', '=', id)
    .execute();
  await markChanged(t.store.db, 'search:rental', t.clock.now());
  t.ctx.dataVersion.invalidate();
}

/** Moves the wall clock past every watcher's interval and runs one poll pass. */
async function pollAfter(seconds: number) {
  t.clock.advance(seconds * 1000);
  return t.ctx.watcherPoller.pollDue();
}

describe('CRUD', () => {
  it('creates a listing watcher with the defaults, and reads it back', async () => {
    const created = await send('POST', '/v1/watchers', { watchType: 'listing', listingId: listing.id });
    expect(created.status).toBe(201);
    expectSchema(WatcherSchema, created.body.data);
    expect(created.headers.get('location')).toBe(`/v1/watchers/${created.body.data.id}`);
    expect(created.body.data).toMatchObject({
      watchType: 'listing',
      listingId: listing.id,
      buildingId: null,
      searchFilters: null,
      pollInterval: 900,
      active: true,
      status: 'active',
      pausedReason: null,
      lastPollAt: null,
      lastChangeAt: null,
      lastSequence: 0,
      nextPollAt: new Date(t.clock.now().getTime() + 900_000).toISOString(),
    });
    expect(created.body.data.id).toMatch(/^[0-9a-f-]{36}$/);
    const read = await send('GET', `/v1/watchers/${created.body.data.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(created.body.data);
    const list = await t.getAs(business, '/v1/watchers');
    const listed = (await list.json()) as { data: WatcherView[]; meta: { total: number } };
    expect(listed.data.map((w) => w.id)).toContain(created.body.data.id);
    expect(listed.meta.total).toBe(listed.data.length);
  });

  it('creates building and search watchers', async () => {
    const building = await send('POST', '/v1/watchers', {
      watchType: 'building',
      buildingId: listing.building_id,
      pollInterval: 300,
    });
    expect(building.status).toBe(201);
    expect(building.body.data).toMatchObject({
      watchType: 'building',
      buildingId: listing.building_id,
      pollInterval: 300,
    });
    const search = await send('POST', '/v1/watchers', {
      watchType: 'search',
      searchFilters: { listingType: 'rental', areas: String(listing.area_id), noFee: false, sort: 'PRICE' },
    });
    expect(search.status).toBe(201);
    expectSchema(WatcherSchema, search.body.data);
    expect(search.body.data.searchFilters).toEqual({
      listingType: 'rental',
      areas: String(listing.area_id),
      noFee: false,
      sort: 'PRICE',
    });
  });

  it('pauses, resumes and re-times a watcher; updatedAt moves', async () => {
    const { body } = await send('POST', '/v1/watchers', { watchType: 'listing', listingId: listing.id });
    const id = body.data.id;
    t.clock.advance(1000);
    const paused = await send('PATCH', `/v1/watchers/${id}`, { status: 'paused' });
    expect(paused.status).toBe(200);
    expect(paused.body.data).toMatchObject({
      status: 'paused',
      active: false,
      pausedReason: 'by_owner',
      nextPollAt: null,
    });
    expect(paused.body.data.updatedAt > body.data.updatedAt).toBe(true);
    const resumed = await send('PATCH', `/v1/watchers/${id}`, { status: 'active' });
    expect(resumed.body.data).toMatchObject({
      status: 'active',
      pausedReason: null,
      nextPollAt: t.clock.now().toISOString(),
    });
    const retimed = await send('PATCH', `/v1/watchers/${id}`, { pollInterval: 600 });
    expect(retimed.body.data).toMatchObject({
      pollInterval: 600,
      nextPollAt: new Date(t.clock.now().getTime() + 600_000).toISOString(),
    });
  });

  it('deletes a watcher: 204, then 404, and it is polled no more', async () => {
    const { body } = await send('POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: listing.id,
      pollInterval: 300,
    });
    const id = body.data.id;
    const deleted = await send('DELETE', `/v1/watchers/${id}`);
    expect(deleted.status).toBe(204);
    expect((await send('GET', `/v1/watchers/${id}`)).status).toBe(404);
    await pollAfter(301);
    const row = await t.store.db.selectFrom('watchers').select('id').where('id', '=', id).executeTakeFirst();
    expect(row).toBeUndefined();
  });
});

describe('polling', () => {
  it('records a listing change with old and new values, and shows it on the watcher', async () => {
    const { body } = await send('POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: listing.id,
      pollInterval: 300,
    });
    const id = body.data.id;
    // Nothing changed yet: a poll records nothing.
    await pollAfter(301);
    expect((await send('GET', `/v1/watchers/${id}`)).body.data).toMatchObject({
      lastSequence: 0,
      lastChangeAt: null,
    });
    const before = (
      await t.store.db
        .selectFrom('listings')
        .select('price')
        .where('id', '=', listing.id)
        .executeTakeFirstOrThrow()
    ).price;
    await setPrice(listing.id, before + 250);
    await pollAfter(301);
    const after = await send('GET', `/v1/watchers/${id}`);
    expect(after.body.data).toMatchObject({
      lastSequence: 1,
      lastChangeAt: t.clock.now().toISOString(),
      lastPollAt: t.clock.now().toISOString(),
    });
    const rows = await t.store.db
      .selectFrom('watcher_changes')
      .selectAll()
      .where('watcher_id', '=', id)
      .execute();
    expect(rows).toHaveLength(1);
    const change = JSON.parse(rows[0]!.payload) as WatcherChange;
    expectSchema(WatcherChangeSchema, change);
    expect(change).toMatchObject({
      id: `${id}:1`,
      type: 'watcher.change',
      data: { watcherId: id, sequence: 1, listingId: listing.id },
    });
    expect(change.data.changes).toContainEqual({
      kind: 'changed',
      field: 'price',
      listingId: null,
      oldValue: before,
      newValue: before + 250,
    });
  });

  it('records building and search changes per listing', async () => {
    const building = await send('POST', '/v1/watchers', {
      watchType: 'building',
      buildingId: listing.building_id,
      pollInterval: 300,
    });
    const search = await send('POST', '/v1/watchers', {
      watchType: 'search',
      searchFilters: { listingType: 'rental', areas: String(listing.area_id) },
      pollInterval: 300,
    });
    const before = (
      await t.store.db
        .selectFrom('listings')
        .select('price')
        .where('id', '=', listing.id)
        .executeTakeFirstOrThrow()
    ).price;
    await setPrice(listing.id, before - 100);
    await pollAfter(301);
    for (const id of [building.body.data.id, search.body.data.id]) {
      const rows = await t.store.db
        .selectFrom('watcher_changes')
        .selectAll()
        .where('watcher_id', '=', id)
        .execute();
      expect(rows, id).toHaveLength(1);
      const change = JSON.parse(rows[0]!.payload) as WatcherChange;
      expectSchema(WatcherChangeSchema, change);
      expect(change.data.changes).toContainEqual({
        kind: 'changed',
        field: 'price',
        listingId: listing.id,
        oldValue: before,
        newValue: before - 100,
      });
    }
  });
});

interface Received {
  type: string;
  data: string;
  id: string;
}

/** An EventSource on a watcher's stream, sending the key; collects every named event. */
function openStream(id: string, headers: Record<string, string> = {}) {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const es = new EventSource(`${t.url}/v1/watchers/${id}/stream`, {
    fetch: (input, init) => {
      const sent = new Headers(init?.headers);
      sent.set('authorization', `Bearer ${business}`);
      for (const [name, value] of Object.entries(headers)) sent.set(name, value);
      return fetch(input, { ...init, headers: sent });
    },
  });
  for (const type of ['connected', 'change', 'stopped', 'error']) {
    es.addEventListener(type, (event) => {
      if (!('data' in event)) return; // the transport's own errors
      received.push({ type, data: String(event.data), id: event.lastEventId });
      for (const wake of waiters.splice(0)) wake();
    });
  }
  const until = async (predicate: (r: Received[]) => boolean, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(received)) {
      if (Date.now() > deadline) throw new Error(`stream: ${JSON.stringify(received)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  return { es, received, until };
}

describe('GET /v1/watchers/{id}/stream', () => {
  it('sends connected, then each change as polls find it, and stopped when paused', async () => {
    const { body } = await send('POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: listing.id,
      pollInterval: 300,
    });
    const id = body.data.id;
    const stream = openStream(id);
    try {
      await stream.until((r) => r.some((e) => e.type === 'connected'));
      expect(JSON.parse(stream.received[0]!.data)).toMatchObject({
        watcherId: id,
        status: 'active',
        after: 0,
      });
      for (const price of [4001, 4002]) {
        await setPrice(listing.id, price);
        await pollAfter(301);
      }
      await stream.until((r) => r.filter((e) => e.type === 'change').length === 2);
      const changes = stream.received.filter((e) => e.type === 'change');
      expect(changes.map((e) => e.id)).toEqual(['1', '2']);
      const second = JSON.parse(changes[1]!.data) as WatcherChange;
      expectSchema(WatcherChangeSchema, second);
      expect(second.data.changes).toContainEqual(
        expect.objectContaining({ field: 'price', oldValue: 4001, newValue: 4002 }),
      );
      await send('PATCH', `/v1/watchers/${id}`, { status: 'paused' });
      await stream.until((r) => r.some((e) => e.type === 'stopped'));
      expect(JSON.parse(stream.received.at(-1)!.data)).toEqual({
        reason: 'paused',
        pausedReason: 'by_owner',
      });
    } finally {
      stream.es.close();
    }
  });

  it('resumes after Last-Event-ID from the stored changes, and says stopped when deleted', async () => {
    const { body } = await send('POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: listing.id,
      pollInterval: 300,
    });
    const id = body.data.id;
    for (const price of [5001, 5002, 5003]) {
      await setPrice(listing.id, price);
      await pollAfter(301);
    }
    const stream = openStream(id, { 'last-event-id': '1' });
    try {
      await stream.until((r) => r.filter((e) => e.type === 'change').length === 2);
      expect(stream.received.filter((e) => e.type === 'change').map((e) => e.id)).toEqual(['2', '3']);
      await send('DELETE', `/v1/watchers/${id}`);
      await stream.until((r) => r.some((e) => e.type === 'stopped'));
      expect(JSON.parse(stream.received.at(-1)!.data)).toEqual({ reason: 'deleted', pausedReason: null });
    } finally {
      stream.es.close();
    }
  });
});
