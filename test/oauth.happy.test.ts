/**
 * The OAuth 2.1 flow end to end, driven by oauth4webapi as the client:
 * discovery from a REST 401, registration, PKCE authorization through the
 * consent form, code exchange, API calls with the access token, refresh with
 * rotation and replay detection, lifetimes on the (fake) wall clock, and key
 * changes applying at the next refresh.
 */
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, TEST_NOW, type TestApp } from './support/app.ts';
import {
  authorize,
  discover,
  exchange,
  getConsent,
  HIGH_RATE_LIMITS,
  postConsent,
  REDIRECT_URI,
  refresh,
  registerClient,
  toLocal,
} from './support/oauth.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let t: TestApp;
let as: oauth.AuthorizationServer;

beforeAll(async () => {
  t = await createTestApp({ scale: 0, env: { ...HIGH_RATE_LIMITS } });
  as = await discover(t);
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => {
  t.clock.set(TEST_NOW);
});

async function issueKey(tier: 'FREE' | 'STARTER' | 'PRO', account: string) {
  return t.ctx.subscriptions.issue({ accountId: account, tier });
}

async function tokensFor(decision: string, client?: oauth.Client, resource?: string) {
  const registered = client ?? (await registerClient(t, as));
  const authorized = await authorize(t, as, registered, { decision, ...(resource ? { resource } : {}) });
  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    registered,
    await exchange(t, as, registered, authorized),
  );
  return { client: registered, tokens };
}

describe('discovery', () => {
  it('publishes RFC 8414 server metadata naming every endpoint, S256 only', () => {
    expect(as).toMatchObject({
      issuer: 'http://stoop.test',
      authorization_endpoint: 'http://stoop.test/oauth/authorize',
      token_endpoint: 'http://stoop.test/oauth/token',
      registration_endpoint: 'http://stoop.test/oauth/register',
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['api'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: 'http://stoop.test/docs',
    });
  });

  it('publishes protected-resource metadata for the API and for /mcp, and the AS metadata at the path-inserted form', async () => {
    const api = await oauth.processResourceDiscoveryResponse(
      new URL('http://stoop.test'),
      await fetch(`${t.url}/.well-known/oauth-protected-resource`),
    );
    expect(api).toMatchObject({
      authorization_servers: ['http://stoop.test'],
      bearer_methods_supported: ['header'],
    });
    const mcp = await oauth.processResourceDiscoveryResponse(
      new URL('http://stoop.test/mcp'),
      await oauth.resourceDiscoveryRequest(new URL('http://stoop.test/mcp'), {
        [oauth.allowInsecureRequests]: true,
        [oauth.customFetch]: (url: string, init: RequestInit) => fetch(toLocal(t, url), init),
      }),
    );
    expect(mcp.resource).toBe('http://stoop.test/mcp');
    const inserted = (await (await fetch(`${t.url}/.well-known/oauth-authorization-server/mcp`)).json()) as {
      issuer: string;
    };
    expect(inserted.issuer).toBe('http://stoop.test');
  });
});

describe('OpenAPI', () => {
  it('documents every OAuth endpoint, with the form fields of the form-encoded ones', async () => {
    type Schema = { properties?: Record<string, unknown>; $ref?: string };
    type Operation = {
      requestBody?: { content: Record<string, { schema: Schema }> };
      security?: unknown[];
    };
    const document = (await (await t.get('/openapi.json')).json()) as {
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, Schema> };
    };
    const operation = (path: string, method: string) => document.paths[path]?.[method];
    // A body identical to a component is a reference to it.
    const resolved = (schema: Schema | undefined) =>
      schema?.$ref ? document.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema;
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-authorization-server/mcp',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/oauth/authorize',
    ]) {
      expect(operation(path, 'get'), path).toBeDefined();
    }
    const form = (path: string) =>
      Object.keys(
        resolved(operation(path, 'post')?.requestBody?.content['application/x-www-form-urlencoded']?.schema)
          ?.properties ?? {},
      );
    expect(form('/oauth/token')).toEqual(
      expect.arrayContaining([
        'grant_type',
        'code',
        'code_verifier',
        'redirect_uri',
        'refresh_token',
        'client_id',
      ]),
    );
    expect(form('/oauth/authorize')).toEqual(
      expect.arrayContaining(['csrf_token', 'action', 'api_key', 'client_id']),
    );
    expect(
      Object.keys(
        resolved(operation('/oauth/register', 'post')?.requestBody?.content['application/json']?.schema)
          ?.properties ?? {},
      ),
    ).toEqual(expect.arrayContaining(['client_name', 'redirect_uris']));
    expect(operation('/oauth/token', 'post')?.security).toEqual([]);
  });
});

