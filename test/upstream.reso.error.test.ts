import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Origin, startOrigin } from '../src/demo/simulator/server.ts';
import { ManualClock } from '../src/platform/clock.ts';
import { backoffSchedule } from '../src/upstream/reso/http.ts';
import { encodeListing } from '../src/upstream/reso/mapping.ts';
import { ResoListingSource, type ResoSourceOptions } from '../src/upstream/reso/source.ts';
import { UpstreamError } from '../src/upstream/source.ts';

const TOKEN = 'sk-test-4f9c2d1e-never-log-me';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A local upstream that misbehaves as each test tells it to. */
let server: Server;
let root: string;
let handler: Handler;
let requests: IncomingMessage[];

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  root = `http://127.0.0.1:${(server.address() as AddressInfo).port}/odata`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  requests = [];
  handler = (_req, res) => json(res, 200, { value: [] });
});

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

interface Harness {
  source: ResoListingSource;
  sleeps: number[];
  logs: unknown[];
}

function harness(options: Partial<ResoSourceOptions> = {}): Harness {
  const sleeps: number[] = [];
  const logs: unknown[] = [];
  const source = new ResoListingSource({
    url: root,
    token: TOKEN,
    timeoutMs: 300,
    retries: 2,
    backoff: { baseMs: 100, capMs: 1000 },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    log: { warn: (record, message) => logs.push({ record, message }) },
    ...options,
  });
  return { source, sleeps, logs };
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error('expected the call to fail');
}

const validRecord = () =>
  encodeListing({
    listing: {
      id: '1',
      listing_type: 'rental',
      status: 'ACTIVE',
      closed_reason: null,
      building_id: '100001',
      area_id: 105,
      street: '1 Main Street',
      unit: '2A',
      city: 'New York',
      state: 'NY',
      zip_code: '10001',
      latitude: 40.7,
      longitude: -74,
      url_path: '/rental/1',
      building_type: 'RENTAL',
      price: 3000,
      net_effective: 3000,
      months_free: 0,
      lease_term_months: 12,
      monthly_fees: 0,
      monthly_cost: 3000,
      no_fee: 1,
      sale_type: null,
      bedroom_count: 1,
      full_bathroom_count: 1,
      half_bathroom_count: 0,
      bathrooms: 1,
      sqft: null,
      price_per_sqft: null,
      listed_at: '2026-04-01T15:00:00.000Z',
      listed_at_is_approximate: 0,
      available_at: null,
      off_market_at: null,
      contract_at: null,
      amenity_mask: 3,
      pets_allowed: 1,
      has_3d_tour: 0,
      next_open_house_at: null,
      lead_photo_key: null,
      source_group_label: 'Corcoran',
      detail_scraped: 0,
    },
    modifiedAt: '2026-04-01T15:00:00.000Z',
    createdAt: '2026-04-01T15:00:00.000Z',
  });

