import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { openConfiguredStore } from '../src/prepared-store.ts';
import type { BenchConfig } from './config.ts';

export interface MarketIds {
  /** Listing ids of every status, drawn uniformly from the whole store. */
  readonly listingIds: readonly string[];
  readonly buildingIds: readonly string[];
}

/**
 * Real ids to address detail routes with, sampled once from the store the
 * running service under test uses (same DATA_DIR / DATABASE_URL, already
 * migrated and loaded), so requests spread over the whole market instead of a
 * few hot rows.
 */
export async function sampleMarketIds(config: BenchConfig, count = 2000): Promise<MarketIds> {
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: config.dataDir };
  if (config.databaseUrl !== undefined) env.DATABASE_URL = config.databaseUrl;
  const store = await openConfiguredStore(loadConfig(env));
  try {
    // random() is the same function on SQLite and PostgreSQL.
    const listings = await store.db
      .selectFrom('listings')
      .select('id')
      .orderBy(sql`random()`)
      .limit(count)
      .execute();
    const buildings = await store.db
      .selectFrom('buildings')
      .select('id')
      .orderBy(sql`random()`)
      .limit(count)
      .execute();
    return { listingIds: listings.map((r) => r.id), buildingIds: buildings.map((r) => r.id) };
  } finally {
    await store.close();
  }
}
