import { Validator } from '@seriousme/openapi-schema-validator';
import { EventSource } from 'eventsource';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTING_EVENT_TYPES, type ListingEventType } from '../src/domain/events.ts';
import { SseHub } from '../src/http/sse.ts';
import {
  type ListingEventPayload,
  ListingEventPayloadSchema,
} from '../src/modules/events/event-catalogue.ts';
import {
  appendEvents,
  type ListingEventInput,
  latestSequence,
  lockEventLog,
} from '../src/modules/events/event-log.ts';
import { EventFeedResponse } from '../src/modules/events/events.schema.ts';
import { EventFeedService, SCAN_WINDOW } from '../src/modules/events/events.service.ts';
import { createTestApp, TEST_NOW, type TestApp } from './support/app.ts';
import { expectSchema } from './support/schema.ts';

interface ListingRef {
  id: string;
  building_id: string;
  listing_type: 'rental' | 'sale';
  area_id: number;
}

let t: TestApp;
let proKey: string;
let listings: ListingRef[];
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005, env: { RATE_LIMIT_PRO: '100000', MONTHLY_QUOTA_PRO: '1000000' } });
  proKey = (await t.ctx.subscriptions.issue({ accountId: 'feed-happy', tier: 'PRO' })).key;
  listings = await t.store.db
    .selectFrom('listings')
    .select(['id', 'building_id', 'listing_type', 'area_id'])
    .orderBy('id')
    .execute();
});
afterAll(async () => {
  await t?.close();
});

let counter = 0;
/** Appends `count` events as the pipeline does (the append lock, one transaction), cycling types and listings. */
async function append(count: number, type?: ListingEventType): Promise<void> {
  const events: ListingEventInput[] = [];
  for (let i = 0; i < count; i++) {
    counter++;
    const listing = listings[(counter * 7) % listings.length]!;
    events.push({
      type: type ?? LISTING_EVENT_TYPES[counter % LISTING_EVENT_TYPES.length]!,
      listingId: listing.id,
      buildingId: listing.building_id,
      listingType: listing.listing_type,
      areaId: null,
      oldValue: counter,
      newValue: counter + 1,
      occurredAt: TEST_NOW.toISOString(),
    });
  }
  await t.store.db.transaction().execute(async (trx) => {
    await lockEventLog(trx, t.store.dialect);
    await appendEvents(trx, events, new Date().toISOString());
  });
}

async function page(query: string): Promise<EventFeedResponse> {
  const response = await t.getAs(proKey, `/v1/events?${query}`);
  expect(response.status, query).toBe(200);
  const body = (await response.json()) as EventFeedResponse;
  expectSchema(EventFeedResponse, body);
  return body;
}

/** Every page from `after` by `next`, appending `between` events after each page; returns what was read. */
async function readAll(query: string, after: number, between = 0): Promise<ListingEventPayload[]> {
  const seen: ListingEventPayload[] = [];
  let cursor = after;
  for (let pages = 0; pages < 10_000; pages++) {
    const body = await page(`${query}&after=${cursor}`);
    seen.push(...body.data);
    expect(body.meta.next).toBeGreaterThanOrEqual(cursor);
    cursor = body.meta.next;
    if (between > 0 && pages < 5) await append(between);
    else if (!body.meta.hasMore) return seen;
  }
  throw new Error('the feed never ended');
}

async function allEventsAfter(after: number): Promise<ListingEventPayload[]> {
  const rows = await t.store.db
    .selectFrom('listing_events')
    .select('sequence')
    .where('sequence', '>', after)
    .orderBy('sequence')
    .execute();
  return rows.map((r) => ({ sequence: Number(r.sequence) }) as ListingEventPayload);
}

