import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoPhotoSource } from '../src/demo/photo-source.ts';
import { PHOTO_SIZES, type PhotoSize, photoUrl } from '../src/modules/photos/photo-url.ts';
import { PhotoService, type PhotoVariant } from '../src/modules/photos/photos.service.ts';
import type { SearchResponse } from '../src/modules/search/search.schema.ts';
import { createTestApp, getJson, type TestApp } from './support/app.ts';
import { HAS_CHROMIUM, launchChromium } from './support/browser.ts';

interface PhotoRow {
  key: string;
  width: number;
  height: number;
  caption: string | null;
}

let t: TestApp;
let cacheDir: string;
let landscape: PhotoRow;
let portrait: PhotoRow;
let spare: PhotoRow[];

beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), 'stoop-photos-'));
  t = await createTestApp({ scale: 0.005, env: { PHOTO_CACHE_DIR: cacheDir } });
  const rows = await t.store.db
    .selectFrom('photos')
    .select(['key', 'width', 'height', 'caption'])
    .orderBy('key')
    .limit(200)
    .execute();
  landscape = rows.find((r) => r.height < r.width)!;
  portrait = rows.find((r) => r.height > r.width)!;
  spare = rows.filter((r) => r !== landscape && r !== portrait);
});
afterAll(async () => {
  await t?.close();
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
});

const fpPath = (key: string, size: PhotoSize = 'se_large_800_400') => `/fp/${key}-${size}.webp`;

