/**
 * No credential reaches the logs, wherever a client puts it: query, path
 * (plain or percent-encoded), headers, bodies, broken HTTP, or the message and
 * stack of an error that quotes the request. Checked for both loggers the
 * service has: the process logger (which serves requests in production) and
 * a request logger built from the same options.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Composition } from '../src/app.ts';
import { credentialRedactor } from '../src/http/redact.ts';
import { type LoggedApp, type LogWiring, startLoggedApp } from './support/log-capture.ts';
import { openRaw } from './support/raw-http.ts';

describe('credential redaction', () => {
  const redact = credentialRedactor('STOOP');
  const uuid = '3b683b44-9427-4057-af20-a352655c22f9';
  it.each([
    [`/v1/x?api_key=STOOP-${uuid}&page=2`, '/v1/x?api_key=[redacted]&page=2'],
    [`/v1/property/STOOP-${uuid}`, '/v1/property/STOOP-[redacted]'],
    [`/v1/property/stoop-${uuid.toUpperCase()}`, '/v1/property/STOOP-[redacted]'],
    [`/v1/x/%53TOOP%2D${uuid}`, '/v1/x/STOOP-[redacted]'],
    [`/v1/x?Api%5FKey=abc`, '/v1/x?Api_Key=[redacted]'],
    [
      '?token=a&access_token=b&code=c&client_secret=d&key=e',
      '?token=[redacted]&access_token=[redacted]&code=[redacted]&client_secret=[redacted]&key=[redacted]',
    ],
    [
      'failed: Authorization: Bearer eyJhbGciOi.J9.x-y_z~==, retrying',
      'failed: Authorization: Bearer [redacted], retrying',
    ],
    ['?q=Bearer%20abc123', '?q=Bearer [redacted]'],
    // Nothing a pattern needs: returned as is (the redactor's one-scan fast path).
    [
      '/v1/search/rentals?areas=302,137&minPrice=1000&keywords=loft',
      '/v1/search/rentals?areas=302,137&minPrice=1000&keywords=loft',
    ],
    [
      '"url":"/oauth/token","msg":"x","secret":"[redacted]"',
      '"url":"/oauth/token","msg":"x","secret":"[redacted]"',
    ],
    [
      `Unexpected token 'S', "{"a": STOOP-3b683b44-94"... is not valid JSON`,
      `Unexpected token 'S', "{"a": STOOP-[redacted]"... is not valid JSON`,
    ],
  ])('%s → %s', (text, expected) => {
    expect(redact(text)).toBe(expected);
  });

  it.each([
    'key STOOP-…c22f', // a key hint is what logs are meant to show
    '/v1/areas?monkey=1&barcode=2&keys=3',
    'This endpoint needs an API key: send "Authorization: Bearer <key>"',
    '/v1/search/rentals?areas=100%2C200&minPrice=1000',
  ])('leaves %s as it is', (text) => {
    expect(redact(text)).toBe(text);
  });
});

describe.each<LogWiring>(['process logger', 'request logger options'])('logs through the %s', (wiring) => {
  let logged: LoggedApp;
  let composition: Composition;
  let url: string;
  let lines: string[];

  beforeAll(async () => {
    logged = await startLoggedApp({
      wiring,
      captureProcessLog: true,
      env: { RATE_LIMIT_FREE: '1000' },
      // A handler failing with the request in its message, as careless code would.
      routes: (app) =>
        app.get('/test/failing', async (request) => {
          throw new Error(
            `lookup failed for ${request.url} (${String(request.headers['x-forwarded-auth'])})`,
          );
        }),
    });
    ({ composition, url, lines } = logged);
  });
  afterAll(async () => {
    await logged?.close();
  });

  it('never contain a key, token or secret, and still say what was requested', async () => {
    const services = composition.services;
    const admin = (await services.subscriptions.issue({ accountId: 'ops', tier: 'INTERNAL' })).key;
    const key = (await services.subscriptions.issue({ accountId: 'acme', tier: 'PRO' })).key;
    const madeUpKey = `STOOP-${randomUUID()}`;
    const secret = (name: string) => `${name}${randomUUID().replaceAll('-', '')}`;
    const token = secret('tok');
    const accessToken = secret('acc');
    const code = secret('code');
    const clientSecret = secret('cs');
    const shortKey = secret('k');
    const bearerToken = secret('bearer');
    const uuidOf = (apiKey: string) => apiKey.slice(apiKey.indexOf('-') + 1);
    const encoded = (apiKey: string) => `%53TOOP%2D${uuidOf(apiKey)}`;

    const call = (path: string, init: RequestInit = {}) =>
      fetch(`${url}${path}`, init).then(async (response) => {
        await response.arrayBuffer();
        return response.status;
      });
    const withKey = { headers: { authorization: `Bearer ${admin}` } };
    // Keys and tokens in query strings, under the names clients use.
    await call(`/v1/search/rentals?api_key=${key}&minPrice=1000`);
    await call(
      `/v1/areas?token=${token}&access_token=${accessToken}&code=${code}&client_secret=${clientSecret}&key=${shortKey}&API_KEY=${madeUpKey}`,
      withKey,
    );
    await call(`/v1/areas?q=${encodeURIComponent(`Bearer ${bearerToken}`)}`, withKey);
    // Keys in paths, plain and percent-encoded, on known and unknown routes.
    await call(`/v1/property/${key}`, withKey);
    await call(`/v1/nowhere/${madeUpKey}?k=${encoded(key)}`, withKey);
    await call(`/v1/building/${encoded(madeUpKey)}/scores`, withKey);
    // Keys in headers and bodies, valid or not.
    await call('/v1/usage', { headers: { authorization: `Bearer ${key}`, 'x-api-key': madeUpKey } });
    await call('/v1/usage', { headers: { authorization: `Basic ${madeUpKey}`, cookie: `key=${key}` } });
    await call('/v1/admin/keys', {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account: key, tier: 'PRO' }),
    });
    await call('/v1/admin/keys', {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: `{"account": ${key}, "tier": "PRO"`,
    });
    // MCP (a hijacked reply): the key in the header stays out, and the request still gets its one completion line.
    const mcp = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    await mcp.arrayBuffer();
    expect(mcp.status).toBe(200);
    const mcpRequestId = mcp.headers.get('x-request-id');
    // An error whose message and stack quote the URL and a credential.
    expect(
      await call(`/test/failing?api_key=${key}`, {
        headers: { 'x-forwarded-auth': `Bearer ${bearerToken}` },
      }),
    ).toBe(500);
    // HTTP the parser rejects, carrying a key.
    const raw = await openRaw(url);
    raw.write(`GET /v1/areas?api_key=${key} HTTP/1.1\r\nHost: stoop.test\r\nX-Bad: ${key}\u0001\r\n\r\n`);
    await raw.closed(2000);
    raw.destroy();
    // Process-level logging (jobs, upstream) quoting credentials.
    services.log.warn(
      {
        err: new Error(`upstream refused Bearer ${bearerToken} for ${madeUpKey}`),
        feed: `https://feed.example/odata?access_token=${accessToken}`,
      },
      `retrying https://feed.example/odata?api_key=${key}`,
    );

    const log = lines.join('');
    // The capture works, and the redacted lines still say what was asked.
    // One access line per request, at completion, saying what was asked (./src/http/access-log.ts).
    expect(log).not.toContain('incoming request');
    expect(log).toMatch(
      /"req":\{"method":"GET","url":"\/v1\/search\/rentals\?api_key=\[redacted\]&minPrice=1000"[^\n]*"res":\{"statusCode":\d{3}\},"responseTime":[\d.]+,"msg":"request completed"/,
    );
    expect(log).toContain('lookup failed for /test/failing?api_key=[redacted]');
    expect(log).toContain('retrying https://feed.example/odata?api_key=[redacted]');
    const completed = lines
      .map((line) => JSON.parse(line) as { reqId?: string; msg?: string; res?: { statusCode?: number } })
      .filter((entry) => entry.reqId === mcpRequestId && entry.msg === 'request completed');
    expect(
      completed.map((entry) => entry.res?.statusCode),
      'the /mcp completion line',
    ).toEqual([200]);
    for (const credential of [key, admin, madeUpKey]) {
      expect(log).not.toContain(uuidOf(credential));
      expect(log.toLowerCase()).not.toContain(uuidOf(credential).replaceAll('-', ''));
    }
    for (const value of [token, accessToken, code, clientSecret, shortKey, bearerToken]) {
      expect(log).not.toContain(value);
    }
  });
});
