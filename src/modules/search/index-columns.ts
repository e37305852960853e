/**
 * What the search index reads from the store: every listing's searchable
 * columns (with its building's), as plain columns in the store's id order
 * (`RawColumns`), which `ListingIndex` turns into its partitions.
 *
 * Two ways to read them:
 * - `readAllColumns`: every row, in keyset pages by id.
 * - `ColumnsKeeper` (the index worker's): keeps the columns it read and, on
 *   the next build, reads only the listings written since (`listings.revision`
 *   is a store-wide counter assigned in commit order, see migration 0010)
 *   plus the ids in order, and copies every other listing from what it kept.
 *   A refresh cycle that changed a few hundred of ~560k listings then costs a
 *   revision range and an id scan (~0.1 s at the demo's full scale, measured)
 *   instead of every row through two joins (~5 s).
 */
import type { Kysely } from 'kysely';
import {
  daysOnMarketEnd,
  LISTING_STATUSES,
  type ListingStatus,
  type ListingType,
  nyDayNumber,
} from '../../domain/listing.ts';
import type { Database } from '../../platform/db/tables.ts';
import { highestListingRevision } from '../listings/listing-revision.ts';

export const FLAG_NO_FEE = 1;
export const FLAG_PETS = 2;
export const FLAG_3D_TOUR = 4;
export const FLAG_FIBER = 8;

const STATUS_CODES = new Map<string, number>(LISTING_STATUSES.map((s, i) => [s, i]));

/** The code of `value` in `codes`, assigning the next one (from `first`) to a value not seen before. */
export function code<K>(codes: Map<K, number>, value: K, first: number): number {
  let c = codes.get(value);
  if (c === undefined) {
    c = codes.size + first;
    codes.set(value, c);
  }
  return c;
}

const nullToNaN = (value: number | null) => (value === null ? Number.NaN : value);
const isoToMs = (value: string | null) => (value === null ? Number.NaN : Date.parse(value));

/** Every listing with the columns the index keeps (and its building's); callers add the range and order. */
function indexedListings(db: Kysely<Database>) {
  return db
    .selectFrom('listings')
    .innerJoin('buildings', 'buildings.id', 'listings.building_id')
    .leftJoin('building_scores', 'building_scores.building_id', 'listings.building_id')
    .select([
      'listings.id',
      'listings.listing_type',
      'listings.status',
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
      'listings.contract_at',
      'listings.off_market_at',
      'listings.next_open_house_at',
      'listings.building_type',
      'listings.sale_type',
      'listings.rank_score',
      'listings.revision',
      'listings.price_per_sqft',
      'listings.latitude',
      'listings.longitude',
      'buildings.fiber_available',
      'buildings.max_download_mbps',
      'building_scores.transit_score',
    ]);
}

type IndexedListingRow = Awaited<ReturnType<ReturnType<typeof indexedListings>['execute']>>[number];

/** The numeric columns, by name: what a kept copy holds as typed arrays. */
const NUMERIC_COLUMNS = [
  'status',
  'areaId',
  'price',
  'beds',
  'baths',
  'sqft',
  'monthlyCost',
  'flags',
  'amenityMask',
  'listedAt',
  'listedDay',
  'endDay',
  'nextOpenHouseAt',
  'buildingType',
  'saleType',
  'rank',
  'revision',
  'pricePerSqft',
  'maxDownloadMbps',
  'transitScore',
  'latitude',
  'longitude',
] as const;
type NumericColumn = (typeof NUMERIC_COLUMNS)[number];

/** One listing type's listings in the store's id order: what an index partition is built from. */
export interface ListingColumns extends Readonly<Record<NumericColumn, ArrayLike<number>>> {
  readonly ids: readonly string[];
  readonly buildingTypeCodes: Map<string, number>;
  /** Codes from 1: 0 is null. */
  readonly saleTypeCodes: Map<string, number>;
}

/** Listing columns in typed arrays (outside the JS heap): what a `ColumnsKeeper` keeps between builds. */
type TypedColumns = ListingColumns & Readonly<Record<NumericColumn, Float64Array>>;

