/**
 * The export encoders and negotiation as pure functions: the cases a demo
 * market does not produce (every formula prefix, distances, a listing without
 * coordinates, hostile warning text). Route behaviour is in exports.happy/error.
 */
import { check } from '@placemarkio/check-geojson';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { PaginatedMeta } from '../src/http/envelope.ts';
import { ApiError } from '../src/http/errors.ts';
import { csvField, negotiateListFormat, warningsHeader } from '../src/http/formats.ts';
import {
  EXPORT_SLICE,
  type ExportedListing,
  LISTING_CSV_COLUMNS,
  listingExportChunks,
  listingFromFragment,
  listingsCsv,
  listingsFeatureCollection,
} from '../src/modules/listings/listing-export.ts';

const LISTING: ExportedListing = {
  id: '42',
  address: { street: '1 Main St', unit: null, city: 'New York', state: 'NY', zipCode: '10001' },
  price: 3500,
  netEffective: 3200,
  monthsFree: 1,
  leaseTermMonths: 12,
  monthlyCost: 3550,
  bedroomCount: 1,
  fullBathroomCount: 1,
  halfBathroomCount: 0,
  sqft: null,
  pricePerSqft: null,
  buildingType: 'CONDO',
  saleType: null,
  areaName: 'Chelsea',
  areaId: 115,
  status: 'ACTIVE',
  geoPoint: { latitude: 40.745, longitude: -73.998 },
  leadPhotoKey: null,
  sourceGroupLabel: 'Broker',
  urlPath: '/rental/42',
  listingType: 'rental',
  listedAt: '2026-10-01',
  listedAtIsApproximate: false,
  availableAt: null,
  daysOnMarket: 31,
  buildingId: '7',
  buildingScores: {
    healthScore: null,
    noiseScore: 50,
    safetyScore: null,
    transitScore: 90,
    violationsOpen: 0,
    updatedAt: null,
  },
  noFee: true,
  detailScraped: false,
  priceDelta: -250,
};

const META: PaginatedMeta = {
  dataAge: null,
  source: 'cached',
  freshnessThreshold: 3600,
  refreshTriggered: false,
  detailScraped: false,
  total: 1,
  page: 1,
  perPage: 10,
  links: {
    self: 'http://x/a?page=1',
    first: 'http://x/a?page=1',
    last: 'http://x/a?page=1',
    prev: null,
    next: null,
  },
  warnings: [],
};

describe('CSV fields', () => {
  it('neutralises every formula start in text, never in numbers or booleans', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r']) {
      const text = `${start}1+2`;
      const field = csvField(text);
      const [[cell]] = parse(`${field}\r\n`, { record_delimiter: '\r\n' }) as string[][];
      expect(cell, JSON.stringify(start)).toBe(`'${text}`);
    }
    expect(csvField(-250)).toBe('-250');
    expect(csvField(0.5)).toBe('0.5');
    expect(csvField(false)).toBe('false');
    expect(csvField(null)).toBe('');
    expect(csvField('a-b=c')).toBe('a-b=c');
  });

  it('quotes commas, quotes, CR and LF, doubling quotes (RFC 4180)', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
    expect(csvField('plain')).toBe('plain');
    expect(csvField('Café ünïcode')).toBe('Café ünïcode');
  });
});

describe('listing CSV', () => {
  it('has a distance column only when the listings carry one', () => {
    const plain = parse(listingsCsv([LISTING]), { record_delimiter: '\r\n' }) as string[][];
    expect(plain[0]).toEqual(LISTING_CSV_COLUMNS.map((c) => c.name));
    expect(plain[0]).not.toContain('distance');
    const measured = listingsCsv([
      { ...LISTING, distance: 812.5 },
      { ...LISTING, id: '43' },
    ]);
    const rows = parse(measured, { record_delimiter: '\r\n' }) as string[][];
    expect(rows[0]!.at(-1)).toBe('distance');
    expect(rows[1]!.at(-1)).toBe('812.5');
    expect(rows[2]!.at(-1)).toBe('');
    expect(rows[1]![LISTING_CSV_COLUMNS.findIndex((c) => c.name === 'priceDelta')]).toBe('-250');
    // A row without a distance before a measured one does not hide the column.
    const unmeasuredFirst = listingsCsv([LISTING, { ...LISTING, id: '43', distance: 5 }]);
    expect(unmeasuredFirst.split('\r\n')[0]!.endsWith(',distance')).toBe(true);
  });
});

