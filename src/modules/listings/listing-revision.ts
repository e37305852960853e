import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/tables.ts';

/**
 * The highest `listings.revision` stored (0 for none): one index probe.
 * Revisions are store-wide (migration 0010): a writer gives each listing it
 * changes one above this, under the event-log lock, so they follow commit
 * order; the search index worker reads only the listings above the value it
 * read before its last build (ColumnsKeeper).
 */
export async function highestListingRevision(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('listings')
    .select((eb) => eb.fn.max('revision').as('latest'))
    .executeTakeFirst();
  return Number(row?.latest ?? 0);
}
