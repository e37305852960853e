import { type Kysely, sql } from 'kysely';
import type { ListingType } from '../../domain/listing.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { CachedJson } from '../../platform/versioned-json-cache.ts';
import type { IdPage, SearchCriteria } from './search.repository.ts';

const DAY_MS = 86_400_000;

/** The searchable columns of one ACTIVE listing (and of its building). */
interface Entry {
  id: string;
  areaId: number;
  price: number;
  beds: number;
  baths: number;
  sqft: number | null;
  monthlyCost: number;
  noFee: boolean;
  pets: boolean;
  has3dTour: boolean;
  amenityMask: number;
  /** Epoch ms; null when the listing date is unknown. */
  listedAt: number | null;
  listedAtIso: string | null;
  nextOpenHouseIso: string | null;
  buildingType: string;
  saleType: string | null;
  rank: number;
  pricePerSqft: number | null;
  fiber: boolean;
  maxDownloadMbps: number | null;
  transitScore: number | null;
}

type SortKey = SearchCriteria['sort'];
const SORT_KEYS: readonly SortKey[] = [
  'RECOMMENDED',
  'PRICE',
  'PRICE_PER_SQFT',
  'LISTED_AT',
  'DAYS_ON_MARKET',
];

/**
 * One listing type's ACTIVE listings in columns, stored in ascending price
 * order (row = price position), so a price band is a contiguous row range and
 * a filter pass reads a few dense typed arrays. Nulls are NaN, which fails every
 * comparison — exactly SQL's "an unknown value never matches a bound".
 *
 * Every (sort key, direction) has a precomputed total order: `rank[row]` is the
 * row's position in it and `byRank[position]` the row at that position. A query
 * sorts the positions of its matches (small integers) instead of comparing rows.
 */
interface Partition {
  size: number;
  ids: string[];
  price: Float64Array;
  beds: Float64Array;
  baths: Float64Array;
  sqft: Float64Array;
  monthlyCost: Float64Array;
  /** Bit set of FLAG_* values. */
  flags: Uint8Array;
  amenityMask: Int32Array;
  listedAt: Float64Array;
  nextOpenHouseAt: Float64Array;
  buildingType: Uint8Array;
  /** 0 when null, else 1 + index in `saleTypeCodes`. */
  saleType: Uint8Array;
  maxDownloadMbps: Float64Array;
  transitScore: Float64Array;
  areaSlot: Uint16Array;
  /** Rows per area, ascending (so by price). */
  byArea: Map<number, Int32Array>;
  /** Area id → slot used by `areaSlot` and area masks. */
  areaSlots: Map<number, number>;
  buildingTypeCodes: Map<string, number>;
  saleTypeCodes: Map<string, number>;
  orders: Map<string, { rank: Int32Array; byRank: Int32Array }>;
}

const FLAG_NO_FEE = 1;
const FLAG_PETS = 2;
const FLAG_3D_TOUR = 4;
const FLAG_FIBER = 8;

type Compare = (a: Entry, b: Entry) => number;

const byId = (a: Entry, b: Entry) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Orders by a numeric key (nulls last in either direction), then id, both in `dir`. */
function orderBy(key: (e: Entry) => number | null, dir: 1 | -1): Compare {
  return (a, b) => {
    const ka = key(a);
    const kb = key(b);
    if (ka !== kb) {
      if (ka === null) return 1;
      if (kb === null) return -1;
      return (ka - kb) * dir;
    }
    return byId(a, b) * dir;
  };
}

/** The same orders as the SQL path's ORDER BY clauses (search.repository.ts). */
function comparator(sort: SortKey, dir: 1 | -1): Compare {
  switch (sort) {
    case 'RECOMMENDED':
      return orderBy((e) => e.rank, dir);
    case 'PRICE':
      return orderBy((e) => e.price, dir);
    case 'PRICE_PER_SQFT':
      return orderBy((e) => e.pricePerSqft, dir);
    case 'LISTED_AT':
      return orderBy((e) => e.listedAt, dir);
    case 'DAYS_ON_MARKET':
      // Fewer days on market is a later listing date; unknown dates stay last.
      return orderBy((e) => (e.listedAt === null ? null : -e.listedAt), dir);
  }
}