describe('RESO source failure kinds against a misbehaving server', () => {
  it('a server that never answers is a timeout, retried with backoff', async () => {
    handler = () => {};
    const h = harness();
    const error = await failure(h.source.searchListings({}));
    expect(error.kind).toBe('timeout');
    expect(error.retryable).toBe(true);
    expect(requests).toHaveLength(3);
    // Full jitter: random() × min(cap, base × 2^i), here random() = 0.5.
    expect(h.sleeps).toEqual([50, 100]);
  });

  it('a body that stalls after the headers is a timeout too', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"value": [');
    };
    const error = await failure(harness({ retries: 0 }).source.searchListings({}));
    expect(error.kind).toBe('timeout');
    expect(requests).toHaveLength(1);
  });

  it.each([500, 502, 503, 429])('%i is unavailable and retried', async (status) => {
    handler = (_req, res) => json(res, status, { error: { code: 'x', message: 'down' } });
    const h = harness();
    const error = await failure(h.source.searchListings({}));
    expect(error).toMatchObject({ kind: 'unavailable', status });
    expect(requests).toHaveLength(3);
  });

  it('a transient failure heals on retry', async () => {
    let n = 0;
    handler = (_req, res) => (n++ < 2 ? json(res, 503, {}) : json(res, 200, { value: [validRecord()] }));
    const h = harness();
    const page = await h.source.searchListings({});
    expect(page.listings.map((l) => l.listing.id)).toEqual(['1']);
    expect(h.sleeps).toHaveLength(2);
    expect(h.logs).toHaveLength(2);
  });

  it('honours Retry-After (capped) over a shorter jittered wait', async () => {
    let n = 0;
    handler = (_req, res) => {
      if (n++ === 0) {
        res.writeHead(429, { 'retry-after': '2' });
        res.end();
      } else json(res, 200, { value: [] });
    };
    const h = harness();
    await h.source.searchListings({});
    expect(h.sleeps).toEqual([2000]);
  });

  it('404 is not_found and not retried', async () => {
    handler = (_req, res) => json(res, 404, { error: { code: 'NotFound', message: 'no' } });
    const error = await failure(harness().source.fetchListing('77'));
    expect(error).toMatchObject({ kind: 'not_found', status: 404, retryable: false });
    expect(requests).toHaveLength(1);
  });

  it('401 is unavailable but not retried', async () => {
    handler = (_req, res) => json(res, 401, {});
    const error = await failure(harness().source.searchListings({}));
    expect(error).toMatchObject({ kind: 'unavailable', status: 401 });
    expect(requests).toHaveLength(1);
  });

  it('a connection reset is unavailable', async () => {
    handler = (req) => req.socket.destroy();
    const error = await failure(harness({ retries: 1 }).source.searchListings({}));
    expect(error.kind).toBe('unavailable');
    expect(requests).toHaveLength(2);
  });

  it('a refused connection is unavailable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const h = harness({ url: `http://127.0.0.1:${port}/odata` });
    const error = await failure(h.source.searchListings({}));
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain('ECONNREFUSED');
    expect(h.sleeps).toHaveLength(2);
  });

  it('malformed JSON is parse_failed and not retried', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"value": [ {"ListingKey": ');
    };
    const error = await failure(harness().source.searchListings({}));
    expect(error.kind).toBe('parse_failed');
    expect(error.message).toMatch(/malformed JSON/);
    expect(requests).toHaveLength(1);
  });

  it('a page without value, or a record breaking the schema, is parse_failed naming the field', async () => {
    handler = (_req, res) => json(res, 200, { items: [] });
    expect((await failure(harness().source.searchListings({}))).message).toContain('value');
    handler = (_req, res) => json(res, 200, { value: [{ ...validRecord(), BedroomsTotal: -1 }] });
    const error = await failure(harness().source.searchListings({}));
    expect(error.kind).toBe('parse_failed');
    expect(error.message).toContain('Property 1');
    expect(error.message).toContain('BedroomsTotal');
  });

  it('a single listing without its expansions, or with another key, is parse_failed', async () => {
    handler = (_req, res) => json(res, 200, validRecord());
    expect((await failure(harness().source.fetchListing('1'))).message).toMatch(/not expanded/);
    expect((await failure(harness().source.fetchListing('2'))).message).toMatch(/ListingKey 1/);
  });

  it('refuses a next link outside the service root (the token would leak)', async () => {
    handler = (_req, res) =>
      json(res, 200, { value: [], '@odata.nextLink': 'http://other.invalid/odata/Property?x' });
    const error = await failure(harness().source.searchListings({}));
    expect(error.kind).toBe('parse_failed');
    await expect(
      harness().source.searchListings({ cursor: 'http://evil.invalid/odata/Property' }),
    ).rejects.toThrow(/outside the service root/);
  });

  it('per-call timeout and retries override the defaults', async () => {
    handler = (_req, res) => setTimeout(() => json(res, 200, { value: [] }), 150);
    const h = harness({ timeoutMs: 2000 });
    const error = await failure(h.source.searchListings({}, { timeoutMs: 50, retries: 0 }));
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('50 ms');
    expect(requests).toHaveLength(1);
  });

  it('a caller abort stops the call and the retry waits', async () => {
    handler = (_req, res) => json(res, 503, {});
    const controller = new AbortController();
    const h = harness({
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => {
          controller.abort();
          reject(signal?.reason);
        }),
    });
    const error = await failure(h.source.searchListings({}, { signal: controller.signal }));
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('aborted');
    expect(requests).toHaveLength(1);
  });

  it('sends the bearer token and never logs it or puts it in an error', async () => {
    handler = (_req, res) => json(res, 503, { error: { message: 'nope' } });
    const h = harness();
    const error = await failure(h.source.searchListings({}));
    expect(requests[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(requests[0]!.url).not.toContain(TOKEN);
    expect(h.logs.length).toBe(2);
    const everything = JSON.stringify({ logs: h.logs, message: error.message, stack: error.stack, error });
    expect(everything).not.toContain(TOKEN);
    expect(h.source.name).not.toContain(TOKEN);
  });

  it('strips credentials from the URL it reports', () => {
    const source = new ResoListingSource({ url: 'http://user:pw@127.0.0.1:1/odata/' });
    expect(source.name).toBe('reso:http://127.0.0.1:1/odata');
  });
});

describe('backoff schedule', () => {
  it('doubles from the base up to the cap', () => {
    expect(backoffSchedule(5, { baseMs: 250, capMs: 1500 })).toEqual([250, 500, 1000, 1500, 1500]);
    expect(backoffSchedule(0)).toEqual([]);
  });
});

