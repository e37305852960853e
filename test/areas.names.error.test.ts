/**
 * Area inputs that name no area (or more than one): a 400 INVALID_PARAMS
 * naming the parameter and the input, saying ids are numeric and how to find
 * one, and suggesting the closest areas when there are close ones.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type ErrorBody } from '../src/http/errors.ts';
import { resolveAreaInput } from '../src/modules/areas/area-input.ts';
import { AreaTree, readAreaRecords } from '../src/reference/areas.ts';
import { createTestApp, getJson, type TestApp, UNLIMITED } from './support/app.ts';

const AREA_ROWS = parse(readFileSync(new URL('../resources/areas.csv', import.meta.url), 'utf8'), {
  columns: true,
}) as { id: string; name: string; slug: string }[];
const WILLIAMSBURG = AREA_ROWS.find((r) => r.name === 'Williamsburg')!;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.002, env: { ...UNLIMITED, WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
});
afterAll(async () => {
  await t?.close();
});

async function expectAreaError(path: string, parameter: string, rule: string): Promise<string> {
  const { status, body } = await getJson<ErrorBody>(t, path);
  expect(status, path).toBe(400);
  expect(body.error.code).toBe('INVALID_PARAMS');
  expect(body.error.message).toContain(`"${parameter}"`);
  expect(body.error.details?.params?.[0]).toMatchObject({ parameter, rule, location: 'query' });
  return body.error.message;
}

describe('unknown area names', () => {
  it.each([
    ['/v1/search/rentals?areas=100,wiliamsbrg', 'areas'],
    ['/v1/search/sales?areas=Wiliamsburg', 'areas'],
    ['/v1/market/rentals/snapshot?areaId=wiliamsburg', 'areaId'],
    ['/v1/market/sales/trends?areaId=Williamsbrug', 'areaId'],
    ['/v1/market/compare?areas=UWS,wiliamsburg', 'areas'],
  ])('%s → 400 naming %s, the input and a suggestion', async (path, parameter) => {
    const message = await expectAreaError(path, parameter, 'unknown_area');
    const input = decodeURIComponent(
      new URL(path, 'http://x').searchParams.get(parameter)!.split(',').at(-1)!,
    );
    expect(message).toContain(`"${input}"`);
    expect(message).toContain(`did you mean \`${WILLIAMSBURG.slug}\` (id ${WILLIAMSBURG.id})?`);
    expect(message).toContain('Area ids are numeric');
    expect(message).toContain('GET /v1/areas?q=<name>');
  });

  it('a name far from every area gets no suggestion, only how to find one', async () => {
    const message = await expectAreaError('/v1/search/rentals?areas=Xyzzyville', 'areas', 'unknown_area');
    expect(message).not.toContain('did you mean');
    expect(message).toContain('GET /v1/areas?q=<name>');
  });

  it('an unknown numeric id says so and how to find an id', async () => {
    const message = await expectAreaError('/v1/search/rentals?areas=100,4242', 'areas', 'unknown_area');
    expect(message).toContain('no area has id 4242');
    expect(message).toContain('Area ids are numeric');
    await expectAreaError('/v1/market/rentals/snapshot?areaId=4242', 'areaId', 'unknown_area');
  });

  it('an empty item is a 400, not every area', async () => {
    await expectAreaError('/v1/search/rentals?areas=100,%20', 'areas', 'unknown_area');
    await expectAreaError('/v1/search/rentals?areas=%20', 'areas', 'unknown_area');
  });

  it('characters no area name has fail the pattern, whose words say what is accepted', async () => {
    for (const [path, parameter] of [
      ['/v1/search/rentals?areas=UWS;DROP', 'areas'],
      ['/v1/search/rentals?areas=100,,200', 'areas'],
      ['/v1/market/rentals/snapshot?areaId=%3Cscript%3E', 'areaId'],
      ['/v1/market/compare?areas=UWS%0A', 'areas'],
    ] as const) {
      const message = await expectAreaError(path, parameter, 'pattern');
      expect(message).toContain('area id (digits)');
      expect(message).toContain('GET /v1/areas?q=<name>');
    }
  });

  it('over-long names and lists are 400s', async () => {
    await expectAreaError(`/v1/search/rentals?areas=${'a'.repeat(101)}`, 'areas', 'pattern');
    await expectAreaError(`/v1/market/rentals/snapshot?areaId=${'a'.repeat(101)}`, 'areaId', 'maxLength');
    const many = Array.from({ length: 101 }, () => 'UWS').join(',');
    await expectAreaError(`/v1/search/rentals?areas=${many}`, 'areas', 'pattern');
  });

  it('more than 5 distinct areas to compare is a 400; the same area named twice counts once', async () => {
    const message = await expectAreaError(
      '/v1/market/compare?areas=UWS,UES,LIC,Astoria,Bushwick,Greenpoint',
      'areas',
      'max_items',
    );
    expect(message).toContain('at most 5');
    const { status } = await getJson(
      t,
      '/v1/market/compare?areas=UWS,UES,LIC,Astoria,Bushwick,upper-west-side',
    );
    expect(status).toBe(200);
  });

  it('a watcher with an unknown area name is a 400 naming searchFilters.areas', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'area-names-error', tier: 'BUSINESS' })).key;
    const response = await t.getAs(key, '/v1/watchers', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        watchType: 'search',
        searchFilters: { listingType: 'rental', areas: 'wiliamsburg' },
      }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.details?.params?.[0]).toMatchObject({
      parameter: 'searchFilters.areas',
      rule: 'unknown_area',
    });
    expect(body.error.message).toContain(`\`${WILLIAMSBURG.slug}\``);
  });
});

describe('unknown area names in the events feed and webhook filters', () => {
  it('the events feed: a 400 naming areas with the suggestion', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'area-names-feed', tier: 'PRO' })).key;
    const response = await t.getAs(key, '/v1/events?areas=wiliamsburg');
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe('INVALID_PARAMS');
    expect(body.error.details?.params?.[0]).toMatchObject({ parameter: 'areas', rule: 'unknown_area' });
    expect(body.error.message).toContain(`\`${WILLIAMSBURG.slug}\``);
  });

  it('webhook filters: an INVALID_BODY naming filters.areas, and nothing is created', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'area-names-hook', tier: 'BUSINESS' })).key;
    const response = await t.getAs(key, '/v1/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        url: 'https://127.0.0.1/hook',
        events: ['listing.created'],
        filters: { areas: ['UWS', 'wiliamsburg'] },
      }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe('INVALID_BODY');
    expect(body.error.details?.params?.[0]).toMatchObject({
      parameter: 'filters.areas',
      location: 'body',
      rule: 'unknown_area',
    });
    expect(body.error.message).toContain(`\`${WILLIAMSBURG.slug}\``);
    const list = await t.getAs(key, '/v1/webhooks');
    expect(((await list.json()) as { data: unknown[] }).data).toEqual([]);
  });
});

describe('ambiguous names', () => {
  it('a name two areas answer to is a 400 listing both, never a silent pick', () => {
    const records = readAreaRecords();
    const park = records.find((r) => r.name === 'Park Slope')!;
    const heights = records.find((r) => r.name === 'Prospect Heights')!;
    const tree = new AreaTree(records, [
      { areaId: park.id, alias: 'Brownstone Belt', kind: 'alternate' },
      { areaId: heights.id, alias: 'brownstone-belt', kind: 'alternate' },
    ]);
    expect(tree.names.ambiguousKeys()).toEqual(['brownstonebelt']);
    let error: unknown;
    try {
      resolveAreaInput(tree, 'areas', 'Brownstone Belt');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApiError);
    const issue = (error as ApiError).details?.params?.[0];
    expect(issue).toMatchObject({ parameter: 'areas', rule: 'ambiguous_area' });
    expect(issue?.message).toContain(`\`${park.slug}\` (id ${park.id})`);
    expect(issue?.message).toContain(`\`${heights.slug}\` (id ${heights.id})`);
  });
});
