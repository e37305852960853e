/**
 * The refresh pipeline's own state (table `pipeline_state`): replication
 * high-water marks, the upstream modification time up to which a dataset has
 * been applied. Separate from the data version (data-version.ts): a mark says
 * where the next replication starts, not whether caches are valid. Every
 * function takes the store's `db` or a transaction.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/tables.ts';

export const LISTINGS_HIGH_WATER_MARK = 'replication:listings';
export const BUILDINGS_HIGH_WATER_MARK = 'replication:buildings';
export type HighWaterMark = typeof LISTINGS_HIGH_WATER_MARK | typeof BUILDINGS_HIGH_WATER_MARK;

/** The upstream modification time replication of the dataset has reached; null when it never ran. */
export async function readHighWaterMark(db: Kysely<Database>, name: HighWaterMark): Promise<string | null> {
  const row = await db
    .selectFrom('pipeline_state')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirst();
  return row?.value ?? null;
}

/** Every stored value (ISO instants): how far the pipeline has seen upstream. */
export async function readPipelineInstants(db: Kysely<Database>): Promise<string[]> {
  const rows = await db.selectFrom('pipeline_state').select('value').execute();
  return rows.map((r) => r.value);
}

export async function writeHighWaterMark(
  db: Kysely<Database>,
  name: HighWaterMark,
  value: string,
  now: Date,
): Promise<void> {
  const updatedAt = now.toISOString();
  await db
    .insertInto('pipeline_state')
    .values({ name, value, updated_at: updatedAt })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value, updated_at: updatedAt }))
    .execute();
}

/**
 * A store loaded as of an instant (the demo market) is in step with upstream up
 * to that instant: replication of listings and buildings starts there.
 */
export async function startReplicationAt(db: Kysely<Database>, at: Date, now: Date): Promise<void> {
  const value = at.toISOString();
  await writeHighWaterMark(db, LISTINGS_HIGH_WATER_MARK, value, now);
  await writeHighWaterMark(db, BUILDINGS_HIGH_WATER_MARK, value, now);
}

/**
 * The market clock's reading, kept so a restarted market clock resumes from it
 * (`latestKnownInstant` reads every value of this table): market time never
 * goes backwards across restarts, even after a run that wrote no data.
 */
export const MARKET_CLOCK_MARK = 'market-clock';

/** Records the market clock's reading; a later reading never goes back. */
export async function writeMarketClockMark(
  db: Kysely<Database>,
  marketNow: Date,
  wallNow: Date,
): Promise<void> {
  const value = marketNow.toISOString();
  const updatedAt = wallNow.toISOString();
  await db
    .insertInto('pipeline_state')
    .values({ name: MARKET_CLOCK_MARK, value, updated_at: updatedAt })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ value, updated_at: updatedAt })
        .where('pipeline_state.value', '<', value),
    )
    .execute();
}
