import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { haversineMeters } from '../src/domain/geo.ts';
import { SearchResponse } from '../src/modules/search/search.schema.ts';
import { getJson } from './support/app.ts';
import { bruteForceMatches, type FullRow, marketOnBothPaths, type Params } from './support/brute-force.ts';
import { expectSchema } from './support/schema.ts';

/**
 * Geo search against a brute-force oracle: the documented filters
 * (support/brute-force.ts) plus a plain haversine test over every listing,
 * on two apps over the same market — one answering from the in-memory index
 * (every status), one always from SQL.
 */
const market = marketOnBothPaths();
const { apps } = market;

const PER_PAGE = 500;

interface Geo {
  bbox?: { minLng: number; minLat: number; maxLng: number; maxLat: number };
  near?: { lat: number; lng: number; radius?: number };
}

/** The oracle's distance: the domain's haversine, rounded half up to whole metres as documented. */
const distanceOf = (near: { lat: number; lng: number }, r: FullRow) =>
  Math.round(
    haversineMeters(
      { latitude: near.lat, longitude: near.lng },
      { latitude: r.latitude, longitude: r.longitude },
    ),
  );

function oracle(listingType: 'rental' | 'sale', params: Params, geo: Geo, now: Date) {
  const base = bruteForceMatches(market.rows, listingType, params, apps.index.ctx.areaTree, now);
  return base.filter((r) => {
    if (!Number.isFinite(r.latitude) || !Number.isFinite(r.longitude)) return false;
    const b = geo.bbox;
    if (
      b &&
      !(
        r.longitude >= b.minLng &&
        r.longitude <= b.maxLng &&
        r.latitude >= b.minLat &&
        r.latitude <= b.maxLat
      )
    )
      return false;
    if (geo.near && distanceOf(geo.near, r) > (geo.near.radius ?? 1000)) return false;
    return true;
  });
}

/** Ids in sort=DISTANCE order: distance, then id, both in the direction asked. */
function byDistance(matches: FullRow[], near: { lat: number; lng: number }, dir: 'ASC' | 'DESC'): string[] {
  const sign = dir === 'ASC' ? 1 : -1;
  return matches
    .map((r) => ({ id: r.id, d: distanceOf(near, r) }))
    .sort((a, b) => sign * (a.d - b.d || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
    .map((x) => x.id);
}

const opt = <T>(arb: fc.Arbitrary<T>, weight = 5): fc.Arbitrary<T | undefined> =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight }, { arbitrary: arb, weight: 1 });

/**
 * A geo filter around a real listing (so results are rarely empty), sometimes
 * far from any: a bbox, a near point with or without a radius, or both.
 */
function geoArb(listingType: 'rental' | 'sale'): fc.Arbitrary<Geo> {
  const centre = fc
    .record({
      pick: fc.nat(),
      dLat: fc.double({ min: -0.01, max: 0.01, noNaN: true }),
      dLng: fc.double({ min: -0.01, max: 0.01, noNaN: true }),
      faraway: fc.oneof({ arbitrary: fc.constant(false), weight: 12 }, fc.constant(true)),
    })
    .map(({ pick, dLat, dLng, faraway }) => {
      if (faraway) return { lat: -33.86, lng: 151.21 };
      // Active listings are the default status and the sparser set: start from one.
      const ofType = market.rows.filter((r) => r.listing_type === listingType && r.status === 'ACTIVE');
      const r = ofType[pick % ofType.length]!;
      // Rounded as a client would send it (the oracle gets the same value).
      return { lat: Number((r.latitude + dLat).toFixed(6)), lng: Number((r.longitude + dLng).toFixed(6)) };
    });
  const box = fc.record({
    halfLat: fc.double({ min: 0.0005, max: 0.06, noNaN: true }),
    halfLng: fc.double({ min: 0.0005, max: 0.08, noNaN: true }),
  });
  const radius = opt(fc.oneof(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 5000, max: 50_000 })), 1);
  // bbox and near share the centre when both are given, so their intersection is rarely empty.
  return fc
    .record({ c: centre, box, radius, mode: fc.constantFrom('bbox', 'near', 'both') })
    .map(({ c, box: { halfLat, halfLng }, radius, mode }) => {
      const geo: Geo = {};
      if (mode !== 'near') {
        geo.bbox = {
          minLng: Number((c.lng - halfLng).toFixed(5)),
          minLat: Number((c.lat - halfLat).toFixed(5)),
          maxLng: Number((c.lng + halfLng).toFixed(5)),
          maxLat: Number((c.lat + halfLat).toFixed(5)),
        };
      }
      if (mode !== 'bbox') geo.near = radius === undefined ? { ...c } : { ...c, radius };
      return geo;
    });
}

