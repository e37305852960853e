import type { Kysely } from 'kysely';

/**
 * Watchers and the changes they detected (src/modules/watchers,
 * src/jobs/watchers). Instants are ISO 8601 UTC text, JSON as text.
 *
 * - `watchers.next_poll_at` is the claim: a poller moves it forward with a
 *   compare-and-set before polling, so one process polls a watcher once per
 *   interval however many run.
 * - `watcher_changes` keeps every change under a per-watcher sequence
 *   (`watchers.last_sequence` is the last one given), so a stream resumes from
 *   `Last-Event-ID` across reconnects and restarts.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('watchers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    // listing | building | search
    .addColumn('watch_type', 'text', (c) => c.notNull())
    // JSON: {listingId} | {buildingId} | {searchFilters}.
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('poll_interval_s', 'integer', (c) => c.notNull())
    // active | paused
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('paused_reason', 'text')
    .addColumn('last_polled_at', 'text')
    .addColumn('last_change_at', 'text')
    .addColumn('next_poll_at', 'text', (c) => c.notNull())
    // JSON: what the last poll saw (the baseline the next one is compared with).
    .addColumn('snapshot', 'text')
    .addColumn('last_sequence', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('watchers_due').on('watchers').columns(['status', 'next_poll_at']).execute();
  await db.schema
    .createIndex('watchers_account')
    .on('watchers')
    .columns(['account_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('watcher_changes')
    .addColumn('watcher_id', 'text', (c) => c.notNull())
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    // JSON: the WatcherChange payload as streamed and delivered.
    .addColumn('payload', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('watcher_changes_pk', ['watcher_id', 'sequence'])
    .execute();
}
