import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AMENITIES } from '../src/domain/amenities.ts';
import { BUILDING_TYPES, SALE_TYPES } from '../src/domain/listing.ts';
import { SearchResponse } from '../src/modules/search/search.schema.ts';
import { getJson } from './support/app.ts';
import { bruteForceMatches, marketOnBothPaths, type Params } from './support/brute-force.ts';
import { expectSchema } from './support/schema.ts';

/**
 * Two apps over the same generated market: one answers every search (all
 * statuses) from the in-memory index, the other always from SQL. Both must
 * agree with the oracle, and with each other page by page.
 */
const market = marketOnBothPaths();
const { apps } = market;

const opt = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: 6 }, { arbitrary: arb, weight: 1 });
const subset = (values: readonly string[]) =>
  fc.uniqueArray(fc.constantFrom(...values), { minLength: 1, maxLength: 3 }).map((v) => v.join(','));

function filterArb(listingType: 'rental' | 'sale'): fc.Arbitrary<Params> {
  const priceArb =
    listingType === 'rental'
      ? fc.integer({ min: 1000, max: 12000 })
      : fc.integer({ min: 200_000, max: 4_000_000 });
  return fc
    .record({
      areas: opt(
        fc.constantFrom('100', '200', '300', '400', '500', '100,200,300,400,500', '1000000', 'AREA'),
      ),
      minPrice: opt(priceArb),
      maxPrice: opt(priceArb),
      minBeds: opt(fc.integer({ min: 0, max: 4 })),
      maxBeds: opt(fc.integer({ min: 0, max: 4 })),
      minBaths: opt(fc.constantFrom(1, 1.5, 2)),
      maxBaths: opt(fc.constantFrom(1, 1.5, 2, 3)),
      buildingType: opt(subset(BUILDING_TYPES)),
      minDaysOnMarket: opt(fc.integer({ min: 0, max: 60 })),
      maxDaysOnMarket: opt(fc.integer({ min: 0, max: 120 })),
      listedAfter: opt(fc.constantFrom('2026-06-01', '2026-09-15', '2026-10-20')),
      listedBefore: opt(fc.constantFrom('2026-08-01', '2026-10-25', '2026-11-01')),
      hasOpenHouse: opt(fc.boolean()),
      has3dTour: opt(fc.boolean()),
      minSqft: opt(fc.integer({ min: 300, max: 1200 })),
      maxSqft: opt(fc.integer({ min: 600, max: 3000 })),
      petsAllowed: opt(fc.boolean()),
      amenities: opt(
        fc
          .uniqueArray(fc.constantFrom(...AMENITIES.slice(0, 8)), { minLength: 1, maxLength: 2 })
          .map((a) => a.join(',')),
      ),
      maxMonthlyCost: opt(
        listingType === 'rental' ? fc.integer({ min: 1500, max: 9000 }) : fc.integer({ min: 500, max: 6000 }),
      ),
      minTransitScore: opt(fc.integer({ min: 0, max: 100 })),
      fiberOnly: opt(fc.boolean()),
      minDownloadMbps: opt(fc.constantFrom(100, 300, 1000)),
      status: opt(
        fc.constantFrom(
          'ACTIVE',
          'IN_CONTRACT',
          'OFF_MARKET',
          'ACTIVE,IN_CONTRACT',
          'ACTIVE,IN_CONTRACT,OFF_MARKET',
        ),
      ),
      noFee: listingType === 'rental' ? opt(fc.boolean()) : fc.constant(undefined),
      saleType: listingType === 'sale' ? opt(subset(SALE_TYPES)) : fc.constant(undefined),
      sort: fc.constantFrom(
        undefined,
        'RECOMMENDED',
        'PRICE',
        'LISTED_AT',
        'PRICE_PER_SQFT',
        'DAYS_ON_MARKET',
      ),
      sortDir: fc.constantFrom(undefined, 'ASC', 'DESC'),
      areaPick: fc.nat(),
    })
    .map(({ areaPick, ...p }) => {
      const params: Params = {};
      for (const [key, value] of Object.entries(p)) if (value !== undefined) params[key] = String(value);
      // Draw a real neighborhood too, so small areas are exercised.
      if (params.areas === 'AREA')
        params.areas = String(market.areaIdsWithListings[areaPick % market.areaIdsWithListings.length]);
      return params;
    })
    .filter((p) => {
      const ordered = (a?: string, b?: string) =>
        a === undefined || b === undefined || Number(a) <= Number(b);
      return (
        ordered(p.minPrice, p.maxPrice) &&
        ordered(p.minBeds, p.maxBeds) &&
        ordered(p.minBaths, p.maxBaths) &&
        ordered(p.minSqft, p.maxSqft) &&
        ordered(p.minDaysOnMarket, p.maxDaysOnMarket) &&
        (p.listedAfter === undefined || p.listedBefore === undefined || p.listedAfter <= p.listedBefore)
      );
    });
}

