import { type Kysely, sql } from 'kysely';

/** Daily market snapshots materialized by src/jobs/market-snapshots.ts, and the job's coverage. */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  const double = sql`double precision`;
  await db.schema
    .createTable('market_daily_snapshots')
    .addColumn('listing_type', 'text', (c) => c.notNull())
    .addColumn('area_id', 'integer', (c) => c.notNull())
    // 'all', or '0'…'4' (4 = 4 or more bedrooms).
    .addColumn('bedrooms', 'text', (c) => c.notNull())
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('inventory', 'integer', (c) => c.notNull())
    .addColumn('new_listings', 'integer', (c) => c.notNull())
    .addColumn('median_price', double)
    .addColumn('price_n', 'integer', (c) => c.notNull())
    .addColumn('median_price_per_sqft', double)
    .addColumn('price_per_sqft_n', 'integer', (c) => c.notNull())
    .addColumn('median_days_on_market', double)
    .addColumn('days_on_market_n', 'integer', (c) => c.notNull())
    // A trend request reads one contiguous primary-key range.
    .addPrimaryKeyConstraint('market_daily_snapshots_pk', ['listing_type', 'area_id', 'bedrooms', 'date'])
    .execute();
  await db.schema
    .createTable('market_snapshot_coverage')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('first_date', 'text', (c) => c.notNull())
    .addColumn('last_date', 'text', (c) => c.notNull())
    .addColumn('target_first_date', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
