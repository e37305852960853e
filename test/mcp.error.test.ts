/**
 * The MCP endpoint's failures: authentication (401 with the challenge MCP
 * clients discover OAuth from), the HTTP methods it does not offer, Origin
 * checks (DNS rebinding), bodies that are not JSON-RPC, and tool calls that
 * fail for expected reasons — each a tool error a model can act on, never a
 * JSON-RPC internal error or a 500.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { dropRedisNamespace, isolatedLimitsEnv } from './support/server-process.ts';

let t: TestApp;
const isolated = isolatedLimitsEnv();
let starterKey: string;

beforeAll(async () => {
  t = await createTestApp({
    scale: 0.002,
    env: {
      ...isolated,
      // Three requests a minute: the rate case (anonymous requests here stay below it).
      RATE_LIMIT_FREE: '3',
      RATE_LIMIT_STARTER: '100000',
      // A Pro account runs out after two counted calls (no overage): the quota case.
      MONTHLY_QUOTA_PRO: '2',
      OVERAGE_LIMIT_PRO: '0',
      RATE_LIMIT_PRO: '100000',
    },
  });
  starterKey = (await t.ctx.subscriptions.issue({ accountId: 'mcp-errors', tier: 'STARTER' })).key;
});
afterAll(async () => {
  await t?.close();
  if (isolated.REDIS_URL) await dropRedisNamespace(`stoop:${isolated.DATABASE_SCHEMA}`, isolated.REDIS_URL);
});

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function post(key: string | null, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body,
  });
}

async function callTool(key: string, name: string, args: unknown): Promise<CallToolResult> {
  const response = await post(
    key,
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  );
  expect(response.status).toBe(200);
  const body = (await response.json()) as { result?: CallToolResult; error?: unknown };
  expect(body.error).toBeUndefined();
  return body.result!;
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

describe('authentication', () => {
  it('answers 401 without a credential, pointing at the MCP protected-resource metadata', async () => {
    const response = await post(null, LIST);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer resource_metadata="http://stoop.test/.well-known/oauth-protected-resource/mcp"',
    );
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('MISSING_API_KEY');
  });

  it('answers 401 invalid_token for a key that does not exist', async () => {
    const response = await post('STOOP-00000000-0000-4000-8000-000000000000', LIST);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer resource_metadata="http://stoop.test/.well-known/oauth-protected-resource/mcp", error="invalid_token"',
    );
  });
});

describe('HTTP', () => {
  it('answers GET and DELETE with 405 and Allow: POST (a stateless server offers no stream or session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${t.url}/mcp`, {
        method,
        headers: { authorization: `Bearer ${starterKey}`, accept: 'text/event-stream' },
      });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(response.headers.get('mcp-session-id')).toBeNull();
    }
  });

  it('refuses a foreign Origin with 403 and accepts its own and loopback ones', async () => {
    const refused = await post(starterKey, LIST, { origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('Origin');
    for (const origin of ['http://stoop.test', 'http://localhost:6274', 'http://127.0.0.1:3000']) {
      const response = await post(starterKey, LIST, { origin });
      expect(response.status, origin).toBe(200);
    }
  });

  it('answers bodies that are not JSON-RPC with a 400 JSON-RPC error, never a 500', async () => {
    const cases: [string, number][] = [
      ['{not json', -32700],
      ['', -32700],
      ['{"hello":"world"}', -32700],
      ['[]', -32600],
      ['42', -32700],
      ['{"jsonrpc":"1.0","id":1,"method":"tools/list"}', -32700],
    ];
    for (const [body, code] of cases) {
      const response = await post(starterKey, body);
      const answer = (await response.json()) as { jsonrpc: string; error: { code: number } };
      expect(response.status, body).toBe(400);
      expect(answer.jsonrpc, body).toBe('2.0');
      expect(answer.error.code, body).toBe(code);
    }
  });

  it('applies the Streamable HTTP rules with the SDK transport’s statuses and texts', async () => {
    const cases: {
      headers?: Record<string, string>;
      body?: string;
      status: number;
      code: number;
      text: string;
    }[] = [
      {
        headers: { accept: 'application/json' },
        status: 406,
        code: -32000,
        text: 'Not Acceptable: Client must accept both application/json and text/event-stream',
      },
      {
        headers: { 'content-type': 'text/plain' },
        status: 415,
        code: -32000,
        text: 'Unsupported Media Type: Content-Type must be application/json',
      },
      {
        headers: { 'mcp-protocol-version': '1999-01-01' },
        status: 400,
        code: -32000,
        text: 'Bad Request: Unsupported protocol version: 1999-01-01',
      },
      {
        body: JSON.stringify(
          Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })),
        ),
        status: 400,
        code: -32600,
        text: 'Invalid Request: Batch must not exceed 100 messages',
      },
      {
        body: JSON.stringify([
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          {
            jsonrpc: '2.0',
            id: 2,
            method: 'initialize',
            params: {
              protocolVersion: '2025-03-26',
              capabilities: {},
              clientInfo: { name: 'x', version: '1' },
            },
          },
        ]),
        status: 400,
        code: -32600,
        text: 'Invalid Request: Only one initialization request is allowed',
      },
      {
        body: JSON.stringify([
          { jsonrpc: '2.0', id: 5, method: 'ping' },
          { jsonrpc: '2.0', id: 5, method: 'tools/list' },
        ]),
        status: 400,
        code: -32600,
        text: 'Invalid Request: the batch has two requests with the id 5',
      },
    ];
    for (const { headers, body, status, code, text } of cases) {
      const response = await post(starterKey, body ?? LIST, headers);
      const answer = (await response.json()) as {
        jsonrpc: string;
        id: unknown;
        error: { code: number; message: string };
      };
      expect(response.status, text).toBe(status);
      expect(answer, text).toMatchObject({ jsonrpc: '2.0', id: null, error: { code } });
      expect(answer.error.message, text).toContain(text);
    }
    // A supported version is accepted; so is the version header on an initialize, which negotiates its own.
    expect((await post(starterKey, LIST, { 'mcp-protocol-version': '2025-06-18' })).status).toBe(200);
  });

  it('answers a batch that cancels one of its requests without it, and never hangs', async () => {
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } };
    const list = { jsonrpc: '2.0', id: 5, method: 'tools/list' };
    const rest = await post(
      starterKey,
      JSON.stringify([list, cancel, { jsonrpc: '2.0', id: 6, method: 'ping' }]),
    );
    expect(rest.status).toBe(200);
    expect(await rest.json()).toEqual([{ jsonrpc: '2.0', id: 6, result: {} }]);
    const none = await post(starterKey, JSON.stringify([list, cancel]));
    expect(none.status).toBe(202);
    expect(await none.text()).toBe('');
  });

  it('answers a POST of notifications only with 202 and no body', async () => {
    const response = await post(
      starterKey,
      JSON.stringify([
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } },
      ]),
    );
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
  });

  it('answers an unknown method and an unknown tool with JSON-RPC errors, not internal ones', async () => {
    const unknownMethod = await post(
      starterKey,
      JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'nope/never' }),
    );
    expect(((await unknownMethod.json()) as { error: { code: number } }).error.code).toBe(-32601);
    const unknownTool = await post(
      starterKey,
      JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'drop_tables' } }),
    );
    const answer = (await unknownTool.json()) as { error?: { code: number }; result?: CallToolResult };
    expect(answer.error?.code ?? (answer.result?.isError ? -32602 : 0)).toBe(-32602);
  });
});

describe('tool errors', () => {
  it('names the parameter and reason of invalid arguments, as the REST 400 does', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['search_rentals', { minBeds: 'many' }, '/v1/search/rentals?minBeds=many'],
      ['search_rentals', { sort: 'CHEAPEST' }, '/v1/search/rentals?sort=CHEAPEST'],
      ['search_rentals', { areas: '999999' }, '/v1/search/rentals?areas=999999'],
      ['compare_neighborhoods', {}, '/v1/market/compare'],
      [
        'get_market_snapshot',
        { areaId: 100, bedrooms: 9 },
        '/v1/market/rentals/snapshot?areaId=100&bedrooms=9',
      ],
      ['get_property', { id: '12ab' }, '/v1/property/12ab'],
      ['list_areas', { perPage: 0 }, '/v1/areas?perPage=0'],
    ];
    for (const [tool, args, path] of cases) {
      const result = await callTool(starterKey, tool, args);
      const rest = (await (await t.getAs(starterKey, path)).json()) as { error: { message: string } };
      expect(result.isError, tool).toBe(true);
      expect(text(result), `${tool} ${JSON.stringify(args)}`).toBe(rest.error.message);
      expect(text(result)).toMatch(/^Invalid parameter "\w+"/);
    }
  });

  it('reports an id no record has as a not-found tool error', async () => {
    for (const tool of ['get_property', 'get_building', 'get_fees']) {
      const result = await callTool(starterKey, tool, { id: '999999999' });
      expect(result.isError, tool).toBe(true);
      expect(text(result), tool).toMatch(/not found/);
      expect((result.structuredContent as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    }
  });

  it('reports a tier refusal naming the needed and the current tier', async () => {
    const result = await callTool(starterKey, 'get_price_history', { id: '1' });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('PRO');
    expect(text(result)).toContain('STARTER');
    expect(result.structuredContent).toMatchObject({
      error: { code: 'TIER_RESTRICTED', requiredTier: 'PRO', currentTier: 'STARTER' },
    });
  });

  it('reports an exhausted quota with when to retry, and charges nothing more', async () => {
    const { key } = await t.ctx.subscriptions.issue({ accountId: 'mcp-quota', tier: 'PRO' });
    for (let i = 0; i < 2; i++) {
      expect((await callTool(key, 'list_areas', { perPage: 1 })).isError).toBeFalsy();
    }
    const result = await callTool(key, 'list_areas', { perPage: 1 });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/quota/i);
    expect(text(result)).toMatch(/Retry after \d+ s/);
    expect(result.structuredContent).toMatchObject({ error: { code: 'QUOTA_EXCEEDED' } });
    // tools/list is not counted, so it still answers.
    expect((await post(key, LIST)).status).toBe(200);
  });

  it('answers 429 with Retry-After once the rate window is used up: every HTTP request costs a token', async () => {
    const { key } = await t.ctx.subscriptions.issue({ accountId: 'mcp-rate', tier: 'FREE' });
    for (let i = 0; i < 3; i++) expect((await post(key, LIST)).status).toBe(200);
    const response = await post(key, LIST);
    expect(response.status).toBe(429);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMIT_EXCEEDED');
  });
});