describe('listing GeoJSON', () => {
  it('a listing without coordinates has a null geometry, still valid RFC 7946; distance is a property', () => {
    const located = { ...LISTING, distance: 120 };
    const unlocated = { ...LISTING, id: '43', geoPoint: null } as unknown as ExportedListing;
    const text = listingsFeatureCollection([located, unlocated], META);
    check(text);
    const body = JSON.parse(text) as {
      features: { id: string; geometry: unknown; properties: Record<string, unknown> }[];
      meta: unknown;
    };
    expect(body.features[0]!.geometry).toEqual({ type: 'Point', coordinates: [-73.998, 40.745] });
    expect(body.features[0]!.properties.distance).toBe(120);
    expect(body.features[0]!.properties).not.toHaveProperty('geoPoint');
    expect(body.features[1]!.geometry).toBeNull();
    expect(body.features[1]!.id).toBe('43');
    expect(body.meta).toEqual(META);
  });
});

describe('sliced encoding', () => {
  async function collect(chunks: AsyncIterable<string>): Promise<string[]> {
    const out: string[] = [];
    for await (const chunk of chunks) out.push(chunk);
    return out;
  }

  it('streams the same bytes as the whole-page encoders, a slice per chunk, from fragments or objects', async () => {
    for (const count of [0, 1, EXPORT_SLICE, EXPORT_SLICE * 2 + 7]) {
      const listings = Array.from({ length: count }, (_, i) => ({
        ...LISTING,
        id: String(1000 + i),
        sourceGroupLabel: i % 3 === 0 ? `=cmd|${i}` : `Broker, "${i}"`,
      }));
      const fragments = listings.map((l) => Buffer.from(JSON.stringify(l)));
      const slices = Math.max(1, Math.ceil(count / EXPORT_SLICE));
      const csv = await collect(listingExportChunks('csv', fragments, listingFromFragment, META));
      expect(csv).toHaveLength(slices);
      expect(csv.join('')).toBe(listingsCsv(listings));
      const geo = await collect(listingExportChunks('geojson', listings, (l) => l, META));
      expect(geo).toHaveLength(slices + 1);
      expect(geo.join('')).toBe(listingsFeatureCollection(listings, META));
      check(geo.join(''));
    }
  });
});

describe('negotiation', () => {
  it('format wins (any case), absent or blank Accept is JSON, and nothing acceptable is NOT_ACCEPTABLE', () => {
    expect(negotiateListFormat('CSV', 'text/html')).toBe('csv');
    expect(negotiateListFormat(undefined, undefined)).toBe('json');
    expect(negotiateListFormat(undefined, '  ')).toBe('json');
    expect(negotiateListFormat(undefined, 'text/csv;q=0.001')).toBe('csv');
    expect(negotiateListFormat(undefined, 'application/geo+json, application/json')).toBe('json');
    expect(negotiateListFormat(undefined, 'text/csv;q=0.5, application/*;q=0.5')).toBe('csv');
    expect(() => negotiateListFormat(undefined, 'text/plain')).toThrow(ApiError);
    const refusal = (() => {
      try {
        negotiateListFormat(undefined, 'image/png');
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(refusal).toBeInstanceOf(ApiError);
    expect((refusal as ApiError).code).toBe('NOT_ACCEPTABLE');
    expect((refusal as ApiError).status).toBe(406);
    expect(() => negotiateListFormat('xml', undefined)).toThrow(/format/);
  });
});

describe('warnings header', () => {
  it('is printable ASCII whatever the warnings hold, and parses back to them', () => {
    const warnings = ['Unknown parameter "a\r\nSet-Cookie: x" was ignored.', 'naïve … 東京', 'tab\there'];
    const header = warningsHeader(warnings);
    expect(header).toMatch(/^[\x20-\x7e]*$/);
    expect(JSON.parse(header)).toEqual(warnings);
    expect(warningsHeader([])).toBe('[]');
  });
});