describe.each([
  ['rental', 'index'],
  ['rental', 'sql'],
  ['sale', 'index'],
  ['sale', 'sql'],
] as const)('%s search (%s path) agrees with a brute-force oracle', (listingType, path) => {
  it('total equals the brute-force count, and every result satisfies every filter', async () => {
    let nonEmpty = 0;
    await fc.assert(
      fc.asyncProperty(filterArb(listingType), async (params) => {
        const t = apps[path];
        const qs = new URLSearchParams({ ...params, perPage: '500' });
        const url = `/v1/search/${listingType === 'rental' ? 'rentals' : 'sales'}?${qs}`;
        const { status, body } = await getJson<SearchResponse>(t, url);
        expect(status, JSON.stringify(body)).toBe(200);
        expectSchema(SearchResponse, body);
        const expected = bruteForceMatches(market.rows, listingType, params, t.ctx.areaTree, t.clock.now());
        expect(body.meta.total).toBe(expected.length);
        const expectedIds = new Set(expected.map((r) => r.id));
        for (const item of body.data) expect(expectedIds.has(item.id)).toBe(true);
        expect(body.data.length).toBe(Math.min(500, expected.length));
        // Both paths return the same page in the same order.
        const other = await getJson<SearchResponse>(apps[path === 'index' ? 'sql' : 'index'], url);
        expect(other.body.data.map((l) => l.id)).toEqual(body.data.map((l) => l.id));
        if (expected.length > 0) nonEmpty++;
      }),
      { numRuns: 120, seed: 20261121 },
    );
    // The generator must produce filters that match something, or the property is vacuous.
    expect(nonEmpty).toBeGreaterThan(40);
  });
});

describe.each(['rental', 'sale'] as const)('%s search pages deep in the results', (listingType) => {
  it('the index and SQL return the same page at any page and size (position-sorted, bitmap and days-on-market paths)', async () => {
    let nonEmpty = 0;
    await fc.assert(
      fc.asyncProperty(
        filterArb(listingType),
        fc.constantFrom('ACTIVE', 'OFF_MARKET', 'IN_CONTRACT,OFF_MARKET', 'ACTIVE,IN_CONTRACT,OFF_MARKET'),
        fc.integer({ min: 1, max: 60 }),
        fc.constantFrom(1, 7, 50, 100),
        async (params, status, page, perPage) => {
          // Wide queries (few filters) reach the bitmap path (thousands of matches).
          const wide: Params = {};
          for (const key of ['sort', 'sortDir', 'minDaysOnMarket', 'maxDaysOnMarket', 'areas'] as const) {
            if (params[key] !== undefined) wide[key] = params[key]!;
          }
          const qs = new URLSearchParams({ ...wide, status, page: String(page), perPage: String(perPage) });
          const url = `/v1/search/${listingType === 'rental' ? 'rentals' : 'sales'}?${qs}`;
          const index = await getJson<SearchResponse>(apps.index, url);
          const sql = await getJson<SearchResponse>(apps.sql, url);
          // A page past the last is a 400 on both paths.
          expect(index.status, JSON.stringify(index.body)).toBe(sql.status);
          if (index.status !== 200) return;
          expect(index.body.meta.total).toBe(sql.body.meta.total);
          expect(index.body.data.map((l) => l.id)).toEqual(sql.body.data.map((l) => l.id));
          if (index.body.data.length > 0) nonEmpty++;
        },
      ),
      { numRuns: 80, seed: 20261124 },
    );
    expect(nonEmpty).toBeGreaterThan(20);
  });
});

/**
 * The same search on the index and on SQL: the same status; when 200, both
 * totals equal the oracle's count and the pages list the same ids in order.
 * True when the page had results.
 */
