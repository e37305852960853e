/**
 * An OAuth client for the tests, driven by oauth4webapi (a real third-party
 * implementation): discovery from a 401, registration, PKCE authorization by
 * posting the consent form as a browser would, code exchange and refresh.
 * The server publishes `http://stoop.test` as its issuer; `customFetch` sends
 * those requests to the listening test server, so every check oauth4webapi
 * makes on issuers and URLs runs unchanged.
 */
import * as oauth from 'oauth4webapi';
import { expect } from 'vitest';
import { TIERS } from '../../src/domain/tiers.ts';
import { createTestApp, type TestApp } from './app.ts';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

/** Rate limits out of the way: OAuth tests make many calls a minute and are not about REST limits. */
export const HIGH_RATE_LIMITS: Readonly<Record<string, string>> = Object.fromEntries(
  TIERS.map((tier) => [`RATE_LIMIT_${tier}`, '1000000']),
);

export interface OAuthTestSetup {
  t: TestApp;
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  /** A STARTER key of `accountId`. */
  key: string;
}

/**
 * The app (no market; loopback a trusted proxy, so tests spread requests over
 * X-Forwarded-For addresses), its discovered metadata, one registered client
 * and a STARTER key.
 */
export async function startOAuthApp(accountId: string): Promise<OAuthTestSetup> {
  const t = await createTestApp({ scale: 0, env: { ...HIGH_RATE_LIMITS, TRUSTED_PROXIES: '127.0.0.1' } });
  const as = await discover(t);
  const client = await registerClient(t, as);
  const key = (await t.ctx.subscriptions.issue({ accountId, tier: 'STARTER' })).key;
  return { t, as, client, key };
}

export function clientOptions(t: TestApp) {
  return {
    [oauth.allowInsecureRequests]: true,
    [oauth.customFetch]: (url: string, init: RequestInit) => fetch(toLocal(t, url), init),
  };
}

/** A published URL (`http://stoop.test/…`) as the test server's loopback URL. */
export function toLocal(t: TestApp, url: string): string {
  return url.startsWith(t.config.publicUrl) ? `${t.url}${url.slice(t.config.publicUrl.length)}` : url;
}

/** Follows discovery from a REST 401: WWW-Authenticate → protected-resource metadata → AS metadata. */
export async function discover(t: TestApp): Promise<oauth.AuthorizationServer> {
  const denied = await t.getAs(null, '/v1/property/x');
  expect(denied.status).toBe(401);
  const challenge = denied.headers.get('www-authenticate') ?? '';
  const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
  expect(metadataUrl).toBe(`${t.config.publicUrl}/.well-known/oauth-protected-resource`);
  const resource = await oauth.processResourceDiscoveryResponse(
    new URL(t.config.publicUrl),
    await fetch(toLocal(t, metadataUrl!)),
  );
  const issuer = new URL(resource.authorization_servers![0]!);
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...clientOptions(t) });
  return oauth.processDiscoveryResponse(issuer, response);
}

export async function registerClient(
  t: TestApp,
  as: oauth.AuthorizationServer,
  redirectUris: string[] = [REDIRECT_URI],
  name = 'Test client',
): Promise<oauth.Client> {
  const response = await oauth.dynamicClientRegistrationRequest(
    as,
    { client_name: name, redirect_uris: redirectUris, token_endpoint_auth_method: 'none' },
    clientOptions(t),
  );
  return oauth.processDynamicClientRegistrationResponse(response);
}

export interface AuthorizeOptions {
  /** An API key, 'free', or 'deny'. */
  decision: string | 'free' | 'deny';
  redirectUri?: string;
  resource?: string;
  /** Extra/overridden authorize parameters. */
  params?: Record<string, string>;
  /** Sent as X-Forwarded-For (the test app trusts loopback as a proxy when configured to). */
  forwardedFor?: string;
}

export interface ConsentForm {
  status: number;
  html: string;
  headers: Headers;
  fields: Record<string, string>;
  cookie: string | undefined;
}

/** GETs the consent page for these authorize parameters, with the form's hidden fields and the CSRF cookie. */
export async function getConsent(
  t: TestApp,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<ConsentForm> {
  const response = await fetch(`${t.url}/oauth/authorize?${new URLSearchParams(params)}`, {
    redirect: 'manual',
    headers,
  });
  const html = await response.text();
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1]!] = decodeHtml(match[2]!);
  }
  const cookie = response.headers.get('set-cookie')?.split(';')[0];
  return { status: response.status, html, headers: response.headers, fields, cookie };
}

function decodeHtml(text: string): string {
  return text
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/** POSTs the consent form as the browser would (its cookie, the page's fields, a decision). */
export function postConsent(
  t: TestApp,
  form: ConsentForm,
  decision: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${t.url}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(form.cookie ? { cookie: form.cookie } : {}),
      ...headers,
    },
    body: new URLSearchParams({ ...form.fields, ...decision }),
  });
}

export interface Authorized {
  verifier: string;
  state: string;
  redirectUri: string;
  /** The validated callback parameters (code, state, iss). */
  callback: URLSearchParams;
}

/** The whole front channel: PKCE parameters, the consent page, the decision, the callback checked by oauth4webapi. */
export async function authorize(
  t: TestApp,
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  options: AuthorizeOptions,
): Promise<Authorized> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const redirectUri = options.redirectUri ?? REDIRECT_URI;
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(options.resource ? { resource: options.resource } : {}),
    ...options.params,
  };
  const headers: Record<string, string> = options.forwardedFor
    ? { 'x-forwarded-for': options.forwardedFor }
    : {};
  const form = await getConsent(t, params, headers);
  expect(form.status, form.html).toBe(200);
  const decision: Record<string, string> =
    options.decision === 'free' || options.decision === 'deny'
      ? { action: options.decision }
      : { action: 'approve', api_key: options.decision };
  const response = await postConsent(t, form, decision, headers);
  expect(response.status, await response.clone().text()).toBe(302);
  const location = new URL(response.headers.get('location')!);
  expect(`${location.origin}${location.pathname}`).toBe(redirectUri.replace(/\?.*$/, ''));
  const callback = oauth.validateAuthResponse(as, client, location, state);
  return { verifier, state, redirectUri, callback };
}

export async function exchange(
  t: TestApp,
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  authorized: Authorized,
  additionalParameters?: Record<string, string>,
): Promise<Response> {
  return oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    authorized.callback,
    authorized.redirectUri,
    authorized.verifier,
    { ...clientOptions(t), ...(additionalParameters ? { additionalParameters } : {}) },
  );
}

export async function refresh(
  t: TestApp,
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  refreshToken: string,
): Promise<Response> {
  return oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, clientOptions(t));
}

/** POSTs a raw form to the token endpoint. */
export function tokenRequest(t: TestApp, form: Record<string, string>): Promise<Response> {
  return fetch(`${t.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
}