async function fetchBytes(path: string, init?: RequestInit): Promise<{ response: Response; bytes: Buffer }> {
  const response = await t.getAs(null, path, init);
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** Files in the cache directory, relative, recursively. */
async function cachedFiles(): Promise<string[]> {
  return (await readdir(cacheDir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

function dimensionsOf(size: PhotoSize): { width: number; height: number } {
  const [, width, height] = /_(\d+)_(\d+)$/.exec(size)!;
  return { width: Number(width), height: Number(height) };
}

describe('the demo store has photos to serve', () => {
  it('has landscape and portrait originals', () => {
    expect(landscape).toBeDefined();
    expect(portrait).toBeDefined();
    expect(spare.length).toBeGreaterThan(10);
  });
});

describe('GET /fp/{key}-{size}.webp', () => {
  it.each(PHOTO_SIZES)('serves %s as WebP of exactly that size', async (size) => {
    for (const photo of [landscape, portrait]) {
      const { response, bytes } = await fetchBytes(fpPath(photo.key, size));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/webp');
      expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
      expect(bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
      expect(bytes.subarray(8, 12).toString('latin1')).toBe('WEBP');
      const meta = await sharp(bytes).metadata();
      expect(meta.format).toBe('webp');
      expect(meta.hasAlpha).toBe(false);
      expect({ width: meta.width, height: meta.height }).toEqual(dimensionsOf(size));
    }
  });

  it('sends immutable caching headers and a strong ETag; it is not metered', async () => {
    const { response } = await fetchBytes(fpPath(landscape.key));
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(response.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.has('x-ratelimit-limit')).toBe(false);
    expect(response.headers.has('x-quota-used')).toBe(false);
  });

  it('resolves the lead photo keys that search responses carry, through photoUrl', async () => {
    const { body } = await getJson<SearchResponse>(t, '/v1/search/rentals?perPage=50');
    const keys = body.data.map((l) => l.leadPhotoKey).filter((k): k is string => k !== null);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys.slice(0, 3)) {
      const url = new URL(photoUrl(t.config.photoBaseUrl, key));
      expect(url.origin).toBe('http://stoop.test');
      const { response, bytes } = await fetchBytes(url.pathname);
      expect(response.status).toBe(200);
      expect((await sharp(bytes).metadata()).width).toBe(800);
    }
  });

  it('gives different photos and different sizes different bytes', async () => {
    const a = (await fetchBytes(fpPath(spare[0]!.key))).bytes;
    const b = (await fetchBytes(fpPath(spare[1]!.key))).bytes;
    const small = (await fetchBytes(fpPath(spare[0]!.key, 'se_small_300_150'))).bytes;
    expect(a.equals(b)).toBe(false);
    expect(a.equals(small)).toBe(false);
  });
});

describe('GET /v1/photos/{key}', () => {
  it('defaults to se_large_800_400 and serves the same bytes as the /fp URL', async () => {
    const api = await fetchBytes(`/v1/photos/${landscape.key}`);
    const fp = await fetchBytes(fpPath(landscape.key, 'se_large_800_400'));
    expect(api.response.status).toBe(200);
    expect(api.response.headers.get('content-type')).toBe('image/webp');
    expect(api.bytes.equals(fp.bytes)).toBe(true);
    expect(api.response.headers.get('etag')).toBe(fp.response.headers.get('etag'));
  });

  it('honours ?size= for every size', async () => {
    for (const size of PHOTO_SIZES) {
      const { response, bytes } = await fetchBytes(`/v1/photos/${portrait.key}?size=${size}`);
      expect(response.status).toBe(200);
      const meta = await sharp(bytes).metadata();
      expect({ width: meta.width, height: meta.height }).toEqual(dimensionsOf(size));
      expect(bytes.equals((await fetchBytes(fpPath(portrait.key, size))).bytes)).toBe(true);
    }
  });

  it('needs no key and is metered like the other public routes', async () => {
    const { response } = await fetchBytes(`/v1/photos/${landscape.key}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-limit')).toBeTruthy();
    expect(response.headers.get('x-quota-used')).toBeTruthy();
    const keyed = await t.get(`/v1/photos/${landscape.key}?size=se_small_300_150`);
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get('x-ratelimit-limit')).toBe('1000000');
  });
});

describe('rendering and the disk cache', () => {
  it('renders a variant once, writes it atomically to the cache, then serves it from there', async () => {
    const photo = spare[2]!;
    const first = await fetchBytes(fpPath(photo.key, 'se_medium_500_250'));
    expect(first.response.headers.get('x-cache')).toBe('MISS');
    const files = (await cachedFiles()).filter((f) => f.endsWith(`${photo.key}-se_medium_500_250.webp`));
    expect(files).toHaveLength(1);
    expect((await readFile(files[0]!)).equals(first.bytes)).toBe(true);
    expect((await cachedFiles()).filter((f) => f.endsWith('.tmp'))).toEqual([]);

    const second = await fetchBytes(fpPath(photo.key, 'se_medium_500_250'));
    expect(second.response.headers.get('x-cache')).toBe('HIT');
    expect(second.bytes.equals(first.bytes)).toBe(true);
    expect(second.response.headers.get('etag')).toBe(first.response.headers.get('etag'));
  });

  it('keeps what it served in memory: wiping the disk cache does not make a hit a render', async () => {
    const photos = [landscape, portrait, spare[3]!];
    const before = await Promise.all(photos.map((p) => fetchBytes(fpPath(p.key, 'se_xlarge_1600_800'))));
    await rm(cacheDir, { recursive: true, force: true });
    for (const [i, photo] of photos.entries()) {
      const again = await fetchBytes(fpPath(photo.key, 'se_xlarge_1600_800'));
      expect(again.response.headers.get('x-cache')).toBe('HIT');
      expect(again.bytes.equals(before[i]!.bytes)).toBe(true);
      expect(again.response.headers.get('etag')).toBe(before[i]!.response.headers.get('etag'));
    }
    expect(await cachedFiles().catch(() => [])).toEqual([]);
  });

  it('is deterministic: a service with empty caches renders the same bytes', async () => {
    const photos = [landscape, portrait, spare[3]!];
    const served = await Promise.all(photos.map((p) => fetchBytes(fpPath(p.key, 'se_xlarge_1600_800'))));
    const emptyDir = await mkdtemp(join(tmpdir(), 'stoop-photos-empty-'));
    try {
      const fresh = new PhotoService({
        db: t.store.db,
        source: new DemoPhotoSource(),
        cacheDir: emptyDir,
        memoryCacheBytes: 0,
      });
      for (const [i, photo] of photos.entries()) {
        const again = await fresh.variant(photo.key, 'se_xlarge_1600_800');
        expect(again !== null && 'rendered' in again && again.rendered).toBe(true);
        const variant = again as PhotoVariant;
        expect(variant.bytes.equals(served[i]!.bytes)).toBe(true);
        expect(variant.etag).toBe(served[i]!.response.headers.get('etag'));
      }
    } finally {
      await rm(emptyDir, { recursive: true, force: true });
    }
  });

  it('renders once for a burst of concurrent first requests (single flight)', async () => {
    const photo = spare[4]!;
    const path = fpPath(photo.key, 'se_large_800_400');
    const results = await Promise.all(Array.from({ length: 12 }, () => fetchBytes(path)));
    expect(results.map((r) => r.response.status)).toEqual(Array(12).fill(200));
    expect(results.filter((r) => r.response.headers.get('x-cache') === 'MISS')).toHaveLength(1);
    for (const r of results) expect(r.bytes.equals(results[0]!.bytes)).toBe(true);
    expect((await cachedFiles()).filter((f) => f.includes(photo.key))).toHaveLength(1);
  });

  it('renders once across both routes and the automatic HEAD route', async () => {
    const photo = spare[5]!;
    const results = await Promise.all([
      fetchBytes(fpPath(photo.key)),
      fetchBytes(`/v1/photos/${photo.key}`),
      fetchBytes(fpPath(photo.key), { method: 'HEAD' }),
      fetchBytes(`/v1/photos/${photo.key}?size=se_large_800_400`),
    ]);
    expect(results.filter((r) => r.response.headers.get('x-cache') === 'MISS')).toHaveLength(1);
  });
});

describe('conditional requests and HEAD', () => {
  it('answers If-None-Match with the current ETag with 304 and no body', async () => {
    const { response } = await fetchBytes(fpPath(landscape.key));
    const etag = response.headers.get('etag')!;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"0000", ${etag}`, '*']) {
      const conditional = await fetchBytes(fpPath(landscape.key), {
        headers: { 'if-none-match': ifNoneMatch },
      });
      expect(conditional.response.status, ifNoneMatch).toBe(304);
      expect(conditional.bytes.length).toBe(0);
      expect(conditional.response.headers.get('etag')).toBe(etag);
      expect(conditional.response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    }
    const api = await fetchBytes(`/v1/photos/${landscape.key}`, { headers: { 'if-none-match': etag } });
    expect(api.response.status).toBe(304);
    expect(api.bytes.length).toBe(0);
  });

  it('serves the full body when If-None-Match names another version', async () => {
    const { response, bytes } = await fetchBytes(fpPath(landscape.key), {
      headers: { 'if-none-match': '"00000000000000000000000000000000"' },
    });
    expect(response.status).toBe(200);
    expect(bytes.length).toBeGreaterThan(100);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const get = await fetchBytes(fpPath(portrait.key));
    for (const path of [fpPath(portrait.key), `/v1/photos/${portrait.key}`]) {
      const head = await fetchBytes(path, { method: 'HEAD' });
      expect(head.response.status).toBe(200);
      expect(head.bytes.length).toBe(0);
      expect(head.response.headers.get('content-type')).toBe('image/webp');
      expect(head.response.headers.get('content-length')).toBe(String(get.bytes.length));
      expect(head.response.headers.get('etag')).toBe(get.response.headers.get('etag'));
    }
  });
});

describe('OpenAPI', () => {
  interface Operation {
    security?: unknown[];
    'x-metering'?: string;
    parameters?: { name: string; in: string; schema: { enum?: string[]; default?: string } }[];
    responses: Record<string, { content?: Record<string, { schema?: { type?: string; format?: string } }> }>;
  }

  it('documents both routes with a binary image/webp body and their access policies', async () => {
    const { body } = await getJson<{ paths: Record<string, { get?: Operation }> }>(t, '/openapi.json');
    const fp = body.paths['/fp/{key}-{size}.webp']?.get;
    const api = body.paths['/v1/photos/{key}']?.get;
    expect(fp).toBeDefined();
    expect(api).toBeDefined();
    for (const op of [fp!, api!]) {
      expect(op.responses['200']?.content?.['image/webp']?.schema).toEqual({
        type: 'string',
        format: 'binary',
      });
      expect(op.responses['304']?.content).toBeUndefined();
      // The error envelope, as a shared response (src/http/openapi-document.ts).
      expect(op.responses['404']).toHaveProperty(
        '$ref',
        expect.stringMatching(/^#\/components\/responses\/NotFound/),
      );
    }
    expect(fp!.security).toEqual([]);
    expect(fp!['x-metering']).toBe('none');
    expect(api!.security).toEqual([{}, { apiKey: [] }]);
    expect(api!['x-metering']).toBe('count');
    const size = api!.parameters?.find((p) => p.name === 'size');
    expect(size?.in).toBe('query');
    expect(size?.schema.enum).toEqual([...PHOTO_SIZES]);
    expect(size?.schema.default).toBe('se_large_800_400');
    expect(fp!.parameters?.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['path:key', 'path:size']);
    expect(Object.keys(body.paths).some((p) => p.startsWith('/fp/') && p !== '/fp/{key}-{size}.webp')).toBe(
      false,
    );
  });
});

// CI installs Chromium; a developer machine without it skips this, loudly.
describe.skipIf(!HAS_CHROMIUM && process.env.CI !== 'true')('in a real browser', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('decodes the /fp images an <img> points at, at their natural size', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/v1/health`);
    const srcs = [fpPath(landscape.key, 'se_large_800_400'), fpPath(portrait.key, 'se_small_300_150')];
    // Page code as a string: the test compiles without the DOM library.
    const sizes =
      await page.evaluate(`Promise.all(${JSON.stringify(srcs)}.map((src) => new Promise((resolve, reject) => {
      const img = new Image();
      img.onload = () => resolve([img.naturalWidth, img.naturalHeight]);
      img.onerror = () => reject(new Error('failed to load ' + src));
      img.src = src;
    })))`);
    expect(sizes).toEqual([
      [800, 400],
      [300, 150],
    ]);
    await page.close();
  });
});
