/**
 * What the authorization server refuses, and how: RFC 6749 errors on the
 * token endpoint, RFC 7591 errors on registration, redirected errors on the
 * authorization endpoint once the client and redirect URI are trusted, and an
 * error page (never a redirect) when they are not.
 */
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TEST_NOW, type TestApp } from './support/app.ts';
import {
  authorize,
  exchange,
  getConsent,
  postConsent,
  REDIRECT_URI,
  startOAuthApp,
  tokenRequest,
} from './support/oauth.ts';

let t: TestApp;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let starterKey: string;

beforeAll(async () => {
  ({ t, as, client, key: starterKey } = await startOAuthApp('oauth-errors'));
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => {
  t.clock.set(TEST_NOW);
});

interface RfcError {
  error: string;
  error_description: string;
}

async function expectRfcError(response: Response, status: number, error: string): Promise<RfcError> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get('content-type')).toContain('application/json');
  const body = JSON.parse(text) as RfcError;
  expect(body.error, text).toBe(error);
  expect(typeof body.error_description).toBe('string');
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  return body;
}

async function challenge(verifier = oauth.generateRandomCodeVerifier()) {
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) };
}

async function authorizeParams(overrides: Record<string, string | undefined> = {}) {
  const { challenge: codeChallenge } = await challenge();
  const params: Record<string, string> = {};
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    code_challenge: codeChallenge,
    code_challenge_method: 'S256',
    state: 'st-1',
    ...overrides,
  };
  for (const [name, value] of Object.entries(all)) if (value !== undefined) params[name] = value;
  return params;
}

/** The error an authorize request is redirected with (the redirect target checked). */
async function redirectedError(params: Record<string, string>): Promise<URLSearchParams> {
  const response = await fetch(`${t.url}/oauth/authorize?${new URLSearchParams(params)}`, {
    redirect: 'manual',
  });
  expect(response.status, await response.clone().text()).toBe(302);
  const location = new URL(response.headers.get('location')!);
  expect(`${location.origin}${location.pathname}`).toBe(params.redirect_uri);
  expect(location.searchParams.get('iss')).toBe('http://stoop.test');
  return location.searchParams;
}

/** An authorize request shown as an error page: 400 HTML, no Location. */
async function errorPage(params: Record<string, string>): Promise<string> {
  const response = await fetch(`${t.url}/oauth/authorize?${new URLSearchParams(params)}`, {
    redirect: 'manual',
  });
  expect(response.status).toBe(400);
  expect(response.headers.get('location')).toBeNull();
  expect(response.headers.get('content-type')).toContain('text/html');
  return response.text();
}

describe('authorization endpoint: untrusted client or redirect URI → error page, never a redirect', () => {
  it('refuses a redirect URI the client did not register', async () => {
    expect(await errorPage(await authorizeParams({ redirect_uri: 'https://evil.example/cb' }))).toContain(
      'not one it registered',
    );
    // Another port is fine only for loopback URIs; another path is not.
    await errorPage(await authorizeParams({ redirect_uri: 'http://127.0.0.1:9/other' }));
  });

  it('refuses an unregistered client with a non-loopback redirect URI', async () => {
    const html = await errorPage(
      await authorizeParams({ client_id: 'some-app', redirect_uri: 'https://some-app.example/cb' }),
    );
    expect(html).toContain('loopback');
  });

  it('refuses an unknown registered-style client id, a missing client id and a missing redirect URI', async () => {
    await errorPage(await authorizeParams({ client_id: 'stoop_client_doesnotexist' }));
    await errorPage(await authorizeParams({ client_id: undefined }));
    await errorPage(await authorizeParams({ redirect_uri: undefined }));
  });

  it('refuses a repeated parameter on the page', async () => {
    const params = new URLSearchParams(await authorizeParams());
    params.append('client_id', 'other');
    const response = await fetch(`${t.url}/oauth/authorize?${params}`, { redirect: 'manual' });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('repeated');
  });
});

describe('authorization endpoint: other errors go back to the client', () => {
  it('refuses the plain PKCE method, a missing method and a missing challenge', async () => {
    const plain = await redirectedError(await authorizeParams({ code_challenge_method: 'plain' }));
    expect(plain.get('error')).toBe('invalid_request');
    expect(plain.get('error_description')).toContain('S256');
    expect(plain.get('state')).toBe('st-1');
    expect(
      (await redirectedError(await authorizeParams({ code_challenge_method: undefined }))).get('error'),
    ).toBe('invalid_request');
    expect((await redirectedError(await authorizeParams({ code_challenge: undefined }))).get('error')).toBe(
      'invalid_request',
    );
    expect((await redirectedError(await authorizeParams({ code_challenge: 'short' }))).get('error')).toBe(
      'invalid_request',
    );
  });

  it('refuses other response types, foreign resources and unknown scopes', async () => {
    expect((await redirectedError(await authorizeParams({ response_type: 'token' }))).get('error')).toBe(
      'unsupported_response_type',
    );
    expect(
      (await redirectedError(await authorizeParams({ resource: 'https://other.example/api' }))).get('error'),
    ).toBe('invalid_target');
    expect((await redirectedError(await authorizeParams({ scope: 'admin' }))).get('error')).toBe(
      'invalid_scope',
    );
  });
});