describe('GET /v1/events: paging the log', () => {
  it('reads every event exactly once, in order, page by page', async () => {
    const start = await latestSequence(t.store.db);
    await append(537);
    const seen = await readAll('limit=50', start);
    const expected = (await allEventsAfter(start)).map((e) => e.sequence);
    expect(seen.map((e) => e.sequence)).toEqual(expected);
    expect(seen).toHaveLength(537);
    for (const event of seen) expectSchema(ListingEventPayloadSchema, event);
  });

  it('misses nothing and repeats nothing while events are appended between pages', async () => {
    const start = await latestSequence(t.store.db);
    await append(120);
    const seen = await readAll('limit=37', start, 23);
    const sequences = seen.map((e) => e.sequence);
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(sequences).toEqual((await allEventsAfter(start)).map((e) => e.sequence));
    expect(sequences.length).toBe(120 + 5 * 23);
  });

  it('serves the catalogue payload: id evt_<sequence>, type, timestamp, data', async () => {
    const start = await latestSequence(t.store.db);
    await append(1, 'listing.price_decreased');
    const body = await page(`after=${start}&limit=1`);
    const [event] = body.data;
    const listing = listings[(counter * 7) % listings.length]!;
    expect(event!.sequence).toBeGreaterThan(start);
    expect(event).toMatchObject({
      type: 'listing.price_decreased',
      data: { listingId: listing.id, buildingId: listing.building_id, listingType: listing.listing_type },
    });
    expect(event!.id).toBe(`evt_${event!.sequence}`);
    expect(body.meta).toEqual({ next: event!.sequence, hasMore: false, latest: event!.sequence, limit: 1 });
  });

  it('filters by types and by areas (with descendants), still exactly', async () => {
    const start = await latestSequence(t.store.db);
    await append(400);
    const all = await readAll('limit=1000', start);
    const areaOf = new Map(listings.map((l) => [l.id, l.area_id]));
    // A borough: its neighborhoods' listings count.
    const borough = [100, 200, 300, 400, 500].find((b) =>
      all.some((e) => t.ctx.areaTree.descendantsAndSelf(b).includes(areaOf.get(e.data.listingId)!)),
    )!;
    const inBorough = new Set(t.ctx.areaTree.descendantsAndSelf(borough));
    const types: ListingEventType[] = ['listing.created', 'listing.sold'];

    const byType = await readAll(`limit=13&types=${types.join(',')}`, start);
    expect(byType.map((e) => e.sequence)).toEqual(
      all.filter((e) => types.includes(e.type)).map((e) => e.sequence),
    );
    const byArea = await readAll(`limit=13&areas=${borough}`, start);
    const expectedByArea = all.filter((e) => inBorough.has(areaOf.get(e.data.listingId)!));
    expect(expectedByArea.length).toBeGreaterThan(0);
    expect(byArea.map((e) => e.sequence)).toEqual(expectedByArea.map((e) => e.sequence));
    const both = await readAll(`limit=7&areas=${borough}&types=${types.join(',')}`, start);
    expect(both.map((e) => e.sequence)).toEqual(
      expectedByArea.filter((e) => types.includes(e.type)).map((e) => e.sequence),
    );
  });

  it('at the end of the log: no events, next stays put, hasMore false', async () => {
    const latest = await latestSequence(t.store.db);
    const body = await page(`after=${latest}`);
    expect(body.data).toEqual([]);
    expect(body.meta).toMatchObject({ next: latest, hasMore: false, latest, limit: 100 });
  });

  it('a sparse filter scans the log in bounded windows: an empty page says hasMore', async () => {
    const start = await latestSequence(t.store.db);
    await append(SCAN_WINDOW + 50, 'listing.created');
    await append(1, 'listing.open_house_added');
    const first = await page(`after=${start}&types=listing.open_house_added&limit=10`);
    expect(first.data).toEqual([]);
    expect(first.meta.next).toBe(start + SCAN_WINDOW);
    expect(first.meta.hasMore).toBe(true);
    const second = await page(`after=${first.meta.next}&types=listing.open_house_added&limit=10`);
    expect(second.data.map((e) => e.type)).toEqual(['listing.open_house_added']);
    expect(second.meta.hasMore).toBe(false);
  });
});

