import { request as httpRequest } from 'node:http';
import { check } from '@placemarkio/check-geojson';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaginatedMeta } from '../src/http/envelope.ts';
import type { ListingSummary } from '../src/modules/listings/listing.schema.ts';
import { ListingFeatureCollectionSchema } from '../src/modules/listings/listing-export.ts';
import { SearchResponse } from '../src/modules/search/search.schema.ts';
import { createTestApp, type TestApp, UNLIMITED } from './support/app.ts';
import { expectSchema } from './support/schema.ts';

/** The documented CSV columns, in order (README "Exports", the `format` parameter's description). */
const CSV_COLUMNS = [
  'id',
  'listingType',
  'status',
  'street',
  'unit',
  'city',
  'state',
  'zipCode',
  'areaId',
  'areaName',
  'latitude',
  'longitude',
  'price',
  'netEffective',
  'monthsFree',
  'leaseTermMonths',
  'monthlyCost',
  'priceDelta',
  'bedroomCount',
  'fullBathroomCount',
  'halfBathroomCount',
  'sqft',
  'pricePerSqft',
  'buildingType',
  'saleType',
  'noFee',
  'listedAt',
  'listedAtIsApproximate',
  'availableAt',
  'daysOnMarket',
  'buildingId',
  'sourceGroupLabel',
  'urlPath',
];
const ADDRESS_PARTS = new Set(['street', 'unit', 'city', 'state', 'zipCode']);

interface JsonPage {
  data: ListingSummary[];
  meta: PaginatedMeta;
}

interface FeatureCollection {
  type: 'FeatureCollection';
  features: {
    type: 'Feature';
    id: string;
    geometry: { type: 'Point'; coordinates: [number, number] } | null;
    properties: Record<string, unknown>;
  }[];
  meta: PaginatedMeta;
}

/** What a documented column holds for a listing, as the JSON page has it. */
function jsonValue(listing: ListingSummary, column: string): unknown {
  if (ADDRESS_PARTS.has(column)) return listing.address[column as keyof ListingSummary['address']];
  if (column === 'latitude' || column === 'longitude') return listing.geoPoint[column];
  return listing[column as keyof ListingSummary];
}

/** The CSV cell the contract promises for a JSON value: empty for null, text guarded against formulas. */
function expectedCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return String(value);
}

function parseCsv(text: string): string[][] {
  return parse(text, { record_delimiter: '\r\n', relax_column_count: false }) as string[][];
}

/** Asserts a CSV export equals the JSON page field by field, for every documented column. */
function expectCsvMatches(text: string, page: JsonPage): void {
  // RFC 4180: every record ends with CRLF; a bare LF appears only inside a quoted field.
  expect(text.endsWith('\r\n')).toBe(true);
  const [header, ...records] = parseCsv(text);
  expect(header).toEqual(CSV_COLUMNS);
  expect(records).toHaveLength(page.data.length);
  records.forEach((record, row) => {
    const listing = page.data[row]!;
    CSV_COLUMNS.forEach((column, i) => {
      expect(record[i], `row ${row} ${column}`).toBe(expectedCell(jsonValue(listing, column)));
    });
  });
}

/** Asserts a GeoJSON export is valid RFC 7946 and equals the JSON page feature by feature. */
function expectGeoJsonMatches(text: string, page: JsonPage): FeatureCollection {
  check(text);
  const body = JSON.parse(text) as FeatureCollection;
  expectSchema(ListingFeatureCollectionSchema, body);
  expect(body.type).toBe('FeatureCollection');
  expect(body.features).toHaveLength(page.data.length);
  body.features.forEach((feature, i) => {
    const { geoPoint, ...rest } = page.data[i]!;
    expect(feature.id).toBe(rest.id);
    expect(feature.geometry).toEqual({ type: 'Point', coordinates: [geoPoint.longitude, geoPoint.latitude] });
    expect(feature.properties).toEqual(rest);
  });
  return body;
}

/** `Link` header relations (RFC 8288) by name. */
function parseLinks(header: string | null): Record<string, string> {
  const links: Record<string, string> = {};
  for (const part of (header ?? '').split(', ')) {
    const match = /^<([^>]+)>; rel="([a-z]+)"$/.exec(part);
    expect(match, part).not.toBeNull();
    links[match![2]!] = match![1]!;
  }
  return links;
}

