import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/http/errors.ts';
import { createTestApp, getJson, type TestApp } from './support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005 });
});
afterAll(async () => {
  await t?.close();
});

describe('search parameter errors', () => {
  it.each([
    ['rentals', 'minPrice=abc', 'minPrice', 'type'],
    ['rentals', 'minPrice=-1', 'minPrice', 'minimum'],
    ['rentals', 'minPrice=5000&maxPrice=1000', 'minPrice', 'range'],
    ['rentals', 'minBeds=3&maxBeds=1', 'minBeds', 'range'],
    ['rentals', 'minBaths=1.25', 'minBaths', 'multipleOf'],
    ['rentals', 'minSqft=900&maxSqft=100', 'minSqft', 'range'],
    ['rentals', 'minDaysOnMarket=10&maxDaysOnMarket=2', 'minDaysOnMarket', 'range'],
    ['rentals', 'sort=CHEAPEST', 'sort', 'enum'],
    ['rentals', 'sortDir=UP', 'sortDir', 'enum'],
    ['rentals', 'buildingType=CASTLE', 'buildingType', 'pattern'],
    ['rentals', 'amenities=doorman,moat', 'amenities', 'pattern'],
    ['rentals', 'areas=100,a%3Bb', 'areas', 'pattern'],
    ['rentals', 'areas=100,4242', 'areas', 'unknown_area'],
    ['rentals', 'noFee=maybe', 'noFee', 'type'],
    ['rentals', 'listedAfter=yesterday', 'listedAfter', 'pattern'],
    ['rentals', 'listedAfter=2026-02-30', 'listedAfter', 'format'],
    ['rentals', 'listedAfter=2026-10-01&listedBefore=2026-09-01', 'listedAfter', 'range'],
    ['rentals', 'perPage=501', 'perPage', 'maximum'],
    ['rentals', 'perPage=0', 'perPage', 'minimum'],
    ['rentals', 'page=0', 'page', 'minimum'],
    ['rentals', 'page=999', 'page', 'page_range'],
    // Beyond the first 10,000 results, whatever the total: narrow the search instead.
    ['rentals', 'page=9999', 'page', 'result_window'],
    ['rentals', 'status=OFF_MARKET&page=101&perPage=100', 'page', 'result_window'],
    ['rentals', 'minTransitScore=101', 'minTransitScore', 'maximum'],
    ['rentals', 'status=SOLD', 'status', 'pattern'],
    ['sales', 'saleType=AUCTION', 'saleType', 'pattern'],
    ['sales', 'maxMonthlyCost=1e400', 'maxMonthlyCost', 'type'],
    ['rentals', 'page=-Infinity', 'page', 'type'],
    ['rentals', 'perPage=Infinity', 'perPage', 'type'],
    ['rentals', 'minPrice=-Infinity', 'minPrice', 'type'],
    ['rentals', 'minBaths=Infinity', 'minBaths', 'type'],
    ['rentals', 'minPrice=0x10', 'minPrice', 'type'],
    ['rentals', 'minPrice=%20', 'minPrice', 'type'],
    ['rentals', 'minPrice=Infinity&minPrice=1', 'minPrice', 'type'],
  ])('%s?%s → 400 naming %s (%s)', async (kind, query, parameter, rule) => {
    const { status, body } = await getJson<ErrorBody>(t, `/v1/search/${kind}?${query}`);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'INVALID_PARAMS', status: 400 });
    expect(body.error.message).toContain(`"${parameter}"`);
    expect(body.error.details?.params?.[0]).toMatchObject({ parameter, rule, location: 'query' });
    if (parameter.startsWith('listed') && rule === 'pattern') expect(body.error.message).toContain('date');
    if (parameter === 'amenities' && rule === 'pattern')
      expect(body.error.message).toContain('comma-separated');
  });

  it.each([
    ['buildingType=CASTLE', 'must be a comma-separated list of: CONDO, COOP, CONDOP, RENTAL, TOWNHOUSE'],
    ['status=SOLD', 'must be a comma-separated list of: ACTIVE, IN_CONTRACT, OFF_MARKET'],
    [
      'areas=100,a%3Bb',
      'must be a comma-separated list of 1 to 100 areas, each an area id (digits) or an area slug',
    ],
    ['listedAfter=yesterday', 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time with an offset'],
    ['minPrice=Infinity', 'must be a finite integer in decimal notation (got "Infinity")'],
  ])('%s: the 400 says what is accepted', async (query, accepted) => {
    const { body } = await getJson<ErrorBody>(t, `/v1/search/rentals?${query}`);
    expect(body.error.message).toContain(accepted);
    expect(body.error.details?.params?.[0]?.message).toContain(accepted);
  });

  it.each([
    // The text rules read each item of a repeated parameter, wherever it sits among those sent.
    [
      'maxBeds=2&minPrice=1&minPrice=0x10',
      'minPrice',
      'must be a finite integer in decimal notation (got "0x10")',
    ],
    ['areas=100&areas=1%00', 'areas', 'must not contain NUL (U+0000) characters'],
  ])('%s: a repeated parameter with one bad item is a 400 naming it', async (query, parameter, message) => {
    const { status, body } = await getJson<ErrorBody>(t, `/v1/search/rentals?${query}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe('INVALID_PARAMS');
    expect(body.error.details?.params?.[0]).toMatchObject({ parameter, message });
  });

  it('never answers 500 to hostile input', async () => {
    const hostile = [
      "areas=1'%20OR%201=1",
      'minPrice=1&minPrice=2',
      `q=${'x'.repeat(5000)}`,
      'sort=PRICE&sortDir=ASC&page=1&perPage=1&amenities=',
      'listedBefore=9999-12-31T23:59:59Z',
      'areas=',
    ];
    for (const query of hostile) {
      const response = await t.get(`/v1/search/rentals?${query}`);
      expect(response.status, query).toBeLessThan(500);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body.data ?? body.error, query).toBeDefined();
    }
  });
});