async function samePageOnBothPaths(
  listingType: 'rental' | 'sale',
  filters: Params,
  paging: { page: string; perPage: string },
): Promise<boolean> {
  const url = `/v1/search/${listingType === 'rental' ? 'rentals' : 'sales'}?${new URLSearchParams({ ...filters, ...paging })}`;
  const index = await getJson<SearchResponse>(apps.index, url);
  const sql = await getJson<SearchResponse>(apps.sql, url);
  expect(index.status, JSON.stringify(index.body)).toBe(sql.status);
  if (index.status !== 200) return false;
  const expected = bruteForceMatches(
    market.rows,
    listingType,
    filters,
    apps.index.ctx.areaTree,
    apps.index.clock.now(),
  );
  expect(index.body.meta.total).toBe(expected.length);
  expect(sql.body.meta.total).toBe(expected.length);
  expect(index.body.data.map((l) => l.id)).toEqual(sql.body.data.map((l) => l.id));
  return index.body.data.length > 0;
}

describe.each(['rental', 'sale'] as const)('%s search of a few neighborhoods by price', (listingType) => {
  it("the index (merging the areas' runs, which are in price order) returns the same page as SQL at any page, both directions", async () => {
    const priceArb =
      listingType === 'rental'
        ? fc.integer({ min: 1000, max: 12000 })
        : fc.integer({ min: 200_000, max: 4_000_000 });
    let nonEmpty = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.nat(), { minLength: 2, maxLength: 8 }),
        fc.option(priceArb, { nil: undefined }),
        fc.integer({ min: 0, max: 8000 }),
        fc.constantFrom('ASC', 'DESC'),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(1, 3, 10, 50),
        async (picks, minPrice, width, sortDir, page, perPage) => {
          const areas = picks.map(
            (pick) => market.areaIdsWithListings[pick % market.areaIdsWithListings.length],
          );
          const params: Params = { areas: [...new Set(areas)].join(','), sort: 'PRICE', sortDir };
          if (minPrice !== undefined) {
            params.minPrice = String(minPrice);
            params.maxPrice = String(minPrice + width * (listingType === 'rental' ? 1 : 500));
          }
          const paging = { page: String(page), perPage: String(perPage) };
          if (await samePageOnBothPaths(listingType, params, paging)) nonEmpty++;
        },
      ),
      { numRuns: 100, seed: 20261128 },
    );
    expect(nonEmpty).toBeGreaterThan(20);
  });
});

describe.each(['rental', 'sale'] as const)(
  '%s search over every area filtered by price, flags and bedrooms only',
  (listingType) => {
    it('the index (totals from its flag/bedroom buckets, the page walked in order) agrees with the oracle and SQL at any page', async () => {
      const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
      const priceArb =
        listingType === 'rental'
          ? fc.integer({ min: 1000, max: 12000 })
          : fc.integer({ min: 200_000, max: 4_000_000 });
      let nonEmpty = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            areas: fc.constantFrom(undefined, '100,200,300,400,500'),
            minPrice: maybe(priceArb),
            maxPrice: maybe(priceArb),
            minBeds: maybe(fc.integer({ min: 0, max: 4 })),
            maxBeds: maybe(fc.integer({ min: 0, max: 4 })),
            noFee: listingType === 'rental' ? maybe(fc.boolean()) : fc.constant(undefined),
            petsAllowed: maybe(fc.boolean()),
            has3dTour: maybe(fc.boolean()),
            fiberOnly: maybe(fc.boolean()),
            status: fc.constantFrom(
              undefined,
              'ACTIVE',
              'OFF_MARKET',
              'ACTIVE,IN_CONTRACT',
              'ACTIVE,IN_CONTRACT,OFF_MARKET',
            ),
            sort: fc.constantFrom(
              undefined,
              'RECOMMENDED',
              'LISTED_AT',
              'PRICE_PER_SQFT',
              'DAYS_ON_MARKET',
              'PRICE',
            ),
            sortDir: fc.constantFrom(undefined, 'ASC', 'DESC'),
            page: fc.integer({ min: 1, max: 8 }),
            perPage: fc.constantFrom(1, 7, 50),
          }),
          async (drawn) => {
            const params: Params = {};
            for (const [key, value] of Object.entries(drawn))
              if (value !== undefined) params[key] = String(value);
            const { page, perPage, ...filters } = params;
            if (await samePageOnBothPaths(listingType, filters, { page: page!, perPage: perPage! }))
              nonEmpty++;
          },
        ),
        { numRuns: 150, seed: 20261125 },
      );
      expect(nonEmpty).toBeGreaterThan(40);
      // All five boroughs leave out New Jersey: the count less the areas left out is exercised.
      expect(market.rows.some((row) => row.listing_type === listingType && row.area_id >= 1_000_000)).toBe(
        true,
      );
    });
  },
);