const nullToNaN = (value: number | null) => (value === null ? Number.NaN : value);

function buildPartition(unsorted: Entry[]): Partition {
  const entries = [...unsorted].sort((a, b) => a.price - b.price || byId(a, b));
  const size = entries.length;
  const areaSlots = new Map<number, number>();
  const buildingTypeCodes = new Map<string, number>();
  const saleTypeCodes = new Map<string, number>();
  const code = <K>(codes: Map<K, number>, value: K) => {
    let c = codes.get(value);
    if (c === undefined) {
      c = codes.size;
      codes.set(value, c);
    }
    return c;
  };
  const p: Partition = {
    size,
    ids: entries.map((e) => e.id),
    price: Float64Array.from(entries, (e) => e.price),
    beds: Float64Array.from(entries, (e) => e.beds),
    baths: Float64Array.from(entries, (e) => e.baths),
    sqft: Float64Array.from(entries, (e) => nullToNaN(e.sqft)),
    monthlyCost: Float64Array.from(entries, (e) => e.monthlyCost),
    flags: Uint8Array.from(
      entries,
      (e) =>
        (e.noFee ? FLAG_NO_FEE : 0) |
        (e.pets ? FLAG_PETS : 0) |
        (e.has3dTour ? FLAG_3D_TOUR : 0) |
        (e.fiber ? FLAG_FIBER : 0),
    ),
    amenityMask: Int32Array.from(entries, (e) => e.amenityMask),
    listedAt: Float64Array.from(entries, (e) => nullToNaN(e.listedAt)),
    nextOpenHouseAt: Float64Array.from(entries, (e) =>
      e.nextOpenHouseIso === null ? Number.NaN : Date.parse(e.nextOpenHouseIso),
    ),
    buildingType: Uint8Array.from(entries, (e) => code(buildingTypeCodes, e.buildingType)),
    saleType: Uint8Array.from(entries, (e) =>
      e.saleType === null ? 0 : 1 + code(saleTypeCodes, e.saleType),
    ),
    maxDownloadMbps: Float64Array.from(entries, (e) => nullToNaN(e.maxDownloadMbps)),
    transitScore: Float64Array.from(entries, (e) => nullToNaN(e.transitScore)),
    areaSlot: Uint16Array.from(entries, (e) => code(areaSlots, e.areaId)),
    byArea: new Map(),
    areaSlots,
    buildingTypeCodes,
    saleTypeCodes,
    orders: new Map(),
  };
  const rowsByArea = new Map<number, number[]>();
  entries.forEach((entry, row) => {
    const rows = rowsByArea.get(entry.areaId);
    if (rows) rows.push(row);
    else rowsByArea.set(entry.areaId, [row]);
  });
  for (const [areaId, rows] of rowsByArea) p.byArea.set(areaId, Int32Array.from(rows));
  for (const sort of SORT_KEYS) {
    for (const dir of [1, -1] as const) {
      const compare = comparator(sort, dir);
      const sorted = entries.map((_, row) => row).sort((a, b) => compare(entries[a]!, entries[b]!));
      const byRank = Int32Array.from(sorted);
      const rank = new Int32Array(size);
      byRank.forEach((row, position) => {
        rank[row] = position;
      });
      p.orders.set(`${sort}:${dir}`, { rank, byRank });
    }
  }
  return p;
}

/**
 * An in-memory index of ACTIVE listings: the default search (what nearly every
 * request asks for) is answered from here, the database serves the rest.
 *
 * It is a read model of the `listings` table, tagged with the data version it
 * was built at. `SearchService` uses it only while that version is current and
 * falls back to SQL (then rebuilds) when data changes, so answers always match
 * the store. Semantics must equal `search.repository.ts` exactly: the property
 * tests check both paths against one brute-force oracle.
 */
export class ActiveListingIndex {
  /** Reused result buffer: a search runs synchronously, so one per index is enough. */
  private readonly scratch: Int32Array;
  /**
   * Serialized summaries by row, filled by the search service: the index is
   * rebuilt whenever the data version moves, so these never outlive their data.
   */
  private readonly summaries: Record<ListingType, (CachedJson | undefined)[]>;

