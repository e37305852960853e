/**
 * Areas by name: the alias list, slugs, the resolver, `/v1/areas?q=` over
 * names, slugs and aliases with typos, and names accepted (and echoed in
 * `meta.areas`) wherever an area id is: search, market, watchers, MCP tools.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Area } from '../src/modules/areas/areas.schema.ts';
import { SearchResponse } from '../src/modules/search/search.schema.ts';
import { assignSlugs, compactKey, slugOf } from '../src/reference/area-names.ts';
import { type AreaRecord, AreaTree, readAreaRecords } from '../src/reference/areas.ts';
import { createTestApp, getJson, okJson, type TestApp, UNLIMITED } from './support/app.ts';
import { callTool } from './support/mcp.ts';
import { expectSchema } from './support/schema.ts';

const resource = (file: string) => new URL(`../resources/${file}`, import.meta.url);
/** The files as shipped, read with an independent CSV parser. */
const ALIAS_ROWS = parse(readFileSync(resource('area-aliases.csv'), 'utf8'), { columns: true }) as {
  area_id: string;
  alias: string;
  kind: string;
}[];
const AREA_ROWS = parse(readFileSync(resource('areas.csv'), 'utf8'), { columns: true }) as {
  id: string;
  name: string;
  parent_id: string;
  slug: string;
}[];

interface AreaList {
  data: Area[];
  meta: { total: number };
}
interface Echo {
  input: string;
  id: number;
  name: string;
}
interface SearchBody {
  data: { id: string }[];
  meta: { total: number; areas?: Echo[] };
}

let t: TestApp;
let tree: AreaTree;
/** An area's id by its exact name in the shipped tree (never a copied number). */
const idOf = (name: string) => {
  const row = AREA_ROWS.find((r) => r.name === name);
  if (!row) throw new Error(`no area named ${name}`);
  return Number(row.id);
};

