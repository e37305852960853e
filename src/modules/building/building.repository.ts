import { type Kysely, sql } from 'kysely';
import type { ListingStatus, ListingType } from '../../domain/listing.ts';
import { chunks } from '../../platform/db/batches.ts';
import { keyedLookup } from '../../platform/db/keyed-lookup.ts';
import {
  BUILDING_COLUMNS,
  type BuildingRow,
  type BuildingScoresRow,
  type Database,
  type ListingRow,
} from '../../platform/db/tables.ts';
import { SUMMARY_COLUMNS, type SummaryRow } from '../listings/listing.mapper.ts';
import type { PhotoRow } from '../photos/photo.mapper.ts';

/** Columns the detail does not serve: search denormalizations and row bookkeeping. */
const NOT_SERVED = ['fiber_available', 'max_download_mbps', 'created_at', 'updated_at'] as const;
type DetailColumn = Exclude<(typeof BUILDING_COLUMNS)[number], (typeof NOT_SERVED)[number]>;

/** The building columns the detail serves. */
const DETAIL_COLUMNS = BUILDING_COLUMNS.filter(
  (column): column is DetailColumn => !(NOT_SERVED as readonly string[]).includes(column),
);

export type BuildingDetailRow = Pick<BuildingRow, (typeof DETAIL_COLUMNS)[number]>;

const buildingById = keyedLookup((db) =>
  db.selectFrom('buildings').select(DETAIL_COLUMNS).where('id', '=', ''),
);

export async function findBuilding(db: Kysely<Database>, id: string): Promise<BuildingDetailRow | undefined> {
  return (await buildingById(db, id))[0];
}

/** What sub-resources need of their building: existence, freshness and the BBL. */
export type BuildingHeader = Pick<BuildingRow, 'id' | 'bbl' | 'refreshed_at'>;

const buildingHeader = keyedLookup((db) =>
  db.selectFrom('buildings').select(['id', 'bbl', 'refreshed_at']).where('id', '=', ''),
);

export async function findBuildingHeader(
  db: Kysely<Database>,
  id: string,
): Promise<BuildingHeader | undefined> {
  return (await buildingHeader(db, id))[0];
}

const scoresByBuilding = keyedLookup((db) =>
  db.selectFrom('building_scores').selectAll().where('building_id', '=', ''),
);

export async function findScores(
  db: Kysely<Database>,
  buildingId: string,
): Promise<BuildingScoresRow | undefined> {
  return (await scoresByBuilding(db, buildingId))[0];
}

/** Every building photo, grouped by building and in display order. */
export async function listAllBuildingPhotos(db: Kysely<Database>): Promise<Map<string, PhotoRow[]>> {
  // `listing_id IS NULL` rides the photos_listing_idx index: only building photos are read.
  const rows = await db
    .selectFrom('photos')
    .select(['building_id', 'key', 'width', 'height', 'caption'])
    .where('listing_id', 'is', null)
    .where('building_id', 'is not', null)
    .orderBy('building_id')
    .orderBy('position')
    .execute();
  const out = new Map<string, PhotoRow[]>();
  for (const { building_id, ...photo } of rows) {
    const list = out.get(building_id!);
    if (list) list.push(photo);
    else out.set(building_id!, [photo]);
  }
  return out;
}

export interface BuildingListingsFilter {
  buildingId: string;
  statuses: readonly ListingStatus[];
  listingType: ListingType | undefined;
}

export type BuildingListingRow = SummaryRow & Pick<ListingRow, 'refreshed_at'>;

function filtered(db: Kysely<Database>, filter: BuildingListingsFilter) {
  let query = db
    .selectFrom('listings')
    .where('building_id', '=', filter.buildingId)
    .where('status', 'in', [...filter.statuses]);
  if (filter.listingType) query = query.where('listing_type', '=', filter.listingType);
  return query;
}

/** One page of a building's listings, newest first (unknown listing dates last, then by id), and the total. */
export async function listBuildingListings(
  db: Kysely<Database>,
  filter: BuildingListingsFilter,
  limit: number,
  offset: number,
): Promise<{ rows: BuildingListingRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    filtered(db, filter)
      .select([...SUMMARY_COLUMNS, 'refreshed_at'])
      .orderBy(sql`case when listed_at is null then 1 else 0 end`)
      .orderBy('listed_at', 'desc')
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute(),
    filtered(db, filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

export interface ViolationRow {
  violation_id: string;
  status: string;
  class: 'A' | 'B' | 'C' | 'I';
  description: string;
  inspection_date: string;
}

/** Violations recorded for a BBL, newest inspection first (then by id), at most `limit`. */
export async function listViolations(
  db: Kysely<Database>,
  bbl: string,
  limit: number,
): Promise<ViolationRow[]> {
  return db
    .selectFrom('hpd_violations')
    .select(['violation_id', 'status', 'class', 'description', 'inspection_date'])
    .where('bbl', '=', bbl)
    .orderBy('inspection_date', 'desc')
    .orderBy('violation_id', 'desc')
    .limit(limit)
    .execute();
}

/** Which of `ids` the store has a building for. */
export async function knownBuildingIds(db: Kysely<Database>, ids: Iterable<string>): Promise<Set<string>> {
  const known = new Set<string>();
  for (const part of chunks([...new Set(ids)])) {
    for (const row of await db.selectFrom('buildings').select('id').where('id', 'in', part).execute()) {
      known.add(row.id);
    }
  }
  return known;
}