  private constructor(
    readonly version: string,
    private readonly partitions: Record<ListingType, Partition>,
    readonly size: number,
  ) {
    this.scratch = new Int32Array(Math.max(partitions.rental.size, partitions.sale.size));
    this.summaries = { rental: new Array(partitions.rental.size), sale: new Array(partitions.sale.size) };
  }

  static async build(db: Kysely<Database>, version: string): Promise<ActiveListingIndex> {
    const rows = await db
      .selectFrom('listings')
      .innerJoin('buildings', 'buildings.id', 'listings.building_id')
      .leftJoin('building_scores', 'building_scores.building_id', 'listings.building_id')
      .select([
        'listings.id',
        'listings.listing_type',
        'listings.area_id',
        'listings.price',
        'listings.bedroom_count',
        'listings.bathrooms',
        'listings.sqft',
        'listings.monthly_cost',
        'listings.no_fee',
        'listings.pets_allowed',
        'listings.has_3d_tour',
        'listings.amenity_mask',
        'listings.listed_at',
        'listings.next_open_house_at',
        'listings.building_type',
        'listings.sale_type',
        'listings.rank_score',
        'listings.price_per_sqft',
        'buildings.fiber_available',
        'buildings.max_download_mbps',
        'building_scores.transit_score',
      ])
      .where('listings.status', '=', sql.lit('ACTIVE'))
      .execute();
    const entries: Record<ListingType, Entry[]> = { rental: [], sale: [] };
    for (const row of rows) {
      entries[row.listing_type].push({
        id: row.id,
        areaId: row.area_id,
        price: row.price,
        beds: row.bedroom_count,
        baths: row.bathrooms,
        sqft: row.sqft,
        monthlyCost: row.monthly_cost,
        noFee: row.no_fee === 1,
        pets: row.pets_allowed === 1,
        has3dTour: row.has_3d_tour === 1,
        amenityMask: row.amenity_mask,
        listedAt: row.listed_at === null ? null : Date.parse(row.listed_at),
        listedAtIso: row.listed_at,
        nextOpenHouseIso: row.next_open_house_at,
        buildingType: row.building_type,
        saleType: row.sale_type,
        rank: row.rank_score,
        pricePerSqft: row.price_per_sqft,
        fiber: row.fiber_available === 1,
        maxDownloadMbps: row.max_download_mbps,
        transitScore: row.transit_score,
      });
    }
    const partitions: Record<ListingType, Partition> = {
      rental: buildPartition(entries.rental),
      sale: buildPartition(entries.sale),
    };
    return new ActiveListingIndex(version, partitions, rows.length);
  }

  /** Whether this index can answer the criteria (ACTIVE-only searches). */
  static handles(c: SearchCriteria): boolean {
    return c.statuses.length === 1 && c.statuses[0] === 'ACTIVE';
  }

  search(c: SearchCriteria, limit: number, offset: number): IdPage {
    const p = this.partitions[c.listingType];
    const order = p.orders.get(`${c.sort}:${c.sortDir === 'ASC' ? 1 : -1}`)!;
    const lo = lowerBound(p.price, c.minPrice ?? Number.NEGATIVE_INFINITY, false);
    const hi = lowerBound(p.price, c.maxPrice ?? Number.POSITIVE_INFINITY, true);
    const filter = new RowFilter(c, p);
    // Positions (in the requested order) of every match; sorting them is sorting the matches.
    const positions = this.scratch;
    let count = 0;
    const rank = order.rank;
    let rowsInAreas = p.size;
    let buckets: Int32Array[] | null = null;
    if (c.areaIds) {
      buckets = [];
      rowsInAreas = 0;
      for (const id of c.areaIds) {
        const rows = p.byArea.get(id);
        if (rows) {
          buckets.push(rows);
          rowsInAreas += rows.length;
        }
      }
    }
    if (buckets && rowsInAreas < (hi - lo) / 2) {
      // A few neighborhoods: walk their rows (ascending), inside the price band.
      for (const rows of buckets) {
        for (let k = lowerBoundRows(rows, lo); k < rows.length; k++) {
          const row = rows[k]!;
          if (row >= hi) break;
          if (filter.passesAll || filter.accepts(row)) positions[count++] = rank[row]!;
        }
      }
    } else {
      // Much of the city: one pass over the price band, with an area mask.
      const mask = buckets ? areaMask(p, c.areaIds!) : null;
      const areaSlot = p.areaSlot;
      for (let row = lo; row < hi; row++) {
        if (mask !== null && mask[areaSlot[row]!] !== 1) continue;
        if (filter.passesAll || filter.accepts(row)) positions[count++] = rank[row]!;
      }
    }
    const page = positions
      .subarray(0, count)
      .sort()
      .subarray(offset, offset + limit);
    const rows = Array.from(page, (position) => order.byRank[position]!);
    return {
      ids: rows.map((row) => p.ids[row]!),
      total: count,
      rows,
      summaries: this.summaries[c.listingType],
    };
  }
}

