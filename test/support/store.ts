import { randomBytes } from 'node:crypto';
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
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const store = await openStore({ dialect: 'postgres', databaseUrl, schema, poolSize: 4 });
  await migrateToLatest(store);
  // The schema is dropped by the global teardown, not here (see global-setup.ts).
  return store;
}
