/**
 * Errors that say the fix: an unknown query parameter is a 400 naming it and
 * suggesting the closest declared one (never ignored, so a typo cannot widen
 * a search); enum values are case-insensitive in query and path parameters
 * and MCP tool arguments, and a bad one's 400 lists every allowed value;
 * every error links to its entry in the error catalogue of the docs page.
 */

import { readFile } from 'node:fs/promises';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../src/domain/events.ts';
import { ERROR_CATALOGUE, errorCatalogueMarkdown } from '../src/http/error-catalogue.ts';
import { ERROR_CODES, type ErrorBody, type ErrorCode } from '../src/http/errors.ts';
import { suggestParameters } from '../src/http/validation.ts';
import { createTestApp, getJson, type TestApp } from './support/app.ts';
import { callTool } from './support/mcp.ts';

let t: TestApp;
let buildingId: string;
let listingId: string;

beforeAll(async () => {
  t = await createTestApp({ scale: 0.005 });
  const { body } = await getJson<{ data: { id: string; buildingId: string | null }[] }>(
    t,
    '/v1/search/rentals?perPage=50',
  );
  const withBuilding = body.data.find((row) => row.buildingId !== null);
  buildingId = withBuilding!.buildingId!;
  listingId = body.data[0]!.id;
});
afterAll(async () => {
  await t?.close();
});

async function error(path: string): Promise<ErrorBody['error']> {
  const { status, body } = await getJson<ErrorBody>(t, path);
  expect(status, path).toBe(400);
  return body.error;
}

/** Every operation of the REST API with a query schema, with the query it needs to get past required parameters. */
const LIST_OPERATIONS = [
  '/v1/search/rentals?',
  '/v1/search/sales?',
  '/v1/areas?',
  '/v1/market/rentals/snapshot?areaId=100&',
  '/v1/market/sales/trends?areaId=100&',
  '/v1/market/compare?areas=100&',
  '/v1/events?',
  '/v1/webhooks?',
  '/v1/watchers?',
];

describe('unknown query parameters', () => {
  it.each(LIST_OPERATIONS)('%s with an unknown parameter is a 400 naming it', async (prefix) => {
    const e = await error(`${prefix}colour=blue`);
    expect(e.code).toBe('INVALID_PARAMS');
    expect(e.message).toMatch(/^Unknown parameter "colour": /);
    expect(e.details?.params?.[0]).toMatchObject({
      parameter: 'colour',
      location: 'query',
      rule: 'unknown_parameter',
    });
  });

  it('building listings reject an unknown parameter too', async () => {
    const e = await error(`/v1/building/${buildingId}/listings?colour=blue`);
    expect(e.details?.params?.[0]).toMatchObject({ parameter: 'colour', rule: 'unknown_parameter' });
  });

  it('`area=137` (a typo for `areas`) is a 400 suggesting `areas`, not every rental', async () => {
    const e = await error('/v1/search/rentals?area=137');
    expect(e.message).toBe('Unknown parameter "area": did you mean "areas"?');
    expect(e.details?.params).toEqual([
      {
        parameter: 'area',
        location: 'query',
        rule: 'unknown_parameter',
        message: 'is not a parameter of this operation; did you mean "areas"?',
      },
    ]);
  });

  it('`beds=2` suggests minBeds and maxBeds', async () => {
    const e = await error('/v1/search/rentals?beds=2');
    expect(e.message).toContain('"minBeds"');
    expect(e.message).toContain('"maxBeds"');
  });

  it('a wrong-case parameter name suggests the declared spelling', async () => {
    const e = await error('/v1/search/sales?minprice=100');
    expect(e.message).toBe('Unknown parameter "minprice": did you mean "minPrice"?');
  });

  it('a name close to nothing lists the operation’s parameters instead', async () => {
    const e = await error('/v1/market/compare?areas=100&xyzzy=1');
    expect(e.message).toBe(
      'Unknown parameter "xyzzy": this operation takes: areas, listingType, bedrooms, buildingType',
    );
  });

  it('names at most ten unknown parameters, each cut to 40 characters', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `${'p'.repeat(60)}${i}`);
    const e = await error(`/v1/areas?${names.map((n) => `${n}=1`).join('&')}`);
    expect(e.details?.params).toHaveLength(10);
    for (const issue of e.details!.params!) expect(issue.parameter).toBe(`${'p'.repeat(40)}…`);
  });

  it('an unknown name is echoed as sent, slashes and dots included', async () => {
    const e = await error('/v1/areas?a%2Fb.c=1');
    expect(e.details?.params?.[0]?.parameter).toBe('a/b.c');
    expect(e.message).toMatch(/^Unknown parameter "a\/b\.c": /);
  });

  it('a known parameter beside an unknown one does not hide it', async () => {
    const e = await error('/v1/search/rentals?areas=100&maxPrice=5000&minbaths=1');
    expect(e.details?.params).toHaveLength(1);
    expect(e.details?.params?.[0]?.parameter).toBe('minbaths');
  });

  it.each([
    '/v1/health?verbose=1',
    '/v1/usage?month=2026-11',
    () => `/v1/property/${listingId}?fields=price`,
    () => `/v1/building/${buildingId}?fields=name`,
    () => `/v1/building/${buildingId}/scores?x=1`,
  ])('a REST route that declares no query parameters rejects any (%s)', async (path) => {
    const resolved = typeof path === 'function' ? path() : path;
    const e = await error(resolved);
    expect(e.message).toMatch(/^Unknown parameter "\w+": this operation takes no query parameters$/);
    expect(e.details?.params?.[0]?.rule).toBe('unknown_parameter');
  });

  it.each([
    '/openapi.json?v=2',
    '/.well-known/oauth-authorization-server?x=1',
    '/.well-known/oauth-protected-resource/mcp?x=1',
    '/.well-known/mcp/server.json?x=1',
  ])('protocol and documentation endpoints keep ignoring query parameters (%s)', async (path) => {
    const response = await t.getAs(null, path);
    expect(response.status).toBe(200);
  });

  it('the docs page keeps ignoring query parameters', async () => {
    const page = await t.getAs(null, '/docs?cache=1', { redirect: 'manual' });
    expect(page.status).toBeLessThan(400);
    expect((await t.getAs(null, '/docs/json?cache=1')).status).toBe(200);
  });

  it('suggestions come from edit distance, only when close enough', () => {
    const declared = ['areas', 'minBeds', 'maxBeds', 'minPrice', 'maxPrice', 'sortDir'];
    expect(suggestParameters('aeras', declared)).toEqual(['areas']);
    expect(suggestParameters('sortdir', declared)).toEqual(['sortDir']);
    expect(suggestParameters('price', declared)).toEqual(['minPrice', 'maxPrice']);
    expect(suggestParameters('q', declared)).toEqual([]);
    expect(suggestParameters('neighbourhood', declared)).toEqual([]);
  });
});

interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  schema: { enum?: string[]; pattern?: string; default?: unknown };
}

/** The allowed values of an enum-like parameter: a JSON Schema enum, or a CommaList's alternatives. */
function allowedValues(schema: OpenApiParameter['schema']): string[] | undefined {
  if (schema.enum) return schema.enum;
  const list = schema.pattern?.match(/^\^\(([A-Za-z0-9_.|-]+)\)\(,\(\1\)\)\*\$$/);
  return list ? list[1]!.split('|') : undefined;
}

/** Path parameters of the operations with enum-like query parameters (validation runs before any lookup). */
const PATH_VALUES: Record<string, string> = { id: 'wh_none' };

/** Values that get an operation's required parameters past validation. */
const REQUIRED_VALUES: Record<string, string> = { areaId: '100', areas: '100', url: '/rental/1' };

describe('enum values', () => {
  it('every enum-like query parameter of every operation lists each allowed value when the value is bad', async () => {
    const doc = (await (await t.get('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { parameters?: OpenApiParameter[] }>>;
    };
    const checked: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      const operation = methods.get;
      const concrete = path.replace(/\{(\w+)\}/g, (_, name: string) =>
        name === 'key'
          ? 'a'.repeat(32)
          : path.startsWith('/v1/building/')
            ? buildingId
            : (PATH_VALUES[name] ?? ''),
      );
      if (!operation?.parameters || concrete.includes('//') || concrete.endsWith('/')) continue;
      const required = operation.parameters
        .filter((p) => p.in === 'query' && p.required)
        .map((p) => {
          const value = p.schema.default ?? REQUIRED_VALUES[p.name] ?? allowedValues(p.schema)?.[0] ?? '1';
          return `${p.name}=${encodeURIComponent(String(value))}`;
        });
      for (const parameter of operation.parameters) {
        const values = parameter.in === 'query' ? allowedValues(parameter.schema) : undefined;
        if (!values) continue;
        const query = [
          ...required.filter((q) => !q.startsWith(`${parameter.name}=`)),
          `${parameter.name}=zz_nope`,
        ];
        const e = await error(`${concrete}?${query.join('&')}`);
        expect(e.details?.params?.[0]?.parameter).toBe(parameter.name);
        for (const value of values) expect(e.message, `${path} ${parameter.name}`).toContain(value);
        checked.push(`${path} ${parameter.name}`);
      }
    }
    // The enum-like parameters named in the issue are among those checked.
    for (const expected of [
      '/v1/search/rentals sort',
      '/v1/search/rentals sortDir',
      '/v1/search/rentals status',
      '/v1/search/rentals buildingType',
      '/v1/search/rentals amenities',
      '/v1/search/sales saleType',
      '/v1/market/rentals/trends metric',
      '/v1/market/rentals/trends interval',
      '/v1/market/compare buildingType',
      '/v1/events types',
      '/v1/events/stream types',
      '/v1/areas include',
      '/v1/building/{id}/listings status',
      '/v1/building/{id}/listings listingType',
      '/v1/webhooks/{id}/deliveries status',
      '/v1/photos/{key} size',
    ]) {
      expect(checked).toContain(expected);
    }
  });

  it.each([
    ['status=active', 'status=ACTIVE'],
    ['status=Active,%20in_contract', 'status=ACTIVE,IN_CONTRACT'],
    ['buildingType=condo', 'buildingType=CONDO'],
    ['buildingType=condo,Rental', 'buildingType=CONDO,RENTAL'],
    ['amenities=Gym', 'amenities=gym'],
    ['amenities=%20ELEVATOR%20,dishwasher%20', 'amenities=elevator,dishwasher'],
    ['sort=price&sortDir=desc', 'sort=PRICE&sortDir=DESC'],
    ['sort=%20listed_at%20', 'sort=LISTED_AT'],
  ])('search: %s answers as %s', async (sent, canonical) => {
    const a = await getJson<{ data: { id: string }[]; meta: { total: number } }>(
      t,
      `/v1/search/rentals?perPage=50&${sent}`,
    );
    const b = await getJson<{ data: { id: string }[]; meta: { total: number } }>(
      t,
      `/v1/search/rentals?perPage=50&${canonical}`,
    );
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.meta.total).toBe(b.body.meta.total);
    expect(a.body.data.map((r) => r.id)).toEqual(b.body.data.map((r) => r.id));
  });

  it('market: lower-case metric, interval and building type answer as the declared ones', async () => {
    const a = await getJson(t, '/v1/market/rentals/trends?areaId=100&metric=INVENTORY&interval=Week');
    const b = await getJson(t, '/v1/market/rentals/trends?areaId=100&metric=inventory&interval=week');
    expect(a.status).toBe(200);
    expect(a.body).toEqual(b.body);
    const c = await getJson(t, '/v1/market/compare?areas=100&buildingType=condo&listingType=SALES');
    const d = await getJson(t, '/v1/market/compare?areas=100&buildingType=CONDO&listingType=sales');
    expect(c.status).toBe(200);
    expect((c.body as { data: unknown }).data).toEqual((d.body as { data: unknown }).data);
  });

  it('path parameters: an enum path segment is case-insensitive too', async () => {
    const key = '0123456789abcdef0123456789abcdef';
    const canonical = await t.getAs(null, `/fp/${key}-se_large_800_400.webp`);
    const upper = await t.getAs(null, `/fp/${key}-SE_Large_800_400.webp`);
    expect(canonical.status).not.toBe(400);
    expect(upper.status).toBe(canonical.status);
    const query = await t.getAs(null, `/v1/photos/${key}?size=SE_Large_800_400`);
    expect(query.status).toBe((await t.getAs(null, `/v1/photos/${key}?size=se_large_800_400`)).status);
    expect(query.status).not.toBe(400);
    const bad = await t.getAs(null, `/fp/${key}-huge.webp`);
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as ErrorBody;
    expect(body.error.details?.params?.[0]).toMatchObject({
      parameter: 'size',
      location: 'path',
      rule: 'enum',
    });
    expect(body.error.message).toContain('se_large_800_400');
  });

  it('a list with one unknown item is still a 400 listing every allowed value', async () => {
    const e = await error('/v1/search/rentals?status=active,sold');
    expect(e.details?.params?.[0]).toMatchObject({ parameter: 'status' });
    expect(e.message).toContain('ACTIVE, IN_CONTRACT, OFF_MARKET');
  });

  it('JSON bodies are strict: a wrong-case enum is a 400 that lists the allowed values', async () => {
    const response = await t.get('/v1/watchers', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ watchType: 'Listing', listingId }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe('INVALID_BODY');
    expect(body.error.details?.params?.[0]?.parameter).toBe('watchType');
    expect(body.error.message).toMatch(/must be one of listing, building, search/);
  });
});

