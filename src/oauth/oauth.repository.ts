/**
 * Storage of the authorization server. Every function takes the database or a
 * transaction first; multi-row changes (code exchange, rotation, revocation)
 * are composed by the service inside one transaction. Codes and tokens are
 * looked up by their SHA-256 hash only.
 */
import type { Kysely, Transaction } from 'kysely';
import type {
  Database,
  OAuthClientsTable,
  OAuthCodesTable,
  OAuthGrantsTable,
  OAuthTokensTable,
} from '../platform/db/tables.ts';

export type Db = Kysely<Database> | Transaction<Database>;
export type ClientRow = OAuthClientsTable;
export type CodeRow = OAuthCodesTable;
export type GrantRow = OAuthGrantsTable;
export type TokenRow = OAuthTokensTable;

export async function insertClient(db: Db, row: ClientRow): Promise<void> {
  await db.insertInto('oauth_clients').values(row).execute();
}

export function findClient(db: Db, clientId: string): Promise<ClientRow | undefined> {
  return db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
}

export async function insertCode(db: Db, row: CodeRow): Promise<void> {
  await db.insertInto('oauth_codes').values(row).execute();
}

export function findCode(db: Db, codeHash: string): Promise<CodeRow | undefined> {
  return db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

/** Marks a code used unless it already was: true for the one caller that wins (race-safe on PostgreSQL). */
export async function claimCode(db: Db, codeHash: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('oauth_codes')
    .set({ used_at: at })
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function insertGrant(db: Db, row: GrantRow): Promise<void> {
  await db.insertInto('oauth_grants').values(row).execute();
}

export async function updateGrantTier(db: Db, grantId: string, tier: GrantRow['tier']): Promise<void> {
  await db.updateTable('oauth_grants').set({ tier }).where('id', '=', grantId).execute();
}

/** Revokes a grant (and so every token of its family); a revoked grant keeps its first reason. */
export async function revokeGrant(db: Db, grantId: string, at: string, reason: string): Promise<void> {
  await db
    .updateTable('oauth_grants')
    .set({ revoked_at: at, revoked_reason: reason })
    .where('id', '=', grantId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes the grant created from a code (a replayed code), if there is one. */
export async function revokeGrantOfCode(db: Db, codeHash: string, at: string, reason: string): Promise<void> {
  await db
    .updateTable('oauth_grants')
    .set({ revoked_at: at, revoked_reason: reason })
    .where('code_hash', '=', codeHash)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function insertTokens(db: Db, rows: readonly TokenRow[]): Promise<void> {
  await db
    .insertInto('oauth_tokens')
    .values([...rows])
    .execute();
}

/** Marks a refresh token used unless it already was: true for the one rotation that wins. */
export async function claimRefreshToken(db: Db, tokenHash: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('oauth_tokens')
    .set({ used_at: at })
    .where('token_hash', '=', tokenHash)
    .where('kind', '=', 'refresh')
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A token with what its grant says about it (one query per authenticated request). */
export interface TokenWithGrant {
  token_hash: string;
  kind: TokenRow['kind'];
  grant_id: string;
  tier: TokenRow['tier'];
  expires_at: string;
  used_at: string | null;
  client_id: string;
  key_id: string | null;
  account_id: string | null;
  resource: string;
  scope: string;
  grant_expires_at: string;
  revoked_at: string | null;
}

export function findTokenWithGrant(db: Db, tokenHash: string): Promise<TokenWithGrant | undefined> {
  return db
    .selectFrom('oauth_tokens as t')
    .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
    .select([
      't.token_hash',
      't.kind',
      't.grant_id',
      't.tier',
      't.expires_at',
      't.used_at',
      'g.client_id',
      'g.key_id',
      'g.account_id',
      'g.resource',
      'g.scope',
      'g.expires_at as grant_expires_at',
      'g.revoked_at',
    ])
    .where('t.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/**
 * Returns the named secret, creating it with `candidate` when absent. Every
 * node that races here ends up with the one value that was stored first.
 */
export async function ensureSecret(db: Db, name: string, candidate: string, at: string): Promise<string> {
  await db
    .insertInto('oauth_secrets')
    .values({ name, value: candidate, created_at: at })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('oauth_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.value;
}

/**
 * Deletes what can no longer be used: codes a day past their expiry (kept a
 * while so a late replay still finds the grant to revoke), tokens past expiry,
 * grants past their family's end (with any token left), expired clients.
 */
export async function pruneExpired(db: Db, now: string, codeCutoff: string): Promise<void> {
  await db.deleteFrom('oauth_codes').where('expires_at', '<', codeCutoff).execute();
  await db.deleteFrom('oauth_tokens').where('expires_at', '<', now).execute();
  const ended = db.selectFrom('oauth_grants').select('id').where('expires_at', '<', now);
  await db.deleteFrom('oauth_tokens').where('grant_id', 'in', ended).execute();
  await db.deleteFrom('oauth_grants').where('expires_at', '<', now).execute();
  await db.deleteFrom('oauth_clients').where('expires_at', '<', now).execute();
}
