import type { Kysely, Selectable } from 'kysely';
import type { Database, PhotosTable } from '../../platform/db/tables.ts';
import type { PhotoRecord } from './photo-source.ts';

export function toPhotoRecord(row: Selectable<PhotosTable>): PhotoRecord {
  return {
    key: row.key,
    listingId: row.listing_id,
    buildingId: row.building_id,
    position: row.position,
    width: row.width,
    height: row.height,
    caption: row.caption,
    renderSeed: row.render_seed,
  };
}

/** The caption a floor plan is drawn (and described) with. */
export const FLOOR_PLAN_CAPTION = 'Floor plan';

/** Floor plans are drawn at this size (they are not rows of `photos`). */
const FLOOR_PLAN_SIZE = { width: 1200, height: 900 } as const;

/**
 * A photo, or a listing's floor plan: detail responses link floor plans through
 * the same photo URL layout, so the same route must serve them.
 */
export async function findPhoto(db: Kysely<Database>, key: string): Promise<PhotoRecord | undefined> {
  const row = await db.selectFrom('photos').selectAll().where('key', '=', key).executeTakeFirst();
  if (row) return toPhotoRecord(row);
  const plan = await db
    .selectFrom('listing_details')
    .select(['listing_id'])
    .where('floor_plan_key', '=', key)
    .executeTakeFirst();
  if (!plan) return undefined;
  return {
    key,
    listingId: plan.listing_id,
    buildingId: null,
    position: -1,
    ...FLOOR_PLAN_SIZE,
    caption: FLOOR_PLAN_CAPTION,
    renderSeed: null,
  };
}
