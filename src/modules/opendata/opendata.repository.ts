/**
 * Reads and writes of the open-data tables and the building columns they feed.
 * Buildings are read in keyset pages so memory follows the page size, never
 * the size of the store.
 */
import { type Kysely, sql } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Database, OpenDataImportsTable } from '../../platform/db/tables.ts';
import { markChanged } from '../freshness/data-version.ts';
import type { DatasetName } from './datasets.ts';
import type { CellRange, GridPoint } from './geo.ts';

export const BUILDING_PAGE = 20_000;

export async function recordImport(db: Kysely<Database>, row: OpenDataImportsTable): Promise<void> {
  const { dataset, ...rest } = row;
  await db
    .insertInto('open_data_imports')
    .values(row)
    .onConflict((oc) => oc.column('dataset').doUpdateSet(rest))
    .execute();
}

export async function listImports(db: Kysely<Database>): Promise<Map<DatasetName, OpenDataImportsTable>> {
  const rows = await db.selectFrom('open_data_imports').selectAll().execute();
  return new Map(rows.map((r) => [r.dataset as DatasetName, r]));
}

/**
 * Marks building data as changed: the `buildings` scope's time moves, which
 * changes the data version every derived cache is keyed by. The new time is
 * strictly later than the recorded one, so two writes within one clock tick
 * (or under a stopped test clock) still invalidate.
 */
export async function bumpBuildingsVersion(
  db: Kysely<Database>,
  clock: Clock,
  detail: string,
): Promise<string> {
  return markChanged(db, 'buildings', clock.now(), detail);
}

/**
 * Visits every building in keyset pages of `pageSize` (by id), with the
 * columns `read` selects; the next page is read after `visit` returns.
 */
export async function forEachBuildingPage<T extends { id: string }>(
  read: (after: string | null, limit: number) => Promise<T[]>,
  visit: (page: T[]) => Promise<void>,
  pageSize = BUILDING_PAGE,
): Promise<void> {
  let after: string | null = null;
  for (;;) {
    const page = await read(after, pageSize);
    if (page.length === 0) return;
    await visit(page);
    if (page.length < pageSize) return;
    after = page[page.length - 1]!.id;
  }
}

/** A complaint or a station as the spatial queries read it; `category` is the NYPD law category. */
export interface TablePoint extends GridPoint {
  category: string | null;
}

type PointTable = 'noise_complaints' | 'crime_complaints' | 'transit_stations';

/**
 * Points of one table inside a rectangle of cells, dated on or after `since`
 * when the table is dated: one range read on the (cell_y, cell_x, date) index.
 */
export async function pointsInCells(
  db: Kysely<Database>,
  table: PointTable,
  range: CellRange,
  since: string | null,
): Promise<TablePoint[]> {
  const dateColumn =
    table === 'noise_complaints' ? 'created_date' : table === 'crime_complaints' ? 'complaint_date' : null;
  const category = table === 'crime_complaints' ? sql`law_category` : sql`null`;
  const rows = await sql<{
    latitude: number;
    longitude: number;
    cell_x: number;
    cell_y: number;
    category: string | null;
  }>`
    select latitude, longitude, cell_x, cell_y, ${category} as category
    from ${sql.table(table)}
    where cell_y between ${range.minY} and ${range.maxY}
      and cell_x between ${range.minX} and ${range.maxX}
      ${dateColumn !== null && since !== null ? sql`and ${sql.ref(dateColumn)} >= ${since}` : sql``}
  `.execute(db);
  return rows.rows.map((r) => ({
    latitude: Number(r.latitude),
    longitude: Number(r.longitude),
    cellX: Number(r.cell_x),
    cellY: Number(r.cell_y),
    category: r.category,
  }));
}