describe('consent form', () => {
  it('re-renders the page for an empty or wrong key, without redirecting', async () => {
    const form = await getConsent(t, await authorizeParams());
    const empty = await postConsent(t, form, { action: 'approve', api_key: '' });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('Enter your API key');
    const wrong = await postConsent(t, form, {
      action: 'approve',
      api_key: 'STOOP-00000000-0000-4000-8000-000000000000',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('location')).toBeNull();
    expect(await wrong.text()).toContain('not valid');
  });

  it('refuses a form that is not form-encoded', async () => {
    const response = await fetch(`${t.url}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(await authorizeParams()),
      redirect: 'manual',
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });
});

describe('token endpoint', () => {
  async function authorized() {
    return authorize(t, as, client, { decision: starterKey });
  }

  it('refuses a wrong verifier, and the code still works with the right one', async () => {
    const code = await authorized();
    const wrong = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: code.callback.get('code')!,
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      code_verifier: oauth.generateRandomCodeVerifier(),
    });
    expect((await expectRfcError(wrong, 400, 'invalid_grant')).error_description).toContain('code_verifier');
    await oauth.processAuthorizationCodeResponse(as, client, await exchange(t, as, client, code));
  });

  it('refuses a reused code and revokes the tokens the first use obtained', async () => {
    const code = await authorized();
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await exchange(t, as, client, code),
    );
    expect((await t.getAs(tokens.access_token, '/v1/property/1')).status).toBe(404);
    await expectRfcError(await exchange(t, as, client, code), 400, 'invalid_grant');
    expect((await t.getAs(tokens.access_token, '/v1/property/1')).status).toBe(401);
    const refreshed = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: client.client_id,
    });
    await expectRfcError(refreshed, 400, 'invalid_grant');
  });

  it('refuses a mismatched redirect URI, another client and an unknown code', async () => {
    const code = await authorized();
    const base = {
      grant_type: 'authorization_code',
      code: code.callback.get('code')!,
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      code_verifier: code.verifier,
    };
    await expectRfcError(
      await tokenRequest(t, { ...base, redirect_uri: 'http://127.0.0.1:9/other' }),
      400,
      'invalid_grant',
    );
    await expectRfcError(
      await tokenRequest(t, { ...base, client_id: 'another-client' }),
      400,
      'invalid_grant',
    );
    await expectRfcError(await tokenRequest(t, { ...base, code: 'stoop_ac_nope' }), 400, 'invalid_grant');
    await expectRfcError(
      await tokenRequest(t, { ...base, client_id: 'stoop_client_unknown' }),
      401,
      'invalid_client',
    );
    await expectRfcError(
      await tokenRequest(t, { ...base, resource: 'https://other.example' }),
      400,
      'invalid_target',
    );
  });

  it('refuses unknown and missing grant types, missing parameters and client secrets', async () => {
    await expectRfcError(
      await tokenRequest(t, { grant_type: 'password', client_id: 'x' }),
      400,
      'unsupported_grant_type',
    );
    await expectRfcError(await tokenRequest(t, { client_id: 'x' }), 400, 'invalid_request');
    const missing = await expectRfcError(
      await tokenRequest(t, { grant_type: 'authorization_code', client_id: 'x' }),
      400,
      'invalid_request',
    );
    expect(missing.error_description).toContain('code');
    await expectRfcError(
      await tokenRequest(t, {
        grant_type: 'refresh_token',
        client_id: 'x',
        refresh_token: 'r',
        client_secret: 's',
      }),
      401,
      'invalid_client',
    );
  });

  it('refuses JSON and other media types with RFC errors, not the REST envelope', async () => {
    const json = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code' }),
    });
    await expectRfcError(json, 400, 'invalid_request');
    const text = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'grant_type=authorization_code',
    });
    await expectRfcError(text, 400, 'invalid_request');
    const xml = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '<grant_type>authorization_code</grant_type>',
    });
    await expectRfcError(xml, 415, 'invalid_request');
    const repeated = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&grant_type=authorization_code',
    });
    await expectRfcError(repeated, 400, 'invalid_request');
    const huge = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&refresh_token=${'a'.repeat(20_000)}`,
    });
    await expectRfcError(huge, 413, 'invalid_request');
  });

  it('refuses a refresh token where an access token belongs, and the other way round', async () => {
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await exchange(t, as, client, await authorized()),
    );
    expect((await t.getAs(tokens.refresh_token!, '/v1/property/1')).status).toBe(401);
    await expectRfcError(
      await tokenRequest(t, {
        grant_type: 'refresh_token',
        refresh_token: tokens.access_token,
        client_id: client.client_id,
      }),
      400,
      'invalid_grant',
    );
    await expectRfcError(
      await tokenRequest(t, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        client_id: 'other',
      }),
      400,
      'invalid_grant',
    );
  });
});

