import type { Kysely } from 'kysely';

/**
 * `listings.detail_hash`: the hash of the upstream detail payload (details
 * record, fees, open houses, photos) the listing's children were last written
 * from. It lived on the details row, so a listing whose upstream detail has no
 * details record (not scraped: most of the demo's listings) had nowhere to keep
 * it and was rewritten — row, children and revision — on every expanded
 * refresh. Rows written before this migration have none and are rewritten once.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('listings').addColumn('detail_hash', 'text').execute();
}
