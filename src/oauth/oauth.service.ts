/**
 * The authorization server's rules (issue 14; SPEC "OAuth 2.1 with PKCE"):
 * registration, authorization requests, codes, token issuance, rotation and
 * revocation, and what an access token stands for. The endpoint files
 * translate HTTP to these calls and back; every instant is the wall clock's.
 *
 * Lifetimes (fixed by the spec): access token 1 hour, refresh token 30 days,
 * authorization code 5 minutes, client registration 30 days. A grant (one
 * consent) lasts 30 days: refresh tokens are rotated on every use, and each
 * new one ends when its grant does — rotation never extends a consent past 30
 * days, after which the user is asked again.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Tier } from '../domain/tiers.ts';
import type { ApiKeyRecord, SubscriptionProvider } from '../modules/keys/subscriptions.ts';
import type { Clock } from '../platform/clock.ts';
import type { Database } from '../platform/db/tables.ts';
import { OAuthError } from './errors.ts';
import {
  type ClientRow,
  claimCode,
  claimRefreshToken,
  ensureSecret,
  findClient,
  findCode,
  findTokenWithGrant,
  insertClient,
  insertCode,
  insertGrant,
  insertTokens,
  pruneExpired,
  revokeGrant,
  revokeGrantOfCode,
  type TokenRow,
  type TokenWithGrant,
  updateGrantTier,
} from './oauth.repository.ts';

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const DAY_MS = 24 * 60 * MINUTE_MS;

export const ACCESS_TOKEN_TTL_MS = 60 * MINUTE_MS;
export const REFRESH_TOKEN_TTL_MS = 30 * DAY_MS;
export const CODE_TTL_MS = 5 * MINUTE_MS;
export const CLIENT_REGISTRATION_TTL_MS = 30 * DAY_MS;
/** How long a rendered consent form may be submitted. */
export const CONSENT_FORM_TTL_MS = 15 * MINUTE_MS;

/** Recognizable prefixes: the bearer resolver routes on them, secret scanners can match them. */
export const ACCESS_TOKEN_PREFIX = 'stoop_at_';
export const REFRESH_TOKEN_PREFIX = 'stoop_rt_';
export const CODE_PREFIX = 'stoop_ac_';
/** Every registered client's id starts so; an id without it names an unregistered (loopback-only) client. */
export const CLIENT_ID_PREFIX = 'stoop_client_';

/** The one scope: call the API and the MCP tools with the tier of the consenting key. */
export const SUPPORTED_SCOPES = ['api'] as const;
export const DEFAULT_SCOPE = 'api';
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;
const MAX_CLIENT_NAME = 200;
const MAX_CLIENT_ID = 255;
const MAX_STATE = 1024;
/** RFC 7636 §4.2: base64url of a SHA-256 digest is 43 characters; 43–128 unreserved characters allowed. */
const CODE_CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/;
const CODE_VERIFIER = CODE_CHALLENGE;
const PRUNE_INTERVAL_MS = 10 * MINUTE_MS;

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function opaque(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

function isLoopback(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** A redirect URI's problem, or null when it may be registered (https, or http on a loopback host). */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length === 0 || uri.length > MAX_URI_LENGTH) return `must be 1 to ${MAX_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (uri.includes('#')) return 'must not contain a fragment';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if (url.protocol === 'https:') return null;
  if (isLoopback(url)) return null;
  if (url.protocol === 'http:') return 'http is allowed only on localhost, 127.0.0.1 or [::1]; use https';
  return 'must be an https URL (or http on a loopback host)';
}

/**
 * Exact string match, except that a loopback redirect URI may name any port
 * (RFC 8252 §7.3: native apps listen on an ephemeral port).
 */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  let a: URL;
  let b: URL;
  try {
    a = new URL(registered);
    b = new URL(requested);
  } catch {
    return false;
  }
  if (!isLoopback(a) || !isLoopback(b) || requested.includes('#')) return false;
  a.port = '';
  b.port = '';
  return a.href === b.href;
}

