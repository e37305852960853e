import type { Kysely } from 'kysely';

/**
 * The OAuth 2.1 authorization server's state (src/oauth). Instants are ISO
 * 8601 UTC text. Codes and tokens are stored only as SHA-256 hashes (hex);
 * a leaked table grants nothing.
 *
 * A grant is one authorization (a consent) and the family of every token
 * issued from it: revoking the grant (code replay, refresh-token replay)
 * invalidates all of them at once, because a token is honoured only while its
 * grant is not revoked.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oauth_clients')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('client_name', 'text', (c) => c.notNull())
    // JSON: array of redirect URI strings, compared exactly (loopback ports excepted).
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    // JSON: the registered metadata echoed back (grant_types, response_types, scope, client_uri, …).
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_clients_expires').on('oauth_clients').column('expires_at').execute();

  await db.schema
    .createTable('oauth_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    // The API key consented with; null for a "continue as Free" grant.
    .addColumn('key_id', 'text')
    .addColumn('account_id', 'text')
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    // Set once, by the one exchange that wins (conditional UPDATE); a later presentation is a replay.
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('oauth_codes_expires').on('oauth_codes').column('expires_at').execute();

  await db.schema
    .createTable('oauth_grants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    // The code it was created from: a replay of that code finds (and revokes) it.
    .addColumn('code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_id', 'text')
    .addColumn('account_id', 'text')
    // Tier of the newest token (re-read from the key at each refresh).
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    // The family's end: no refresh token of the grant outlives it (rotation does not extend it).
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('revoked_reason', 'text')
    .execute();
  await db.schema.createIndex('oauth_grants_expires').on('oauth_grants').column('expires_at').execute();

  await db.schema
    .createTable('oauth_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    // access | refresh
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text', (c) => c.notNull())
    // Fixed at issuance: an access token keeps its tier until it expires.
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    // Refresh tokens: set by the one rotation that wins; a later presentation is a replay.
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('oauth_tokens_grant').on('oauth_tokens').column('grant_id').execute();
  await db.schema.createIndex('oauth_tokens_expires').on('oauth_tokens').column('expires_at').execute();

  // Server secrets every node shares (the consent form's CSRF key), created once by whichever node asks first.
  await db.schema
    .createTable('oauth_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['oauth_secrets', 'oauth_tokens', 'oauth_grants', 'oauth_codes', 'oauth_clients']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
