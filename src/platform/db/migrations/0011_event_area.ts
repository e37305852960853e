import type { Kysely } from 'kysely';

/**
 * `listing_events.area_id`: the listing's area when the change was detected,
 * so event consumers (webhook payloads, the change feed) get `data.areaId`
 * without a lookup, and as it was then. Null for events logged before it.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('listing_events').addColumn('area_id', 'integer').execute();
}