describe('audience (RFC 8707)', () => {
  it('a token bound to /mcp is refused on the REST API with invalid_token', async () => {
    const code = await authorize(t, as, client, { decision: starterKey, resource: 'http://stoop.test/mcp' });
    await expectRfcError(
      await exchange(t, as, client, code, { resource: 'http://stoop.test' }),
      400,
      'invalid_target',
    );
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await exchange(t, as, client, code, { resource: 'http://stoop.test/mcp' }),
    );
    const rest = await t.getAs(tokens.access_token, '/v1/property/1');
    expect(rest.status).toBe(401);
    expect(rest.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(((await rest.json()) as { error: { message: string } }).error.message).toContain('/mcp');
  });

  it('a token bound to the public URL works on the REST API', async () => {
    const code = await authorize(t, as, client, { decision: starterKey, resource: 'http://stoop.test' });
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await exchange(t, as, client, code),
    );
    expect((await t.getAs(tokens.access_token, '/v1/property/1')).status).toBe(404);
  });
});

describe('registration (RFC 7591 errors)', () => {
  async function register(body: unknown, contentType = 'application/json') {
    return fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  it('refuses bad redirect URIs with invalid_redirect_uri', async () => {
    for (const uri of [
      'http://app.example/cb',
      'https://app.example/cb#frag',
      'https://user:pw@app.example/cb',
      'javascript:alert(1)',
      'not a url',
      '',
    ]) {
      await expectRfcError(
        await register({ client_name: 'x', redirect_uris: [uri] }),
        400,
        'invalid_redirect_uri',
      );
    }
    await expectRfcError(
      await register({ client_name: 'x', redirect_uris: [] }),
      400,
      'invalid_redirect_uri',
    );
    await expectRfcError(await register({ client_name: 'x' }), 400, 'invalid_redirect_uri');
    await expectRfcError(
      await register({ client_name: 'x', redirect_uris: [42] }),
      400,
      'invalid_redirect_uri',
    );
  });

  it('refuses bad metadata with invalid_client_metadata', async () => {
    const uris = { redirect_uris: [REDIRECT_URI] };
    for (const body of [
      uris,
      { ...uris, client_name: '' },
      { ...uris, client_name: 7 },
      { ...uris, client_name: 'x', token_endpoint_auth_method: 'client_secret_basic' },
      { ...uris, client_name: 'x', grant_types: ['implicit'] },
      { ...uris, client_name: 'x', grant_types: ['refresh_token'] },
      { ...uris, client_name: 'x', response_types: ['token'] },
      { ...uris, client_name: 'x', scope: 'admin' },
      [1, 2],
    ]) {
      await expectRfcError(await register(body), 400, 'invalid_client_metadata');
    }
    await expectRfcError(
      await register('client_name=x', 'application/x-www-form-urlencoded'),
      400,
      'invalid_client_metadata',
    );
    await expectRfcError(await register('{not json'), 400, 'invalid_request');
  });
});

describe('hostile input never breaks the OAuth endpoints', () => {
  const HOSTILE = [
    '',
    ' ',
    '\u0000',
    '%',
    '../../etc/passwd',
    '<script>alert(1)</script>',
    'a'.repeat(5000),
    '\u{1F600}',
    "' OR 1=1 --",
  ];

  it('answers every hostile token-endpoint and authorize value with a 4xx in the OAuth family', async () => {
    for (const [index, value] of HOSTILE.entries()) {
      // One address per value: the per-IP throttles are not what this test is about.
      const from = { 'x-forwarded-for': `198.51.100.${index + 1}` };
      for (const field of [
        'grant_type',
        'code',
        'client_id',
        'redirect_uri',
        'code_verifier',
        'refresh_token',
        'resource',
      ]) {
        const response = await fetch(`${t.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...from },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code: 'stoop_ac_x',
            client_id: client.client_id,
            redirect_uri: REDIRECT_URI,
            code_verifier: 'v'.repeat(43),
            [field]: value,
          }),
        });
        expect(response.status, `${field}=${value.slice(0, 20)}`).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
        const body = (await response.json()) as RfcError;
        expect(typeof body.error).toBe('string');
      }
      for (const field of [
        'client_id',
        'redirect_uri',
        'code_challenge',
        'state',
        'resource',
        'scope',
        'response_type',
      ]) {
        const response = await fetch(
          `${t.url}/oauth/authorize?${new URLSearchParams(await authorizeParams({ [field]: value }))}`,
          {
            redirect: 'manual',
            headers: from,
          },
        );
        expect([200, 302, 400], `${field}=${value.slice(0, 20)}`).toContain(response.status);
        await response.arrayBuffer();
      }
    }
  });
});
