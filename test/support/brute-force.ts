import { afterAll, beforeAll } from 'vitest';
import { type Amenity, amenityMask } from '../../src/domain/amenities.ts';
import { nyDate } from '../../src/domain/listing.ts';
import { daysOnMarket } from '../../src/modules/listings/listing.mapper.ts';
import type { Store } from '../../src/platform/db/database.ts';
import type { ListingRow } from '../../src/platform/db/tables.ts';
import type { AreaTree } from '../../src/reference/areas.ts';
import { createTestApp, type TestApp } from './app.ts';

export type FullRow = ListingRow & {
  fiber_available: 0 | 1 | null;
  max_download_mbps: number | null;
  transit_score: number | null;
};

/** Every listing with the building columns search filters read: the oracle's input. */
export async function loadAllListings(store: Store): Promise<FullRow[]> {
  const rows = await store.db
    .selectFrom('listings')
    .leftJoin('buildings', 'buildings.id', 'listings.building_id')
    .leftJoin('building_scores', 'building_scores.building_id', 'listings.building_id')
    .selectAll('listings')
    .select(['buildings.fiber_available', 'buildings.max_download_mbps', 'building_scores.transit_score'])
    .execute();
  return rows as FullRow[];
}

/** Raw query parameters, as a client sends them. */
export type Params = Record<string, string>;

const list = (v: string | undefined) => (v === undefined ? undefined : v.split(','));
const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
const bool = (v: string | undefined) => (v === undefined ? undefined : v === 'true');

/**
 * A deliberately naive re-statement of the documented search semantics, used
 * to check the SQL implementation on small markets.
 */
export function bruteForceMatches(
  rows: readonly FullRow[],
  listingType: 'rental' | 'sale',
  p: Params,
  tree: AreaTree,
  now: Date,
): FullRow[] {
  const statuses = list(p.status) ?? ['ACTIVE'];
  const areaIds = p.areas
    ? new Set(p.areas.split(',').flatMap((a) => tree.descendantsAndSelf(Number(a))))
    : null;
  const amenityBits = p.amenities ? amenityMask(p.amenities.split(',') as Amenity[]) : undefined;
  const nowIso = now.toISOString();
  return rows.filter((r) => {
    if (r.listing_type !== listingType || !statuses.includes(r.status)) return false;
    if (areaIds && !areaIds.has(r.area_id)) return false;
    const between = (value: number | null, min?: number, max?: number) =>
      (min === undefined || (value !== null && value >= min)) &&
      (max === undefined || (value !== null && value <= max));
    if (!between(r.price, num(p.minPrice), num(p.maxPrice))) return false;
    if (!between(r.bedroom_count, num(p.minBeds), num(p.maxBeds))) return false;
    if (!between(r.full_bathroom_count + 0.5 * r.half_bathroom_count, num(p.minBaths), num(p.maxBaths)))
      return false;
    if (!between(r.sqft, num(p.minSqft), num(p.maxSqft))) return false;
    if (p.maxMonthlyCost !== undefined && r.monthly_cost > Number(p.maxMonthlyCost)) return false;
    if (p.buildingType && !p.buildingType.split(',').includes(r.building_type)) return false;
    if (p.saleType && (r.sale_type === null || !p.saleType.split(',').includes(r.sale_type))) return false;
    if (bool(p.noFee) !== undefined && (r.no_fee === 1) !== bool(p.noFee)) return false;
    if (bool(p.has3dTour) !== undefined && (r.has_3d_tour === 1) !== bool(p.has3dTour)) return false;
    if (bool(p.petsAllowed) !== undefined && (r.pets_allowed === 1) !== bool(p.petsAllowed)) return false;
    if (bool(p.hasOpenHouse) !== undefined) {
      const upcoming = r.next_open_house_at !== null && r.next_open_house_at >= nowIso;
      if (upcoming !== bool(p.hasOpenHouse)) return false;
    }
    if (amenityBits !== undefined && (r.amenity_mask & amenityBits) !== amenityBits) return false;
    if (p.minDaysOnMarket !== undefined || p.maxDaysOnMarket !== undefined) {
      const dom = daysOnMarket(r, now);
      if (!between(dom, num(p.minDaysOnMarket), num(p.maxDaysOnMarket))) return false;
    }
    if (
      p.listedAfter !== undefined &&
      (r.listed_at === null || nyDate(Date.parse(r.listed_at)) < p.listedAfter)
    )
      return false;
    if (
      p.listedBefore !== undefined &&
      (r.listed_at === null || nyDate(Date.parse(r.listed_at)) > p.listedBefore)
    )
      return false;
    if (p.fiberOnly !== undefined && (r.fiber_available === 1) !== bool(p.fiberOnly)) return false;
    if (
      p.minDownloadMbps !== undefined &&
      !(r.max_download_mbps !== null && r.max_download_mbps >= Number(p.minDownloadMbps))
    )
      return false;
    if (
      p.minTransitScore !== undefined &&
      !(r.transit_score !== null && r.transit_score >= Number(p.minTransitScore))
    )
      return false;
    return true;
  });
}

/** One generated market served two ways, with every listing for the oracle. */
export interface MarketOnBothPaths {
  /** `index` answers every search (all statuses) from the in-memory index; `sql` always from SQL. */
  apps: Record<'index' | 'sql', TestApp>;
  rows: FullRow[];
  /** Areas that hold at least one listing: filters that rarely come back empty. */
  areaIdsWithListings: number[];
}

/**
 * Registers the file's hooks: two apps over the same generated market (same
 * seed and scale), so both search paths must agree with the oracle and with
 * each other page by page. Fields are filled before the first test runs.
 */
export function marketOnBothPaths(scale = 0.02): MarketOnBothPaths {
  const market: MarketOnBothPaths = {
    apps: {} as Record<'index' | 'sql', TestApp>,
    rows: [],
    areaIdsWithListings: [],
  };
  beforeAll(async () => {
    market.apps.index = await createTestApp({ scale });
    market.apps.sql = await createTestApp({ scale, env: { SEARCH_INDEX: 'false' } });
    market.rows = await loadAllListings(market.apps.index.store);
    market.areaIdsWithListings = [...new Set(market.rows.map((r) => r.area_id))];
  });
  afterAll(async () => {
    await market.apps.index?.close();
    await market.apps.sql?.close();
  });
  return market;
}
