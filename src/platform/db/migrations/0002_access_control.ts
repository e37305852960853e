import type { Kysely } from 'kysely';

/** Accounts, API keys (hashed) and monthly usage counters. */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    // SHA-256 of the full key, hex: the key itself is never stored.
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('key_hint', 'text', (c) => c.notNull())
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('subscription_ends_at', 'text')
    .addColumn('external_ref', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_keys_hash_idx').on('api_keys').column('key_hash').unique().execute();
  await db.schema.createIndex('api_keys_account_idx').on('api_keys').column('account_id').execute();

  await db.schema
    .createTable('usage_counters')
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_counters_pk', ['bucket', 'period'])
    .execute();
}
