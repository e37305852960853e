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
 * A fresh, migrated, empty store. On PostgreSQL each call gets its own schema,
 * dropped on close, so test files never see each other's rows.
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
  return {
    ...store,
    close: async () => {
      await store.close();
      const cleanup = await openStore({ dialect: 'postgres', databaseUrl, poolSize: 1 });
      const { sql } = await import('kysely');
      await sql.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).execute(cleanup.db);
      await cleanup.close();
    },
  };
}