describe('registration', () => {
  it('returns a client id, its issue time and its expiry 30 days later', async () => {
    const client = await registerClient(t, as, [REDIRECT_URI, 'https://app.example/cb'], 'Cursor');
    expect(client.client_id).toMatch(/^stoop_client_/);
    expect(client.client_id_issued_at).toBe(TEST_NOW.getTime() / 1000);
    expect(client.client_id_expires_at).toBe((TEST_NOW.getTime() + 30 * DAY) / 1000);
    expect(client).toMatchObject({
      client_name: 'Cursor',
      redirect_uris: [REDIRECT_URI, 'https://app.example/cb'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
  });
});

describe('authorization code flow', () => {
  it('issues tokens for a STARTER key that call Starter endpoints with its account budget', async () => {
    const key = await issueKey('STARTER', 'oauth-starter');
    const { tokens } = await tokensFor(key.key);
    expect(tokens.access_token).toMatch(/^stoop_at_[A-Za-z0-9_-]{43}$/);
    expect(tokens.refresh_token).toMatch(/^stoop_rt_[A-Za-z0-9_-]{43}$/);
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'api', tier: 'STARTER' });

    // A 404 for an unknown listing: access (Starter+) was granted.
    const property = await t.getAs(tokens.access_token, '/v1/property/1');
    expect(property.status).toBe(404);
    const history = await t.getAs(tokens.access_token, '/v1/property/1/history');
    expect(history.status).toBe(403);
    expect(((await history.json()) as { error: { code: string } }).error.code).toBe('TIER_RESTRICTED');

    // Metered on the key's account: the token and the key draw on one monthly count.
    const before = Number(property.headers.get('x-quota-used'));
    const viaKey = await t.getAs(key.key, '/v1/property/1');
    expect(Number(viaKey.headers.get('x-quota-used'))).toBe(before + 1);
  });

  it('answers the token request with no-store', async () => {
    const key = await issueKey('STARTER', 'oauth-no-store');
    const client = await registerClient(t, as);
    const authorized = await authorize(t, as, client, { decision: key.key });
    const response = await exchange(t, as, client, authorized);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('pragma')).toBe('no-cache');
  });

  it('gives a "Continue as Free" grant the Free tier, metered by client IP like anonymous calls', async () => {
    const { tokens } = await tokensFor('free');
    expect(tokens.tier).toBe('FREE');
    const property = await t.getAs(tokens.access_token, '/v1/property/1');
    expect(property.status).toBe(403);
    expect(((await property.json()) as { error: { code: string } }).error.code).toBe('TIER_RESTRICTED');
    const search = await t.getAs(tokens.access_token, '/v1/search/rentals?perPage=1');
    expect(search.status).toBe(200);
    const anonymous = await t.getAs(null, '/v1/search/rentals?perPage=1');
    expect(Number(anonymous.headers.get('x-quota-used'))).toBe(
      Number(search.headers.get('x-quota-used')) + 1,
    );
  });

  it('lets an unregistered client use a loopback redirect URI, and a registered loopback URI any port', async () => {
    const key = await issueKey('STARTER', 'oauth-loopback');
    const unregistered: oauth.Client = { client_id: 'my-cli-tool', token_endpoint_auth_method: 'none' };
    const authorized = await authorize(t, as, unregistered, {
      decision: key.key,
      redirectUri: 'http://localhost:41234/callback',
    });
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      unregistered,
      await exchange(t, as, unregistered, authorized),
    );
    expect(tokens.tier).toBe('STARTER');

    const registered = await registerClient(t, as, ['http://127.0.0.1/callback']);
    const otherPort = await authorize(t, as, registered, {
      decision: key.key,
      redirectUri: 'http://127.0.0.1:53111/callback',
    });
    await oauth.processAuthorizationCodeResponse(
      as,
      registered,
      await exchange(t, as, registered, otherPort),
    );
  });

  it('sends a denial back as access_denied with state and iss', async () => {
    const client = await registerClient(t, as);
    await expect(authorize(t, as, client, { decision: 'deny' })).rejects.toMatchObject({
      code: oauth.AUTHORIZATION_RESPONSE_ERROR,
      error: 'access_denied',
    });
  });
});

