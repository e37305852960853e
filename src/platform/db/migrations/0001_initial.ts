import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * Initial schema. Written with dialect-neutral column types so the same
 * migration runs on SQLite and PostgreSQL (see tables.ts for the conventions).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  const double = sql`double precision`;

  await db.schema
    .createTable('areas')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('parent_id', 'integer')
    .addColumn('level', 'integer', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name_folded', 'text', (c) => c.notNull())
    .addColumn('latitude', double)
    .addColumn('longitude', double)
    .execute();
  await db.schema.createIndex('areas_parent_idx').on('areas').columns(['parent_id', 'id']).execute();

  await db.schema
    .createTable('buildings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('address_street', 'text', (c) => c.notNull())
    .addColumn('city', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('zip_code', 'text', (c) => c.notNull())
    .addColumn('area_id', 'integer', (c) => c.notNull())
    .addColumn('building_type', 'text', (c) => c.notNull())
    .addColumn('year_built', 'integer')
    .addColumn('year_renovated', 'integer')
    .addColumn('floor_count', 'integer')
    .addColumn('unit_count', 'integer')
    .addColumn('latitude', double, (c) => c.notNull())
    .addColumn('longitude', double, (c) => c.notNull())
    .addColumn('bbl', 'text')
    .addColumn('bin', 'text')
    .addColumn('management_company', 'text')
    .addColumn('developer', 'text')
    .addColumn('architect', 'text')
    .addColumn('tax_abatement_status', 'text')
    .addColumn('tax_abatement_years_remaining', 'integer')
    .addColumn('amenities_json', 'text', (c) => c.notNull())
    .addColumn('policies_json', 'text', (c) => c.notNull())
    .addColumn('nyc_data_json', 'text', (c) => c.notNull())
    .addColumn('additional_details_json', 'text', (c) => c.notNull())
    .addColumn('internet_providers_json', 'text')
    .addColumn('fiber_available', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_download_mbps', 'integer')
    .addColumn('pets_allowed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('refreshed_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('buildings_slug_idx').on('buildings').column('slug').unique().execute();
  await db.schema.createIndex('buildings_bbl_idx').on('buildings').column('bbl').execute();
  await db.schema.createIndex('buildings_area_idx').on('buildings').column('area_id').execute();

  await db.schema
    .createTable('building_scores')
    .addColumn('building_id', 'text', (c) => c.primaryKey())
    .addColumn('health_score', 'integer')
    .addColumn('noise_score', 'integer')
    .addColumn('safety_score', 'integer')
    .addColumn('transit_score', 'integer')
    .addColumn('violations_open', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('listings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('listing_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('closed_reason', 'text')
    .addColumn('building_id', 'text', (c) => c.notNull())
    .addColumn('area_id', 'integer', (c) => c.notNull())
    .addColumn('street', 'text', (c) => c.notNull())
    .addColumn('unit', 'text')
    .addColumn('city', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('zip_code', 'text', (c) => c.notNull())
    .addColumn('latitude', double, (c) => c.notNull())
    .addColumn('longitude', double, (c) => c.notNull())
    .addColumn('url_path', 'text', (c) => c.notNull())
    .addColumn('building_type', 'text', (c) => c.notNull())
    .addColumn('price', 'integer', (c) => c.notNull())
    .addColumn('price_delta', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('net_effective', 'integer')
    .addColumn('months_free', double)
    .addColumn('lease_term_months', 'integer')
    .addColumn('monthly_fees', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('monthly_cost', 'integer', (c) => c.notNull())
    .addColumn('no_fee', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sale_type', 'text')
    .addColumn('bedroom_count', 'integer', (c) => c.notNull())
    .addColumn('full_bathroom_count', 'integer', (c) => c.notNull())
    .addColumn('half_bathroom_count', 'integer', (c) => c.notNull())
    .addColumn('bathrooms', double, (c) => c.notNull())
    .addColumn('sqft', 'integer')
    .addColumn('price_per_sqft', double)
    .addColumn('listed_at', 'text')
    .addColumn('listed_at_is_approximate', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('available_at', 'text')
    .addColumn('off_market_at', 'text')
    .addColumn('contract_at', 'text')
    .addColumn('amenity_mask', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('pets_allowed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('has_3d_tour', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_open_house_at', 'text')
    .addColumn('lead_photo_key', 'text')
    .addColumn('source_group_label', 'text', (c) => c.notNull())
    .addColumn('rank_score', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('detail_scraped', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('refreshed_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('listings_url_path_idx').on('listings').column('url_path').unique().execute();
  await db.schema
    .createIndex('listings_building_idx')
    .on('listings')
    .columns(['building_id', 'status'])
    .execute();
  // History and non-default status searches: equality prefix, then the price
  // range, then id as tie-breaker.
  await db.schema
    .createIndex('listings_status_area_price_idx')
    .on('listings')
    .columns(['listing_type', 'status', 'area_id', 'price', 'id'])
    .execute();
  // The default search (ACTIVE listings, ~10% of rows) runs on partial indexes that
  // hold only active listings and cover the common filters and sort keys, so a page
  // and its count are read from a small index without touching the table. Queries
  // must state `status = 'ACTIVE'` as a literal for either planner to use them.
  const activeOnly = sql<boolean>`status = 'ACTIVE'`;
  await db.schema
    .createIndex('listings_active_area_price_idx')
    .on('listings')
    .columns(['listing_type', 'area_id', 'price', 'id'])
    .where(activeOnly)
    .execute();
  await db.schema
    .createIndex('listings_active_price_cover_idx')
    .on('listings')
    .columns([
      'listing_type',
      'price',
      'bedroom_count',
      'bathrooms',
      'no_fee',
      'pets_allowed',
      'monthly_cost',
      'sqft',
      'area_id',
      'rank_score',
      'id',
    ])
    .where(activeOnly)
    .execute();
  await db.schema
    .createIndex('listings_active_rank_idx')
    .on('listings')
    .columns(['listing_type', 'rank_score', 'id'])
    .where(activeOnly)
    .execute();
  await db.schema
    .createIndex('listings_active_listed_idx')
    .on('listings')
    .columns(['listing_type', 'listed_at', 'id'])
    .where(activeOnly)
    .execute();

  await db.schema
    .createTable('listing_details')
    .addColumn('listing_id', 'text', (c) => c.primaryKey())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('amenities_json', 'text', (c) => c.notNull())
    .addColumn('unit_features_json', 'text', (c) => c.notNull())
    .addColumn('lease_terms_json', 'text')
    .addColumn('concessions_json', 'text')
    .addColumn('sale_details_json', 'text')
    .addColumn('agents_json', 'text', (c) => c.notNull())
    .addColumn('pets_policy_json', 'text', (c) => c.notNull())
    .addColumn('photos_json', 'text', (c) => c.notNull())
    .addColumn('floor_plan_key', 'text')
    .addColumn('virtual_tour_url', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('price_events')
    .addColumn('id', 'integer', (c) =>
      isPostgres(db) ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement(),
    )
    .addColumn('listing_id', 'text', (c) => c.notNull())
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('price', 'integer', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('pct_change', double)
    .execute();
  await db.schema
    .createIndex('price_events_listing_idx')
    .on('price_events')
    .columns(['listing_id', 'date'])
    .execute();

  await db.schema
    .createTable('fees')
    .addColumn('id', 'integer', (c) =>
      isPostgres(db) ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement(),
    )
    .addColumn('listing_id', 'text', (c) => c.notNull())
    .addColumn('type_label', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('requirement', 'text', (c) => c.notNull())
    .addColumn('refundability', 'text', (c) => c.notNull())
    .addColumn('calc_type', 'text', (c) => c.notNull())
    .addColumn('amount', double, (c) => c.notNull())
    .addColumn('timing', 'text', (c) => c.notNull())
    .addColumn('occurrence', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('fees_listing_idx').on('fees').column('listing_id').execute();

  await db.schema
    .createTable('open_houses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('listing_id', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'text', (c) => c.notNull())
    .addColumn('ends_at', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('by_appointment', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('note', 'text')
    .execute();
  await db.schema
    .createIndex('open_houses_listing_idx')
    .on('open_houses')
    .columns(['listing_id', 'starts_at'])
    .execute();

  await db.schema
    .createTable('photos')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('listing_id', 'text')
    .addColumn('building_id', 'text')
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('caption', 'text')
    .addColumn('render_seed', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('photos_listing_idx')
    .on('photos')
    .columns(['listing_id', 'position'])
    .execute();

  await db.schema
    .createTable('hpd_violations')
    .addColumn('violation_id', 'text', (c) => c.primaryKey())
    .addColumn('bbl', 'text', (c) => c.notNull())
    .addColumn('class', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('inspection_date', 'text', (c) => c.notNull())
    .addColumn('is_open', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('hpd_violations_bbl_idx')
    .on('hpd_violations')
    .columns(['bbl', 'inspection_date'])
    .execute();

  await db.schema
    .createTable('sync_state')
    .addColumn('scope', 'text', (c) => c.primaryKey())
    .addColumn('refreshed_at', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
