/**
 * Cross-origin access: browser-based MCP clients may call OAuth discovery,
 * registration, the token endpoint (any origin) and /mcp (own and loopback
 * origins only, reading the 401's WWW-Authenticate); nothing else is opened.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0 });
});
afterAll(async () => {
  await t?.close();
});

const INSPECTOR = 'http://localhost:6274';
const FOREIGN = 'https://evil.example';

function preflight(path: string, origin: string, method = 'POST'): Promise<Response> {
  return fetch(`${t.url}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization,content-type,mcp-protocol-version',
    },
  });
}

describe('OAuth discovery, registration and token: any origin', () => {
  it.each([
    '/.well-known/oauth-authorization-server',
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-protected-resource/mcp',
  ])('GET %s answers with Access-Control-Allow-Origin: *', async (path) => {
    const response = await fetch(`${t.url}${path}`, { headers: { origin: FOREIGN } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });

  it.each(['/oauth/register', '/oauth/token'])('preflight of POST %s is allowed', async (path) => {
    const response = await preflight(path, FOREIGN);
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
  });
});

describe('/mcp: own and loopback origins only', () => {
  it('a loopback page gets the 401 with its challenge readable', async () => {
    const allowed = await preflight('/mcp', INSPECTOR);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(INSPECTOR);
    expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');

    const response = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { origin: INSPECTOR, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('access-control-allow-origin')).toBe(INSPECTOR);
    expect(response.headers.get('access-control-expose-headers')?.toLowerCase()).toContain(
      'www-authenticate',
    );
    expect(response.headers.get('www-authenticate')).toContain('/.well-known/oauth-protected-resource/mcp');
  });

  it('a foreign page gets no CORS grant, preflight or not', async () => {
    const refused = await preflight('/mcp', FOREIGN);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const response = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        origin: FOREIGN,
        'content-type': 'application/json',
        authorization: `Bearer ${t.internalKey}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('everything else stays same-origin', () => {
  it.each(['/v1/areas?level=1', '/v1/health', '/oauth/authorize'])(
    '%s carries no CORS grant',
    async (path) => {
      const response = await fetch(`${t.url}${path}`, { headers: { origin: INSPECTOR } });
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      const refused = await preflight(path.split('?')[0]!, INSPECTOR, 'GET');
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    },
  );
});

describe('the protocol details', () => {
  it('a preflight says methods, headers and max age; the granting paths vary on Origin, others do not', async () => {
    const allowed = await preflight('/mcp', INSPECTOR, 'DELETE');
    expect(allowed.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE');
    expect(allowed.headers.get('access-control-max-age')).toBe('600');
    expect(allowed.headers.get('vary')).toBe('Origin');
    expect(await allowed.text()).toBe('');
    const refused = await preflight('/mcp', FOREIGN);
    expect(refused.headers.get('vary')).toBe('Origin');
    const discovery = await fetch(`${t.url}/.well-known/oauth-authorization-server`);
    expect(discovery.headers.get('access-control-allow-origin')).toBe('*');
    expect(discovery.headers.get('vary')).toContain('Origin');
    const search = await t.get('/v1/search/rentals', { headers: { origin: INSPECTOR } });
    expect(search.status).toBe(200);
    expect(search.headers.get('vary')).toBe('Accept');
  });

  it('an OPTIONS request that is not a preflight is an unknown route, in the error envelope', async () => {
    for (const headers of [{}, { origin: INSPECTOR }] as Record<string, string>[]) {
      const response = await fetch(`${t.url}/mcp`, { method: 'OPTIONS', headers });
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    }
  });
});
