import { type ListingType, nyDayNumber, SALE_TYPES, type SaleType } from '../../domain/listing.ts';
import { type Distribution, distribution, type Figure, median, share } from './statistics.ts';

const DAY_MS = 86_400_000;

/** The columns of one ACTIVE listing that market figures read. */
export interface MarketRow {
  areaId: number;
  bedrooms: number;
  buildingType: string;
  price: number;
  pricePerSqft: number | null;
  netEffective: number | null;
  monthsFree: number | null;
  /** Epoch ms; null when the listing date is unknown. */
  listedAt: number | null;
  priceDelta: number;
  noFee: boolean;
  saleType: string | null;
}

/** What a snapshot is taken over. `bedrooms` 4 means 4 or more; undefined: every count. */
export interface SnapshotFilter {
  listingType: ListingType;
  areaIds: ReadonlySet<number>;
  bedrooms?: number | undefined;
  buildingType?: string | undefined;
}

export interface SaleTypeShare {
  saleType: SaleType;
  count: number;
  share: Figure;
}

export interface SnapshotFigures {
  inventory: number;
  newListings7d: number;
  newListings30d: number;
  price: Distribution;
  pricePerSqft: Distribution;
  daysOnMarket: Figure;
  priceCutShare: Figure;
  medianPriceCutPct: Figure;
  /** Rentals only. */
  netEffectiveRent?: Figure;
  concessionShare?: Figure;
  noFeeShare?: Figure;
  /** Sales only. */
  saleTypeMix?: SaleTypeShare[];
}

/** True when a listing with `bedrooms` falls in the requested bucket (4 = 4 or more). */
export function inBedroomBucket(bedrooms: number, bucket: number | undefined): boolean {
  if (bucket === undefined) return true;
  return bucket >= 4 ? bedrooms >= 4 : bedrooms === bucket;
}

/**
 * The last price cut as a percentage of the price before it:
 * −price_delta / (price − price_delta) × 100, a positive number (a cut from
 * 4,000 to 3,800 is 5).
 */
export function priceCutPct(price: number, priceDelta: number): number {
  return (-priceDelta / (price - priceDelta)) * 100;
}

/**
 * Every snapshot figure over `rows` (ACTIVE listings of one type) matching
 * `filter`, as of `now`:
 * - `newListings7d`/`30d`: matching listings with listed_at in (now − 7 d, now].
 * - `daysOnMarket`: median whole days since listed_at (unknown dates left out).
 * - `priceCutShare`: share with price_delta < 0; `medianPriceCutPct` the median
 *   of `priceCutPct` over those listings.
 * - rentals: median net-effective rent, concession share (months_free > 0; no
 *   value counts as no concession), no-fee share. Sales: sale type mix.
 */
export function computeSnapshot(
  rows: readonly MarketRow[],
  filter: SnapshotFilter,
  now: Date,
): SnapshotFigures {
  const nowMs = now.getTime();
  const today = nyDayNumber(nowMs);
  const prices: number[] = [];
  const ppsf: number[] = [];
  const netEffective: number[] = [];
  const dom: number[] = [];
  const cuts: number[] = [];
  let new7 = 0;
  let new30 = 0;
  let concessions = 0;
  let noFee = 0;
  const saleTypes = new Map<string, number>();
  for (const r of rows) {
    if (!filter.areaIds.has(r.areaId)) continue;
    if (!inBedroomBucket(r.bedrooms, filter.bedrooms)) continue;
    if (filter.buildingType !== undefined && r.buildingType !== filter.buildingType) continue;
    prices.push(r.price);
    if (r.pricePerSqft !== null) ppsf.push(r.pricePerSqft);
    if (r.listedAt !== null) {
      const age = nowMs - r.listedAt;
      if (age >= 0 && age < 7 * DAY_MS) new7++;
      if (age >= 0 && age < 30 * DAY_MS) new30++;
      dom.push(Math.max(0, today - nyDayNumber(r.listedAt)));
    }
    if (r.priceDelta < 0) cuts.push(priceCutPct(r.price, r.priceDelta));
    if (filter.listingType === 'rental') {
      if (r.netEffective !== null) netEffective.push(r.netEffective);
      if (r.monthsFree !== null && r.monthsFree > 0) concessions++;
      if (r.noFee) noFee++;
    } else if (r.saleType !== null) {
      saleTypes.set(r.saleType, (saleTypes.get(r.saleType) ?? 0) + 1);
    }
  }
  const n = prices.length;
  const figures: SnapshotFigures = {
    inventory: n,
    newListings7d: new7,
    newListings30d: new30,
    price: distribution(prices),
    pricePerSqft: distribution(ppsf),
    daysOnMarket: median(dom),
    priceCutShare: share(cuts.length, n),
    medianPriceCutPct: median(cuts),
  };
  if (filter.listingType === 'rental') {
    figures.netEffectiveRent = median(netEffective);
    figures.concessionShare = share(concessions, n);
    figures.noFeeShare = share(noFee, n);
  } else {
    figures.saleTypeMix = SALE_TYPES.map((saleType) => {
      const count = saleTypes.get(saleType) ?? 0;
      return { saleType, count, share: share(count, n) };
    });
  }
  return figures;
}
