/**
 * The MCP endpoint through the SDK's own client over real HTTP: tools listed
 * and called with a key of each tier (gating), `search_rentals` answering what
 * `GET /v1/search/rentals` answers, resources, prompts, the server card, and
 * metering (a tool call counts one quota unit, `tools/list` none).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Tier, tierRank } from '../src/domain/tiers.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { dropRedisNamespace, isolatedLimitsEnv } from './support/server-process.ts';

const TOOL_TIERS: Record<string, Tier> = {
  search_rentals: 'FREE',
  search_sales: 'FREE',
  list_areas: 'FREE',
  get_market_snapshot: 'FREE',
  get_market_trends: 'FREE',
  compare_neighborhoods: 'FREE',
  get_property: 'STARTER',
  get_property_by_url: 'STARTER',
  get_building: 'STARTER',
  get_building_listings: 'STARTER',
  get_fees: 'STARTER',
  get_open_houses: 'STARTER',
  get_building_scores: 'STARTER',
  get_building_violations: 'STARTER',
  get_price_history: 'PRO',
};
const CALLER_TIERS = ['FREE', 'STARTER', 'PRO'] as const;
/** How each tool's description states its tier, for a model to read. */
const TIER_WORDS: Partial<Record<Tier, string>> = {
  FREE: 'Free tier and up',
  STARTER: 'Starter tier and up',
  PRO: 'Pro tier and up',
};

let t: TestApp;
const isolated = isolatedLimitsEnv();
const keys = {} as Record<(typeof CALLER_TIERS)[number], string>;
let listing: { id: string; urlPath: string; buildingId: string };

beforeAll(async () => {
  t = await createTestApp({
    scale: 0.005,
    env: {
      ...isolated,
      RATE_LIMIT_FREE: '100000',
      RATE_LIMIT_STARTER: '100000',
      RATE_LIMIT_PRO: '100000',
      MONTHLY_QUOTA_FREE: '100000',
    },
  });
  for (const tier of CALLER_TIERS) {
    keys[tier] = (await t.ctx.subscriptions.issue({ accountId: `mcp-${tier}`, tier })).key;
  }
  const search = (await (await t.get('/v1/search/rentals?perPage=50')).json()) as {
    data: { id: string; urlPath: string; buildingId: string | null }[];
  };
  const withBuilding = search.data.find((l) => l.buildingId !== null)!;
  listing = { id: withBuilding.id, urlPath: withBuilding.urlPath, buildingId: withBuilding.buildingId! };
});
afterAll(async () => {
  await t?.close();
  if (isolated.REDIS_URL) await dropRedisNamespace(`stoop:${isolated.DATABASE_SCHEMA}`, isolated.REDIS_URL);
});

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'stoop-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

