import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/platform/db/database.ts';
import { migrateToLatest } from '../../src/platform/db/migrate.ts';

/**
 * The dialect under test: PostgreSQL when DATABASE_URL is a postgres:// URL
 * (CI's second pass), else an in-memory SQLite database.
 */
export const TEST_DIALECT: 'sqlite' | 'postgres' = /^postgres/.test(process.env.DATABASE_URL ?? '')
  ? 'postgres'
  : 'sqlite';

/**
 * A PostgreSQL schema name owned by this test run: `t_<run>_<random>`, where
 * `<run>` (set by the global setup) starts with the run's start time, so a run
 * drops only its own schemas and stale ones from runs long gone — never those
 * of another run going on at the same time against the same database.
 */
export function testSchemaName(): string {
  const run =
    process.env.STOOP_TEST_RUN ?? `${Math.floor(Date.now() / 1000)}x${randomBytes(2).toString('hex')}`;
  return `t_${run}_${randomBytes(4).toString('hex')}`;
}

/**
 * A fresh, migrated, empty store. On PostgreSQL each call gets its own `t_…`
 * schema, so test files never see each other's rows.
 */
export async function createTestStore(): Promise<Store> {
  if (TEST_DIALECT === 'sqlite') {
    const store = await openStore({ dialect: 'sqlite', databaseUrl: 'sqlite::memory:' });
    await migrateToLatest(store);
    return store;
  }
  const databaseUrl = process.env.DATABASE_URL!;
  const schema = testSchemaName();
  const store = await openStore({ dialect: 'postgres', databaseUrl, schema, poolSize: 4 });
  await migrateToLatest(store);
  // The schema is dropped by the global teardown, not here (see global-setup.ts).
  return store;
}

/**
 * The store as composition sees one no other thread can open: the search
 * index builds and the market figures then run on this thread
 * (`InProcessMarketEngine`, the index builder in-process), as they do over the
 * in-memory SQLite store of the first pass, whatever the dialect. A
 * PostgreSQL store is otherwise shared with two worker threads per app, each
 * loading the service's modules and its own rows: about 3 s of CPU for every
 * test app, a third of the PostgreSQL pass, for paths whose output is the
 * same. The workers have tests of their own on both dialects
 * (search.worker, market.worker, jobs.event-loop and the server-process tests).
 */
export function onThisThread(store: Store): Store {
  return { ...store, shared: null };
}

/**
 * A fresh, migrated store another thread can open (worker tests): a SQLite
 * file in a temporary directory (the usual test store is in memory), or a
 * PostgreSQL test schema. `dispose` closes it and removes the file.
 */
export async function createSharedTestStore(
  prefix: string,
): Promise<{ store: Store; dispose: () => Promise<void> }> {
  if (TEST_DIALECT === 'postgres') {
    const store = await createTestStore();
    return { store, dispose: () => store.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const store = await openStore({ dialect: 'sqlite', databaseUrl: `sqlite:${join(dir, 'stoop.sqlite')}` });
  await migrateToLatest(store);
  return {
    store,
    dispose: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The revision a writer gives a listing it changes (migration 0010): one above
 * every stored one, store-wide. The search index worker reads only listings
 * above the highest revision of its last read, so a test that writes a
 * listing behind the refresh writer's back moves its revision this way.
 */
export const NEXT_LISTING_REVISION = sql<number>`(select max(revision) from listings) + 1`;
