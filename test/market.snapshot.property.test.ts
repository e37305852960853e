import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILDING_TYPES, nyDayNumber, SALE_TYPES } from '../src/domain/listing.ts';
import {
  CompareResponse,
  type RentalSnapshot,
  RentalSnapshotResponse,
  type SaleSnapshot,
  SaleSnapshotResponse,
} from '../src/modules/market/market.schema.ts';
import { distribution, median, share } from '../src/modules/market/statistics.ts';
import { createTestApp, getJson, type TestApp } from './support/app.ts';
import { type FullRow, loadAllListings } from './support/brute-force.ts';
import { expectSchema } from './support/schema.ts';

const DAY_MS = 86_400_000;
let t: TestApp;
let rows: FullRow[];
let areaIds: number[];

beforeAll(async () => {
  t = await createTestApp({ scale: 0.02 });
  rows = await loadAllListings(t.store);
  const withListings = new Set(rows.map((r) => r.area_id));
  // Areas with listings somewhere in their subtree, including the root and boroughs.
  areaIds = t.ctx.areaTree.records
    .filter((a) => t.ctx.areaTree.descendantsAndSelf(a.id).some((id) => withListings.has(id)))
    .map((a) => a.id);
});
afterAll(async () => {
  await t?.close();
});

/** A naive restatement of the documented snapshot semantics, straight from listing rows. */
function oracle(
  listingType: 'rental' | 'sale',
  areaId: number,
  bedrooms: number | undefined,
  buildingType: string | undefined,
  now: Date,
) {
  const areas = new Set(t.ctx.areaTree.descendantsAndSelf(areaId));
  const matching = rows.filter(
    (r) =>
      r.listing_type === listingType &&
      r.status === 'ACTIVE' &&
      areas.has(r.area_id) &&
      (bedrooms === undefined || (bedrooms === 4 ? r.bedroom_count >= 4 : r.bedroom_count === bedrooms)) &&
      (buildingType === undefined || r.building_type === buildingType),
  );
  const ages = matching
    .filter((r) => r.listed_at !== null)
    .map((r) => now.getTime() - Date.parse(r.listed_at!));
  const cut = matching.filter((r) => r.price_delta < 0);
  return {
    inventory: matching.length,
    newListings7d: ages.filter((a) => a >= 0 && a < 7 * DAY_MS).length,
    newListings30d: ages.filter((a) => a >= 0 && a < 30 * DAY_MS).length,
    price: distribution(matching.map((r) => r.price)),
    pricePerSqft: distribution(
      matching.filter((r) => r.price_per_sqft !== null).map((r) => r.price_per_sqft!),
    ),
    // New York calendar days, as a listing's own daysOnMarket counts them.
    daysOnMarket: median(
      matching
        .filter((r) => r.listed_at !== null)
        .map((r) => Math.max(0, nyDayNumber(now.getTime()) - nyDayNumber(Date.parse(r.listed_at!)))),
    ),
    priceCutShare: share(cut.length, matching.length),
    medianPriceCutPct: median(cut.map((r) => (-r.price_delta / (r.price - r.price_delta)) * 100)),
    rental: {
      netEffectiveRent: median(matching.filter((r) => r.net_effective !== null).map((r) => r.net_effective!)),
      concessionShare: share(matching.filter((r) => (r.months_free ?? 0) > 0).length, matching.length),
      noFeeShare: share(matching.filter((r) => r.no_fee === 1).length, matching.length),
    },
    saleTypeMix: SALE_TYPES.map((saleType) => {
      const count = matching.filter((r) => r.sale_type === saleType).length;
      return { saleType, count, share: share(count, matching.length) };
    }),
  };
}

describe.each(['rental', 'sale'] as const)('%s snapshot agrees with a brute-force oracle', (listingType) => {
  it('every figure equals the recomputation for random areas, bedroom buckets and building types', async () => {
    let published = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
        fc.option(fc.constantFrom(...BUILDING_TYPES), { nil: undefined, freq: 4 }),
        async (pick, bedrooms, buildingType) => {
          const areaId =
            pick % 3 === 0 ? [1, 100, 200, 300, 400, 500][pick % 6]! : areaIds[pick % areaIds.length]!;
          const qs = new URLSearchParams({ areaId: String(areaId) });
          if (bedrooms !== undefined) qs.set('bedrooms', String(bedrooms));
          if (buildingType !== undefined) qs.set('buildingType', buildingType);
          const path = `/v1/market/${listingType === 'rental' ? 'rentals' : 'sales'}/snapshot?${qs}`;
          const { status, body } = await getJson<{ data: RentalSnapshot | SaleSnapshot }>(t, path);
          expect(status, JSON.stringify(body)).toBe(200);
          expectSchema(listingType === 'rental' ? RentalSnapshotResponse : SaleSnapshotResponse, body);
          const want = oracle(listingType, areaId, bedrooms, buildingType, t.clock.now());
          const got = body.data;
          expect(got.inventory).toBe(want.inventory);
          expect(got.newListings7d).toBe(want.newListings7d);
          expect(got.newListings30d).toBe(want.newListings30d);
          expect(got.price).toEqual(want.price);
          expect(got.pricePerSqft).toEqual(want.pricePerSqft);
          expect(got.daysOnMarket).toEqual(want.daysOnMarket);
          expect(got.priceCutShare).toEqual(want.priceCutShare);
          expect(got.medianPriceCutPct).toEqual(want.medianPriceCutPct);
          if (got.listingType === 'rental') {
            expect(got.netEffectiveRent).toEqual(want.rental.netEffectiveRent);
            expect(got.concessionShare).toEqual(want.rental.concessionShare);
            expect(got.noFeeShare).toEqual(want.rental.noFeeShare);
          } else {
            expect(got.saleTypeMix).toEqual(want.saleTypeMix);
          }
          // Small samples are null, never 0.
          if (want.inventory < 5) expect(got.price.median).toBeNull();
          if (got.price.median !== null) published++;
        },
      ),
      { numRuns: 60, seed: 20261122 },
    );
    expect(published).toBeGreaterThan(8);
  });
});

describe('compare', () => {
  it('returns the snapshots of each area in request order', async () => {
    const { status, body } = await getJson<{ data: RentalSnapshot[] }>(
      t,
      '/v1/market/compare?areas=300,100,1&bedrooms=1',
    );
    expect(status).toBe(200);
    expectSchema(CompareResponse, body);
    expect(body.data.map((s) => s.areaId)).toEqual([300, 100, 1]);
    const single = await getJson<{ data: RentalSnapshot }>(
      t,
      '/v1/market/rentals/snapshot?areaId=300&bedrooms=1',
    );
    expect(body.data[0]).toEqual(single.body.data);
    const sales = await getJson<{ data: SaleSnapshot[] }>(
      t,
      '/v1/market/compare?areas=100&listingType=sales',
    );
    expect(sales.status).toBe(200);
    expectSchema(CompareResponse, sales.body);
    expect(sales.body.data[0]!.listingType).toBe('sale');
  });
});