function argumentsFor(tool: string): Record<string, unknown> {
  switch (tool) {
    case 'search_rentals':
      return { areas: '100,300', maxPrice: 6000, sort: 'PRICE', perPage: 5 };
    case 'search_sales':
      return { perPage: 3 };
    case 'list_areas':
      return { q: 'Astoria' };
    case 'get_market_snapshot':
      return { areaId: 100, bedrooms: 1 };
    case 'get_market_trends':
      return { areaId: 100, listingType: 'rentals', interval: 'week' };
    case 'compare_neighborhoods':
      return { areas: '100,300' };
    case 'get_property_by_url':
      return { url: listing.urlPath };
    case 'get_building':
    case 'get_building_scores':
    case 'get_building_violations':
      return { id: listing.buildingId };
    case 'get_building_listings':
      return { id: listing.buildingId, status: 'ACTIVE' };
    default:
      return { id: listing.id };
  }
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('tools', () => {
  it('lists every tool with a schema, a description and read-only annotations', async () => {
    const client = await connect(keys.FREE);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(TOOL_TIERS).sort());
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.description?.length ?? 0).toBeGreaterThan(80);
      expect(tool.description).toContain(TIER_WORDS[TOOL_TIERS[tool.name]!]);
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false, title: tool.title });
      // Self-contained: clients resolve no references.
      expect(JSON.stringify(tool.inputSchema)).not.toContain('$ref');
    }
    expect(client.getServerVersion()?.name).toBe('dev.stoop/stoop');
    await client.close();
  });

  it('calls each tool with a key of each tier: results below the tier are tool errors naming both tiers', async () => {
    const failures: string[] = [];
    for (const tier of CALLER_TIERS) {
      const client = await connect(keys[tier]);
      for (const [name, minTier] of Object.entries(TOOL_TIERS)) {
        const result = (await client.callTool({ name, arguments: argumentsFor(name) })) as CallToolResult;
        const where = `${name} as ${tier}: ${text(result).slice(0, 300)}`;
        if (tierRank(tier) < tierRank(minTier)) {
          if (result.isError !== true) failures.push(`${where}; expected a tier error`);
          if (!text(result).includes(minTier) || !text(result).includes(tier))
            failures.push(`${where}; the error must name ${minTier} and ${tier}`);
        } else {
          if (result.isError) failures.push(`${where}; expected success`);
          const body = result.structuredContent as { data?: unknown; meta?: unknown } | undefined;
          if (body?.data === undefined || body.meta === undefined) failures.push(`${where}; no {data, meta}`);
          if (text(result).length === 0) failures.push(`${where}; no text summary`);
        }
      }
      await client.close();
    }
    expect(failures).toEqual([]);
  });

  it('search_rentals answers what GET /v1/search/rentals answers for the same arguments, tier caps included', async () => {
    const args = { areas: '100,300', maxPrice: 6000, sort: 'PRICE', perPage: 25 };
    const query = new URLSearchParams(
      Object.entries(args).map(([k, v]): [string, string] => [k, String(v)]),
    ).toString();
    for (const tier of ['FREE', 'PRO'] as const) {
      const client = await connect(keys[tier]);
      const result = (await client.callTool({ name: 'search_rentals', arguments: args })) as CallToolResult;
      const rest = await (await t.getAs(keys[tier], `/v1/search/rentals?${query}`)).json();
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual(rest);
      const meta = (result.structuredContent as { meta: { perPage: number; total: number } }).meta;
      expect(meta.perPage).toBe(tier === 'FREE' ? 10 : 25);
      expect(text(result)).toMatch(/of [\d,]+ rentals in .*page 1 of \d+/);
      // The summary line names the page's cheapest listing (sorted by price: the first row).
      const first = (
        rest as { data: { id: string; price: number; address: { street: string; unit: string | null } }[] }
      ).data[0]!;
      const street = first.address.unit
        ? `${first.address.street} #${first.address.unit}`
        : first.address.street;
      expect(text(result)).toContain(`; cheapest $${first.price.toLocaleString('en-US')} at ${street}`);
      expect(text(result)).toContain(`(id ${first.id})`);
      await client.close();
    }
  });

  it('answers like REST for the other operations too (detail, list, market)', async () => {
    const client = await connect(keys.PRO);
    const pairs: [string, Record<string, unknown>, string][] = [
      ['get_property', { id: listing.id }, `/v1/property/${listing.id}`],
      ['get_price_history', { id: listing.id }, `/v1/property/${listing.id}/history`],
      ['get_building_listings', { id: listing.buildingId }, `/v1/building/${listing.buildingId}/listings`],
      ['list_areas', { parentId: 100, perPage: 20 }, '/v1/areas?parentId=100&perPage=20'],
      ['get_market_snapshot', { areaId: 100, listingType: 'sales' }, '/v1/market/sales/snapshot?areaId=100'],
      ['compare_neighborhoods', { areas: '100,300' }, '/v1/market/compare?areas=100,300'],
    ];
    for (const [name, args, path] of pairs) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const rest = await (await t.getAs(keys.PRO, path)).json();
      expect(result.structuredContent, name).toEqual(rest);
    }
    await client.close();
  });
});

describe('answers that carry served JSON', () => {
  it('a batch of tool calls answers each body as REST does, with nothing of the splicing left in the text', async () => {
    const call = (id: number, name: string, args: Record<string, unknown>) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: args },
    });
    const response = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${keys.PRO}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-03-26',
      },
      body: JSON.stringify([
        call(1, 'search_rentals', { areas: '100', sort: 'PRICE', perPage: 7 }),
        call(2, 'get_property', { id: listing.id }),
        call(3, 'search_sales', { perPage: 2, page: 2 }),
      ]),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(text).not.toContain('stoop-body-');
    const answers = JSON.parse(text) as { id: number; result: CallToolResult }[];
    const rest = [
      '/v1/search/rentals?areas=100&sort=PRICE&perPage=7',
      `/v1/property/${listing.id}`,
      '/v1/search/sales?perPage=2&page=2',
    ];
    // In the order sent, as the SDK's transport answers a batch.
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3]);
    for (const answer of answers) {
      const expected = await (await t.getAs(keys.PRO, rest[answer.id - 1]!)).json();
      expect(answer.result.structuredContent, `call ${answer.id}`).toEqual(expected);
    }
  });
});

