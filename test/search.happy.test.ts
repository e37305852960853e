import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setScopeTimes } from '../src/modules/freshness/data-version.ts';
import type { ListingSummary } from '../src/modules/listings/listing.schema.ts';
import { SearchResponse } from '../src/modules/search/search.schema.ts';
import { createTestApp, getJson, TEST_NOW, type TestApp } from './support/app.ts';
import { expectSchema } from './support/schema.ts';
import { NEXT_LISTING_REVISION } from './support/store.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.02 });
});
afterAll(async () => {
  await t?.close();
});

const search = (query: string) => getJson<SearchResponse>(t, `/v1/search/rentals?${query}`);

async function allPages(query: string, perPage: number): Promise<ListingSummary[]> {
  const out: ListingSummary[] = [];
  for (let page = 1; ; page++) {
    const { body } = await search(`${query}&perPage=${perPage}&page=${page}`);
    out.push(...body.data);
    if (!body.meta.links.next) return out;
  }
}

describe('GET /v1/search/rentals', () => {
  it('returns active rentals with the full ListingSummary and paginated meta', async () => {
    const { status, body, headers } = await search('perPage=5');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(headers.get('x-request-id')).toBeTruthy();
    expectSchema(SearchResponse, body);
    expect(body.data).toHaveLength(5);
    for (const item of body.data) {
      expect(item.status).toBe('ACTIVE');
      expect(item.listingType).toBe('rental');
      expect(item.urlPath).toMatch(/^\//);
      expect(item.address.zipCode).toMatch(/^\d{5}$/);
      expect(item.buildingScores).toHaveProperty('transitScore');
    }
    expect(body.meta).toMatchObject({
      page: 1,
      perPage: 5,
      source: 'cached',
      refreshTriggered: false,
      warnings: [],
    });
    expect(body.meta.total).toBeGreaterThan(100);
    expect(body.meta.links.prev).toBeNull();
    expect(body.meta.links.self).toBe('http://stoop.test/v1/search/rentals?page=1&perPage=5');
    expect(body.meta.links.next).toBe('http://stoop.test/v1/search/rentals?page=2&perPage=5');
    expect(body.meta.dataAge).toBe(new Date(t.clock.now()).toISOString());
  });

  it('areas include descendants: Manhattan is the union of its neighborhoods', async () => {
    const manhattan = (await search('areas=100&perPage=1')).body.meta.total;
    const groups = t.ctx.areaTree.children(100).map((a) => a.id);
    const byGroup = (await search(`areas=${groups.join(',')}&perPage=1`)).body.meta.total;
    expect(manhattan).toBeGreaterThan(0);
    expect(byGroup).toBe(manhattan);
    const nyc = (await search('areas=100,200,300,400,500&perPage=1')).body.meta.total;
    const everything = (await search('perPage=1')).body.meta.total;
    const nj = (await search('areas=1000000&perPage=1')).body.meta.total;
    expect(nyc + nj).toBeLessThanOrEqual(everything);
    expect(nyc).toBeLessThan(everything);
  });

  it('sorts by price in both directions with id tie-breaks, and pages are stable', async () => {
    const asc = await allPages('areas=300&sort=PRICE', 7);
    for (let i = 1; i < asc.length; i++) {
      const [a, b] = [asc[i - 1]!, asc[i]!];
      expect(a.price < b.price || (a.price === b.price && a.id < b.id)).toBe(true);
    }
    const oneShot = (await search('areas=300&sort=PRICE&perPage=500')).body.data.map((l) => l.id);
    expect(asc.map((l) => l.id)).toEqual(oneShot);
    const desc = (await search('areas=300&sort=PRICE&sortDir=DESC&perPage=500')).body.data;
    expect(desc.map((l) => l.id)).toEqual([...oneShot].reverse());
  });

  it('LISTED_AT puts unknown listing dates last in both directions', async () => {
    for (const dir of ['ASC', 'DESC']) {
      const rows = (
        await search(`sort=LISTED_AT&sortDir=${dir}&perPage=500&status=ACTIVE,IN_CONTRACT,OFF_MARKET`)
      ).body.data;
      const firstNull = rows.findIndex((r) => r.listedAt === null);
      if (firstNull >= 0) expect(rows.slice(firstNull).every((r) => r.listedAt === null)).toBe(true);
      const dated = rows.filter((r) => r.listedAt !== null).map((r) => r.listedAt!);
      const sorted = [...dated].sort();
      expect(dated).toEqual(dir === 'ASC' ? sorted : sorted.reverse());
    }
  });

  it('DAYS_ON_MARKET and PRICE_PER_SQFT orderings hold', async () => {
    const dom = (await search('sort=DAYS_ON_MARKET&perPage=200')).body.data.filter(
      (r) => r.daysOnMarket !== null,
    );
    for (let i = 1; i < dom.length; i++)
      expect(dom[i]!.daysOnMarket!).toBeGreaterThanOrEqual(dom[i - 1]!.daysOnMarket!);
    const ppsf = (await search('sort=PRICE_PER_SQFT&perPage=500')).body.data;
    const known = ppsf.filter((r) => r.pricePerSqft !== null);
    for (let i = 1; i < known.length; i++)
      expect(known[i]!.pricePerSqft!).toBeGreaterThanOrEqual(known[i - 1]!.pricePerSqft!);
    const firstUnknown = ppsf.findIndex((r) => r.pricePerSqft === null);
    if (firstUnknown >= 0) expect(ppsf.slice(firstUnknown).every((r) => r.pricePerSqft === null)).toBe(true);
  });

  it('maxMonthlyCost compares rent plus recurring fees', async () => {
    const { body } = await search('maxMonthlyCost=3500&perPage=500');
    expect(body.data.length).toBeGreaterThan(0);
    for (const item of body.data) {
      expect(item.monthlyCost).toBeLessThanOrEqual(3500);
      expect(item.monthlyCost).toBeGreaterThanOrEqual(item.price);
    }
  });

  it('rejects other-endpoint parameters rather than ignoring them (a filter is never dropped)', async () => {
    const { status } = await search('saleType=RESALE&perPage=1');
    expect(status).toBe(400);
    const sales = await getJson<SearchResponse>(t, '/v1/search/sales?noFee=true&perPage=1');
    expect(sales.status).toBe(400);
    const plain = await search('perPage=1');
    expect(plain.body.meta.warnings).toEqual([]);
  });

  it('builds links from PUBLIC_URL even for absolute-form request targets', async () => {
    const { port } = new URL(t.url);
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: 'http://evil.example/v1/search/rentals?perPage=1',
          headers: { authorization: `Bearer ${t.internalKey}` },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    const links = (JSON.parse(body) as SearchResponse).meta.links;
    expect(links.self).toBe('http://stoop.test/v1/search/rentals?page=1&perPage=1');
  });

  it('an empty result is page 1 of 1 with no next link', async () => {
    const { status, body } = await search('minPrice=999999999');
    expect(status).toBe(200);
    expect(body.data).toEqual([]);
    expect(body.meta).toMatchObject({ total: 0, page: 1 });
    expect(body.meta.links.next).toBeNull();
  });

  it('serves a changed listing once its data scope is refreshed and the read model rebuilt (no stale cached JSON)', async () => {
    const first = (await search('sort=PRICE&perPage=1')).body.data[0]!;
    // As every writer does with a change: the listing's revision moves (migration 0010).
    await t.store.db
      .updateTable('listings')
      .set({ price: 1, revision: NEXT_LISTING_REVISION })
      .where('id', '=', first.id)
      .execute();
    await setScopeTimes(t.store.db, ['search:rental'], new Date(t.clock.now().getTime() + 1000));
    t.clock.advance(2000);
    try {
      // The first search after the change may still read the previous read model
      // (one data version old) while its successor builds beside it.
      const during = (await search('sort=PRICE&perPage=1')).body.data[0]!;
      expect(during.id).toBe(first.id);
      expect(t.ctx.search.indexStatus()).toMatchObject({ ready: true, building: true });
      await vi.waitUntil(() => !t.ctx.search.indexStatus().building, { timeout: 10_000 });
      expect(t.ctx.search.indexStatus().version).toContain(
        `search:rental=${new Date(t.clock.now().getTime() - 1000).toISOString()}`,
      );
      const after = (await search('sort=PRICE&perPage=1')).body.data[0]!;
      expect(after.id).toBe(first.id);
      expect(after.price).toBe(1);
    } finally {
      await t.store.db
        .updateTable('listings')
        .set({ price: first.price, revision: NEXT_LISTING_REVISION })
        .where('id', '=', first.id)
        .execute();
      await setScopeTimes(t.store.db, ['search:rental'], TEST_NOW);
      t.clock.set(TEST_NOW);
    }
  });

  it('a rebuilt read model takes over the summaries of listings whose revision did not move, until the buildings data moves', async () => {
    // The read model in use is rebuilt for the store as it is now (searches answer from it once built).
    const current = async () => {
      t.ctx.dataVersion.invalidate();
      await search('perPage=1');
      await vi.waitUntil(() => !t.ctx.search.indexStatus().building, { timeout: 10_000 });
    };
    const moved = async (scope: 'search:rental' | 'buildings', offsetMs: number) => {
      await setScopeTimes(t.store.db, [scope], new Date(TEST_NOW.getTime() + offsetMs));
      await current();
    };
    await current();
    const [kept, changed] = (await search('sort=PRICE&perPage=2')).body.data as [
      ListingSummary,
      ListingSummary,
    ];
    const summaryOf = async (id: string) =>
      (await search('sort=PRICE&perPage=5')).body.data.find((l) => l.id === id);
    try {
      // `kept` changes behind its revision's back (no writer does that); `changed` as writers do.
      await t.store.db.updateTable('listings').set({ sqft: 111 }).where('id', '=', kept.id).execute();
      await t.store.db
        .updateTable('listings')
        .set({ sqft: 222, revision: NEXT_LISTING_REVISION })
        .where('id', '=', changed.id)
        .execute();
      await moved('search:rental', 71_000);
      // Its revision stands, so the new read model serves the summary rendered before: no read.
      expect((await summaryOf(kept.id))?.sqft).toBe(kept.sqft);
      expect((await summaryOf(changed.id))?.sqft).toBe(222);
      // A summary shows its building's scores: a move of the buildings data drops every carried one.
      await moved('buildings', 72_000);
      expect((await summaryOf(kept.id))?.sqft).toBe(111);
    } finally {
      for (const listing of [kept, changed]) {
        await t.store.db
          .updateTable('listings')
          .set({ sqft: listing.sqft, revision: NEXT_LISTING_REVISION })
          .where('id', '=', listing.id)
          .execute();
      }
      await setScopeTimes(t.store.db, ['search:rental', 'buildings'], TEST_NOW);
      await current();
    }
  });

  it('marks data stale once it is older than the free tier search threshold', async () => {
    t.clock.advance(7 * 3_600_000);
    try {
      const response = await t.getAs(null, '/v1/search/rentals?perPage=1');
      const body = (await response.json()) as SearchResponse;
      expect(body.meta.source).toBe('stale');
      expect(body.meta.freshnessThreshold).toBe(6 * 3600);
    } finally {
      t.clock.advance(-7 * 3_600_000);
    }
  });
});
