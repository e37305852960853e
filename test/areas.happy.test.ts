import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Area, ListAreasResponse } from '../src/modules/areas/areas.schema.ts';
import { createTestApp, getJson, type TestApp } from './support/app.ts';
import { expectSchema } from './support/schema.ts';

interface AreaList {
  data: Area[];
  meta: {
    total: number;
    page: number;
    perPage: number;
    warnings: string[];
    links: Record<string, string | null>;
  };
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.01 });
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/areas', () => {
  it('pages through all 349 rows with the default page size of 10', async () => {
    const seen = new Set<number>();
    let path: string | null = '/v1/areas';
    let pages = 0;
    while (path) {
      const { status, body }: { status: number; body: AreaList } = await getJson<AreaList>(t, path);
      expect(status).toBe(200);
      expect(body.meta.perPage).toBe(10);
      for (const area of body.data) seen.add(area.id);
      path = body.meta.links.next
        ? new URL(body.meta.links.next).pathname + new URL(body.meta.links.next).search
        : null;
      pages++;
    }
    expect(pages).toBe(35);
    expect(seen.size).toBe(349);
  });

  it('returns spec fields and the documented example parents', async () => {
    const { body } = await getJson<AreaList>(t, '/v1/areas?q=Upper%20East%20Side');
    const ues = body.data[0]!;
    expect(ues).toEqual({
      id: 140,
      name: 'Upper East Side',
      level: 3,
      parentId: 139,
      slug: 'upper-east-side',
      aliases: ['UES'],
    });
    const { body: park } = await getJson<AreaList>(t, '/v1/areas?q=park%20slope');
    expect(park.data[0]).toMatchObject({ id: 319, parentId: 300, level: 2 });
  });

  it('filters by level and parentId', async () => {
    const { body: boroughs } = await getJson<AreaList>(t, '/v1/areas?level=1&perPage=50');
    expect(boroughs.data.map((a) => a.id)).toEqual(
      expect.arrayContaining([100, 200, 300, 400, 500, 1000000]),
    );
    expect(boroughs.data.every((a) => a.level === 1)).toBe(true);
    const { body: kids } = await getJson<AreaList>(t, '/v1/areas?parentId=300&perPage=500');
    expect(kids.meta.total).toBeGreaterThan(40);
    expect(kids.data.every((a) => a.parentId === 300)).toBe(true);
  });

  it('ranks name matches exact, then prefix, then substring, ignoring case and accents', async () => {
    const { body } = await getJson<AreaList>(t, '/v1/areas?q=VILLAGE&perPage=50');
    // An area matches through its name or one of its aliases (`Peter Cooper Village`).
    const names = body.data.map((a) => [a.name, ...a.aliases].map((n) => n.toLowerCase()));
    expect(names.length).toBeGreaterThan(3);
    const rankOf = (n: string) => (n === 'village' ? 0 : n.startsWith('village') ? 1 : 2);
    const ranks = names.map((all) => Math.min(...all.map(rankOf)));
    expect([...ranks].sort((a, b) => a - b)).toEqual(ranks);
    expect(names.every((all) => all.some((n) => n.includes('village')))).toBe(true);
    const { body: accented } = await getJson<AreaList>(t, `/v1/areas?q=${encodeURIComponent('GRÄMERCY')}`);
    expect(accented.data[0]?.name).toBe('Gramercy Park');
  });

  it('adds children, ancestors, centroid and rolled-up counts on request', async () => {
    const { body } = await getJson<AreaList>(
      t,
      '/v1/areas?q=Manhattan&include=children,ancestors,counts,centroid',
    );
    const manhattan = body.data.find((a) => a.id === 100)!;
    expect(manhattan.children?.map((c) => c.id)).toContain(102);
    expect(manhattan.ancestors?.map((a) => a.id)).toEqual([1]);
    expect(manhattan.centroid?.latitude).toBeCloseTo(40.76, 1);
    const { body: all } = await getJson<AreaList>(t, '/v1/areas?level=1&include=counts&perPage=50');
    const sum = all.data
      .filter((a) => [100, 200, 300, 400, 500].includes(a.id))
      .reduce((n, a) => n + (a.listingCounts?.rentals ?? 0), 0);
    const { body: root } = await getJson<AreaList>(t, '/v1/areas?level=0&include=counts');
    expect(sum).toBeGreaterThan(0);
    expect(root.data[0]!.listingCounts!.rentals).toBeGreaterThanOrEqual(sum);
    const search = await getJson<{ meta: { total: number } }>(t, '/v1/search/rentals?areas=100');
    expect(manhattan.listingCounts?.rentals).toBe(search.body.meta.total);
  });

  it('answers every include set with a body of the documented schema, the same areas served spliced or encoded', async () => {
    // Pages without counts are spliced from areas serialized once; with counts they are encoded per request.
    const sets = ['', 'children', 'ancestors', 'centroid', 'children,ancestors,centroid'];
    for (const include of sets) {
      const query = `q=Brooklyn&perPage=20${include ? `&include=${include}` : ''}`;
      const spliced = await getJson<AreaList>(t, `/v1/areas?${query}`);
      expect(spliced.status).toBe(200);
      expectSchema(ListAreasResponse, spliced.body);
      const encoded = await getJson<AreaList>(t, `/v1/areas?${query}${include ? ',' : '&include='}counts`);
      expectSchema(ListAreasResponse, encoded.body);
      expect(encoded.body.data.length).toBeGreaterThan(1);
      expect(
        encoded.body.data.map(({ listingCounts: _counts, ...area }) => area),
        include,
      ).toEqual(spliced.body.data);
      const again = await getJson<AreaList>(t, `/v1/areas?${query}`);
      expect(again.body).toEqual(spliced.body);
    }
  });

  it('carries a request id, freshness meta, and no warnings', async () => {
    const { body, headers } = await getJson<AreaList & { meta: Record<string, unknown> }>(t, '/v1/areas');
    expect(headers.get('x-request-id')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(body.meta.warnings).toEqual([]);
    expect(body.meta).toMatchObject({
      source: expect.any(String),
      refreshTriggered: false,
      detailScraped: false,
    });
    expect(typeof body.meta.freshnessThreshold).toBe('number');
  });
});