describe('refresh', () => {
  it('rotates the refresh token on every use; replaying an old one revokes the whole grant', async () => {
    const key = await issueKey('STARTER', 'oauth-rotation');
    const { client, tokens } = await tokensFor(key.key);
    const first = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refresh(t, as, client, tokens.refresh_token!),
    );
    expect(first.refresh_token).not.toBe(tokens.refresh_token);
    expect(first.access_token).not.toBe(tokens.access_token);
    const second = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refresh(t, as, client, first.refresh_token!),
    );
    expect((await t.getAs(second.access_token, '/v1/property/1')).status).toBe(404);

    // The first refresh token again: someone holds a copy.
    const replay = await refresh(t, as, client, first.refresh_token!);
    await expect(oauth.processRefreshTokenResponse(as, client, replay)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    const newest = await t.getAs(second.access_token, '/v1/property/1');
    expect(newest.status).toBe(401);
    expect(newest.headers.get('www-authenticate')).toContain('error="invalid_token"');
    await expect(
      oauth.processRefreshTokenResponse(as, client, await refresh(t, as, client, second.refresh_token!)),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('applies a tier change of the key at the next refresh', async () => {
    const key = await issueKey('STARTER', 'oauth-upgrade');
    const { client, tokens } = await tokensFor(key.key);
    await t.ctx.subscriptions.setTier(key.id, 'PRO');
    // The access token keeps the tier it was issued with…
    expect((await t.getAs(tokens.access_token, '/v1/property/1/history')).status).toBe(403);
    // …the refreshed one has the new tier.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refresh(t, as, client, tokens.refresh_token!),
    );
    expect(refreshed.tier).toBe('PRO');
    expect((await t.getAs(refreshed.access_token, '/v1/property/1/history')).status).toBe(404);
  });

  it('after key revocation the access token works until it expires; the next refresh fails', async () => {
    const key = await issueKey('STARTER', 'oauth-revoked');
    const { client, tokens } = await tokensFor(key.key);
    await t.ctx.subscriptions.setStatus(key.id, 'revoked');
    expect((await t.getAs(key.key, '/v1/property/1')).status).toBe(401);
    expect((await t.getAs(tokens.access_token, '/v1/property/1')).status).toBe(404);
    await expect(
      oauth.processRefreshTokenResponse(as, client, await refresh(t, as, client, tokens.refresh_token!)),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
    t.clock.advance(HOUR);
    expect((await t.getAs(tokens.access_token, '/v1/property/1')).status).toBe(401);
  });
});

describe('lifetimes on the wall clock', () => {
  it('expires the access token after 1 hour, refresh still works within 30 days, not after', async () => {
    const key = await issueKey('STARTER', 'oauth-expiry');
    // An unregistered (loopback) client: its registration cannot be what ends first.
    const client: oauth.Client = { client_id: 'expiry-cli', token_endpoint_auth_method: 'none' };
    const authorized = await authorize(t, as, client, {
      decision: key.key,
      redirectUri: 'http://[::1]:8123/cb',
    });
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await exchange(t, as, client, authorized),
    );
    t.clock.advance(HOUR - 1000);
    expect((await t.getAs(tokens.access_token, '/v1/property/1')).status).toBe(404);
    t.clock.advance(1000);
    const expired = await t.getAs(tokens.access_token, '/v1/property/1');
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as { error: { message: string } }).error.message).toContain('expired');

    t.clock.set(TEST_NOW.getTime() + 29 * DAY);
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refresh(t, as, client, tokens.refresh_token!),
    );
    expect((await t.getAs(refreshed.access_token, '/v1/property/1')).status).toBe(404);
    // Rotation does not extend the grant: 30 days after consent, its refresh tokens end.
    t.clock.set(TEST_NOW.getTime() + 30 * DAY);
    await expect(
      oauth.processRefreshTokenResponse(as, client, await refresh(t, as, client, refreshed.refresh_token!)),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('expires the authorization code after 5 minutes', async () => {
    const key = await issueKey('STARTER', 'oauth-code-expiry');
    const client = await registerClient(t, as);
    const authorized = await authorize(t, as, client, { decision: key.key });
    t.clock.advance(5 * 60_000);
    await expect(
      oauth.processAuthorizationCodeResponse(as, client, await exchange(t, as, client, authorized)),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('prunes what can no longer be used: codes a day past expiry, expired tokens, ended grants and clients', async () => {
    const key = await issueKey('STARTER', 'oauth-prune');
    const { tokens } = await tokensFor(key.key);
    const count = async (table: 'oauth_codes' | 'oauth_tokens' | 'oauth_grants' | 'oauth_clients') =>
      Number(
        (
          await t.store.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await count('oauth_tokens')).toBeGreaterThan(0);
    // Past every lifetime; the next registration prunes (at most once per 10 minutes per process).
    t.clock.advance(31 * DAY);
    await registerClient(t, as);
    expect(await count('oauth_codes')).toBe(0);
    expect(await count('oauth_tokens')).toBe(0);
    expect(await count('oauth_grants')).toBe(0);
    expect(await count('oauth_clients')).toBe(1);
    expect((await t.getAs(tokens.access_token, '/v1/property/1')).status).toBe(401);
  });

  it('ends a registration after 30 days', async () => {
    const client = await registerClient(t, as);
    t.clock.advance(30 * DAY);
    const page = await fetch(
      `${t.url}/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: REDIRECT_URI,
        code_challenge: 'a'.repeat(43),
        code_challenge_method: 'S256',
      })}`,
      { redirect: 'manual' },
    );
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('registration has expired');
  });
});

describe('the MCP SDK client', () => {
  /** What an MCP client keeps: its registration, PKCE verifier, tokens, and where it would send the user. */
  class MemoryProvider implements OAuthClientProvider {
    client: OAuthClientInformationMixed | undefined;
    saved: OAuthTokens | undefined;
    verifier = '';
    authorizationUrl: URL | undefined;
    get redirectUrl() {
      return 'http://127.0.0.1:33418/oauth/callback';
    }
    get clientMetadata() {
      return {
        client_name: 'SDK client',
        redirect_uris: [this.redirectUrl],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
    }
    state() {
      return 'sdk-state';
    }
    clientInformation() {
      return this.client;
    }
    saveClientInformation(info: OAuthClientInformationMixed) {
      this.client = info;
    }
    tokens() {
      return this.saved;
    }
    saveTokens(tokens: OAuthTokens) {
      this.saved = tokens;
    }
    redirectToAuthorization(url: URL) {
      this.authorizationUrl = url;
    }
    saveCodeVerifier(verifier: string) {
      this.verifier = verifier;
    }
    codeVerifier() {
      return this.verifier;
    }
  }

  it('discovers from /mcp, registers, authorizes for the MCP resource and refreshes', async () => {
    const key = await issueKey('STARTER', 'oauth-sdk');
    const provider = new MemoryProvider();
    const fetchFn = (url: string | URL, init?: RequestInit) => fetch(toLocal(t, String(url)), init);
    const serverUrl = 'http://stoop.test/mcp';
    await expect(auth(provider, { serverUrl, fetchFn })).resolves.toBe('REDIRECT');
    const url = provider.authorizationUrl!;
    expect(url.origin + url.pathname).toBe('http://stoop.test/oauth/authorize');
    expect(url.searchParams.get('resource')).toBe('http://stoop.test/mcp');
    expect(provider.client?.client_id).toMatch(/^stoop_client_/);

    const form = await getConsent(t, Object.fromEntries(url.searchParams));
    expect(form.status, form.html).toBe(200);
    const decision = await postConsent(t, form, { action: 'approve', api_key: key.key });
    const callback = new URL(decision.headers.get('location')!);
    expect(callback.searchParams.get('state')).toBe('sdk-state');
    const code = callback.searchParams.get('code')!;
    await expect(auth(provider, { serverUrl, fetchFn, authorizationCode: code })).resolves.toBe('AUTHORIZED');
    const first = provider.saved!;
    expect(first.access_token).toMatch(/^stoop_at_/);

    // Bound to the MCP endpoint: refused on REST, accepted by /mcp.
    expect((await t.getAs(first.access_token, '/v1/property/1')).status).toBe(401);
    const mcp = await t.getAs(first.access_token, '/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(mcp.status).not.toBe(401);

    // With a refresh token the SDK refreshes (and the refresh token rotates).
    await expect(auth(provider, { serverUrl, fetchFn })).resolves.toBe('AUTHORIZED');
    expect(provider.saved!.refresh_token).not.toBe(first.refresh_token);
    expect(provider.saved!.access_token).not.toBe(first.access_token);
  });
});

describe('the wall clock, never the market clock', () => {
  it('judges codes and tokens on the wall clock even when the market clock runs a year ahead', async () => {
    const skewed = await createTestApp({
      scale: 0,
      env: { ...HIGH_RATE_LIMITS },
      marketClock: (wall) => ({ now: () => new Date(wall.now().getTime() + 365 * DAY) }),
    });
    try {
      const skewedAs = await discover(skewed);
      const key = await skewed.ctx.subscriptions.issue({ accountId: 'oauth-clocks', tier: 'STARTER' });
      const client = await registerClient(skewed, skewedAs);
      expect(client.client_id_issued_at).toBe(TEST_NOW.getTime() / 1000);
      const authorized = await authorize(skewed, skewedAs, client, { decision: key.key });
      const tokens = await oauth.processAuthorizationCodeResponse(
        skewedAs,
        client,
        await exchange(skewed, skewedAs, client, authorized),
      );
      skewed.clock.advance(HOUR - 1000);
      expect((await skewed.getAs(tokens.access_token, '/v1/property/1')).status).toBe(404);
      skewed.clock.advance(1000);
      expect((await skewed.getAs(tokens.access_token, '/v1/property/1')).status).toBe(401);
    } finally {
      await skewed.close();
    }
  });
});