function areaMask(p: Partition, areaIds: readonly number[]): Uint8Array {
  const mask = new Uint8Array(p.areaSlots.size);
  for (const id of areaIds) {
    const slot = p.areaSlots.get(id);
    if (slot !== undefined) mask[slot] = 1;
  }
  return mask;
}

/** First row whose price is ≥ `price` (or > it when `after`). */
function lowerBound(prices: Float64Array, price: number, after: boolean): number {
  let lo = 0;
  let hi = prices.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const value = prices[mid]!;
    if (value < price || (after && value === price)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index in ascending `rows` whose row is ≥ `row`. */
function lowerBoundRows(rows: Int32Array, row: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid]! < row) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The criteria other than area and price, as one predicate over a row. Bounds
 * that were not given are ±Infinity (always pass); NaN (null) fails any bound
 * that was given, as in SQL.
 */
class RowFilter {
  private readonly minBeds: number;
  private readonly maxBeds: number;
  private readonly minBaths: number;
  private readonly maxBaths: number;
  private readonly minSqft: number;
  private readonly maxSqft: number;
  private readonly checkSqft: boolean;
  private readonly maxMonthlyCost: number;
  private readonly flagMask: number;
  private readonly flagValue: number;
  private readonly amenityMask: number;
  private readonly listedFrom: number;
  private readonly listedTo: number;
  private readonly checkListed: boolean;
  private readonly minDays: number;
  private readonly maxDays: number;
  private readonly checkDays: boolean;
  private readonly nowMs: number;
  private readonly openHouse: 0 | 1 | -1;
  private readonly buildingTypes: Uint8Array | null;
  private readonly saleTypes: Uint8Array | null;
  private readonly minDownloadMbps: number;
  private readonly checkMbps: boolean;
  private readonly minTransitScore: number;
  private readonly checkTransit: boolean;
  /** No condition besides area and price (handled by the caller): every row passes. */
  readonly passesAll: boolean;

  constructor(
    c: SearchCriteria,
    private readonly p: Partition,
  ) {
    this.minBeds = c.minBeds ?? Number.NEGATIVE_INFINITY;
    this.maxBeds = c.maxBeds ?? Number.POSITIVE_INFINITY;
    this.minBaths = c.minBaths ?? Number.NEGATIVE_INFINITY;
    this.maxBaths = c.maxBaths ?? Number.POSITIVE_INFINITY;
    this.minSqft = c.minSqft ?? Number.NEGATIVE_INFINITY;
    this.maxSqft = c.maxSqft ?? Number.POSITIVE_INFINITY;
    this.checkSqft = c.minSqft !== undefined || c.maxSqft !== undefined;
    this.maxMonthlyCost = c.maxMonthlyCost ?? Number.POSITIVE_INFINITY;
    let flagMask = 0;
    let flagValue = 0;
    const flag = (wanted: boolean | undefined, bit: number) => {
      if (wanted === undefined) return;
      flagMask |= bit;
      if (wanted) flagValue |= bit;
    };
    flag(c.noFee, FLAG_NO_FEE);
    flag(c.petsAllowed, FLAG_PETS);
    flag(c.has3dTour, FLAG_3D_TOUR);
    flag(c.fiberOnly, FLAG_FIBER);
    this.flagMask = flagMask;
    this.flagValue = flagValue;
    this.amenityMask = c.amenityMask ?? 0;
    this.listedFrom = c.listedFrom === undefined ? Number.NEGATIVE_INFINITY : Date.parse(c.listedFrom);
    this.listedTo = c.listedTo === undefined ? Number.POSITIVE_INFINITY : Date.parse(c.listedTo);
    this.checkListed = c.listedFrom !== undefined || c.listedTo !== undefined;
    this.minDays = c.minDaysOnMarket ?? Number.NEGATIVE_INFINITY;
    this.maxDays = c.maxDaysOnMarket ?? Number.POSITIVE_INFINITY;
    this.checkDays = c.minDaysOnMarket !== undefined || c.maxDaysOnMarket !== undefined;
    this.nowMs = c.now.getTime();
    this.openHouse = c.hasOpenHouse === undefined ? 0 : c.hasOpenHouse ? 1 : -1;
    this.buildingTypes = c.buildingTypes ? codeMask(p.buildingTypeCodes, c.buildingTypes, 0) : null;
    this.saleTypes = c.saleTypes ? codeMask(p.saleTypeCodes, c.saleTypes, 1) : null;
    this.minDownloadMbps = c.minDownloadMbps ?? Number.NEGATIVE_INFINITY;
    this.checkMbps = c.minDownloadMbps !== undefined;
    this.minTransitScore = c.minTransitScore ?? Number.NEGATIVE_INFINITY;
    this.checkTransit = c.minTransitScore !== undefined;
    this.passesAll =
      c.minBeds === undefined &&
      c.maxBeds === undefined &&
      c.minBaths === undefined &&
      c.maxBaths === undefined &&
      !this.checkSqft &&
      c.maxMonthlyCost === undefined &&
      flagMask === 0 &&
      this.amenityMask === 0 &&
      !this.checkListed &&
      !this.checkDays &&
      this.openHouse === 0 &&
      this.buildingTypes === null &&
      this.saleTypes === null &&
      !this.checkMbps &&
      !this.checkTransit;
  }

  accepts(row: number): boolean {
    const p = this.p;
    const beds = p.beds[row]!;
    if (beds < this.minBeds || beds > this.maxBeds) return false;
    const baths = p.baths[row]!;
    if (baths < this.minBaths || baths > this.maxBaths) return false;
    if (p.monthlyCost[row]! > this.maxMonthlyCost) return false;
    if ((p.flags[row]! & this.flagMask) !== this.flagValue) return false;
    if (this.amenityMask !== 0 && (p.amenityMask[row]! & this.amenityMask) !== this.amenityMask) return false;
    if (this.checkSqft) {
      const sqft = p.sqft[row]!;
      if (!(sqft >= this.minSqft && sqft <= this.maxSqft)) return false;
    }
    if (this.checkListed) {
      const listed = p.listedAt[row]!;
      if (!(listed >= this.listedFrom && listed <= this.listedTo)) return false;
    }
    if (this.checkDays) {
      // Clamped at 0 as displayed; NaN (unknown date) still fails both bounds.
      const days = Math.max(0, Math.floor((this.nowMs - p.listedAt[row]!) / DAY_MS));
      if (!(days >= this.minDays && days <= this.maxDays)) return false;
    }
    if (this.openHouse !== 0) {
      const upcoming = p.nextOpenHouseAt[row]! >= this.nowMs;
      if (upcoming !== (this.openHouse === 1)) return false;
    }
    if (this.buildingTypes !== null && this.buildingTypes[p.buildingType[row]!] !== 1) return false;
    if (this.saleTypes !== null && this.saleTypes[p.saleType[row]!] !== 1) return false;
    if (this.checkMbps && !(p.maxDownloadMbps[row]! >= this.minDownloadMbps)) return false;
    if (this.checkTransit && !(p.transitScore[row]! >= this.minTransitScore)) return false;
    return true;
  }
}

/** A lookup by code: 1 for each allowed value (`offset` shifts codes, e.g. 0 reserved for null). */
function codeMask(codes: Map<string, number>, allowed: readonly string[], offset: number): Uint8Array {
  const mask = new Uint8Array(codes.size + offset);
  for (const value of allowed) {
    const c = codes.get(value);
    if (c !== undefined) mask[c + offset] = 1;
  }
  return mask;
}