function typedColumns(
  ids: readonly string[],
  columns: Record<NumericColumn, Float64Array>,
  codes: Pick<ListingColumns, 'buildingTypeCodes' | 'saleTypeCodes'>,
): TypedColumns {
  return {
    ...columns,
    ids,
    buildingTypeCodes: codes.buildingTypeCodes,
    saleTypeCodes: codes.saleTypeCodes,
  };
}

/** Listings as read, appended one at a time (columns of plain arrays). */
export class RawColumns implements ListingColumns, Record<NumericColumn, number[]> {
  readonly ids: string[] = [];
  readonly status: number[] = [];
  readonly areaId: number[] = [];
  readonly price: number[] = [];
  readonly beds: number[] = [];
  readonly baths: number[] = [];
  readonly sqft: number[] = [];
  readonly monthlyCost: number[] = [];
  readonly flags: number[] = [];
  readonly amenityMask: number[] = [];
  readonly listedAt: number[] = [];
  readonly listedDay: number[] = [];
  readonly endDay: number[] = [];
  readonly nextOpenHouseAt: number[] = [];
  readonly buildingType: number[] = [];
  readonly saleType: number[] = [];
  readonly rank: number[] = [];
  readonly revision: number[] = [];
  readonly pricePerSqft: number[] = [];
  readonly maxDownloadMbps: number[] = [];
  readonly transitScore: number[] = [];
  readonly latitude: number[] = [];
  readonly longitude: number[] = [];
  readonly buildingTypeCodes: Map<string, number>;
  readonly saleTypeCodes: Map<string, number>;

  /**
   * `codes`: the building and sale type codes to go on from (kept columns'),
   * so that rows taken from those keep their meaning; copied, never shared.
   */
  constructor(codes?: Pick<ListingColumns, 'buildingTypeCodes' | 'saleTypeCodes'>) {
    this.buildingTypeCodes = new Map(codes?.buildingTypeCodes);
    this.saleTypeCodes = new Map(codes?.saleTypeCodes);
  }

  /** Appends a listing as the store has it. */
  push(row: IndexedListingRow): void {
    this.ids.push(row.id);
    this.status.push(STATUS_CODES.get(row.status as ListingStatus)!);
    this.areaId.push(row.area_id);
    this.price.push(row.price);
    this.beds.push(row.bedroom_count);
    this.baths.push(row.bathrooms);
    this.sqft.push(nullToNaN(row.sqft));
    this.monthlyCost.push(row.monthly_cost);
    this.flags.push(
      (row.no_fee === 1 ? FLAG_NO_FEE : 0) |
        (row.pets_allowed === 1 ? FLAG_PETS : 0) |
        (row.has_3d_tour === 1 ? FLAG_3D_TOUR : 0) |
        (row.fiber_available === 1 ? FLAG_FIBER : 0),
    );
    this.amenityMask.push(row.amenity_mask);
    const listedAt = isoToMs(row.listed_at);
    this.listedAt.push(listedAt);
    this.listedDay.push(Number.isNaN(listedAt) ? Number.NaN : nyDayNumber(listedAt));
    const end = daysOnMarketEnd(row);
    this.endDay.push(end === null ? Number.NaN : nyDayNumber(Date.parse(end)));
    this.nextOpenHouseAt.push(isoToMs(row.next_open_house_at));
    this.buildingType.push(code(this.buildingTypeCodes, row.building_type, 0));
    this.saleType.push(row.sale_type === null ? 0 : code(this.saleTypeCodes, row.sale_type, 1));
    this.rank.push(row.rank_score);
    this.revision.push(row.revision);
    this.pricePerSqft.push(nullToNaN(row.price_per_sqft));
    this.maxDownloadMbps.push(nullToNaN(row.max_download_mbps));
    this.transitScore.push(nullToNaN(row.transit_score));
    this.latitude.push(nullToNaN(row.latitude));
    this.longitude.push(nullToNaN(row.longitude));
  }