export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  state: string | undefined;
  /** Canonical resource (RFC 8707) the tokens will be bound to. */
  resource: string;
  scope: string;
  /** The raw parameters, to carry through the consent form unchanged. */
  raw: Readonly<Record<string, string>>;
}

export interface ClientView {
  /** What the consent page calls the client. */
  label: string;
  registered: boolean;
}

export type AuthorizationCheck =
  | { kind: 'ok'; request: AuthorizationRequest; client: ClientView }
  /** Shown on the page (400), never redirected: the client or its redirect URI is not trusted. */
  | { kind: 'page'; title: string; message: string }
  /** Sent back to the (validated) redirect URI as an RFC 6749 §4.1.2.1 error. */
  | { kind: 'redirect'; location: string };

/** The authorize parameters the consent form carries through, in a fixed order. */
export const AUTHORIZE_PARAMETERS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'resource',
  'scope',
] as const;

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
  /** Stoop's addition: the tier the access token carries. */
  tier: Tier;
}

export interface RegistrationResponse {
  client_id: string;
  client_id_issued_at: number;
  /** Stoop's addition: when the registration ends (seconds since the epoch, like `client_id_issued_at`). */
  client_id_expires_at: number;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
  scope: string;
  [extra: string]: unknown;
}

export interface OAuthServiceOptions {
  db: Kysely<Database>;
  /** Real time: lifetimes of codes, tokens, registrations and consent forms. */
  wallClock: Clock;
  subscriptions: SubscriptionProvider;
  /** The issuer and the API's resource identifier. */
  publicUrl: string;
  /** Where a failed background prune is reported. */
  onPruneError?: (error: unknown) => void;
}

/** The tier and account a consent was given with; null: "continue as Free". */
export type Consent = ApiKeyRecord | null;

