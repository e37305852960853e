import { type Kysely, sql } from 'kysely';

/**
 * NYC open-data imports (src/modules/opendata): PLUTO lots, FCC broadband
 * availability, 311 noise complaints, NYPD complaints, transit stations, and a
 * record of each dataset's last import. Point tables carry a ~200 m grid cell
 * (see src/modules/opendata/geo.ts) with an index on (cell_y, cell_x, date), so
 * "points within r metres of a building" reads a few index ranges, never a scan.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  const double = sql`double precision`;

  await db.schema
    .createTable('pluto_lots')
    .addColumn('bbl', 'text', (c) => c.primaryKey())
    .addColumn('year_built', 'integer')
    .addColumn('num_floors', 'integer')
    .addColumn('units_res', 'integer')
    .addColumn('units_total', 'integer')
    .addColumn('building_class', 'text')
    .addColumn('community_district', 'text')
    .addColumn('police_precinct', 'integer')
    .addColumn('zoning', 'text')
    .addColumn('address', 'text')
    .addColumn('latitude', double)
    .addColumn('longitude', double)
    .addColumn('cell_x', 'integer')
    .addColumn('cell_y', 'integer')
    .addColumn('imported_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pluto_lots_cell_idx').on('pluto_lots').columns(['cell_y', 'cell_x']).execute();

  await db.schema
    .createTable('broadband_availability')
    .addColumn('location_id', 'bigint', (c) => c.notNull())
    .addColumn('provider_id', 'integer', (c) => c.notNull())
    .addColumn('technology', 'integer', (c) => c.notNull())
    .addColumn('frn', 'text')
    .addColumn('brand_name', 'text', (c) => c.notNull())
    .addColumn('holding_company', 'text')
    .addColumn('max_download_mbps', double, (c) => c.notNull())
    .addColumn('max_upload_mbps', double, (c) => c.notNull())
    .addColumn('low_latency', 'integer', (c) => c.notNull())
    .addColumn('business_residential_code', 'text', (c) => c.notNull())
    .addColumn('state_usps', 'text')
    .addColumn('block_geoid', 'text')
    .addColumn('h3_res8_id', 'text')
    .addColumn('imported_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('broadband_availability_pk', ['location_id', 'provider_id', 'technology'])
    .execute();
  await db.schema
    .createIndex('broadband_availability_h3_idx')
    .on('broadband_availability')
    .columns(['h3_res8_id', 'provider_id', 'technology'])
    .execute();

  await db.schema
    .createTable('noise_complaints')
    .addColumn('unique_key', 'text', (c) => c.primaryKey())
    .addColumn('created_date', 'text', (c) => c.notNull())
    .addColumn('complaint_type', 'text', (c) => c.notNull())
    .addColumn('descriptor', 'text')
    .addColumn('bbl', 'text')
    .addColumn('latitude', double, (c) => c.notNull())
    .addColumn('longitude', double, (c) => c.notNull())
    .addColumn('cell_x', 'integer', (c) => c.notNull())
    .addColumn('cell_y', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('noise_complaints_cell_idx')
    .on('noise_complaints')
    .columns(['cell_y', 'cell_x', 'created_date'])
    .execute();

  await db.schema
    .createTable('crime_complaints')
    .addColumn('cmplnt_num', 'text', (c) => c.primaryKey())
    .addColumn('complaint_date', 'text', (c) => c.notNull())
    .addColumn('offense', 'text')
    .addColumn('law_category', 'text', (c) => c.notNull())
    .addColumn('precinct', 'integer')
    .addColumn('latitude', double, (c) => c.notNull())
    .addColumn('longitude', double, (c) => c.notNull())
    .addColumn('cell_x', 'integer', (c) => c.notNull())
    .addColumn('cell_y', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('crime_complaints_cell_idx')
    .on('crime_complaints')
    .columns(['cell_y', 'cell_x', 'complaint_date'])
    .execute();

  await db.schema
    .createTable('transit_stations')
    .addColumn('stop_id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('latitude', double, (c) => c.notNull())
    .addColumn('longitude', double, (c) => c.notNull())
    .addColumn('cell_x', 'integer', (c) => c.notNull())
    .addColumn('cell_y', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('transit_stations_cell_idx')
    .on('transit_stations')
    .columns(['cell_y', 'cell_x'])
    .execute();

  await db.schema
    .createTable('open_data_imports')
    .addColumn('dataset', 'text', (c) => c.primaryKey())
    .addColumn('imported_at', 'text', (c) => c.notNull())
    .addColumn('source_file', 'text', (c) => c.notNull())
    .addColumn('rows_read', 'integer', (c) => c.notNull())
    .addColumn('rows_upserted', 'integer', (c) => c.notNull())
    .addColumn('rows_ignored', 'integer', (c) => c.notNull())
    .addColumn('rows_rejected', 'integer', (c) => c.notNull())
    .execute();
}
