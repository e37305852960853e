import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/tables.ts';
import type { AreaRecord } from '../../reference/areas.ts';

export async function listAreas(db: Kysely<Database>): Promise<AreaRecord[]> {
  const rows = await db.selectFrom('areas').selectAll().orderBy('id').execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    parentId: row.parent_id,
    level: row.level,
    slug: row.slug,
    latitude: row.latitude,
    longitude: row.longitude,
    centroidMatch: row.latitude === null ? 'none' : 'exact',
  }));
}

export interface AreaListingCount {
  areaId: number;
  listingType: 'rental' | 'sale';
  count: number;
}

/** Active listings per (leaf) area and type; the service rolls them up the tree. */
export async function countActiveListingsByArea(db: Kysely<Database>): Promise<AreaListingCount[]> {
  const rows = await db
    .selectFrom('listings')
    .select(['area_id', 'listing_type', (eb) => eb.fn.countAll<number>().as('n')])
    .where('status', '=', 'ACTIVE')
    .groupBy(['area_id', 'listing_type'])
    .execute();
  return rows.map((row) => ({ areaId: row.area_id, listingType: row.listing_type, count: Number(row.n) }));
}
