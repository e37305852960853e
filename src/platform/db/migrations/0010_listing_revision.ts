import type { Kysely } from 'kysely';

/**
 * `listings.revision`: a store-wide counter value written with every change to
 * a listing (its row, and with it its detail, fees, open houses and photos,
 * which the refresh writer only ever rewrites together with the row). Caches
 * of one listing's rendering compare it instead of being emptied whenever
 * anything in the store changes. Writers take the event-log lock first, so
 * revisions are assigned in commit order. Rows written before this migration
 * share revision 0.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('listings')
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('listings_revision_idx').on('listings').column('revision').execute();
}
