/**
 * The authorization server against an attacker: codes and tokens stored only
 * hashed and never logged, single use under concurrency, CSRF protection of
 * the consent form, its headers (no framing, no caching, CSP), escaping of
 * client-supplied names, and per-IP throttles on key guessing, registration
 * and the token endpoint.
 */
import { createHash } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from './support/app.ts';
import { startLoggedApp } from './support/log-capture.ts';
import {
  authorize,
  discover,
  exchange,
  getConsent,
  postConsent,
  REDIRECT_URI,
  refresh,
  registerClient,
  startOAuthApp,
  tokenRequest,
} from './support/oauth.ts';

let t: TestApp;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let key: string;

beforeAll(async () => {
  ({ t, as, client, key } = await startOAuthApp('oauth-security'));
});
afterAll(async () => {
  await t?.close();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function authorizeParams(overrides: Record<string, string> = {}) {
  return {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
    code_challenge_method: 'S256',
    state: 'state-1',
    ...overrides,
  };
}

describe('storage', () => {
  it('stores codes and tokens only as SHA-256 hashes', async () => {
    const code = await authorize(t, as, client, { decision: key });
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await exchange(t, as, client, code),
    );
    const codes = await t.store.db.selectFrom('oauth_codes').selectAll().execute();
    const stored = await t.store.db.selectFrom('oauth_tokens').selectAll().execute();
    const everything = JSON.stringify([
      codes,
      stored,
      await t.store.db.selectFrom('oauth_grants').selectAll().execute(),
    ]);
    for (const secret of [
      code.callback.get('code')!,
      tokens.access_token,
      tokens.refresh_token!,
      code.verifier,
      key,
    ]) {
      expect(everything).not.toContain(secret);
    }
    expect(codes.map((row) => row.code_hash)).toContain(sha256(code.callback.get('code')!));
    expect(stored.map((row) => row.token_hash)).toEqual(
      expect.arrayContaining([sha256(tokens.access_token), sha256(tokens.refresh_token!)]),
    );
  });
});

describe('single use under concurrency', () => {
  it('lets exactly one of several simultaneous exchanges of a code win', async () => {
    const code = await authorize(t, as, client, { decision: key });
    const answers = await Promise.all(Array.from({ length: 6 }, () => exchange(t, as, client, code)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
  });

  it('lets at most one of several simultaneous refreshes win, and revokes the family for the rest', async () => {
    const code = await authorize(t, as, client, { decision: key });
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await exchange(t, as, client, code),
    );
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => refresh(t, as, client, tokens.refresh_token!)),
    );
    const ok = answers.filter((r) => r.status === 200);
    expect(ok.length).toBeLessThanOrEqual(1);
    expect(answers.filter((r) => r.status === 400)).toHaveLength(answers.length - ok.length);
    // Someone replayed: nothing of the family is usable any more.
    for (const response of ok) {
      const body = (await response.json()) as { access_token: string };
      expect((await t.getAs(body.access_token, '/v1/property/1')).status).toBe(401);
    }
  });
});

describe('consent form', () => {
  it('is not frameable, not cached, has a strict CSP and sets a SameSite=Strict HttpOnly cookie', async () => {
    const form = await getConsent(t, await authorizeParams());
    expect(form.status).toBe(200);
    const csp = form.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toMatch(/form-action 'self'/);
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).not.toContain('script-src');
    expect(form.headers.get('x-frame-options')).toBe('DENY');
    expect(form.headers.get('cache-control')).toBe('no-store');
    expect(form.headers.get('referrer-policy')).toBe('no-referrer');
    const cookie = form.headers.get('set-cookie') ?? '';
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(form.html).not.toContain('<script');
  });

  it('refuses a decision without the cookie, with a tampered parameter, or from another site', async () => {
    const form = await getConsent(t, await authorizeParams());
    const noCookie = await postConsent(
      t,
      { ...form, cookie: undefined },
      { action: 'approve', api_key: key },
    );
    expect(noCookie.status).toBe(400);
    expect(noCookie.headers.get('location')).toBeNull();
    const otherCookie = await postConsent(
      t,
      { ...form, cookie: 'stoop_oauth_csrf=AAAAAAAAAAAAAAAAAAAAAA' },
      {
        action: 'approve',
        api_key: key,
      },
    );
    expect(otherCookie.status).toBe(400);
    // Same CSRF token, a different (still valid) state: the token is bound to the parameters.
    const tampered = await postConsent(
      t,
      { ...form, fields: { ...form.fields, state: 'attacker' } },
      {
        action: 'approve',
        api_key: key,
      },
    );
    expect(tampered.status).toBe(400);
    expect(tampered.headers.get('location')).toBeNull();
    const crossSite = await postConsent(
      t,
      form,
      { action: 'approve', api_key: key },
      { origin: 'https://evil.example' },
    );
    expect(crossSite.status).toBe(403);
    // The genuine form still works.
    const genuine = await postConsent(t, form, { action: 'approve', api_key: key }, { origin: t.url });
    expect(genuine.status).toBe(302);
  });

  it('refuses a stale form (15 minutes on the wall clock)', async () => {
    const form = await getConsent(t, await authorizeParams());
    t.clock.advance(16 * 60_000);
    try {
      const stale = await postConsent(t, form, { action: 'free' });
      expect(stale.status).toBe(400);
      expect(await stale.text()).toContain('expired');
    } finally {
      t.clock.advance(-16 * 60_000);
    }
  });

  it('escapes what the client chose to be called', async () => {
    const evil = await registerClient(t, as, [REDIRECT_URI], '<img src=x onerror=alert(1)>"\'');
    const form = await getConsent(
      t,
      await authorizeParams({ client_id: evil.client_id, state: '"><script>x</script>' }),
    );
    expect(form.status).toBe(200);
    expect(form.html).not.toContain('<img src=x');
    expect(form.html).not.toContain('<script>x');
    expect(form.html).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;&#39;');
  });

  it('throttles wrong keys per client IP: the 11th attempt in a minute is refused even with a right key', async () => {
    const from = { 'x-forwarded-for': '203.0.113.7' };
    const form = await getConsent(t, await authorizeParams(), from);
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const wrong = await postConsent(t, form, { action: 'approve', api_key: `STOOP-${attempt}` }, from);
      expect(wrong.status).toBe(401);
    }
    const blocked = await postConsent(t, form, { action: 'approve', api_key: key }, from);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(blocked.headers.get('location')).toBeNull();
    // Another address is not affected.
    const other = { 'x-forwarded-for': '203.0.113.8' };
    const fresh = await getConsent(t, await authorizeParams(), other);
    expect((await postConsent(t, fresh, { action: 'approve', api_key: key }, other)).status).toBe(302);
  });
});