beforeAll(async () => {
  // Webhook destinations on this machine are allowed (nothing is delivered here).
  t = await createTestApp({ scale: 0.01, env: { ...UNLIMITED, WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
  tree = t.ctx.areaTree;
});
afterAll(async () => {
  await t?.close();
});

describe('the alias list', () => {
  it('is not empty and every row names an area of areas.csv, with a known kind', () => {
    expect(ALIAS_ROWS.length).toBeGreaterThan(20);
    const ids = new Set(AREA_ROWS.map((r) => r.id));
    for (const row of ALIAS_ROWS) {
      expect(ids.has(row.area_id), `${row.alias} → ${row.area_id}`).toBe(true);
      expect(['abbreviation', 'alternate', 'part']).toContain(row.kind);
    }
  });

  it('holds no alias that is already its area’s name or slug, and no name that names two areas', () => {
    for (const row of ALIAS_ROWS) {
      const area = AREA_ROWS.find((r) => r.id === row.area_id)!;
      expect(compactKey(row.alias), row.alias).not.toBe(compactKey(area.name));
      expect(compactKey(row.alias), row.alias).not.toBe(compactKey(area.slug));
    }
    const owners = new Map<string, Set<string>>();
    const claim = (text: string, id: string) => {
      const key = compactKey(text);
      owners.set(key, (owners.get(key) ?? new Set()).add(id));
    };
    for (const area of AREA_ROWS) {
      claim(area.name, area.id);
      claim(area.slug, area.id);
    }
    for (const row of ALIAS_ROWS) claim(row.alias, row.area_id);
    const shared = [...owners].filter(([, ids]) => ids.size > 1).map(([key]) => key);
    expect(shared).toEqual([]);
    expect(tree.names.ambiguousKeys()).toEqual([]);
  });

  it.each(ALIAS_ROWS.map((row) => [row.alias, Number(row.area_id)] as const))(
    'alias %s resolves to area %i, however it is spelled',
    (alias, id) => {
      for (const spelling of [
        alias,
        alias.toLowerCase(),
        alias.toUpperCase(),
        ` ${alias.replace(/[-.' ]/g, '')} `,
      ]) {
        const resolution = tree.names.resolve(spelling);
        expect(resolution.kind === 'found' ? resolution.record.id : resolution.kind, spelling).toBe(id);
      }
    },
  );

  it('every alias is found first by /v1/areas?q= and listed on its area', async () => {
    for (const row of ALIAS_ROWS) {
      const { body } = await getJson<AreaList>(t, `/v1/areas?q=${encodeURIComponent(row.alias)}`);
      expect(body.data[0]?.id, row.alias).toBe(Number(row.area_id));
      expect(body.data[0]?.aliases, row.alias).toContain(row.alias);
    }
  });
});

describe('slugs', () => {
  it('are unique and derived from the names, as the shipped tree carries them', () => {
    const records = readAreaRecords();
    expect(new Set(records.map((r) => r.slug)).size).toBe(records.length);
    const derived = assignSlugs(records);
    for (const record of records) expect(record.slug, record.name).toBe(derived.get(record.id));
    expect(slugOf("Hell's Kitchen")).toBe('hells-kitchen');
  });

  it('disambiguate colliding names deterministically with the parent slug', () => {
    const area = (id: number, name: string, parentId: number | null): AreaRecord => ({
      id,
      name,
      parentId,
      level: parentId === null ? 0 : 1,
      slug: '',
      latitude: null,
      longitude: null,
      centroidMatch: 'none',
    });
    const records = [
      area(1, 'Root', null),
      area(10, 'Queens', 1),
      area(20, 'Staten Island', 1),
      area(31, 'Bay Terrace', 20),
      area(30, 'Bay Terrace', 10),
    ];
    const slugs = assignSlugs(records);
    expect(slugs.get(30)).toBe('bay-terrace');
    expect(slugs.get(31)).toBe('bay-terrace-staten-island');
    expect(assignSlugs([...records].reverse())).toEqual(slugs);
    expect(new Set(slugs.values()).size).toBe(records.length);
  });

  it('are served with the aliases on every area of /v1/areas', async () => {
    const { body } = await getJson<AreaList>(t, '/v1/areas?perPage=500');
    expect(body.data).toHaveLength(AREA_ROWS.length);
    for (const area of body.data) {
      expect(area.slug).toBe(AREA_ROWS.find((r) => Number(r.id) === area.id)!.slug);
      expect(area.aliases).toEqual(
        ALIAS_ROWS.filter((r) => Number(r.area_id) === area.id).map((r) => r.alias),
      );
    }
  });
});

describe('GET /v1/areas?q=', () => {
  it.each(['UWS', 'LIC', 'Bed-Stuy', 'bed stuy', 'bedstuy', 'upper-west-side', 'Upper West Side'])(
    'finds %s first',
    async (q) => {
      const resolution = tree.names.resolve(q);
      expect(resolution.kind).toBe('found');
      const { body } = await getJson<AreaList>(t, `/v1/areas?q=${encodeURIComponent(q)}`);
      expect(body.data[0]?.id).toBe(resolution.kind === 'found' ? resolution.record.id : null);
    },
  );

  it('tolerates a one-letter typo (wiliamsburg → Williamsburg)', async () => {
    const { body } = await getJson<AreaList>(t, '/v1/areas?q=wiliamsburg');
    expect(body.data[0]?.id).toBe(idOf('Williamsburg'));
    const { body: swapped } = await getJson<AreaList>(t, '/v1/areas?q=wlliamsburg');
    expect(swapped.data[0]?.id).toBe(idOf('Williamsburg'));
  });

  it('ranks exact (alias), then prefix, then fuzzy', async () => {
    // `Clinton` is an alias of Hell's Kitchen, a prefix of Clinton Hill and one letter from Clifton.
    const { body } = await getJson<AreaList>(t, '/v1/areas?q=clinton');
    expect(body.data.map((a) => a.id)).toEqual([
      idOf("Hell's Kitchen"),
      idOf('Clinton Hill'),
      idOf('Clifton'),
    ]);
  });

  it('ranks exact, prefix, then substring, broader areas first among equals', async () => {
    const { body } = await getJson<AreaList>(t, '/v1/areas?q=brooklyn&perPage=50');
    const ids = body.data.map((a) => a.id);
    expect(ids[0]).toBe(idOf('Brooklyn'));
    // A name starting with the query before one merely containing it.
    expect(ids.indexOf(idOf('Brooklyn Heights'))).toBeLessThan(ids.indexOf(idOf('Downtown Brooklyn')));
    const { body: village } = await getJson<AreaList>(t, '/v1/areas?q=village&perPage=50');
    const levels = village.data.map((a) => a.level);
    // All substring matches: ordered by level, then id.
    expect([...levels].sort((a, b) => a - b)).toEqual(levels);
  });

  it('answers within the page and never matches an empty key', async () => {
    const { status, body } = await getJson<AreaList>(t, '/v1/areas?q=%20-%20');
    expect(status).toBe(200);
    expect(body.meta.total).toBe(0);
  });
});

describe('names wherever an area id is accepted', () => {
  it('search: areas=upper-west-side,LIC answers as the ids do, echoing what each resolved to', async () => {
    const uws = idOf('Upper West Side');
    const lic = idOf('Long Island City');
    // The small test market may leave those two empty: add the busiest area, by its name.
    const busiest = await t.store.db
      .selectFrom('listings')
      .select(['area_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('status', '=', 'ACTIVE')
      .where('listing_type', '=', 'rental')
      .groupBy('area_id')
      .orderBy('n', 'desc')
      .orderBy('area_id')
      .executeTakeFirstOrThrow();
    const third = tree.get(Number(busiest.area_id))!;
    for (const kind of ['rentals', 'sales']) {
      const ids = `${uws},${lic},${third.id}`;
      const names = `upper-west-side,LIC,${encodeURIComponent(third.name)}`;
      const byId = await okJson<SearchBody>(t, `/v1/search/${kind}?areas=${ids}&perPage=50`);
      const byName = await okJson<SearchBody>(t, `/v1/search/${kind}?areas=${names}&perPage=50`);
      if (kind === 'rentals') expect(byName.meta.total).toBeGreaterThan(0);
      expect(byName.data.map((l) => l.id)).toEqual(byId.data.map((l) => l.id));
      expect(byName.meta.total).toBe(byId.meta.total);
      expect(byName.meta.areas).toEqual([
        { input: 'upper-west-side', id: uws, name: 'Upper West Side' },
        { input: 'LIC', id: lic, name: 'Long Island City' },
        { input: third.name, id: third.id, name: third.name },
      ]);
      expect(byId.meta.areas?.map((a) => a.id)).toEqual([uws, lic, third.id]);
      expectSchema(SearchResponse, byName);
      const pair = await okJson<SearchBody>(t, `/v1/search/${kind}?areas=upper-west-side,LIC`);
      const pairById = await okJson<SearchBody>(t, `/v1/search/${kind}?areas=${uws},${lic}`);
      expect(pair.meta.total).toBe(pairById.meta.total);
    }
    const spaced = await okJson<SearchBody>(t, '/v1/search/rentals?areas=Upper%20West%20Side,%20bed%20stuy');
    expect(spaced.meta.areas?.map((a) => a.id)).toEqual([uws, idOf('Bedford-Stuyvesant')]);
    const plain = await okJson<SearchBody>(t, '/v1/search/rentals');
    expect(plain.meta.areas).toBeUndefined();
  });

  it('market: snapshot, compare and trends take names and echo them', async () => {
    const uws = idOf('Upper West Side');
    type Snapshot = { data: { areaId: number; inventory: number }; meta: { areas: Echo[] } };
    const byId = await okJson<Snapshot>(t, `/v1/market/rentals/snapshot?areaId=${uws}`);
    const byName = await okJson<Snapshot>(t, '/v1/market/rentals/snapshot?areaId=UWS');
    expect(byName.data).toEqual(byId.data);
    expect(byName.meta.areas).toEqual([{ input: 'UWS', id: uws, name: 'Upper West Side' }]);

    const compare = await okJson<{ data: { areaId: number }[]; meta: { areas: Echo[] } }>(
      t,
      '/v1/market/compare?areas=UWS,williamsburg,upper-west-side,137',
    );
    expect(compare.data.map((s) => s.areaId)).toEqual([uws, idOf('Williamsburg')]);
    expect(compare.meta.areas.map((a) => a.input)).toEqual(['UWS', 'williamsburg']);

    const trend = await okJson<{ data: { areaId: number; areaName: string }; meta: { areas: Echo[] } }>(
      t,
      '/v1/market/sales/trends?areaId=Bed-Stuy',
    );
    expect(trend.data.areaId).toBe(idOf('Bedford-Stuyvesant'));
    expect(trend.meta.areas[0]).toEqual({
      input: 'Bed-Stuy',
      id: idOf('Bedford-Stuyvesant'),
      name: 'Bedford-Stuyvesant',
    });
  });

  it('watchers: a search watcher takes area names as the search endpoint does', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'area-names', tier: 'BUSINESS' })).key;
    const response = await t.getAs(key, '/v1/watchers', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        watchType: 'search',
        searchFilters: { listingType: 'rental', areas: 'UWS,LIC' },
      }),
    });
    expect(response.status).toBe(201);
    const created = (await response.json()) as { data: { searchFilters: { areas: string } } };
    expect(created.data.searchFilters.areas).toBe('UWS,LIC');
  });

  it('events feed: areas takes names and narrows as the ids do', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'area-names-events', tier: 'PRO' })).key;
    const read = async (areas: string) => {
      const response = await t.getAs(key, `/v1/events?areas=${encodeURIComponent(areas)}&limit=1000`);
      expect(response.status).toBe(200);
      return ((await response.json()) as { data: { sequence: number }[] }).data.map((e) => e.sequence);
    };
    const byId = await read(`${idOf('Upper West Side')},${idOf('Long Island City')}`);
    expect(await read('UWS, long island city')).toEqual(byId);
  });

  it('webhooks: filters.areas takes names, stored and answered as ids', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'area-names-hooks', tier: 'BUSINESS' })).key;
    const response = await t.getAs(key, '/v1/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        url: 'https://127.0.0.1/hook',
        events: ['listing.created'],
        filters: { areas: ['UWS', idOf('Long Island City'), 'upper-west-side'] },
      }),
    });
    expect(response.status).toBe(200);
    const created = (await response.json()) as { data: { id: string; filters: { areas: number[] } } };
    expect(created.data.filters.areas).toEqual([idOf('Upper West Side'), idOf('Long Island City')]);
    const read = await t.getAs(key, `/v1/webhooks/${created.data.id}`);
    const stored = (await read.json()) as { data: { filters: { areas: number[] } } };
    expect(stored.data.filters.areas).toEqual(created.data.filters.areas);
  });

  it('MCP tools: search and market tools take names too', async () => {
    const call = (name: string, args: Record<string, unknown>) => callTool(t, t.internalKey, name, args);
    const search = await call('search_rentals', { areas: 'UWS', perPage: 1 });
    expect(search.isError).toBeFalsy();
    expect((search.structuredContent as unknown as SearchBody).meta.areas?.[0]?.id).toBe(
      idOf('Upper West Side'),
    );
    const rest = await okJson<SearchBody>(t, '/v1/search/rentals?areas=UWS&perPage=1');
    expect(search.structuredContent).toEqual(rest);
    for (const areaId of ['Bed-Stuy', idOf('Bedford-Stuyvesant')]) {
      const snapshot = await call('get_market_snapshot', { areaId });
      expect(snapshot.isError, String(areaId)).toBeFalsy();
      expect((snapshot.structuredContent as { data: { areaId: number } }).data.areaId).toBe(
        idOf('Bedford-Stuyvesant'),
      );
    }
    const compare = await call('compare_neighborhoods', { areas: 'LIC,Astoria' });
    expect((compare.structuredContent as { data: { areaId: number }[] }).data.map((s) => s.areaId)).toEqual([
      idOf('Long Island City'),
      idOf('Astoria'),
    ]);
  });
});

describe('the resolver without the app', () => {
  it('ignores aliases of areas a partial tree does not hold', () => {
    const records = readAreaRecords().filter((r) => r.level <= 1);
    const partial = new AreaTree(records);
    expect(partial.names.resolve('UWS').kind).toBe('unknown');
    expect(partial.names.resolve('BK').kind).toBe('found');
  });
});
