import { type Kysely, PostgresAdapter } from 'kysely';

/**
 * The durable listing event log and the refresh pipeline's bookkeeping.
 *
 * `listing_events.sequence` is the log's order and every consumer's cursor. It
 * must never be assigned out of commit order (a reader that saw 11 must never
 * later find a 10): writers hold one lock while appending (SQLite has a single
 * writer; PostgreSQL writers take a transaction-scoped advisory lock, see
 * src/modules/events/event-log.ts).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('listing_events')
    .addColumn('sequence', isPostgres ? 'bigint' : 'integer', (c) =>
      isPostgres ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement(),
    )
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('listing_id', 'text', (c) => c.notNull())
    .addColumn('building_id', 'text', (c) => c.notNull())
    .addColumn('listing_type', 'text', (c) => c.notNull())
    // JSON text: the changed value before and after (null when not applicable).
    .addColumn('old_value', 'text')
    .addColumn('new_value', 'text')
    // When upstream says the change happened; `recorded_at` is when we detected it.
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('listing_events_listing')
    .on('listing_events')
    .columns(['listing_id', 'sequence'])
    .execute();
  await db.schema
    .createIndex('listing_events_type')
    .on('listing_events')
    .columns(['type', 'sequence'])
    .execute();

  // Where each independent consumer of the log has got to (webhooks, watchers, streams).
  await db.schema
    .createTable('event_cursors')
    .addColumn('consumer', 'text', (c) => c.primaryKey())
    .addColumn('sequence', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  // Replication high-water marks and other small pipeline state, by name.
  await db.schema
    .createTable('pipeline_state')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  // Hash of the upstream detail payload last stored: a refresh rewrites the
  // detail rows (details, fees, open houses, photos) only when it changed.
  await db.schema.alterTable('listing_details').addColumn('source_hash', 'text').execute();

  // Floor plans are served by the photo routes, looked up by key.
  await db.schema
    .createIndex('listing_details_floor_plan_idx')
    .on('listing_details')
    .column('floor_plan_key')
    .execute();
}
