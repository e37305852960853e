/**
 * Opening the configured store and bringing it to the schema and reference
 * data this version serves: what the service's boot, every CLI command and the
 * bench share. Kept apart from the boot (./boot.ts), which imports the whole
 * service, so that a command that only needs the store (`stoop keys …`,
 * `stoop migrate`) starts without loading it.
 */
import type { Config } from './config.ts';
import { openStore, type Store, type StoreOptions } from './platform/db/database.ts';
import { StoreOpenError, unavailableReason } from './platform/db/errors.ts';
import { migrateToLatest } from './platform/db/migrate.ts';
import { syncAreas } from './reference/areas-store.ts';

/**
 * The configured store, open. A store that cannot be opened (directory,
 * permissions, disk, server) is a `StoreOpenError` with a one-line message.
 * Outages later on are reported on stderr: one line when the store becomes
 * unavailable, one when it answers again.
 */
export async function openConfiguredStore(
  config: Config,
  options: Pick<StoreOptions, 'walCheckpoints'> = {},
): Promise<Store> {
  const quiet = config.logLevel === 'silent' || config.logLevel === 'error' || config.logLevel === 'fatal';
  return openStore({
    ...options,
    dialect: config.dialect,
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    queryTimeoutMs: config.databaseQueryTimeoutMs,
    log: quiet ? () => {} : (line) => process.stderr.write(`${line}\n`),
  });
}

/**
 * Schema to the latest version and reference data (area tree) in place;
 * idempotent. A store that cannot take the writes (read-only, full, locked,
 * unreachable) is a `StoreOpenError` naming it and the cause in one line.
 */
export async function prepareStore(store: Store): Promise<void> {
  try {
    await migrateToLatest(store);
    await syncAreas(store);
  } catch (error) {
    const reason = unavailableReason(error);
    if (reason === undefined) throw error;
    throw new StoreOpenError(`Cannot prepare the ${store.dialect} store ${store.location}: ${reason}`, {
      cause: error,
    });
  }
}

/** The configured store, open and prepared (`prepareStore`); closed again when preparing fails. */
export async function openPreparedStore(config: Config): Promise<Store> {
  const store = await openConfiguredStore(config);
  try {
    await prepareStore(store);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