describe('throttles', () => {
  it('limits registrations and token requests per client IP with 429 and Retry-After', async () => {
    const from = { 'x-forwarded-for': '203.0.113.20' };
    let last: Response | undefined;
    for (let i = 0; i < 21; i += 1) {
      last = await fetch(`${t.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...from },
        body: JSON.stringify({ client_name: `c${i}`, redirect_uris: [REDIRECT_URI] }),
      });
    }
    expect(last!.status).toBe(429);
    expect(((await last!.json()) as { error: string }).error).toBe('slow_down');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);

    const tokenFrom = { 'x-forwarded-for': '203.0.113.21' };
    for (let i = 0; i < 61; i += 1) {
      last = await fetch(`${t.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...tokenFrom },
        body: 'grant_type=refresh_token&client_id=x&refresh_token=stoop_rt_guess',
      });
    }
    expect(last!.status).toBe(429);
    expect(last!.headers.get('retry-after')).not.toBeNull();
    // The throttle is per address.
    expect(
      (await tokenRequest(t, { grant_type: 'refresh_token', client_id: 'x', refresh_token: 'y' })).status,
    ).toBe(400);
  });
});

describe('logs', () => {
  it('never writes codes, tokens, verifiers or keys, whatever the client puts where', async () => {
    const logged = await startLoggedApp({ wiring: 'request logger options', captureProcessLog: true });
    try {
      const services = logged.composition.services;
      const app = {
        url: logged.url,
        config: services.config,
        getAs: (bearer: string | null, path: string, init: RequestInit = {}) =>
          fetch(`${logged.url}${path}`, {
            ...init,
            headers: bearer === null ? init.headers : { ...init.headers, authorization: `Bearer ${bearer}` },
          }),
      } as unknown as TestApp;
      const apiKey = (await services.subscriptions.issue({ accountId: 'logs', tier: 'STARTER' })).key;
      const loggedAs = await discover(app);
      const loggedClient = await registerClient(app, loggedAs);
      const wrong = await getConsent(app, {
        response_type: 'code',
        client_id: loggedClient.client_id,
        redirect_uri: REDIRECT_URI,
        code_challenge: 'c'.repeat(43),
        code_challenge_method: 'S256',
      });
      await postConsent(app, wrong, {
        action: 'approve',
        api_key: 'STOOP-11111111-2222-4333-8444-555555555555',
      });
      const code = await authorize(app, loggedAs, loggedClient, { decision: apiKey });
      const tokens = await oauth.processAuthorizationCodeResponse(
        loggedAs,
        loggedClient,
        await exchange(app, loggedAs, loggedClient, code),
      );
      await exchange(app, loggedAs, loggedClient, code); // a replay, logged as a 400
      await app.getAs(tokens.access_token, '/v1/property/1');
      // Clients misplace tokens: in a path segment, in a query string.
      await fetch(`${logged.url}/v1/property/${tokens.access_token}`);
      await fetch(
        `${logged.url}/v1/search/rentals?x=${tokens.refresh_token}&access_token=${tokens.access_token}`,
      );
      await fetch(
        `${logged.url}/oauth/authorize?code=${code.callback.get('code')}&code_verifier=${code.verifier}`,
      );
      const text = logged.lines.join('');
      expect(logged.lines.length).toBeGreaterThan(10);
      for (const secret of [
        tokens.access_token,
        tokens.refresh_token!,
        code.callback.get('code')!,
        code.verifier,
        apiKey,
        'STOOP-11111111-2222-4333-8444-555555555555',
      ]) {
        expect(text).not.toContain(secret);
      }
    } finally {
      await logged.close();
    }
  });
});
