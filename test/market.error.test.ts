import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, getJson, type TestApp } from './support/app.ts';

interface ErrorJson {
  error: { code: string; message: string; details?: { params?: { parameter: string; rule: string }[] } };
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005 });
});
afterAll(async () => {
  await t?.close();
});

describe('market parameter errors', () => {
  it.each([
    ['/v1/market/rentals/snapshot', 'areaId'],
    ['/v1/market/rentals/snapshot?areaId=999999', 'areaId'],
    ['/v1/market/sales/snapshot?areaId=100&bedrooms=5', 'bedrooms'],
    ['/v1/market/sales/snapshot?areaId=100&buildingType=CASTLE', 'buildingType'],
    ['/v1/market/compare', 'areas'],
    ['/v1/market/compare?areas=100,200,300,400,500,1', 'areas'],
    ['/v1/market/compare?areas=100,424242', 'areas'],
    ['/v1/market/compare?areas=100&listingType=leases', 'listingType'],
    ['/v1/market/rentals/snapshot?areaId=100&bedrooms=Infinity', 'bedrooms'],
    ['/v1/market/sales/snapshot?areaId=-Infinity', 'areaId'],
    ['/v1/market/compare?areas=100&bedrooms=Infinity', 'bedrooms'],
    ['/v1/market/rentals/trends?areaId=100&bedrooms=Infinity', 'bedrooms'],
    ['/v1/market/sales/trends?areaId=100&from=2026-1-1', 'from'],
  ])('%s is a 400 naming %s', async (path, parameter) => {
    const { status, body } = await getJson<ErrorJson>(t, path);
    expect(status).toBe(400);
    expect(body.error.code).toBe('INVALID_PARAMS');
    expect(body.error.details?.params?.[0]?.parameter).toBe(parameter);
    expect(body.error.message).toContain(parameter);
  });

  it('a bad trend date says a date is accepted, not a date-time', async () => {
    const { body } = await getJson<ErrorJson>(t, '/v1/market/rentals/trends?areaId=100&to=yesterday');
    expect(body.error.message).toBe('Invalid parameter "to": must be a date (YYYY-MM-DD)');
  });

  it('more than 5 areas names the limit', async () => {
    const { body } = await getJson<ErrorJson>(t, '/v1/market/compare?areas=100,200,300,400,500,1');
    expect(body.error.message).toContain('at most 5');
  });

  it('is public: no key needed', async () => {
    const response = await t.getAs(null, '/v1/market/rentals/snapshot?areaId=1');
    expect(response.status).toBe(200);
  });
});