export class OAuthService {
  readonly issuer: string;
  /** The API (REST and MCP) as a resource. */
  readonly apiResource: string;
  /** The MCP endpoint only. */
  readonly mcpResource: string;
  private readonly db: Kysely<Database>;
  private readonly clock: Clock;
  private readonly subscriptions: SubscriptionProvider;
  private csrfKey: Promise<Buffer> | null = null;
  private lastPrune = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: OAuthServiceOptions) {
    this.db = options.db;
    this.clock = options.wallClock;
    this.subscriptions = options.subscriptions;
    this.issuer = options.publicUrl;
    this.apiResource = options.publicUrl;
    this.mcpResource = `${options.publicUrl}/mcp`;
  }

  now(): Date {
    return this.clock.now();
  }

  /** The key of the consent form's CSRF token: one per deployment, shared through the store. */
  consentKey(): Promise<Buffer> {
    this.csrfKey ??= ensureSecret(
      this.db,
      'consent_csrf',
      randomBytes(32).toString('base64url'),
      this.now().toISOString(),
    ).then((value) => Buffer.from(value, 'base64url'));
    // A failed read is retried by the next request instead of being cached.
    this.csrfKey.catch(() => {
      this.csrfKey = null;
    });
    return this.csrfKey;
  }

  /** The resource a request named, canonical; undefined when it is not one of ours. */
  canonicalResource(resource: string): string | undefined {
    const trimmed = resource.endsWith('/') ? resource.slice(0, -1) : resource;
    if (trimmed === this.apiResource || trimmed === this.mcpResource) return trimmed;
    return undefined;
  }

  // ── Registration (RFC 7591) ───────────────────────────────────────────────

  async register(body: unknown): Promise<RegistrationResponse> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new OAuthError('invalid_client_metadata', 'The body must be a JSON object of client metadata');
    }
    const metadata = body as Record<string, unknown>;
    const name = metadata.client_name;
    if (typeof name !== 'string' || name.trim().length === 0 || name.length > MAX_CLIENT_NAME) {
      throw new OAuthError(
        'invalid_client_metadata',
        `client_name is required: a non-empty string of at most ${MAX_CLIENT_NAME} characters`,
      );
    }
    const uris = metadata.redirect_uris;
    if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS) {
      throw new OAuthError(
        'invalid_redirect_uri',
        `redirect_uris is required: an array of 1 to ${MAX_REDIRECT_URIS} URLs`,
      );
    }
    const redirectUris: string[] = [];
    for (const [index, uri] of uris.entries()) {
      if (typeof uri !== 'string') {
        throw new OAuthError('invalid_redirect_uri', `redirect_uris[${index}] must be a string`);
      }
      const problem = redirectUriProblem(uri);
      if (problem) throw new OAuthError('invalid_redirect_uri', `redirect_uris[${index}] ${problem}`);
      redirectUris.push(uri);
    }
    const method = metadata.token_endpoint_auth_method;
    if (method !== undefined && method !== 'none') {
      throw new OAuthError(
        'invalid_client_metadata',
        'token_endpoint_auth_method must be "none": only public clients (PKCE, no client secret) are registered',
      );
    }
    const grantTypes = subsetOf(metadata.grant_types, GRANT_TYPES, 'grant_types') ?? [...GRANT_TYPES];
    if (!grantTypes.includes('authorization_code')) {
      throw new OAuthError('invalid_client_metadata', 'grant_types must include "authorization_code"');
    }
    const responseTypes = subsetOf(metadata.response_types, ['code'], 'response_types') ?? ['code'];
    let scope = DEFAULT_SCOPE;
    if (metadata.scope !== undefined) {
      if (typeof metadata.scope !== 'string') {
        throw new OAuthError('invalid_client_metadata', 'scope must be a space-separated string');
      }
      scope = this.scopeOf(metadata.scope, 'invalid_client_metadata');
    }
    const extras: Record<string, string> = {};
    for (const field of ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri'] as const) {
      const value = metadata[field];
      if (typeof value === 'string' && isWebUrl(value)) extras[field] = value;
    }
    for (const field of ['software_id', 'software_version'] as const) {
      const value = metadata[field];
      if (typeof value === 'string' && value.length <= MAX_CLIENT_NAME) extras[field] = value;
    }

    const now = this.now();
    const expires = new Date(now.getTime() + CLIENT_REGISTRATION_TTL_MS);
    const clientId = `${CLIENT_ID_PREFIX}${randomBytes(16).toString('base64url')}`;
    const echoed = {
      grant_types: grantTypes,
      response_types: responseTypes,
      token_endpoint_auth_method: 'none' as const,
      scope,
      ...extras,
    };
    await insertClient(this.db, {
      client_id: clientId,
      client_name: name,
      redirect_uris: JSON.stringify(redirectUris),
      metadata: JSON.stringify(echoed),
      created_at: now.toISOString(),
      expires_at: expires.toISOString(),
    });
    await this.maybePrune();
    return {
      client_id: clientId,
      client_id_issued_at: Math.floor(now.getTime() / SECOND_MS),
      client_id_expires_at: Math.floor(expires.getTime() / SECOND_MS),
      client_name: name,
      redirect_uris: redirectUris,
      ...echoed,
    };
  }

  // ── Authorization requests ─────────────────────────────────────────────────

  /**
   * Judges an authorization request. The client and its redirect URI come
   * first: until both are trusted nothing may be redirected (RFC 6749
   * §4.1.2.1, RFC 9700 §4.11); after that, errors go back to the client.
   */
  async checkAuthorization(params: Readonly<Record<string, string>>): Promise<AuthorizationCheck> {
    const clientId = params.client_id;
    if (clientId === undefined || clientId.length === 0) {
      return {
        kind: 'page',
        title: 'Missing client',
        message: 'The request does not name a client (client_id).',
      };
    }
    if (clientId.length > MAX_CLIENT_ID || !/^[\x21-\x7e]+$/.test(clientId)) {
      return { kind: 'page', title: 'Invalid client', message: 'The client_id is not valid.' };
    }
    const redirectUri = params.redirect_uri;
    if (redirectUri === undefined || redirectUri.length === 0) {
      return {
        kind: 'page',
        title: 'Missing redirect URI',
        message: 'The request does not say where to send you back (redirect_uri).',
      };
    }
    const client = await this.clientFor(clientId);
    if (client.kind === 'unknown') {
      return {
        kind: 'page',
        title: 'Unknown client',
        message: 'This application is not registered with Stoop, or its registration has expired.',
      };
    }
    const problem = redirectUriProblem(redirectUri);
    if (client.kind === 'registered') {
      const uris = JSON.parse(client.row.redirect_uris) as string[];
      if (problem !== null || !uris.some((uri) => redirectUriMatches(uri, redirectUri))) {
        return {
          kind: 'page',
          title: 'Redirect URI not registered',
          message: 'The address this application asked to return to is not one it registered.',
        };
      }
    } else if (problem !== null || !isLoopback(new URL(redirectUri))) {
      return {
        kind: 'page',
        title: 'Redirect URI not allowed',
        message:
          'An unregistered application may only return to a loopback address (http://localhost, http://127.0.0.1 or http://[::1]). Register the application first.',
      };
    }

    const state = params.state;
    const back = (error: OAuthError) => ({
      kind: 'redirect' as const,
      location: this.redirectWith(redirectUri, {
        error: error.code,
        error_description: error.message,
        ...(state !== undefined && state.length <= MAX_STATE ? { state } : {}),
      }),
    });
    if (params.response_type === undefined) {
      return back(new OAuthError('invalid_request', 'response_type is required (response_type=code)'));
    }
    if (params.response_type !== 'code') {
      return back(new OAuthError('unsupported_response_type', 'Only response_type=code is supported'));
    }
    if (state !== undefined && (state.length === 0 || state.length > MAX_STATE)) {
      return back(new OAuthError('invalid_request', `state must be 1 to ${MAX_STATE} characters`));
    }
    const method = params.code_challenge_method;
    if (params.code_challenge === undefined) {
      return back(new OAuthError('invalid_request', 'code_challenge is required (PKCE with S256)'));
    }
    if (method === undefined) {
      return back(new OAuthError('invalid_request', 'code_challenge_method is required and must be S256'));
    }
    if (method !== 'S256') {
      return back(
        new OAuthError('invalid_request', 'code_challenge_method must be S256 (plain is not supported)'),
      );
    }
    if (!CODE_CHALLENGE.test(params.code_challenge)) {
      return back(
        new OAuthError(
          'invalid_request',
          'code_challenge must be 43 to 128 characters of base64url (RFC 7636)',
        ),
      );
    }
    let resource = this.apiResource;
    if (params.resource !== undefined) {
      const canonical = this.canonicalResource(params.resource);
      if (canonical === undefined) {
        return back(
          new OAuthError('invalid_target', `resource must be ${this.apiResource} or ${this.mcpResource}`),
        );
      }
      resource = canonical;
    }
    let scope = client.kind === 'registered' ? clientScope(client.row) : DEFAULT_SCOPE;
    if (params.scope !== undefined) {
      try {
        scope = this.scopeOf(params.scope, 'invalid_scope');
      } catch (error) {
        if (error instanceof OAuthError) return back(error);
        throw error;
      }
    }
    const raw: Record<string, string> = {};
    for (const name of AUTHORIZE_PARAMETERS) {
      const value = params[name];
      if (value !== undefined) raw[name] = value;
    }
    return {
      kind: 'ok',
      request: { clientId, redirectUri, codeChallenge: params.code_challenge, state, resource, scope, raw },
      client: {
        label:
          client.kind === 'registered' ? client.row.client_name : `unregistered application “${clientId}”`,
        registered: client.kind === 'registered',
      },
    };
  }

  /** The redirect URI with the given parameters added (its own query kept) and `iss` (RFC 9207). */
  redirectWith(redirectUri: string, parameters: Record<string, string>): string {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries(parameters)) url.searchParams.append(name, value);
    url.searchParams.append('iss', this.issuer);
    return url.href;
  }

  /** Issues a code for a consented request: single-use, 5 minutes, stored hashed. */
  async issueCode(request: AuthorizationRequest, consent: Consent): Promise<string> {
    const code = opaque(CODE_PREFIX);
    const now = this.now();
    await insertCode(this.db, {
      code_hash: sha256Hex(code),
      client_id: request.clientId,
      redirect_uri: request.redirectUri,
      code_challenge: request.codeChallenge,
      resource: request.resource,
      scope: request.scope,
      key_id: consent?.id ?? null,
      account_id: consent?.accountId ?? null,
      tier: consent?.tier ?? 'FREE',
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + CODE_TTL_MS).toISOString(),
      used_at: null,
    });
    return code;
  }

  /** The key a user typed on the consent page, judged as a request would be. */
  async checkKey(key: string): Promise<ApiKeyRecord | 'EXPIRED' | 'INVALID'> {
    const check = await this.subscriptions.check(key, this.now());
    if (check.ok) return check.record;
    return check.reason === 'EXPIRED_API_KEY' ? 'EXPIRED' : 'INVALID';
  }

  // ── Token endpoint ─────────────────────────────────────────────────────────

  async exchangeCode(form: Readonly<Record<string, string>>): Promise<TokenResponse> {
    const code = required(form, 'code');
    const clientId = required(form, 'client_id');
    const redirectUri = required(form, 'redirect_uri');
    const verifier = required(form, 'code_verifier');
    await this.requireUsableClient(clientId);
    if (!CODE_VERIFIER.test(verifier)) {
      throw new OAuthError(
        'invalid_request',
        'code_verifier must be 43 to 128 unreserved characters (RFC 7636)',
      );
    }
    const codeHash = sha256Hex(code);
    const row = await findCode(this.db, codeHash);
    const now = this.now();
    const at = now.toISOString();
    if (!row) throw new OAuthError('invalid_grant', 'The authorization code is not valid');
    if (row.used_at !== null) {
      // RFC 9700 §4.2.4 / OAuth 2.1 §4.1.3: a second use revokes what the first one obtained.
      await revokeGrantOfCode(this.db, codeHash, at, 'code_replay');
      throw new OAuthError('invalid_grant', 'The authorization code was already used');
    }
    if (row.expires_at <= at) throw new OAuthError('invalid_grant', 'The authorization code has expired');
    if (row.client_id !== clientId) {
      throw new OAuthError('invalid_grant', 'The authorization code was issued to another client');
    }
    if (row.redirect_uri !== redirectUri) {
      throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request');
    }
    if (form.resource !== undefined && this.canonicalResource(form.resource) !== row.resource) {
      throw new OAuthError('invalid_target', 'resource does not match the authorization request');
    }
    if (!pkceMatches(verifier, row.code_challenge)) {
      throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
    }
    const response = await this.db.transaction().execute(async (trx) => {
      if (!(await claimCode(trx, codeHash, at))) return null;
      const grantId = randomUUID();
      const grantEnds = new Date(now.getTime() + REFRESH_TOKEN_TTL_MS);
      await insertGrant(trx, {
        id: grantId,
        client_id: clientId,
        code_hash: codeHash,
        key_id: row.key_id,
        account_id: row.account_id,
        tier: row.tier,
        resource: row.resource,
        scope: row.scope,
        created_at: at,
        expires_at: grantEnds.toISOString(),
        revoked_at: null,
        revoked_reason: null,
      });
      const issued = issueTokens(grantId, row.tier, now, grantEnds);
      await insertTokens(trx, issued.rows);
      return { ...issued.response, scope: row.scope };
    });
    // Another exchange of the same code won the race: this one is the replay.
    if (response === null) throw new OAuthError('invalid_grant', 'The authorization code was already used');
    await this.maybePrune();
    return response;
  }

  async refresh(form: Readonly<Record<string, string>>): Promise<TokenResponse> {
    const refreshToken = required(form, 'refresh_token');
    const clientId = required(form, 'client_id');
    await this.requireUsableClient(clientId);
    const tokenHash = sha256Hex(refreshToken);
    const row = await findTokenWithGrant(this.db, tokenHash);
    const now = this.now();
    const at = now.toISOString();
    if (row?.kind !== 'refresh') throw new OAuthError('invalid_grant', 'The refresh token is not valid');
    if (row.client_id !== clientId) {
      throw new OAuthError('invalid_grant', 'The refresh token was issued to another client');
    }
    if (row.used_at !== null) {
      // A rotated-out token came back: someone holds a copy. End the whole family (RFC 9700 §4.14.2).
      await revokeGrant(this.db, row.grant_id, at, 'refresh_replay');
      throw new OAuthError('invalid_grant', 'The refresh token was already used; the grant is revoked');
    }
    if (row.revoked_at !== null) throw new OAuthError('invalid_grant', 'The grant was revoked');
    if (row.expires_at <= at || row.grant_expires_at <= at) {
      throw new OAuthError('invalid_grant', 'The refresh token has expired');
    }
    if (form.resource !== undefined && this.canonicalResource(form.resource) !== row.resource) {
      throw new OAuthError('invalid_target', 'resource does not match the grant');
    }
    if (form.scope !== undefined) {
      const asked = this.scopeOf(form.scope, 'invalid_scope').split(' ');
      if (asked.some((scope) => !row.scope.split(' ').includes(scope))) {
        throw new OAuthError('invalid_scope', 'scope may not exceed the scope of the grant');
      }
    }
    // The key is judged again: tier changes apply now, a revoked or ended key ends the grant's use.
    let tier: Tier = row.tier;
    if (row.key_id !== null) {
      const check = await this.subscriptions.checkById(row.key_id, now);
      if (!check.ok) {
        throw new OAuthError(
          'invalid_grant',
          check.reason === 'EXPIRED_API_KEY'
            ? 'The subscription of the API key behind this grant has ended'
            : 'The API key behind this grant is no longer valid',
        );
      }
      tier = check.record.tier;
    }
    const grantEnds = new Date(row.grant_expires_at);
    const response = await this.db.transaction().execute(async (trx) => {
      if (!(await claimRefreshToken(trx, tokenHash, at))) {
        await revokeGrant(trx, row.grant_id, at, 'refresh_replay');
        return null;
      }
      if (tier !== row.tier) await updateGrantTier(trx, row.grant_id, tier);
      const issued = issueTokens(row.grant_id, tier, now, grantEnds);
      await insertTokens(trx, issued.rows);
      return { ...issued.response, scope: row.scope };
    });
    if (response === null) {
      throw new OAuthError('invalid_grant', 'The refresh token was already used; the grant is revoked');
    }
    return response;
  }

  // ── Bearer use ─────────────────────────────────────────────────────────────

  /** The live access token behind a bearer string, or why it is refused. */
  async accessToken(token: string): Promise<TokenWithGrant | 'expired' | 'invalid'> {
    const row = await findTokenWithGrant(this.db, sha256Hex(token));
    if (row?.kind !== 'access' || row.revoked_at !== null) return 'invalid';
    if (row.expires_at <= this.now().toISOString()) return 'expired';
    return row;
  }

  // ── Housekeeping ───────────────────────────────────────────────────────────

  /** Deletes expired rows, at most once per interval per process: a few indexed deletes. */
  async maybePrune(): Promise<void> {
    const now = this.now();
    if (Math.abs(now.getTime() - this.lastPrune) < PRUNE_INTERVAL_MS) return;
    this.lastPrune = now.getTime();
    try {
      await pruneExpired(this.db, now.toISOString(), new Date(now.getTime() - DAY_MS).toISOString());
    } catch (error) {
      this.options.onPruneError?.(error);
    }
  }

  private async clientFor(
    clientId: string,
  ): Promise<{ kind: 'registered'; row: ClientRow } | { kind: 'unregistered' } | { kind: 'unknown' }> {
    if (!clientId.startsWith(CLIENT_ID_PREFIX)) return { kind: 'unregistered' };
    const row = await findClient(this.db, clientId);
    if (!row || row.expires_at <= this.now().toISOString()) return { kind: 'unknown' };
    return { kind: 'registered', row };
  }

  private async requireUsableClient(clientId: string): Promise<void> {
    const client = await this.clientFor(clientId);
    if (client.kind === 'unknown') {
      throw new OAuthError('invalid_client', 'The client is not registered, or its registration has expired');
    }
  }

  /** A requested scope, normalized; every value must be supported. */
  private scopeOf(scope: string, code: 'invalid_scope' | 'invalid_client_metadata'): string {
    const values = scope.split(' ').filter((value) => value.length > 0);
    const unknown = values.filter((value) => !(SUPPORTED_SCOPES as readonly string[]).includes(value));
    if (unknown.length > 0) {
      throw new OAuthError(
        code,
        `Unsupported scope ${JSON.stringify(unknown[0])}; supported: ${SUPPORTED_SCOPES.join(' ')}`,
      );
    }
    return values.length === 0 ? DEFAULT_SCOPE : [...new Set(values)].join(' ');
  }
}