/** An EventSource that sends the key (and any extra headers) and records what each connection sent. */
function openStream(
  path: string,
  options: { key?: string; headers?: Record<string, string>; cutAfterIds?: number } = {},
): { es: EventSource; sent: Headers[] } {
  const sent: Headers[] = [];
  const es = new EventSource(`${t.url}${path}`, {
    fetch: async (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${options.key ?? proKey}`);
      for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
      sent.push(headers);
      const response = await fetch(input, { ...init, headers });
      // The first connection can be cut after some events, as a dropped network would.
      if (sent.length === 1 && options.cutAfterIds !== undefined && response.body) {
        return new Response(cutAfter(response.body, options.cutAfterIds), {
          status: response.status,
          headers: response.headers,
        });
      }
      return response;
    },
  });
  return { es, sent };
}

/** Passes a stream's frames through until `ids` frames with an `id:` went by, then ends it. */
function cutAfter(body: ReadableStream<Uint8Array>, ids: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = '';
  let seen = 0;
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const frame = buffer.slice(0, end + 2);
        buffer = buffer.slice(end + 2);
        controller.enqueue(encoder.encode(frame));
        if (/^id: /m.test(frame) && ++seen >= ids) {
          await reader.cancel();
          return controller.close();
        }
        end = buffer.indexOf('\n\n');
      }
    },
  });
}

function collect(es: EventSource, count: number, timeoutMs = 15_000): Promise<MessageEvent[]> {
  const got: MessageEvent[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`got ${got.length} of ${count} events`)), timeoutMs);
    es.addEventListener('message', (event) => {
      got.push(event);
      if (got.length === count) {
        clearTimeout(timer);
        resolve(got);
      }
    });
  });
}

function opened(es: EventSource): Promise<void> {
  return new Promise((resolve, reject) => {
    es.addEventListener('open', () => resolve(), { once: true });
    es.addEventListener(
      'error',
      (e) => reject(new Error(`stream failed: ${e.message ?? ''} ${e.code ?? ''}`)),
      {
        once: true,
      },
    );
  });
}

describe('GET /v1/events/stream (EventSource)', () => {
  it('sends the log after a cursor in order, then pushes new events as they are appended', async () => {
    const start = await latestSequence(t.store.db);
    await append(30);
    const { es } = openStream(`/v1/events/stream?after=${start}`);
    try {
      const pending = collect(es, 45);
      await opened(es);
      await append(15);
      const events = await pending;
      const sequences = events.map((e) => Number(e.lastEventId));
      expect(sequences).toEqual((await allEventsAfter(start)).map((e) => e.sequence).slice(0, 45));
      for (const event of events) {
        const payload = JSON.parse(event.data as string) as ListingEventPayload;
        expectSchema(ListingEventPayloadSchema, payload);
        expect(payload.sequence).toBe(Number(event.lastEventId));
      }
    } finally {
      es.close();
    }
  });

  it('without a cursor starts at the end of the log: only new events', async () => {
    await append(5);
    const latest = await latestSequence(t.store.db);
    const { es } = openStream('/v1/events/stream');
    try {
      const pending = collect(es, 3);
      await opened(es);
      await append(3);
      const events = await pending;
      expect(events.map((e) => Number(e.lastEventId))).toEqual([latest + 1, latest + 2, latest + 3]);
    } finally {
      es.close();
    }
  });

  it('resumes after Last-Event-ID when the client reconnects: nothing missed, nothing twice', async () => {
    const start = await latestSequence(t.store.db);
    await append(20);
    const { es, sent } = openStream(`/v1/events/stream?after=${start}`, { cutAfterIds: 7 });
    try {
      const pending = collect(es, 26);
      await opened(es);
      // After the cut, EventSource reconnects on its own, sending the last id it saw.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await append(6);
      const events = await pending;
      expect(sent.length).toBe(2);
      expect(sent[0]!.get('last-event-id')).toBeNull();
      expect(sent[1]!.get('last-event-id')).toBe(String(start + 7));
      expect(events.map((e) => Number(e.lastEventId))).toEqual(
        (await allEventsAfter(start)).map((e) => e.sequence).slice(0, 26),
      );
    } finally {
      es.close();
    }
  });

  it('an explicit Last-Event-ID takes precedence over after', async () => {
    const start = await latestSequence(t.store.db);
    await append(10);
    const { es } = openStream('/v1/events/stream?after=0', {
      headers: { 'last-event-id': String(start + 4) },
    });
    try {
      const events = await collect(es, 6);
      expect(events.map((e) => Number(e.lastEventId))).toEqual([5, 6, 7, 8, 9, 10].map((n) => start + n));
    } finally {
      es.close();
    }
  });

  it('filters the stream by types and areas like the pages', async () => {
    const start = await latestSequence(t.store.db);
    await append(64);
    const expected = (await readAll('limit=1000&types=listing.sold,listing.rented', start)).map(
      (e) => e.sequence,
    );
    const { es } = openStream(`/v1/events/stream?after=${start}&types=listing.sold,listing.rented`);
    try {
      const events = await collect(es, expected.length);
      expect(events.map((e) => Number(e.lastEventId))).toEqual(expected);
    } finally {
      es.close();
    }
  });

  it('a reader that falls behind loses nothing: the stream waits for it (backpressure)', async () => {
    const start = await latestSequence(t.store.db);
    await append(4000);
    const controller = new AbortController();
    const response = await t.getAs(proKey, `/v1/events/stream?after=${start}`, {
      headers: { accept: 'text/event-stream' },
      signal: controller.signal,
    });
    try {
      // Not reading for a while: the server must stop at the socket's buffer, not drop or pile up.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      const ids = () => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      while (ids().length < 4000) text += decoder.decode((await reader.read()).value, { stream: true });
      expect(ids()).toEqual((await allEventsAfter(start)).map((e) => e.sequence));
    } finally {
      controller.abort();
    }
  });

  it('answers with SSE headers and the access headers, before any event', async () => {
    const controller = new AbortController();
    const response = await t.getAs(proKey, '/v1/events/stream', {
      headers: { accept: 'text/event-stream' },
      signal: controller.signal,
    });
    try {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('x-accel-buffering')).toBe('no');
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
        expect(response.headers.get(name), name).toMatch(/^\d+$/);
      }
      for (const name of ['x-quota-limit', 'x-quota-used', 'x-quota-remaining']) {
        expect(response.headers.get(name), name).toMatch(/^\d+$/);
      }
      const reader = response.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toBe('retry: 2000\n\n');
    } finally {
      controller.abort();
    }
  });

  it('a server closing with streams open ends them rather than waiting', async () => {
    const other = await createTestApp({ scale: 0 });
    const response = await other.get('/v1/events/stream?after=0', {
      headers: { accept: 'text/event-stream' },
    });
    expect(response.status).toBe(200);
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(5000);
    // The client sees the end of the body.
    const text = await response.text();
    expect(text).toContain('retry:');
  });
});

describe('heartbeats', () => {
  it('a quiet change stream sends heartbeats within the idle timeout, and outlives it', async () => {
    const quiet = await createTestApp({ scale: 0, env: { HTTP_IDLE_TIMEOUT_MS: '1000' } });
    const es = new EventSource(`${quiet.url}/v1/events/stream`, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: {
            ...(init?.headers as Record<string, string>),
            authorization: `Bearer ${quiet.internalKey}`,
          },
        }),
    });
    try {
      let errors = 0;
      es.addEventListener('error', () => {
        errors++;
      });
      const beats = await new Promise<number>((resolve) => {
        let count = 0;
        es.addEventListener('heartbeat', () => {
          count++;
        });
        // Three idle timeouts: a connection cut as idle would show as an error and a reconnect.
        setTimeout(() => resolve(count), 3000);
      });
      expect(beats).toBeGreaterThanOrEqual(4);
      expect(errors).toBe(0);
    } finally {
      es.close();
      await quiet.close();
    }
  });
});

describe('the SSE writer', () => {
  it('sends heartbeats on its interval, and leaves nothing behind when the client goes away', async () => {
    const app = Fastify({ forceCloseConnections: true });
    const hub = new SseHub();
    let closed = 0;
    app.get('/s', async (_request, reply) => {
      const stream = hub.open(reply, { heartbeatMs: 40 });
      stream.onClose(() => {
        closed++;
      });
      stream.send({ event: 'hello', id: 1, data: 'line one\nline two' });
      return reply;
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const es = new EventSource(`${url}/s`);
      const beats: MessageEvent[] = [];
      const hello = await new Promise<MessageEvent>((resolve) => es.addEventListener('hello', resolve));
      expect(hello.data).toBe('line one\nline two');
      expect(hello.lastEventId).toBe('1');
      await new Promise<void>((resolve) =>
        es.addEventListener('heartbeat', (event) => {
          beats.push(event);
          if (beats.length === 3) resolve();
        }),
      );
      expect(JSON.parse(beats[0]!.data as string)).toHaveProperty('at');
      expect(hub.size).toBe(1);
      es.close();
      for (let i = 0; i < 100 && hub.size > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(hub.size).toBe(0);
      expect(closed).toBe(1);
    } finally {
      await app.close();
    }
  });
});

describe('following the log inside the process', () => {
  it('a data change announced in this process wakes a caught-up stream at once, not at the next poll', async () => {
    // A poll interval no test waits for: only the DataVersion notification can deliver in time.
    const feed = new EventFeedService(t.store.db, t.ctx.areaTree, t.ctx.dataVersion, { pollMs: 600_000 });
    const start = await latestSequence(t.store.db);
    const abort = new AbortController();
    const pages = feed.follow(start, {}, abort.signal);
    const first = pages.next();
    // Let it catch up and start waiting, then append and announce as the pipeline does.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await append(2);
    t.ctx.dataVersion.invalidate();
    const page = await Promise.race([
      first,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('not woken')), 5000)),
    ]);
    if (page.done) throw new Error('the feed ended');
    expect(page.value.data.map((e) => e.sequence)).toEqual([start + 1, start + 2]);
    abort.abort();
    expect((await pages.next()).done).toBe(true);
  });
});

describe('OpenAPI', () => {
  it('documents the feed and both streams, with security and text/event-stream responses', async () => {
    const response = await t.get('/openapi.json');
    const doc = (await response.json()) as {
      paths: Record<string, { get: { security: unknown; responses: Record<string, { content: object }> } }>;
    };
    const result = await new Validator().validate(doc as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    for (const path of ['/v1/events', '/v1/events/stream', '/v1/listing/{id}']) {
      expect(doc.paths[path]?.get.security, path).toEqual([{ apiKey: [] }]);
      expect(doc.paths[path]?.get).toHaveProperty('x-min-tier', 'PRO');
    }
    expect(Object.keys(doc.paths['/v1/events']!.get.responses['200']!.content)).toEqual(['application/json']);
    for (const path of ['/v1/events/stream', '/v1/listing/{id}']) {
      expect(Object.keys(doc.paths[path]!.get.responses['200']!.content)).toEqual(['text/event-stream']);
      expect(doc.paths[path]!.get.responses).toHaveProperty('406');
    }
  });
});
