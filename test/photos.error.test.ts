import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoPhotoSource } from '../src/demo/photo-source.ts';
import type { PhotoRecord, PhotoSource } from '../src/modules/photos/photo-source.ts';
import { PHOTO_SIZES } from '../src/modules/photos/photo-url.ts';
import { PhotoService } from '../src/modules/photos/photos.service.ts';
import { createTestApp, type TestApp } from './support/app.ts';

interface ErrorJson {
  error: {
    code: string;
    message: string;
    status: number;
    details?: { params?: { parameter: string; location: string; rule: string; message: string }[] };
  };
}

let t: TestApp;
let cacheDir: string;
let key: string;
const UNKNOWN = '0123456789abcdef0123456789abcdef';

beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), 'stoop-photos-err-'));
  t = await createTestApp({ scale: 0.005, env: { PHOTO_CACHE_DIR: cacheDir } });
  const row = await t.store.db.selectFrom('photos').select('key').orderBy('key').executeTakeFirstOrThrow();
  key = row.key;
});
afterAll(async () => {
  await t?.close();
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
});

async function errorOf(path: string, init?: RequestInit): Promise<{ status: number; body: ErrorJson }> {
  // As the internal key: these tests are about parsing, not the anonymous rate limit.
  const response = await t.get(path, init);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  return { status: response.status, body: (await response.json()) as ErrorJson };
}

function expectParamError(
  result: { status: number; body: ErrorJson },
  parameter: string,
  location: string,
): string {
  expect(result.status).toBe(400);
  expect(result.body.error.code).toBe('INVALID_PARAMS');
  expect(result.body.error.details?.params?.[0]?.parameter).toBe(parameter);
  expect(result.body.error.details?.params?.[0]?.location).toBe(location);
  expect(result.body.error.message).toContain(parameter);
  return result.body.error.message;
}

describe('GET /v1/photos/{key} errors', () => {
  it.each([
    ['uppercase hex', () => key.toUpperCase()],
    ['too short', () => key.slice(0, 31)],
    ['too long', () => `${key}0`],
    ['not hex', () => `${key.slice(0, 31)}g`],
    ['a path traversal attempt', () => '..%2F..%2Fetc%2Fpasswd'],
  ])('a malformed key (%s) is a 400 naming key', async (_, make) => {
    const message = expectParamError(await errorOf(`/v1/photos/${make()}`), 'key', 'path');
    expect(message).toContain('32 lowercase hexadecimal characters');
  });

  it('a well-formed key that no photo has is a 404 NOT_FOUND envelope', async () => {
    const { status, body } = await errorOf(`/v1/photos/${UNKNOWN}`);
    expect(status).toBe(404);
    expect(body.error.code).toBe('NOT_FOUND');
    expect(body.error.message).toContain(UNKNOWN);
  });

  it.each(['size=huge', 'size=se_large_800_401', 'size='])(
    '?%s is a 400 naming size and listing the allowed values',
    async (query) => {
      const message = expectParamError(await errorOf(`/v1/photos/${key}?${query}`), 'size', 'query');
      for (const size of PHOTO_SIZES) expect(message).toContain(size);
    },
  );

  it('a repeated size is a 400 naming size', async () => {
    const query = 'size=se_large_800_400&size=se_small_300_150';
    expect(expectParamError(await errorOf(`/v1/photos/${key}?${query}`), 'size', 'query')).toContain(
      'must be a string',
    );
  });

  it('checks the key before the size, and never renders for a bad request', async () => {
    expectParamError(await errorOf(`/v1/photos/${UNKNOWN.toUpperCase()}?size=huge`), 'key', 'path');
    expect(await readdir(cacheDir)).toEqual([]);
  });
});

