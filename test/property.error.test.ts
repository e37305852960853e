import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, getJson, type TestApp } from './support/app.ts';

interface ErrorJson {
  error: {
    code: string;
    message: string;
    status: number;
    details?: { params?: { parameter: string; location: string; rule: string }[] };
  };
}

let t: TestApp;
let known: { id: string; url_path: string; listing_type: 'rental' | 'sale' };
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005 });
  known = await t.store.db
    .selectFrom('listings')
    .select(['id', 'url_path', 'listing_type'])
    .where('listing_type', '=', 'rental')
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
});
afterAll(async () => {
  await t?.close();
});

const SUBRESOURCES = ['', '/history', '/fees', '/open-houses'];

describe('unknown listings', () => {
  it.each(SUBRESOURCES)('GET /v1/property/{id}%s is a 404 naming the id', async (suffix) => {
    const { status, body } = await getJson<ErrorJson>(t, `/v1/property/999999999999${suffix}`);
    expect(status).toBe(404);
    expect(body.error.code).toBe('NOT_FOUND');
    expect(body.error.message).toContain('"999999999999"');
    expect(body.error.message).toMatch(/^Listing /);
  });

  it('by-url: a well-formed path no listing has is a 404 naming the path', async () => {
    const { status, body } = await getJson<ErrorJson>(t, '/v1/property/by-url?url=/rental/999999999');
    expect(status).toBe(404);
    expect(body.error.code).toBe('NOT_FOUND');
    expect(body.error.message).toContain('/rental/999999999');
  });

  it('by-url: the right id under the wrong listing type is not that listing', async () => {
    const other = known.listing_type === 'rental' ? 'sale' : 'rental';
    const { status } = await getJson<ErrorJson>(t, `/v1/property/by-url?url=/${other}/${known.id}`);
    expect(status).toBe(404);
  });
});

describe('malformed ids', () => {
  const bad = ['abc', '12a', '-1', '1.5', '1234567890123', '%20', '1%2F2', "1'%20OR%201=1"];
  for (const suffix of SUBRESOURCES) {
    it.each(bad)(`GET /v1/property/%s${suffix} is a 400 naming the path id`, async (id) => {
      const { status, body } = await getJson<ErrorJson>(t, `/v1/property/${id}${suffix}`);
      expect(status).toBe(400);
      expect(body.error.code).toBe('INVALID_PARAMS');
      expect(body.error.message).toContain('"id"');
      expect(body.error.message).toContain('1 to 12 digits');
      expect(body.error.details?.params?.[0]).toMatchObject({ parameter: 'id', location: 'path' });
    });
  }
});

describe('GET /v1/property/by-url parameter errors', () => {
  it.each([
    ['', 'is required'],
    ['?url=', 'url'],
    ['?url=rental/123', 'listing path'],
    ['?url=not%20a%20url', 'listing path'],
    ['?url=ftp%3A%2F%2Fexample.com%2Frental%2F1', 'http(s)'],
    ['?url=javascript%3Aalert(1)', 'http(s)'],
    ['?url=%2Fbuilding%2F123', 'not a listing page'],
    ['?url=%2Frental%2Fabc', 'not a listing page'],
    ['?url=%2Frental%2F123%2Fphotos', 'not a listing page'],
    ['?url=https%3A%2F%2Fstreeteasy.com%2F', 'not a listing page'],
    ['?url=%2Frental%2F1234567890123', 'not a listing page'],
    [`?url=${'%2F'.repeat(2049)}`, 'url'],
  ])('%s is a 400 naming url (%s)', async (query, reason) => {
    const { status, body } = await getJson<ErrorJson>(t, `/v1/property/by-url${query}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe('INVALID_PARAMS');
    expect(body.error.details?.params?.[0]?.parameter).toBe('url');
    expect(body.error.message).toContain('"url"');
    expect(body.error.message).toContain(reason);
  });
});

describe('authentication', () => {
  it('a missing key is 401 MISSING_API_KEY with a resource-metadata pointer', async () => {
    for (const path of [`/v1/property/${known.id}`, `/v1/property/by-url?url=${known.url_path}`]) {
      const response = await t.getAs(null, path);
      expect(response.status).toBe(401);
      expect(((await response.json()) as ErrorJson).error.code).toBe('MISSING_API_KEY');
      expect(response.headers.get('www-authenticate')).toContain('resource_metadata=');
    }
  });

  it('a bad key is 401 before the id is looked at', async () => {
    const response = await t.getAs('STOOP-00000000-0000-4000-8000-000000000000', '/v1/property/abc');
    expect(response.status).toBe(401);
    expect(((await response.json()) as ErrorJson).error.code).toBe('INVALID_API_KEY');
  });
});