/** Asserts the paging headers of an export carry what the JSON page has in `meta`. */
function expectPagingHeaders(headers: Headers, meta: PaginatedMeta, withFormat: string | null): void {
  expect(headers.get('x-total-count')).toBe(String(meta.total));
  expect(headers.get('x-page')).toBe(String(meta.page));
  expect(headers.get('x-per-page')).toBe(String(meta.perPage));
  const links = parseLinks(headers.get('link'));
  // The JSON links without `format`, plus `format` where the export request named it.
  const same = (url: string | null) =>
    url === null ? undefined : withFormat === null ? url : url.replace('?', `?format=${withFormat}&`);
  expect(links).toEqual(
    Object.fromEntries(
      (['first', 'prev', 'next', 'last'] as const)
        .map((rel) => [rel, same(meta.links[rel])])
        .filter(([, url]) => url !== undefined),
    ),
  );
  if (meta.warnings.length === 0) expect(headers.get('x-stoop-warnings')).toBeNull();
  else expect(JSON.parse(headers.get('x-stoop-warnings')!)).toEqual(meta.warnings);
}

let t: TestApp;
let starterKey: string;
let buildingId: string;

beforeAll(async () => {
  t = await createTestApp({ scale: 0.02, env: { ...UNLIMITED } });
  starterKey = (await t.ctx.subscriptions.issue({ accountId: 'exports-starter', tier: 'STARTER' })).key;
  const busiest = await t.store.db
    .selectFrom('listings')
    .select('building_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .groupBy('building_id')
    .orderBy('n', 'desc')
    .orderBy('building_id')
    .limit(1)
    .executeTakeFirstOrThrow();
  buildingId = busiest.building_id;
});
afterAll(async () => {
  await t?.close();
});

async function getText(path: string, headers: Record<string, string> = {}, key?: string | null) {
  const response = await t.getAs(key === undefined ? t.internalKey : key, path, { headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function jsonPage(path: string, key?: string | null): Promise<JsonPage> {
  const { status, text } = await getText(path, {}, key);
  expect(status, text.slice(0, 300)).toBe(200);
  return JSON.parse(text) as JsonPage;
}

/** Base path and query of each exporting route (busiest building for the building route). */
const routes = () => [
  { name: 'rentals', base: '/v1/search/rentals', query: 'sort=PRICE&perPage=40' },
  { name: 'sales', base: '/v1/search/sales', query: 'sort=LISTED_AT&perPage=40' },
  {
    name: `building-${buildingId}-listings`,
    base: `/v1/building/${buildingId}/listings`,
    query: 'status=ACTIVE,IN_CONTRACT,OFF_MARKET&perPage=15',
  },
];

describe('CSV and GeoJSON equal the JSON page', () => {
  it('CSV (format=csv): every documented column of every row, RFC 4180, as a download', async () => {
    for (const route of routes()) {
      const page = await jsonPage(`${route.base}?${route.query}`);
      if (route.base.startsWith('/v1/search')) expectSchema(SearchResponse, page);
      expect(page.data.length, route.name).toBeGreaterThan(1);
      const csv = await getText(`${route.base}?format=csv&${route.query}`);
      expect(csv.status, csv.text.slice(0, 300)).toBe(200);
      expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
      expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="${route.name}-page-1.csv"`);
      expect(csv.headers.get('vary')).toContain('Accept');
      expect(csv.headers.get('x-request-id')).toBeTruthy();
      expect(csv.headers.get('x-ratelimit-limit')).toBeTruthy();
      expect(csv.headers.get('x-quota-used')).toBeTruthy();
      expectCsvMatches(csv.text, page);
      expectPagingHeaders(csv.headers, page.meta, 'csv');
    }
  });

  it('GeoJSON (format=geojson): a valid FeatureCollection of Points, properties and meta as in JSON', async () => {
    for (const route of routes()) {
      const page = await jsonPage(`${route.base}?${route.query}`);
      const geo = await getText(`${route.base}?format=geojson&${route.query}`);
      expect(geo.status, geo.text.slice(0, 300)).toBe(200);
      expect(geo.headers.get('content-type')).toBe('application/geo+json');
      expect(geo.headers.get('content-disposition')).toBe(
        `attachment; filename="${route.name}-page-1.geojson"`,
      );
      const body = expectGeoJsonMatches(geo.text, page);
      // `meta` is the JSON page's, links keeping the `format` the request named.
      const withFormat = (url: string | null) => url?.replace('?', '?format=geojson&') ?? null;
      expect(body.meta).toEqual({
        ...page.meta,
        links: Object.fromEntries(
          Object.entries(page.meta.links).map(([rel, url]) => [rel, withFormat(url)]),
        ),
      });
      expectPagingHeaders(geo.headers, page.meta, 'geojson');
    }
  });

  it('numbers are never treated as formulas: a negative priceDelta stays a bare number', async () => {
    const page = await jsonPage('/v1/search/rentals?sort=PRICE&perPage=500');
    const cut = page.data.findIndex((listing) => listing.priceDelta < 0);
    expect(cut, 'the test market has a price cut').toBeGreaterThanOrEqual(0);
    const csv = await getText('/v1/search/rentals?sort=PRICE&perPage=500&format=csv');
    const records = parseCsv(csv.text);
    const cell = records[cut + 1]![CSV_COLUMNS.indexOf('priceDelta')]!;
    expect(cell).toBe(String(page.data[cut]!.priceDelta));
    expect(cell.startsWith('-')).toBe(true);
  });

  it('an empty page is the header row alone, or an empty FeatureCollection', async () => {
    const query = 'minPrice=999999999&perPage=5';
    const page = await jsonPage(`/v1/search/rentals?${query}`);
    expect(page.meta.total).toBe(0);
    const csv = await getText(`/v1/search/rentals?${query}&format=csv`);
    expect(csv.text).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
    expect(csv.headers.get('x-total-count')).toBe('0');
    const geo = await getText(`/v1/search/rentals?${query}&format=geojson`);
    expect(expectGeoJsonMatches(geo.text, page).features).toEqual([]);
  });
});

describe('formula injection', () => {
  it('text cells starting with =, +, -, @, tab or CR get a leading quote; quotes, commas and line breaks are quoted', async () => {
    const query = 'status=ACTIVE,IN_CONTRACT,OFF_MARKET&perPage=50';
    const before = await jsonPage(`/v1/building/${buildingId}/listings?${query}`);
    const row = Math.floor(before.data.length / 2);
    const listing = before.data[row]!;
    const hostile = {
      street: '-1 Main St, Apt "A"\nRear',
      unit: '@SUM(A1:A9)',
      source_group_label: '=HYPERLINK("http://evil.test","click")',
    };
    await t.store.db.updateTable('listings').set(hostile).where('id', '=', listing.id).execute();
    const page = await jsonPage(`/v1/building/${buildingId}/listings?${query}`);
    expect(page.data[row]!.id).toBe(listing.id);
    expect(page.data[row]!.sourceGroupLabel).toBe(hostile.source_group_label);
    const csv = await getText(`/v1/building/${buildingId}/listings?${query}&format=csv`);
    expect(csv.text).toContain(`"'-1 Main St, Apt ""A""\nRear"`);
    const record = parseCsv(csv.text)[row + 1]!;
    expect(record[CSV_COLUMNS.indexOf('street')]).toBe(`'${hostile.street}`);
    expect(record[CSV_COLUMNS.indexOf('unit')]).toBe(`'${hostile.unit}`);
    expect(record[CSV_COLUMNS.indexOf('sourceGroupLabel')]).toBe(`'${hostile.source_group_label}`);
    expectCsvMatches(csv.text, page);
    // GeoJSON is data, not a spreadsheet: the text is served as it is.
    const geo = await getText(`/v1/building/${buildingId}/listings?${query}&format=geojson`);
    const feature = expectGeoJsonMatches(geo.text, page).features[row]!;
    expect(feature.properties.sourceGroupLabel).toBe(hostile.source_group_label);
  });
});

describe('Accept negotiation', () => {
  const cases: [string, 'json' | 'csv' | 'geojson'][] = [
    ['text/csv', 'csv'],
    ['application/geo+json', 'geojson'],
    ['application/json', 'json'],
    ['*/*', 'json'],
    ['text/*', 'csv'],
    ['application/*', 'json'],
    ['text/csv;q=0.5, application/geo+json;q=0.9', 'geojson'],
    ['application/json;q=0.1, text/csv', 'csv'],
    ['text/csv, */*;q=0.8', 'csv'],
    ['text/csv;q=0, */*', 'json'],
    ['TEXT/CSV; Q=1', 'csv'],
    ['application/geo+json;q=0.2, text/html, */*;q=0.1', 'geojson'],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'json'],
    ['text/csv;header=present;charset=utf-8', 'csv'],
  ];
  const typeOf = { json: 'application/json', csv: 'text/csv', geojson: 'application/geo+json' };

  it('chooses by q-value and specificity, on search and on building listings', async () => {
    for (const base of ['/v1/search/sales?perPage=3', `/v1/building/${buildingId}/listings?perPage=3`]) {
      const page = await jsonPage(base);
      for (const [accept, format] of cases) {
        const answer = await getText(base, { accept });
        expect(answer.status, accept).toBe(200);
        expect(answer.headers.get('content-type'), accept).toContain(typeOf[format]);
        expect(answer.headers.get('vary'), accept).toContain('Accept');
        if (format === 'csv') expectCsvMatches(answer.text, page);
        if (format === 'geojson') expectGeoJsonMatches(answer.text, page);
        if (format === 'json') expect(JSON.parse(answer.text)).toEqual(page);
        if (format !== 'json') expectPagingHeaders(answer.headers, page.meta, null);
      }
    }
  });

  it('no Accept header at all is JSON', async () => {
    const url = new URL(`${t.url}/v1/search/rentals?perPage=2`);
    const answer = await new Promise<{ type: string | undefined; body: string }>((resolve, reject) => {
      const req = httpRequest(url, { headers: { authorization: `Bearer ${t.internalKey}` } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ type: res.headers['content-type'], body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer.type).toBe('application/json; charset=utf-8');
    expectSchema(SearchResponse, JSON.parse(answer.body));
  });

  it('the format parameter wins over Accept, even an Accept that allows none of the formats', async () => {
    const base = '/v1/search/rentals?perPage=4';
    const page = await jsonPage(base);
    const csv = await getText(`${base}&format=csv`, { accept: 'application/geo+json' });
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const json = await getText(`${base}&format=json`, { accept: 'text/csv' });
    expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(JSON.parse(json.text).data).toEqual(page.data);
    const geo = await getText(`${base}&format=geojson`, { accept: 'text/html' });
    expect(geo.status).toBe(200);
    expectGeoJsonMatches(geo.text, page);
  });
});

describe('paging', () => {
  it('Link next/prev walk the same pages as JSON, keeping format; the last page has no next', async () => {
    const query = 'sort=PRICE&areas=300&perPage=7';
    const first = await jsonPage(`/v1/search/rentals?${query}`);
    const pages = Math.ceil(first.meta.total / 7);
    expect(pages).toBeGreaterThan(2);
    let url: string | undefined = `${t.url}/v1/search/rentals?format=csv&${query}`;
    const ids: string[] = [];
    let visited = 0;
    while (url !== undefined) {
      const answer = await getText(url.replace(t.url, '').replace('http://stoop.test', ''));
      visited++;
      const records = parseCsv(answer.text).slice(1);
      ids.push(...records.map((record) => record[0]!));
      const links = parseLinks(answer.headers.get('link'));
      expect(links.first).toBe(
        'http://stoop.test/v1/search/rentals?format=csv&sort=PRICE&areas=300&page=1&perPage=7',
      );
      expect(links.last).toContain(`page=${pages}&perPage=7`);
      expect(answer.headers.get('x-page')).toBe(String(visited));
      if (visited === 1) expect(links.prev).toBeUndefined();
      else expect(links.prev).toContain(`page=${visited - 1}&`);
      url = links.next;
    }
    expect(visited).toBe(pages);
    const all = await jsonPage(`/v1/search/rentals?${query.replace('perPage=7', 'perPage=500')}`);
    expect(ids).toEqual(all.data.map((l) => l.id));
  });

  it('page 2 is named in the download and equals JSON page 2', async () => {
    const query = 'sort=LISTED_AT&perPage=6&page=2';
    const page = await jsonPage(`/v1/search/sales?${query}`);
    const csv = await getText(`/v1/search/sales?format=csv&${query}`);
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="sales-page-2.csv"');
    expectCsvMatches(csv.text, page);
    expectPagingHeaders(csv.headers, page.meta, 'csv');
  });
});

describe('limits are those of JSON', () => {
  it('the tier page-size cap applies, with its warning in X-Stoop-Warnings', async () => {
    const cap = t.config.tierLimits.FREE.maxPerPage;
    const page = await jsonPage('/v1/search/rentals?perPage=500', null);
    expect(page.data).toHaveLength(cap);
    expect(page.meta.warnings.some((w) => w.includes(`maximum of ${cap}`))).toBe(true);
    for (const format of ['csv', 'geojson']) {
      const answer = await getText(`/v1/search/rentals?format=${format}&perPage=500`, {}, null);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-per-page')).toBe(String(cap));
      expectPagingHeaders(answer.headers, page.meta, format);
      if (format === 'csv') expectCsvMatches(answer.text, page);
      else expectGeoJsonMatches(answer.text, page);
    }
  });

  it('an export counts once against the quota, like a JSON call', async () => {
    const used = async (path: string, accept?: string) => {
      const answer = await getText(path, accept ? { accept } : {}, starterKey);
      expect(answer.status, answer.text.slice(0, 200)).toBe(200);
      return Number(answer.headers.get('x-quota-used'));
    };
    const base = `/v1/building/${buildingId}/listings?perPage=2`;
    const before = await used(base);
    expect(await used(`${base}&format=csv`)).toBe(before + 1);
    expect(await used(base, 'application/geo+json')).toBe(before + 2);
    expect(await used('/v1/search/rentals?perPage=2&format=geojson')).toBe(before + 3);
    expect(await used(base)).toBe(before + 4);
    const usage = (await (await t.getAs(starterKey, '/v1/usage')).json()) as { data: { used: number } };
    expect(usage.data.used).toBe(before + 4);
  });
});