describe('GET /fp/{key}-{size}.webp path parsing', () => {
  it.each([
    ['uppercase hex', () => `/fp/${key.toUpperCase()}-se_large_800_400.webp`],
    ['a short key', () => `/fp/${key.slice(1)}-se_large_800_400.webp`],
    ['a dash inside the key', () => `/fp/${key.slice(0, 16)}-${key.slice(16)}-se_large_800_400.webp`],
    ['an empty key', () => '/fp/-se_large_800_400.webp'],
  ])('%s is a 400 naming key', async (_, make) => {
    expectParamError(await errorOf(make()), 'key', 'path');
  });

  it.each([
    ['an unknown size', 'se_huge_3000_1500'],
    ['an empty size', ''],
    ['a doubled extension', 'se_large_800_400.webp'],
  ])('%s is a 400 naming size and listing the allowed values', async (_, size) => {
    const message = expectParamError(await errorOf(`/fp/${key}-${size}.webp`), 'size', 'path');
    for (const allowed of PHOTO_SIZES) expect(message).toContain(allowed);
  });

  it.each([
    ['jpg', () => `/fp/${key}-se_large_800_400.jpg`],
    ['uppercase WEBP', () => `/fp/${key}-se_large_800_400.WEBP`],
    ['no extension', () => `/fp/${key}-se_large_800_400`],
    ['a trailing slash', () => `/fp/${key}-se_large_800_400.webp/`],
  ])('a wrong extension (%s) is a 400 naming file, saying photos are WebP', async (_, make) => {
    const message = expectParamError(await errorOf(make()), 'file', 'path');
    expect(message).toContain('WebP only');
    expect(message).toContain('<key>-<size>.webp');
  });

  it.each([
    ['no size', () => `/fp/${key}.webp`],
    ['an extra path segment', () => `/fp/x/${key}-se_large_800_400.webp`],
    ['nothing', () => '/fp/x.webp'],
  ])('a file name off the layout (%s) is a 400 naming file', async (_, make) => {
    const message = expectParamError(await errorOf(make()), 'file', 'path');
    expect(message).toContain('<key>-<size>.webp');
  });

  it('a well-formed key that no photo has is a 404 NOT_FOUND envelope, also for HEAD', async () => {
    const { status, body } = await errorOf(`/fp/${UNKNOWN}-se_large_800_400.webp`);
    expect(status).toBe(404);
    expect(body.error.code).toBe('NOT_FOUND');
    const head = await t.getAs(null, `/fp/${UNKNOWN}-se_large_800_400.webp`, { method: 'HEAD' });
    expect(head.status).toBe(404);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it('never answers a 304 for a photo that does not exist', async () => {
    const { status } = await errorOf(`/fp/${UNKNOWN}-se_large_800_400.webp`, {
      headers: { 'if-none-match': '*' },
    });
    expect(status).toBe(404);
  });
});

describe('existence follows the photos table', () => {
  it('stops serving a cached variant once its photo row is gone', async () => {
    const row = await t.store.db
      .selectFrom('photos')
      .selectAll()
      .orderBy('key', 'desc')
      .executeTakeFirstOrThrow();
    const path = `/fp/${row.key}-se_small_300_150.webp`;
    expect((await t.getAs(null, path)).status).toBe(200);
    await t.store.db.deleteFrom('photos').where('key', '=', row.key).execute();
    try {
      const { status, body } = await errorOf(path);
      expect(status).toBe(404);
      expect(body.error.code).toBe('NOT_FOUND');
    } finally {
      await t.store.db.insertInto('photos').values(row).execute();
    }
    expect((await t.getAs(null, path)).status).toBe(200);
  });
});

describe('metering', () => {
  let limited: TestApp;
  let limitedCache: string;
  beforeAll(async () => {
    limitedCache = await mkdtemp(join(tmpdir(), 'stoop-photos-limited-'));
    // The cache path runs through a regular file: every write fails, every read misses.
    await writeFile(join(limitedCache, 'not-a-dir'), '');
    limited = await createTestApp({
      scale: 0.005,
      env: { RATE_LIMIT_FREE: '2', PHOTO_CACHE_DIR: join(limitedCache, 'not-a-dir', 'photos') },
    });
  });
  afterAll(async () => {
    await limited?.close();
    if (limitedCache) await rm(limitedCache, { recursive: true, force: true });
  });

  it('rate-limits anonymous /v1/photos at the Free window, but never the /fp image host', async () => {
    const api = `/v1/photos/${key}?size=se_small_300_150`;
    expect((await limited.getAs(null, api)).status).toBe(200);
    expect((await limited.getAs(null, api)).status).toBe(200);
    const third = await limited.getAs(null, api);
    expect(third.status).toBe(429);
    expect(((await third.json()) as ErrorJson).error.code).toBe('RATE_LIMIT_EXCEEDED');
    for (let i = 0; i < 5; i++) {
      const response = await limited.getAs(null, `/fp/${key}-se_small_300_150.webp`);
      expect(response.status).toBe(200);
      expect(response.headers.has('x-ratelimit-limit')).toBe(false);
    }
  });

  it('still serves when the cache directory cannot be written: rendered once, then from memory', async () => {
    const first = await limited.getAs(null, `/fp/${key}-se_medium_500_250.webp`);
    const second = await limited.getAs(null, `/fp/${key}-se_medium_500_250.webp`);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect([first.headers.get('x-cache'), second.headers.get('x-cache')]).toEqual(['MISS', 'HIT']);
    const [a, b] = [Buffer.from(await first.arrayBuffer()), Buffer.from(await second.arrayBuffer())];
    expect(a.equals(b)).toBe(true);
    expect((await sharp(a).metadata()).width).toBe(500);
  });

  it('renders again on every request when neither cache can keep the variant', async () => {
    const service = new PhotoService({
      db: limited.store.db,
      source: new DemoPhotoSource(),
      cacheDir: limited.config.photoCacheDir,
      memoryCacheBytes: 0,
    });
    const first = await service.variant(key, 'se_medium_500_250');
    const second = await service.variant(key, 'se_medium_500_250');
    expect([first, second].map((v) => v !== null && 'rendered' in v && v.rendered)).toEqual([true, true]);
  });
});

describe('a source that fails', () => {
  function serviceWith(source: PhotoSource, dir: string): PhotoService {
    return new PhotoService({ db: t.store.db, source, cacheDir: dir });
  }

  it('rejects, caches nothing, and tries again on the next request', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stoop-photos-broken-'));
    try {
      let calls = 0;
      const broken: PhotoSource = {
        id: 'broken',
        sourceImage: async (_photo: PhotoRecord) => {
          calls++;
          return Buffer.from('this is not an image');
        },
      };
      const service = serviceWith(broken, dir);
      await expect(service.variant(key, 'se_large_800_400')).rejects.toThrow();
      await expect(service.variant(key, 'se_large_800_400')).rejects.toThrow();
      expect(calls).toBe(2);
      expect(await readdir(dir, { recursive: true })).not.toContainEqual(expect.stringMatching(/\.webp$/));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('shares one failure among concurrent callers', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stoop-photos-broken-'));
    try {
      let calls = 0;
      const service = serviceWith(
        {
          id: 'failing',
          sourceImage: async () => {
            calls++;
            await new Promise((resolve) => setTimeout(resolve, 20));
            throw new Error('object store unavailable');
          },
        },
        dir,
      );
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, () => service.variant(key, 'se_small_300_150')),
      );
      expect(results.every((r) => r.status === 'rejected')).toBe(true);
      expect(calls).toBe(1);
      expect(await service.variant(UNKNOWN, 'se_small_300_150')).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