describe('resources and prompts', () => {
  it('lists and reads the area tree and a listing', async () => {
    const client = await connect(keys.STARTER);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['stoop://areas']);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual(['stoop://listing/{id}']);

    const areas = await client.readResource({ uri: 'stoop://areas' });
    const tree = JSON.parse(String((areas.contents[0] as { text: string }).text)) as {
      data: { id: number; name: string }[];
    };
    expect(tree.data.length).toBe(t.ctx.areaTree.records.length);
    expect(tree.data.find((a) => a.id === 100)?.name).toBe('Manhattan');

    const read = await client.readResource({ uri: `stoop://listing/${listing.id}` });
    const detail = JSON.parse(String((read.contents[0] as { text: string }).text)) as {
      data: { id: string };
    };
    expect(detail.data.id).toBe(listing.id);
    await client.close();
  });

  it('refuses the listing resource below Starter', async () => {
    const client = await connect(keys.FREE);
    await expect(client.readResource({ uri: `stoop://listing/${listing.id}` })).rejects.toThrow(/STARTER/);
    await client.close();
  });

  it('lists and renders the prompts', async () => {
    const client = await connect(keys.FREE);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual([
      'find_apartment',
      'compare_neighborhoods',
      'explain_building',
    ]);
    const rendered = await client.getPrompt({
      name: 'find_apartment',
      arguments: { area: 'Astoria', budget: '3000', beds: '1' },
    });
    const message = rendered.messages[0]!.content as { type: string; text: string };
    expect(message.text).toContain('Astoria');
    expect(message.text).toContain('$3000');
    expect(message.text).toContain('search_rentals');
    const building = await client.getPrompt({ name: 'explain_building', arguments: { buildingId: '42' } });
    expect((building.messages[0]!.content as { text: string }).text).toContain('get_building_violations');
    await client.close();
  });
});

describe('metering', () => {
  async function post(key: string, body: unknown): Promise<Response> {
    return fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(body),
    });
  }
  async function used(key: string): Promise<number> {
    const usage = (await (await t.getAs(key, '/v1/usage')).json()) as { data: { used: number } };
    return usage.data.used;
  }

  it('counts one quota unit per tool call and none for tools/list, in X-Quota-Used and /v1/usage', async () => {
    const { key } = await t.ctx.subscriptions.issue({ accountId: 'mcp-metering', tier: 'STARTER' });
    const before = await used(key);
    const list = await post(key, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(list.status).toBe(200);
    expect(list.headers.get('x-quota-used')).toBe(String(before));
    expect(list.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect(list.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await used(key)).toBe(before);

    const call = await post(key, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'search_rentals', arguments: { perPage: 1 } },
    });
    expect(call.status).toBe(200);
    const answer = (await call.json()) as { result: CallToolResult };
    expect(answer.result.isError).toBeFalsy();
    expect(call.headers.get('x-quota-used')).toBe(String(before + 1));
    expect(call.headers.get('x-quota-remaining')).toBe(String(5000 - before - 1));
    expect(await used(key)).toBe(before + 1);

    // A refused call is not charged (as a REST 403 is not).
    const refused = await post(key, {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'get_price_history', arguments: { id: listing.id } },
    });
    const refusedAnswer = (await refused.json()) as { result: CallToolResult };
    expect(refusedAnswer.result.isError).toBe(true);
    expect(text(refusedAnswer.result)).toContain('PRO');
    expect(await used(key)).toBe(before + 1);
  });

  it('acts for each request’s own caller when many run at once on the servers it lends out', async () => {
    const pro = await t.ctx.subscriptions.issue({ accountId: 'mcp-concurrent-pro', tier: 'PRO' });
    const free = await t.ctx.subscriptions.issue({ accountId: 'mcp-concurrent-free', tier: 'FREE' });
    const [proBefore, freeBefore] = [await used(pro.key), await used(free.key)];
    // Interleaved: a Pro-only tool (allowed for one caller, refused for the other) and a Free one.
    const calls = Array.from({ length: 24 }, (_, i) => {
      const key = i % 2 === 0 ? pro.key : free.key;
      const name = i % 4 < 2 ? 'get_price_history' : 'search_rentals';
      const args = name === 'get_price_history' ? { id: listing.id } : { perPage: 1 };
      return {
        key,
        name,
        request: post(key, {
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name, arguments: args },
        }),
      };
    });
    let proCharged = 0;
    let freeCharged = 0;
    for (const { key, name, request } of calls) {
      const response = await request;
      const answer = (await response.json()) as { result: CallToolResult };
      const refused = key === free.key && name === 'get_price_history';
      expect(Boolean(answer.result.isError), `${name} as ${key === pro.key ? 'PRO' : 'FREE'}`).toBe(refused);
      if (!refused) {
        if (key === pro.key) proCharged++;
        else freeCharged++;
      }
    }
    expect(await used(pro.key)).toBe(proBefore + proCharged);
    expect(await used(free.key)).toBe(freeBefore + freeCharged);
  });

  it('serves the server card with the remote endpoint', async () => {
    const response = await t.getAs(null, '/.well-known/mcp/server.json');
    expect(response.status).toBe(200);
    const card = (await response.json()) as {
      name: string;
      version: string;
      remotes: { type: string; url: string }[];
    };
    expect(card.name).toBe('dev.stoop/stoop');
    expect(card.version).toBe(t.config.version);
    expect(card.remotes).toEqual([
      expect.objectContaining({ type: 'streamable-http', url: 'http://stoop.test/mcp' }),
    ]);
  });
});
