import type { Kysely } from 'kysely';

/**
 * Replication high-water marks are the pipeline's own state (`pipeline_state`).
 * Until now a store no replication had run on yet started from the time its
 * content scope last changed in `sync_state` (`search:rental` for listings,
 * `buildings` for buildings): the instant a demo market was loaded as of. That
 * position is written here as the mark, where none exists yet, so a store
 * upgrades without replicating from the start or skipping changes; the demo
 * load now writes the marks itself.
 *
 * Names are literal: a migration must not change when the code it once ran with does.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  const updatedAt = new Date().toISOString();
  const marks = [
    { name: 'replication:listings', scope: 'search:rental' },
    { name: 'replication:buildings', scope: 'buildings' },
  ];
  for (const { name, scope } of marks) {
    const position = await db
      .selectFrom('sync_state')
      .select('refreshed_at')
      .where('scope', '=', scope)
      .executeTakeFirst();
    if (!position) continue;
    await db
      .insertInto('pipeline_state')
      .values({ name, value: position.refreshed_at, updated_at: updatedAt })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  }
}
