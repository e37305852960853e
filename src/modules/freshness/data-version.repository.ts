/**
 * The only code that reads or writes the `sync_state` table (one row per
 * scope: its time and an optional detail). What the scopes mean, and which
 * writes are allowed, is decided by data-version.ts; this file only stores.
 * Every function takes the store's `db` or a transaction.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/tables.ts';

/** One stored row, its scope still unchecked (a store may hold scopes of older versions). */
export interface StoredScope {
  scope: string;
  at: string;
  detail: string | null;
}

export async function selectAllScopes(db: Kysely<Database>): Promise<StoredScope[]> {
  return db.selectFrom('sync_state').select(['scope', 'refreshed_at as at', 'detail']).execute();
}

export async function selectScope(db: Kysely<Database>, scope: string): Promise<StoredScope | null> {
  const row = await db
    .selectFrom('sync_state')
    .select(['scope', 'refreshed_at as at', 'detail'])
    .where('scope', '=', scope)
    .executeTakeFirst();
  return row ?? null;
}

/** Inserts or replaces the scope's time and detail. */
export async function upsertScope(
  db: Kysely<Database>,
  scope: string,
  at: string,
  detail: string | null,
): Promise<void> {
  await db
    .insertInto('sync_state')
    .values({ scope, refreshed_at: at, detail })
    .onConflict((oc) => oc.column('scope').doUpdateSet({ refreshed_at: at, detail }))
    .execute();
}

export async function deleteScopes(db: Kysely<Database>, scopes: readonly string[]): Promise<void> {
  if (scopes.length === 0) return;
  await db.deleteFrom('sync_state').where('scope', 'in', scopes).execute();
}