function filterArb(listingType: 'rental' | 'sale'): fc.Arbitrary<Params> {
  const price =
    listingType === 'rental'
      ? fc.integer({ min: 1000, max: 12000 })
      : fc.integer({ min: 200_000, max: 4_000_000 });
  return fc
    .record({
      areas: opt(fc.constantFrom('100', '300', '100,200,300,400,500', 'AREA'), 8),
      minPrice: opt(price),
      maxPrice: opt(price),
      minBeds: opt(fc.integer({ min: 0, max: 3 })),
      maxBeds: opt(fc.integer({ min: 0, max: 4 })),
      maxDaysOnMarket: opt(fc.integer({ min: 0, max: 120 })),
      buildingType: opt(fc.constantFrom('CONDO', 'RENTAL', 'COOP,CONDO')),
      petsAllowed: opt(fc.boolean()),
      status: opt(
        fc.constantFrom(
          'ACTIVE',
          'IN_CONTRACT',
          'OFF_MARKET',
          'ACTIVE,OFF_MARKET',
          'ACTIVE,IN_CONTRACT,OFF_MARKET',
        ),
        3,
      ),
      noFee: listingType === 'rental' ? opt(fc.boolean()) : fc.constant(undefined),
      saleType:
        listingType === 'sale' ? opt(fc.constantFrom('RESALE', 'SPONSOR_UNIT')) : fc.constant(undefined),
      sortDir: fc.constantFrom(undefined, 'ASC', 'DESC'),
      areaPick: fc.nat(),
    })
    .map(({ areaPick, ...p }) => {
      const params: Params = {};
      for (const [key, value] of Object.entries(p)) if (value !== undefined) params[key] = String(value);
      if (params.areas === 'AREA')
        params.areas = String(market.areaIdsWithListings[areaPick % market.areaIdsWithListings.length]);
      return params;
    })
    .filter(
      (p) =>
        (p.minPrice === undefined || p.maxPrice === undefined || Number(p.minPrice) <= Number(p.maxPrice)) &&
        (p.minBeds === undefined || p.maxBeds === undefined || Number(p.minBeds) <= Number(p.maxBeds)),
    );
}

/** DISTANCE drawn as often as all the others. */
const SORTS = [
  'RECOMMENDED',
  'PRICE',
  'LISTED_AT',
  'PRICE_PER_SQFT',
  'DAYS_ON_MARKET',
  ...Array<'DISTANCE'>(5).fill('DISTANCE'),
] as const;

function geoParams(geo: Geo): Params {
  const out: Params = {};
  if (geo.bbox) out.bbox = [geo.bbox.minLng, geo.bbox.minLat, geo.bbox.maxLng, geo.bbox.maxLat].join(',');
  if (geo.near) {
    out.near = `${geo.near.lat},${geo.near.lng}`;
    if (geo.near.radius !== undefined) out.radius = String(geo.near.radius);
  }
  return out;
}

function searchUrl(listingType: 'rental' | 'sale', params: Params): string {
  return `/v1/search/${listingType === 'rental' ? 'rentals' : 'sales'}?${new URLSearchParams(params)}`;
}

