import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng } from '../bench/random.ts';
import { serviceScenarios } from '../bench/scenarios.ts';
import { haversineMeters } from '../src/domain/geo.ts';
import { SearchResponse } from '../src/modules/search/search.schema.ts';
import { createTestApp, getJson, type TestApp } from './support/app.ts';
import { type FullRow, loadAllListings } from './support/brute-force.ts';
import { callTool } from './support/mcp.ts';
import { expectSchema } from './support/schema.ts';

/** The same market answered from the in-memory index and from SQL. */
const apps: Record<'index' | 'sql', TestApp> = {} as Record<'index' | 'sql', TestApp>;
let activeRentals: FullRow[];

beforeAll(async () => {
  apps.index = await createTestApp({ scale: 0.01 });
  apps.sql = await createTestApp({ scale: 0.01, env: { SEARCH_INDEX: 'false' } });
  activeRentals = (await loadAllListings(apps.index.store))
    .filter((r) => r.listing_type === 'rental' && r.status === 'ACTIVE')
    .sort((a, b) => (a.id < b.id ? -1 : 1));
});
afterAll(async () => {
  await apps.index?.close();
  await apps.sql?.close();
});

const metres = (a: FullRow, b: FullRow) => Math.round(haversineMeters(a, b));

async function search(path: 'index' | 'sql', query: string): Promise<SearchResponse> {
  const { status, body } = await getJson<SearchResponse>(apps[path], `/v1/search/rentals?${query}`);
  expect(status, JSON.stringify(body)).toBe(200);
  expectSchema(SearchResponse, body);
  return body;
}

describe.each(['index', 'sql'] as const)('geo search (%s path)', (path) => {
  it('radius is inclusive of the rounded distance, to the metre', async () => {
    const [a, b] = [activeRentals[0]!, activeRentals[1]!];
    const d = metres(a, b);
    expect(d).toBeGreaterThan(1);
    expect(d).toBeLessThanOrEqual(50_000);
    const near = `near=${a.latitude},${a.longitude}`;
    const within = await search(path, `${near}&radius=${d}&perPage=500&sort=DISTANCE`);
    const found = within.data.find((l) => l.id === b.id);
    expect(found?.distance).toBe(d);
    // The listing at the point itself is first, 0 m away.
    expect(within.data.find((l) => l.id === a.id)?.distance).toBe(0);
    const short = await search(path, `${near}&radius=${d - 1}&perPage=500`);
    expect(short.data.some((l) => l.id === b.id)).toBe(false);
    expect(short.meta.total).toBeLessThan(within.meta.total);
  });

  it('radius defaults to 1,000 m', async () => {
    const a = activeRentals[0]!;
    const near = `near=${a.latitude},${a.longitude}&sort=DISTANCE&perPage=500`;
    const defaulted = await search(path, near);
    const explicit = await search(path, `${near}&radius=1000`);
    expect(defaulted.data.map((l) => [l.id, l.distance])).toEqual(
      explicit.data.map((l) => [l.id, l.distance]),
    );
    expect(defaulted.meta.total).toBe(explicit.meta.total);
    const farther = await search(path, `${near}&radius=1001`);
    expect(farther.meta.total).toBeGreaterThanOrEqual(defaulted.meta.total);
    expect(defaulted.data.every((l) => l.distance !== undefined && l.distance <= 1000)).toBe(true);
  });

  it('sort=DISTANCE is nearest first by default, farthest first with sortDir=DESC, ties by id', async () => {
    const a = activeRentals[2]!;
    const near = `near=${a.latitude},${a.longitude}&radius=8000&sort=DISTANCE&perPage=200`;
    const asc = await search(path, near);
    const desc = await search(path, `${near}&sortDir=DESC`);
    expect(asc.data.length).toBeGreaterThan(5);
    const key = (l: { distance?: number; id: string }) => [l.distance!, l.id] as const;
    const ascending = (x: readonly [number, string], y: readonly [number, string]) =>
      x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]);
    for (let i = 1; i < asc.data.length; i++)
      expect(ascending(key(asc.data[i - 1]!), key(asc.data[i]!))).toBe(true);
    for (let i = 1; i < desc.data.length; i++)
      expect(ascending(key(desc.data[i]!), key(desc.data[i - 1]!))).toBe(true);
  });

  it('distance is present only with near, and never leaks into a later search through the summary cache', async () => {
    const [a, b] = [activeRentals[0]!, activeRentals[3]!];
    const fromA = await search(path, `near=${a.latitude},${a.longitude}&radius=50000&perPage=50&sort=PRICE`);
    const fromB = await search(path, `near=${b.latitude},${b.longitude}&radius=50000&perPage=50&sort=PRICE`);
    expect(fromA.data.map((l) => l.id)).toEqual(fromB.data.map((l) => l.id));
    const rowById = new Map(activeRentals.map((r) => [r.id, r]));
    for (const [i, item] of fromA.data.entries()) {
      expect(item.distance).toBe(metres(a, rowById.get(item.id)!));
      expect(fromB.data[i]!.distance).toBe(metres(b, rowById.get(item.id)!));
    }
    const plain = await search(path, 'perPage=50&sort=PRICE');
    expect(plain.data.length).toBeGreaterThan(0);
    for (const item of plain.data) expect(item).not.toHaveProperty('distance');
    const boxed = await search(path, 'bbox=-75,40,-73,41&perPage=50&sort=PRICE');
    for (const item of boxed.data) expect(item).not.toHaveProperty('distance');
  });

  it('bbox keeps exactly the listings inside it (edges included), in GeoJSON order', async () => {
    const a = activeRentals[0]!;
    // The listing sits on the box's south-west corner.
    const bbox = `${a.longitude},${a.latitude},${a.longitude + 0.02},${a.latitude + 0.02}`;
    const body = await search(path, `bbox=${bbox}&perPage=500`);
    const expected = activeRentals.filter(
      (r) =>
        r.longitude >= a.longitude &&
        r.longitude <= a.longitude + 0.02 &&
        r.latitude >= a.latitude &&
        r.latitude <= a.latitude + 0.02,
    );
    expect(body.data.map((l) => l.id).sort()).toEqual(expected.map((r) => r.id).sort());
    expect(body.data.some((l) => l.id === a.id)).toBe(true);
  });

  it('accepts the spaces maps put after the comma', async () => {
    const a = activeRentals[0]!;
    const spaced = await search(
      path,
      `near=${a.latitude},%20${a.longitude}&bbox=-75,%2040,%20-73,%2041&perPage=100`,
    );
    const tight = await search(path, `near=${a.latitude},${a.longitude}&bbox=-75,40,-73,41&perPage=100`);
    expect(spaced.data.map((l) => l.id)).toEqual(tight.data.map((l) => l.id));
    expect(spaced.meta.total).toBeGreaterThan(0);
  });

  it('a point far from every listing matches nothing, with any filter', async () => {
    const body = await search(
      path,
      'near=-33.8568,151.2153&radius=50000&sort=DISTANCE&minBeds=1&status=ACTIVE,OFF_MARKET',
    );
    expect(body.meta.total).toBe(0);
    expect(body.data).toEqual([]);
  });
});