describe('body enums list their allowed values', () => {
  async function post(path: string, body: unknown): Promise<ErrorBody['error']> {
    const response = await t.get(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(400);
    return ((await response.json()) as ErrorBody).error;
  }

  it('webhook event types and filter enums', async () => {
    const events = await post('/v1/webhooks', {
      url: 'https://example.com/hook',
      events: ['Listing.Created'],
    });
    for (const type of WEBHOOK_EVENT_TYPES) expect(events.message).toContain(type);
    const filters = await post('/v1/webhooks', {
      url: 'https://example.com/hook',
      events: ['listing.created'],
      filters: { listingType: 'Rental' },
    });
    expect(filters.code).toBe('INVALID_BODY');
    expect(filters.message).toContain('rental, sale');
  });
});

describe('docs links', () => {
  it('every error carries the absolute link to its catalogue entry', async () => {
    const cases: [string, RequestInit | undefined, number][] = [
      ['/v1/search/rentals?area=137', undefined, 400],
      ['/v1/no-such-route', undefined, 404],
      ['/v1/property/999999999', undefined, 404],
    ];
    for (const [path, init, status] of cases) {
      const response = await t.get(path, init);
      expect(response.status).toBe(status);
      const body = (await response.json()) as ErrorBody;
      expect(body.error.docs).toBe(`${t.config.publicUrl}/docs#/Errors/${body.error.code}`);
    }
    const anonymous = await t.getAs(null, `/v1/property/${listingId}`);
    expect(anonymous.status).toBe(401);
    const body = (await anonymous.json()) as ErrorBody;
    expect(body.error.docs).toBe(`${t.config.publicUrl}/docs#/Errors/MISSING_API_KEY`);
  });

  it('the served docs have the Errors section with an entry for every code', async () => {
    const doc = (await (await t.get('/openapi.json')).json()) as {
      tags: { name: string; description?: string }[];
    };
    const errors = doc.tags.find((tag) => tag.name === 'Errors');
    expect(errors?.description).toBeDefined();
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      expect(errors!.description).toContain(`<a id="${code}"></a>\`${code}\` | ${ERROR_CODES[code]} |`);
      expect(errors!.description).toContain(ERROR_CATALOGUE[code].action);
    }
    // The README publishes the same catalogue.
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(errorCatalogueMarkdown());
    // The link's page is the docs page that renders this document.
    expect((await t.getAs(null, '/docs')).status).toBeLessThan(400);
  });
});

