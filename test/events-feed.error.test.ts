import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LISTING_EVENT_TYPES } from '../src/domain/events.ts';
import { appendEvents, latestSequence, lockEventLog } from '../src/modules/events/event-log.ts';
import { createTestApp, TEST_NOW, type TestApp } from './support/app.ts';

interface ErrorJson {
  error: {
    code: string;
    message: string;
    status: number;
    details?: {
      params?: { parameter: string; location: string; rule: string; message: string }[];
      acceptable?: string[];
    };
  };
}

let t: TestApp;
let proKey: string;
beforeAll(async () => {
  t = await createTestApp({ scale: 0, env: { RATE_LIMIT_PRO: '100000', MONTHLY_QUOTA_PRO: '1000000' } });
  proKey = (await t.ctx.subscriptions.issue({ accountId: 'feed-errors', tier: 'PRO' })).key;
});
afterAll(async () => {
  await t?.close();
});

async function errorOf(path: string, headers: Record<string, string> = {}) {
  const response = await t.getAs(proKey, path, { headers });
  const text = await response.text();
  expect(response.headers.get('content-type'), `${path}: ${text}`).toMatch(/^application\/json/);
  return { status: response.status, body: JSON.parse(text) as ErrorJson, headers: response.headers };
}

const STREAM = { accept: 'text/event-stream' };

describe('bad parameters are 400s naming the parameter (pages and stream alike)', () => {
  for (const [base, headers] of [
    ['/v1/events', {}],
    ['/v1/events/stream', STREAM],
  ] as const) {
    it(`${base}: an unknown event type lists the valid ones`, async () => {
      for (const types of ['listing.bogus', 'listing.created,nope', 'listingXcreated']) {
        const { status, body } = await errorOf(`${base}?types=${types}`, headers);
        expect(status, types).toBe(400);
        expect(body.error.code).toBe('INVALID_PARAMS');
        expect(body.error.details?.params?.[0]?.parameter).toBe('types');
        for (const type of LISTING_EVENT_TYPES) expect(body.error.message).toContain(type);
      }
    });

    it(`${base}: an unknown or malformed area`, async () => {
      const unknown = await errorOf(`${base}?areas=100,4242`, headers);
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.details?.params?.[0]).toMatchObject({
        parameter: 'areas',
        rule: 'unknown_area',
      });
      expect(unknown.body.error.message).toContain('4242');
      for (const areas of ['abc', '100,', ',100', '1.5']) {
        const { status, body } = await errorOf(`${base}?areas=${areas}`, headers);
        expect(status, areas).toBe(400);
        expect(body.error.details?.params?.[0]?.parameter).toBe('areas');
      }
    });

    it(`${base}: a bad cursor`, async () => {
      for (const after of ['-1', 'abc', '1.5', '0x10', 'Infinity', '99999999999999999999']) {
        const { status, body } = await errorOf(`${base}?after=${after}`, headers);
        expect(status, after).toBe(400);
        expect(body.error.details?.params?.[0]?.parameter).toBe('after');
      }
    });
  }

  it('/v1/events: limit outside 1–1000', async () => {
    for (const limit of ['0', '1001', '-5', 'ten']) {
      const { status, body } = await errorOf(`/v1/events?limit=${limit}`);
      expect(status, limit).toBe(400);
      expect(body.error.details?.params?.[0]?.parameter).toBe('limit');
    }
  });

  it('/v1/events/stream: a malformed Last-Event-ID names the header', async () => {
    for (const id of ['abc', '-3', '1.5']) {
      const { status, body } = await errorOf('/v1/events/stream', { ...STREAM, 'last-event-id': id });
      expect(status, id).toBe(400);
      expect(body.error.details?.params?.[0]).toMatchObject({
        parameter: 'last-event-id',
        location: 'header',
      });
    }
  });
});

describe('the stream URL serves only text/event-stream', () => {
  it('parameters are checked first: a bad one is a 400 whatever the Accept header', async () => {
    const { status, body } = await errorOf('/v1/events/stream?after=abc');
    expect(status).toBe(400);
    expect(body.error.details?.params?.[0]?.parameter).toBe('after');
  });

  it('406 naming the media type without it in Accept (wildcards included)', async () => {
    for (const accept of [undefined, 'application/json', '*/*', 'text/*', 'text/event-stream;q=0']) {
      const { status, body, headers } = await errorOf(
        '/v1/events/stream',
        accept === undefined ? {} : { accept },
      );
      expect(status, accept).toBe(406);
      expect(body.error.code).toBe('NOT_ACCEPTABLE');
      expect(body.error.message).toContain('text/event-stream');
      expect(body.error.details?.acceptable).toEqual(['text/event-stream']);
      expect(headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    }
  });

  it('accepts text/event-stream among other types', async () => {
    const controller = new AbortController();
    const response = await t.getAs(proKey, '/v1/events/stream', {
      headers: { accept: 'application/json;q=0.9, text/event-stream' },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    controller.abort();
  });
});

async function append(count: number): Promise<void> {
  await t.store.db.transaction().execute(async (trx) => {
    await lockEventLog(trx, t.store.dialect);
    await appendEvents(
      trx,
      Array.from({ length: count }, (_, i) => ({
        type: 'listing.price_decreased' as const,
        listingId: `${9000 + i}`,
        buildingId: '1',
        listingType: 'rental' as const,
        areaId: null,
        oldValue: 2000 + i,
        newValue: 1900 + i,
        occurredAt: TEST_NOW.toISOString(),
      })),
      TEST_NOW.toISOString(),
    );
  });
}

describe('the log failing under an open stream', () => {
  it('sends an error event and closes; the client reconnects with Last-Event-ID and misses nothing', async () => {
    const start = await latestSequence(t.store.db);
    await append(3);
    const real = t.ctx.events.page.bind(t.ctx.events);
    const page = vi.spyOn(t.ctx.events, 'page');
    // The first read works, the next fails as a store outage would, then the store is back.
    page.mockImplementationOnce(real).mockRejectedValueOnce(new Error('connection terminated'));
    const sent: (string | null)[] = [];
    const es = new EventSource(`${t.url}/v1/events/stream?after=${start}`, {
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set('authorization', `Bearer ${proKey}`);
        sent.push(headers.get('last-event-id'));
        return fetch(input, { ...init, headers });
      },
    });
    try {
      const ids: number[] = [];
      const failures: unknown[] = [];
      const done = new Promise<void>((resolve) => {
        es.addEventListener('message', (event) => {
          ids.push(Number(event.lastEventId));
          if (ids.length === 3) void append(2);
          if (ids.length === 5) resolve();
        });
      });
      es.addEventListener('error', (event) => {
        if ('data' in event) failures.push(JSON.parse(String(event.data)));
      });
      await done;
      expect(failures).toEqual([{ code: 'unavailable', message: expect.any(String) }]);
      expect(sent).toEqual([null, String(start + 3)]);
      expect(ids).toEqual([1, 2, 3, 4, 5].map((n) => start + n));
    } finally {
      es.close();
      page.mockRestore();
    }
  }, 30_000);
});