  /** The same columns in typed arrays. */
  typed(): TypedColumns {
    const columns = {} as Record<NumericColumn, Float64Array>;
    for (const column of NUMERIC_COLUMNS) columns[column] = Float64Array.from(this[column]);
    return typedColumns(this.ids, columns, this);
  }
}

export type ColumnsByType = Record<ListingType, ListingColumns>;

/** Every listing in the store's id order: each type's columns, and the type and row of each id in turn. */
interface ReadColumns<C extends ListingColumns = ListingColumns> {
  raw: Record<ListingType, C>;
  order: string[];
  /** Per id of `order`: its row in its type's columns, times two, plus one for a sale. */
  at: number[];
}

const TYPE_BIT: Record<ListingType, number> = { rental: 0, sale: 1 };
const placeOf = (listingType: ListingType, row: number) => row * 2 + TYPE_BIT[listingType];

/**
 * Every listing, in keyset pages of `pageRows` by id; `between` runs between
 * pages (a yield to the event loop, where one waits on it).
 */
export async function readAllColumns(
  db: Kysely<Database>,
  pageRows: number,
  between: () => Promise<void>,
): Promise<ReadColumns<RawColumns>> {
  const raw = { rental: new RawColumns(), sale: new RawColumns() };
  const order: string[] = [];
  const at: number[] = [];
  let after: string | null = null;
  for (;;) {
    let query = indexedListings(db).orderBy('listings.id').limit(pageRows);
    if (after !== null) query = query.where('listings.id', '>', after);
    const rows = await query.execute();
    for (const row of rows) {
      const columns = raw[row.listing_type];
      order.push(row.id);
      at.push(placeOf(row.listing_type, columns.ids.length));
      columns.push(row);
    }
    if (rows.length < pageRows) break;
    after = rows[rows.length - 1]!.id;
    await between();
  }
  return { raw, order, at };
}

/**
 * The `buildings=` part of an index version (SearchService.indexVersion): what
 * a listing's building columns and rendered summaries were read at.
 */
export function buildingsPartOf(version: string): string | null {
  return version.split(';').find((part) => part.startsWith('buildings=')) ?? null;
}

/** How a `ColumnsKeeper` read the columns of a build. */
export interface ColumnsRead {
  kind: 'all' | 'changes';
  /** Rows read from the store with their columns (every listing, or those written since the last read). */
  rowsRead: number;
}

/** Above this share of changed listings, reading every row costs about as much as merging. */
const MAX_CHANGED_SHARE = 0.25;

/**
 * The columns of every listing, read in full the first time and, after that,
 * as the changes since its last read merged into what it kept (see the file
 * comment). It reads everything again when what it kept may not stand:
 * - `buildings` (the buildings part of the index version) moved: a listing's
 *   building columns (fiber, download speed, transit score) change without a
 *   new listing revision;
 * - the store's highest revision went down (the market was cleared and
 *   loaded again: rows restart at revision 0);
 * - an id it neither kept nor read as changed (a row written without a new
 *   revision), or more than a quarter of the listings changed.
 *
 * Consistency without a transaction: the highest revision is read first, so
 * whatever commits while the rest is read has a higher one and is read again
 * next time; a listing is taken from what was kept only when nothing newer
 * than that copy was committed before this read began.
 */
export class ColumnsKeeper {
  private kept: KeptColumns | null = null;

  async read(
    db: Kysely<Database>,
    buildings: string | null,
    pageRows: number,
    between: () => Promise<void>,
  ): Promise<{ raw: ColumnsByType; read: ColumnsRead }> {
    const revision = await highestListingRevision(db);
    const kept = this.kept;
    const changes =
      kept !== null && kept.buildings === buildings && revision >= kept.revision
        ? await readChanges(db, kept, between)
        : null;
    let result: ReadColumns<TypedColumns>;
    let read: ColumnsRead;
    if (changes) {
      result = changes;
      read = { kind: 'changes', rowsRead: changes.rowsRead };
    } else {
      // What was kept is freed before every row is read again.
      this.kept = null;
      const all = await readAllColumns(db, pageRows, between);
      result = { ...all, raw: { rental: all.raw.rental.typed(), sale: all.raw.sale.typed() } };
      read = { kind: 'all', rowsRead: all.order.length };
    }
    this.kept = {
      columns: result.raw,
      order: result.order,
      at: Int32Array.from(result.at),
      revision,
      buildings,
    };
    return { raw: result.raw, read };
  }
}