describe('MCP tool arguments follow the same rules', () => {
  const call = (name: string, args: unknown) => callTool(t, t.internalKey, name, args);

  it('an unknown argument is a tool error naming it with the suggestion and the docs link', async () => {
    const result = await call('search_rentals', { area: '100' });
    expect(result.isError).toBe(true);
    const error = (result.structuredContent as unknown as ErrorBody).error;
    expect(error.code).toBe('INVALID_PARAMS');
    expect(error.message).toBe('Unknown parameter "area": did you mean "areas"?');
    expect(error.docs).toBe(`${t.config.publicUrl}/docs#/Errors/INVALID_PARAMS`);
  });

  it('an unknown argument of a tool with an id is named too', async () => {
    const result = await call('get_building', { id: buildingId, include: 'all' });
    expect(result.isError).toBe(true);
    expect((result.structuredContent as unknown as ErrorBody).error.message).toMatch(
      /^Unknown parameter "include"/,
    );
  });

  it('lower-case enum arguments answer as the declared ones', async () => {
    const a = await call('search_rentals', {
      status: 'active,in_contract',
      sort: 'price',
      sortDir: 'Desc',
    });
    const b = await call('search_rentals', {
      status: 'ACTIVE,IN_CONTRACT',
      sort: 'PRICE',
      sortDir: 'DESC',
    });
    expect(a.isError).toBeFalsy();
    const rows = (r: CallToolResult) =>
      ((r.structuredContent as { data: { id: string }[] }).data ?? []).map((x) => x.id);
    expect(rows(a)).toEqual(rows(b));
    expect(rows(a).length).toBeGreaterThan(0);
    const trend = await call('get_market_trends', {
      areaId: 100,
      listingType: 'Sales',
      metric: 'INVENTORY',
    });
    expect(trend.isError).toBeFalsy();
    expect((trend.structuredContent as { data: { metric: string; listingType: string } }).data).toMatchObject(
      {
        metric: 'inventory',
        listingType: 'sale',
      },
    );
  });

  it('a bad enum argument lists every allowed value', async () => {
    const result = await call('get_market_trends', { areaId: 100, interval: 'fortnight' });
    expect(result.isError).toBe(true);
    expect((result.structuredContent as unknown as ErrorBody).error.message).toContain(
      'must be one of day, week, month',
    );
  });
});