describe('market simulator as a misbehaving upstream', () => {
  const T0 = new Date('2026-05-01T12:00:00.000Z');
  let origin: Origin;

  afterAll(async () => {
    await origin?.close();
  });

  it('answers 400 with an OData error for queries it cannot serve', async () => {
    origin = await startOrigin({
      seed: 3,
      scale: 0.005,
      start: T0,
      clock: new ManualClock(T0),
      latency: false,
    });
    for (const [query, fragment] of [
      ['$filter=ListPrice%20gt', '$filter'],
      ['$filter=contains(City,%27New%27)', 'contains'],
      ['$filter=Nonsense%20eq%201', 'Nonsense'],
      ['$orderby=ListPrice%20desc', '$orderby'],
      ['$select=Nonsense', 'Nonsense'],
      ['$expand=Rooms', 'Rooms'],
      ['$top=0', '$top'],
      ['$skip=10', '$skip'],
      ['$skiptoken=garbage', '$skiptoken'],
    ]) {
      const res = await fetch(`${origin.url}/Property?${query}`);
      expect(res.status, query).toBe(400);
      const body = (await res.json()) as { error: { message: string } };
      expect(body.error.message).toContain(fragment);
    }
    expect((await fetch(`${origin.url}/Nothing`)).status).toBe(404);
    expect((await fetch(`${origin.url}/Property('1')`)).status).toBe(404);
    expect((await fetch(`${origin.url}/Property`, { method: 'POST' })).status).toBe(405);
  });

  it('requires its bearer token when configured', async () => {
    const guarded = await startOrigin({
      seed: 3,
      scale: 0.005,
      start: T0,
      clock: new ManualClock(T0),
      latency: false,
      token: TOKEN,
    });
    try {
      const wrong = new ResoListingSource({ url: guarded.url, token: 'wrong', retries: 0 });
      const error = await failure(wrong.searchListings({}));
      expect(error).toMatchObject({ kind: 'unavailable', status: 401 });
      const right = new ResoListingSource({ url: guarded.url, token: TOKEN, retries: 0 });
      expect((await right.searchListings({ pageSize: 5 })).listings).toHaveLength(5);
      expect((await fetch(`${guarded.url.replace('/odata', '')}/health`)).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  it('injects faults at roughly the configured rate, half hanging and half 5xx, reproducibly', async () => {
    const outcomes = async (faultSeed: number) => {
      const faulty = await startOrigin({
        seed: 3,
        scale: 0.005,
        start: T0,
        clock: new ManualClock(T0),
        latency: false,
        faultRate: 0.3,
        faultSeed,
        // Hanging requests are dropped by the server, so a slow answer on a busy machine is not taken for one.
        maxHangMs: 150,
      });
      const out: string[] = [];
      try {
        for (let i = 0; i < 120; i++) {
          try {
            const res = await fetch(`${faulty.url}/Property?$top=1`, { signal: AbortSignal.timeout(10_000) });
            await res.arrayBuffer();
            out.push(String(res.status));
          } catch {
            out.push('hang');
          }
        }
        expect(faulty.stats.hung).toBe(out.filter((o) => o === 'hang').length);
      } finally {
        await faulty.close();
      }
      return out;
    };
    const first = await outcomes(42);
    const failed = first.filter((o) => o !== '200').length;
    // 120 × 0.3 = 36 expected failures (binomial sd ≈ 5).
    expect(failed).toBeGreaterThan(20);
    expect(failed).toBeLessThan(55);
    expect(first.filter((o) => o === 'hang').length).toBeGreaterThan(5);
    expect(first.filter((o) => o === '500' || o === '503').length).toBeGreaterThan(5);
    expect(await outcomes(42)).toEqual(first);
    expect(await outcomes(43)).not.toEqual(first);
  });

  it('a source with retries reads through injected faults', async () => {
    const faulty = await startOrigin({
      seed: 3,
      scale: 0.005,
      start: T0,
      clock: new ManualClock(T0),
      latency: false,
      faultRate: 0.3,
      maxHangMs: 60_000,
    });
    try {
      const source = new ResoListingSource({
        url: faulty.url,
        timeoutMs: 100,
        retries: 8,
        backoff: { baseMs: 1, capMs: 5 },
      });
      let cursor: string | null = null;
      let n = 0;
      do {
        const page = await source.searchListings({ pageSize: 100, cursor });
        n += page.listings.length;
        cursor = page.next;
      } while (cursor);
      faulty.simulator.at();
      expect(n).toBe(faulty.simulator.size);
      expect(faulty.stats.hung + faulty.stats.errors).toBeGreaterThan(0);
    } finally {
      await faulty.close();
    }
  });

  it('injects latency: a detail read waits 0.5–3 s × the latency scale', async () => {
    const slow = await startOrigin({
      seed: 3,
      scale: 0.005,
      start: T0,
      clock: new ManualClock(T0),
      latency: true,
      latencyScale: 0.05,
    });
    try {
      const source = new ResoListingSource({ url: slow.url, retries: 0 });
      const [first] = (await source.searchListings({ pageSize: 1 })).listings;
      const started = performance.now();
      await source.fetchListing(first!.listing.id);
      const ms = performance.now() - started;
      expect(ms).toBeGreaterThanOrEqual(24);
      expect(ms).toBeLessThan(5000);
    } finally {
      await slow.close();
    }
  });
});