/** What a ColumnsKeeper keeps of its last read. */
interface KeptColumns {
  columns: Record<ListingType, TypedColumns>;
  /** Every listing's id in the store's id order, and where each one's columns are (see `ReadColumns.at`). */
  order: readonly string[];
  at: Int32Array;
  /** The highest revision committed before the read these columns came from began. */
  revision: number;
  buildings: string | null;
}

/** A stretch of kept rows copied as one: `length` rows from `from` in the kept columns to `to` in the new ones. */
interface CopiedRun {
  from: number;
  to: number;
  length: number;
}

/**
 * The kept columns with the listings written since merged in, or null when
 * they must be read again (see ColumnsKeeper).
 */
async function readChanges(
  db: Kysely<Database>,
  kept: KeptColumns,
  between: () => Promise<void>,
): Promise<(ReadColumns<TypedColumns> & { rowsRead: number }) | null> {
  const ids = await db.selectFrom('listings').select('id').orderBy('id').execute();
  await between();
  const changed = await indexedListings(db).where('listings.revision', '>', kept.revision).execute();
  if (changed.length > ids.length * MAX_CHANGED_SHARE) return null;
  const changedById = new Map(changed.map((row) => [row.id, row]));
  // Each type's rows in the new order: ids, stretches copied from the kept columns, changed rows read now.
  const plan = {
    rental: {
      ids: [] as string[],
      runs: [] as CopiedRun[],
      fresh: new RawColumns(kept.columns.rental),
      freshAt: [] as number[],
    },
    sale: {
      ids: [] as string[],
      runs: [] as CopiedRun[],
      fresh: new RawColumns(kept.columns.sale),
      freshAt: [] as number[],
    },
  };
  const order: string[] = new Array(ids.length);
  const at: number[] = new Array(ids.length);
  // Both lists are in the store's id order: one walk pairs each id with its kept copy
  // by equality alone (no collation to agree on); kept ids not met again were deleted.
  let k = 0;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!.id;
    order[i] = id;
    const row = changedById.get(id);
    if (row !== undefined) {
      const target = plan[row.listing_type];
      at[i] = placeOf(row.listing_type, target.ids.length);
      target.freshAt.push(target.ids.length);
      target.ids.push(id);
      target.fresh.push(row);
      continue;
    }
    while (k < kept.order.length && kept.order[k] !== id) k++;
    if (k === kept.order.length) return null;
    const place = kept.at[k++]!;
    const listingType: ListingType = (place & 1) === 1 ? 'sale' : 'rental';
    const target = plan[listingType];
    const from = place >> 1;
    const to = target.ids.length;
    at[i] = placeOf(listingType, to);
    target.ids.push(id);
    const last = target.runs[target.runs.length - 1];
    if (last !== undefined && last.from + last.length === from && last.to + last.length === to) last.length++;
    else target.runs.push({ from, to, length: 1 });
  }
  const merge = (listingType: ListingType): TypedColumns => {
    const { ids: typeIds, runs, fresh, freshAt } = plan[listingType];
    const source = kept.columns[listingType];
    const columns = {} as Record<NumericColumn, Float64Array>;
    for (const column of NUMERIC_COLUMNS) {
      const out = new Float64Array(typeIds.length);
      const from = source[column];
      for (const run of runs) out.set(from.subarray(run.from, run.from + run.length), run.to);
      const read = fresh[column];
      for (let f = 0; f < freshAt.length; f++) out[freshAt[f]!] = read[f]!;
      columns[column] = out;
    }
    return typedColumns(typeIds, columns, fresh);
  };
  return { raw: { rental: merge('rental'), sale: merge('sale') }, order, at, rowsRead: changed.length };
}