function clientScope(row: ClientRow): string {
  const metadata = JSON.parse(row.metadata) as { scope?: unknown };
  return typeof metadata.scope === 'string' ? metadata.scope : DEFAULT_SCOPE;
}

function required(form: Readonly<Record<string, string>>, name: string): string {
  const value = form[name];
  if (value === undefined || value.length === 0)
    throw new OAuthError('invalid_request', `${name} is required`);
  return value;
}

function subsetOf(value: unknown, allowed: readonly string[], field: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string')) {
    throw new OAuthError('invalid_client_metadata', `${field} must be a non-empty array of strings`);
  }
  const unsupported = (value as string[]).filter((v) => !allowed.includes(v));
  if (unsupported.length > 0) {
    throw new OAuthError(
      'invalid_client_metadata',
      `${field} may contain only ${allowed.join(', ')} (got ${JSON.stringify(unsupported[0])})`,
    );
  }
  return [...new Set(value as string[])];
}

function isWebUrl(value: string): boolean {
  if (value.length > MAX_URI_LENGTH) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** RFC 7636 §4.6, compared in constant time. */
function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

function issueTokens(
  grantId: string,
  tier: Tier,
  now: Date,
  grantEnds: Date,
): { rows: TokenRow[]; response: Omit<TokenResponse, 'scope'> } {
  const accessToken = opaque(ACCESS_TOKEN_PREFIX);
  const refreshToken = opaque(REFRESH_TOKEN_PREFIX);
  const accessEnds = new Date(Math.min(now.getTime() + ACCESS_TOKEN_TTL_MS, grantEnds.getTime()));
  const at = now.toISOString();
  return {
    rows: [
      {
        token_hash: sha256Hex(accessToken),
        kind: 'access',
        grant_id: grantId,
        tier,
        created_at: at,
        expires_at: accessEnds.toISOString(),
        used_at: null,
      },
      {
        token_hash: sha256Hex(refreshToken),
        kind: 'refresh',
        grant_id: grantId,
        tier,
        created_at: at,
        expires_at: grantEnds.toISOString(),
        used_at: null,
      },
    ],
    response: {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: Math.max(0, Math.round((accessEnds.getTime() - now.getTime()) / SECOND_MS)),
      refresh_token: refreshToken,
      tier,
    },
  };
}