describe.each([
  ['rental', 'index'],
  ['rental', 'sql'],
  ['sale', 'index'],
  ['sale', 'sql'],
] as const)('%s geo search (%s path) agrees with a brute-force haversine oracle', (listingType, path) => {
  it('same matches (ordered for sort=DISTANCE) and distances, and both paths serve the same page', async () => {
    let nonEmpty = 0;
    let distanceSorted = 0;
    await fc.assert(
      fc.asyncProperty(
        filterArb(listingType),
        geoArb(listingType),
        fc.constantFrom(...SORTS),
        async (filters, geo, sort) => {
          // sort=DISTANCE needs near (the error is tested elsewhere).
          const sortParam: Params = sort === 'DISTANCE' && !geo.near ? {} : { sort };
          const params = { ...filters, ...geoParams(geo), ...sortParam, perPage: String(PER_PAGE) };
          const url = searchUrl(listingType, params);
          const { status, body } = await getJson<SearchResponse>(apps[path], url);
          expect(status, JSON.stringify(body)).toBe(200);
          expectSchema(SearchResponse, body);
          const expected = oracle(listingType, filters, geo, apps[path].clock.now());
          expect(body.meta.total, url).toBe(expected.length);
          expect(body.data.length).toBe(Math.min(PER_PAGE, expected.length));
          const expectedById = new Map(expected.map((r) => [r.id, r]));
          for (const item of body.data) {
            const row = expectedById.get(item.id);
            expect(row, `${item.id} should not match ${url}`).toBeDefined();
            if (geo.near) expect(item.distance, item.id).toBe(distanceOf(geo.near, row!));
            else expect(item.distance).toBeUndefined();
          }
          if (sortParam.sort === 'DISTANCE' && geo.near) {
            const dir = (filters.sortDir ?? 'ASC') as 'ASC' | 'DESC';
            expect(body.data.map((l) => l.id)).toEqual(
              byDistance(expected, geo.near, dir).slice(0, PER_PAGE),
            );
            if (expected.length > 1) distanceSorted++;
          }
          // Both paths return the same page in the same order.
          const other = await getJson<SearchResponse>(apps[path === 'index' ? 'sql' : 'index'], url);
          expect(other.body.data.map((l) => l.id)).toEqual(body.data.map((l) => l.id));
          expect(other.body.data.map((l) => l.distance)).toEqual(body.data.map((l) => l.distance));
          if (expected.length > 0) nonEmpty++;
        },
      ),
      { numRuns: 80, seed: 20261124 },
    );
    // The generator must produce searches that match something, or the property is vacuous.
    expect(nonEmpty).toBeGreaterThan(30);
    expect(distanceSorted).toBeGreaterThan(5);
  });
});

describe.each(['rental', 'sale'] as const)('%s search by distance, page by page', (listingType) => {
  it('every page of sort=DISTANCE is the oracle order sliced, on both paths', async () => {
    let nonEmpty = 0;
    await fc.assert(
      fc.asyncProperty(
        geoArb(listingType).filter((g) => g.near !== undefined),
        fc.constantFrom('ACTIVE', 'OFF_MARKET', 'IN_CONTRACT,OFF_MARKET', 'ACTIVE,IN_CONTRACT,OFF_MARKET'),
        fc.constantFrom('ASC', 'DESC'),
        fc.integer({ min: 1, max: 20 }),
        fc.constantFrom(1, 3, 10, 50),
        async (geo, status, sortDir, page, perPage) => {
          const params = {
            ...geoParams(geo),
            status,
            sort: 'DISTANCE',
            sortDir,
            page: String(page),
            perPage: String(perPage),
          };
          const url = searchUrl(listingType, params);
          const expected = byDistance(
            oracle(listingType, { status }, geo, apps.index.clock.now()),
            geo.near!,
            sortDir,
          );
          for (const path of ['index', 'sql'] as const) {
            const { status: code, body } = await getJson<SearchResponse>(apps[path], url);
            // A page past the last is a 400 (page_range) on both paths.
            if ((page - 1) * perPage >= expected.length && page > 1) {
              expect(code, `${path} ${url}`).toBe(400);
              continue;
            }
            expect(code, JSON.stringify(body)).toBe(200);
            expect(body.meta.total).toBe(expected.length);
            expect(
              body.data.map((l) => l.id),
              `${path} ${url}`,
            ).toEqual(expected.slice((page - 1) * perPage, page * perPage));
            if (body.data.length > 0) nonEmpty++;
          }
        },
      ),
      { numRuns: 60, seed: 20261125 },
    );
    expect(nonEmpty).toBeGreaterThan(20);
  });
});
