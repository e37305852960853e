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

export async function findPhoto(db: Kysely<Database>, key: string): Promise<PhotoRecord | undefined> {
  const row = await db.selectFrom('photos').selectAll().where('key', '=', key).executeTakeFirst();
  return row ? toPhotoRecord(row) : undefined;
}
