import type { CompiledQuery, Kysely } from 'kysely';

import type { ApiKeyRow, ApiKeysTable, Database } from '../../platform/db/tables.ts';

const byHashQueries = new WeakMap<Kysely<Database>, CompiledQuery<ApiKeyRow>>();

/**
 * Runs on every authenticated request, so the query is built and compiled once
 * per database and only its parameter changes (same SQL, same prepared statement).
 */
export async function findKeyByHash(db: Kysely<Database>, keyHash: string): Promise<ApiKeyRow | undefined> {
  let compiled = byHashQueries.get(db);
  if (!compiled) {
    compiled = db.selectFrom('api_keys').selectAll().where('key_hash', '=', '').compile();
    byHashQueries.set(db, compiled);
  }
  const result = await db.executeQuery<ApiKeyRow>({ ...compiled, parameters: [keyHash] });
  return result.rows[0];
}

export async function findKeyById(db: Kysely<Database>, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listKeys(db: Kysely<Database>, accountId?: string): Promise<ApiKeyRow[]> {
  let query = db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id');
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  return query.execute();
}

export async function ensureAccount(db: Kysely<Database>, id: string, now: string): Promise<void> {
  await db
    .insertInto('accounts')
    .values({ id, name: id, created_at: now })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export async function insertKey(db: Kysely<Database>, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export type KeyChanges = Partial<Pick<ApiKeysTable, 'tier' | 'status' | 'subscription_ends_at'>> & {
  updated_at: string;
};

export async function updateKey(
  db: Kysely<Database>,
  id: string,
  changes: KeyChanges,
  options: { unlessRevoked?: boolean } = {},
): Promise<ApiKeyRow | undefined> {
  let query = db.updateTable('api_keys').set(changes).where('id', '=', id);
  if (options.unlessRevoked) query = query.where('status', '!=', 'revoked');
  await query.execute();
  return findKeyById(db, id);
}