describe('bench scenario search-near', () => {
  it('sends valid requests that find listings, nearest first within 1,500 m', async () => {
    const scenario = serviceScenarios({ neighborhoods: [101] }).find((s) => s.name === 'search-near');
    expect(scenario).toBeDefined();
    const rng = createRng(7);
    let found = 0;
    for (let i = 0; i < 12; i++) {
      const path = scenario!.nextPath(rng);
      const { status, body } = await getJson<SearchResponse>(apps.index, path);
      expect(status, path).toBe(200);
      expectSchema(SearchResponse, body);
      const distances = body.data.map((l) => l.distance!);
      expect(distances.every((d) => d <= 1500)).toBe(true);
      expect(distances).toEqual([...distances].sort((x, y) => x - y));
      found += body.data.length;
    }
    expect(found).toBeGreaterThan(0);
  });
});

describe('concurrent searches', () => {
  // A geo page and its body are assembled in pooled memory (src/http/response-slabs.ts):
  // answers in flight together must not share or overwrite it.
  it.each(['index', 'sql'] as const)('each get their own bytes (%s path)', async (path) => {
    const queries = activeRentals
      .filter((_, i) => i % 7 === 0)
      .slice(0, 24)
      .map((l, i) => `near=${l.latitude},${l.longitude}&radius=${1500 + i * 250}&sort=DISTANCE&perPage=100`);
    const bytesOf = async (query: string) => {
      const response = await apps[path].get(`/v1/search/rentals?${query}`);
      expect(response.status, query).toBe(200);
      return Buffer.from(await response.arrayBuffer());
    };
    const sequential: Buffer[] = [];
    for (const query of queries) sequential.push(await bytesOf(query));
    expect(new Set(sequential.map((b) => b.toString('base64'))).size).toBe(queries.length);
    for (let round = 0; round < 3; round++) {
      const concurrent = await Promise.all(queries.map(bytesOf));
      concurrent.forEach((body, i) => {
        expect(body.equals(sequential[i]!), queries[i]).toBe(true);
      });
    }
  });
});

describe('MCP search_rentals', () => {
  it('takes near, radius and sort=DISTANCE and returns each distance', async () => {
    const a = activeRentals[0]!;
    const { key } = await apps.index.ctx.subscriptions.issue({ accountId: 'geo-mcp', tier: 'STARTER' });
    const result = await callTool(apps.index, key, 'search_rentals', {
      near: `${a.latitude},${a.longitude}`,
      radius: 3000,
      sort: 'DISTANCE',
      perPage: 20,
    });
    expect(result.isError).toBeFalsy();
    const data = (result.structuredContent as { data: { id: string; distance: number }[] }).data;
    const rest = await search(
      'index',
      `near=${a.latitude},${a.longitude}&radius=3000&sort=DISTANCE&perPage=20`,
    );
    expect(data.map((l) => [l.id, l.distance])).toEqual(rest.data.map((l) => [l.id, l.distance]));
    expect(data[0]?.distance).toBe(0);
    expect(data.find((l) => l.id === a.id)?.distance).toBe(0);
  });
});
