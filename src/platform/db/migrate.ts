import { type Migration, type MigrationProvider, Migrator } from 'kysely';
import type { Store } from './database.ts';
import * as initial from './migrations/0001_initial.ts';
import * as accessControl from './migrations/0002_access_control.ts';
import * as marketSnapshots from './migrations/0003_market_snapshots.ts';
import * as pipeline from './migrations/0004_pipeline.ts';
import * as openData from './migrations/0005_open_data.ts';
import * as replicationStart from './migrations/0006_replication_start.ts';
import * as processLeases from './migrations/0007_process_leases.ts';
import * as webhooks from './migrations/0008_webhooks.ts';
import * as watchers from './migrations/0009_watchers.ts';
import * as listingRevision from './migrations/0010_listing_revision.ts';
import * as eventArea from './migrations/0011_event_area.ts';
import * as listingDetailHash from './migrations/0013_listing_detail_hash.ts';
import * as oauth from './migrations/0014_oauth.ts';

/** Migrations are compiled in (no directory scan), so they run the same from source or a bundle. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_access_control': accessControl,
  '0003_market_snapshots': marketSnapshots,
  '0004_pipeline': pipeline,
  '0005_open_data': openData,
  '0006_replication_start': replicationStart,
  '0007_process_leases': processLeases,
  '0008_webhooks': webhooks,
  '0009_watchers': watchers,
  '0010_listing_revision': listingRevision,
  '0011_event_area': eventArea,
  '0013_listing_detail_hash': listingDetailHash,
  '0014_oauth': oauth,
};

const provider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};

export interface MigrationOutcome {
  applied: string[];
}

/** Brings the schema to the latest version; throws with the failing migration's name. */
export async function migrateToLatest(store: Store): Promise<MigrationOutcome> {
  // The migration tables must live in the store's schema: Kysely otherwise finds
  // another schema's bookkeeping tables and skips creating its own.
  const migrator = new Migrator({
    db: store.db,
    provider,
    ...(store.schema ? { migrationTableSchema: store.schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`Migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}
