/**
 * Photo rendering is metered per client and the disk cache is bounded:
 * misses (new renders) spend a per-client budget while hits stay free, the
 * cache evicts least recently used variants to stay within PHOTO_CACHE_MAX_MB,
 * survives a restart, and never serves a torn file while evicting.
 */
import { mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { DemoPhotoSource } from '../src/demo/photo-source.ts';
import { sortInSlices } from '../src/modules/photos/lru-index.ts';
import type { PhotoSource } from '../src/modules/photos/photo-source.ts';
import type { PhotoSize } from '../src/modules/photos/photo-url.ts';
import { findPhoto } from '../src/modules/photos/photos.repository.ts';
import {
  etagOf,
  PhotoService,
  type PhotoServiceOptions,
  type PhotoVariant,
  renderVariant,
} from '../src/modules/photos/photos.service.ts';
import { isRenderRefusal, type RenderRefusal } from '../src/modules/photos/render-admission.ts';
import { memoryRateLimiter, type RateLimiter } from '../src/platform/limits/limits.ts';
import { createTestApp, getJson, type TestApp } from './support/app.ts';

interface ErrorJson {
  error: { code: string; message: string; status: number; retryAfter?: number };
}

const LARGE: PhotoSize = 'se_large_800_400';
const fpPath = (key: string, size: PhotoSize = LARGE) => `/fp/${key}-${size}.webp`;

/** Bytes of every file under `dir` (temporary files included), or of the `.webp` files only. */
async function bytesUnder(dir: string, only?: RegExp): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  let total = 0;
  for (const entry of entries) {
    if (!entry.isFile() || (only && !only.test(entry.name))) continue;
    total += (await stat(join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

/** Photo keys that have a variant of `size` on disk under `dir`. */
async function keysOnDisk(dir: string, size: PhotoSize = LARGE): Promise<Set<string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  const suffix = `-${size}.webp`;
  return new Set(
    entries.filter((e) => e.isFile() && e.name.endsWith(suffix)).map((e) => e.name.slice(0, 32)),
  );
}

async function photoKeys(t: TestApp, count: number): Promise<string[]> {
  const rows = await t.store.db.selectFrom('photos').select('key').orderBy('key').limit(count).execute();
  expect(rows).toHaveLength(count);
  return rows.map((r) => r.key);
}

function variantOf(outcome: PhotoVariant | RenderRefusal | null): PhotoVariant {
  if (outcome === null || isRenderRefusal(outcome))
    throw new Error(`expected a variant, got ${JSON.stringify(outcome)}`);
  return outcome;
}

describe('the render budget, per client (over HTTP)', () => {
  let t: TestApp;
  let cacheDir: string;
  let keys: string[];
  const CLIENT_A = '203.0.113.10';
  const CLIENT_B = '203.0.113.20';
  const from = (ip: string, headers: Record<string, string> = {}): RequestInit => ({
    headers: { 'x-forwarded-for': ip, ...headers },
  });

  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'stoop-photos-budget-'));
    t = await createTestApp({
      scale: 0.005,
      // Loopback is the proxy, so X-Forwarded-For names the client: two clients from one test.
      env: { PHOTO_CACHE_DIR: cacheDir, PHOTO_RENDERS_PER_MINUTE: '3', TRUSTED_PROXIES: '127.0.0.1' },
    });
    keys = await photoKeys(t, 5);
  });
  afterAll(async () => {
    await t?.close();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  it('answers a miss past the budget with 429 RATE_LIMIT_EXCEEDED and Retry-After, on both routes', async () => {
    for (const key of keys.slice(0, 3)) {
      const response = await t.getAs(null, fpPath(key), from(CLIENT_A));
      expect(response.status).toBe(200);
      expect(response.headers.get('x-cache')).toBe('MISS');
    }
    for (const path of [fpPath(keys[3]!), `/v1/photos/${keys[3]}?size=${LARGE}`]) {
      const refused = await t.getAs(null, path, from(CLIENT_A));
      expect(refused.status, path).toBe(429);
      expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const body = (await refused.json()) as ErrorJson;
      expect(body.error.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(body.error.status).toBe(429);
      expect(body.error.retryAfter).toBe(retryAfter);
      expect(body.error.message).toContain('render budget of 3');
    }
    expect(await keysOnDisk(cacheDir)).not.toContain(keys[3]);
  });

  it('keeps serving that client what is already rendered, as 200 and 304', async () => {
    for (const key of keys.slice(0, 3)) {
      const hit = await t.getAs(null, fpPath(key), from(CLIENT_A));
      expect(hit.status).toBe(200);
      expect(hit.headers.get('x-cache')).toBe('HIT');
      expect(hit.headers.has('x-ratelimit-limit')).toBe(false);
      const etag = hit.headers.get('etag')!;
      const conditional = await t.getAs(null, fpPath(key), from(CLIENT_A, { 'if-none-match': etag }));
      expect(conditional.status).toBe(304);
    }
  });

  it('leaves another client its own budget, and what it renders is a hit for everyone', async () => {
    const other = await t.getAs(null, fpPath(keys[3]!), from(CLIENT_B));
    expect(other.status).toBe(200);
    expect(other.headers.get('x-cache')).toBe('MISS');
    const nowCached = await t.getAs(null, fpPath(keys[3]!), from(CLIENT_A));
    expect(nowCached.status).toBe(200);
    expect(nowCached.headers.get('x-cache')).toBe('HIT');
    expect((await t.getAs(null, fpPath(keys[4]!), from(CLIENT_A))).status).toBe(429);
  });

  it('documents the 429 of the image host in OpenAPI', async () => {
    const { body } = await getJson<{
      paths: Record<string, { get?: { responses: Record<string, unknown>; 'x-metering'?: string } }>;
    }>(t, '/openapi.json');
    const fp = body.paths['/fp/{key}-{size}.webp']?.get;
    expect(fp?.responses['429']).toBeDefined();
    expect(fp?.['x-metering']).toBe('none');
  });
});

describe('render admission (service)', () => {
  let t: TestApp;
  let keys: string[];
  const dirs: string[] = [];
  const demo = new DemoPhotoSource();

  beforeAll(async () => {
    t = await createTestApp({ scale: 0.005 });
    keys = await photoKeys(t, 6);
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  async function serviceWith(
    source: PhotoSource,
    renderBudget: NonNullable<PhotoServiceOptions['renderBudget']>,
  ): Promise<PhotoService> {
    const dir = await mkdtemp(join(tmpdir(), 'stoop-photos-admission-'));
    dirs.push(dir);
    return new PhotoService({ db: t.store.db, source, cacheDir: dir, renderBudget });
  }

  it('bounds the renders a client has under way, without holding up other clients or joiners', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = 0;
    const gated: PhotoSource = {
      id: 'gated',
      sourceImage: async (photo) => {
        started++;
        await gate;
        return demo.sourceImage(photo);
      },
    };
    const service = await serviceWith(gated, {
      limiter: memoryRateLimiter(),
      perMinute: 100,
      maxPendingPerClient: 2,
    });
    const underWay = [service.variant(keys[0]!, LARGE, 'ip:a'), service.variant(keys[1]!, LARGE, 'ip:a')];
    await vi.waitFor(() => expect(started).toBe(2));

    // Refused at once, not queued behind the client's own renders.
    const third = await Promise.race([
      service.variant(keys[2]!, LARGE, 'ip:a'),
      new Promise((resolve) => setTimeout(resolve, 5_000, 'still waiting')),
    ]);
    expect(third).toEqual({
      refused: 'pending',
      limit: 2,
      retryAfterSeconds: 1,
    });
    // Joining a render under way costs nothing; another client has its own bound.
    const joined = service.variant(keys[0]!, LARGE, 'ip:a');
    const other = service.variant(keys[2]!, LARGE, 'ip:b');
    await vi.waitFor(() => expect(started).toBe(3));
    release();
    const [first, second, joinedResult, otherResult] = (await Promise.all([...underWay, joined, other])).map(
      variantOf,
    );
    expect([first!.rendered, second!.rendered, joinedResult!.rendered, otherResult!.rendered]).toEqual([
      true,
      true,
      false,
      true,
    ]);
    expect(joinedResult!.bytes.equals(first!.bytes)).toBe(true);
    // Done renders give their places back.
    expect(variantOf(await service.variant(keys[3]!, LARGE, 'ip:a')).rendered).toBe(true);
  });

  it('counts renders in the process when the limits backend fails, with the same budget', async () => {
    const failures: unknown[] = [];
    const down: RateLimiter = {
      consume: () => Promise.reject(new Error('connection refused')),
      peek: () => Promise.reject(new Error('connection refused')),
    };
    const service = await serviceWith(demo, {
      limiter: down,
      perMinute: 2,
      onLimiterFailure: (error) => failures.push(error),
    });
    expect(variantOf(await service.variant(keys[0]!, LARGE, 'ip:a')).rendered).toBe(true);
    expect(variantOf(await service.variant(keys[1]!, LARGE, 'ip:a')).rendered).toBe(true);
    const refused = await service.variant(keys[2]!, LARGE, 'ip:a');
    expect(refused).toMatchObject({ refused: 'budget', limit: 2 });
    // Hits are not metered, outage or not.
    expect(variantOf(await service.variant(keys[0]!, LARGE, 'ip:a')).rendered).toBe(false);
    // One report for the outage, not one per image.
    expect(failures).toHaveLength(1);
  });

  it('does not wait on a limits backend that does not answer', async () => {
    const hanging: RateLimiter = {
      consume: () => new Promise(() => {}),
      peek: () => new Promise(() => {}),
    };
    const service = await serviceWith(demo, { limiter: hanging, perMinute: 5, limiterDeadlineMs: 50 });
    const started = Date.now();
    expect(variantOf(await service.variant(keys[4]!, LARGE, 'ip:a')).rendered).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a refused request that others joined does not refuse them: each is judged on its own budget', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    const slowLimiter: RateLimiter = {
      consume: async (bucket, limit) => {
        calls++;
        if (bucket.endsWith('ip:broke')) {
          await gate;
          return { allowed: false, limit, remaining: 0, resetAt: Date.now() + 30_000 };
        }
        return { allowed: true, limit, remaining: limit, resetAt: Date.now() + 60_000 };
      },
      peek: async (_bucket, limit) => ({ allowed: true, limit, remaining: limit, resetAt: Date.now() }),
    };
    const service = await serviceWith(demo, {
      limiter: slowLimiter,
      perMinute: 5,
      limiterDeadlineMs: 10_000,
    });
    const broke = service.variant(keys[5]!, LARGE, 'ip:broke');
    await vi.waitFor(() => expect(calls).toBe(1));
    const solvent = service.variant(keys[5]!, LARGE, 'ip:solvent');
    release();
    expect(await broke).toMatchObject({ refused: 'budget' });
    expect(variantOf(await solvent).rendered).toBe(true);
  });
});

describe('the disk cache bound (over HTTP)', () => {
  let t: TestApp;
  let cacheDir: string;
  let keys: string[];

  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'stoop-photos-bound-'));
    // About five 800×400 demo variants (5–7 KB each); renders unmetered for the test. The disk
    // tier alone: the memory cache in front of it would serve an evicted variant without a render.
    t = await createTestApp({
      scale: 0.005,
      env: {
        PHOTO_CACHE_DIR: cacheDir,
        PHOTO_CACHE_MAX_MB: '0.03',
        PHOTO_MEMORY_CACHE_MB: '0',
        PHOTO_RENDERS_PER_MINUTE: '1000000',
        TRUSTED_PROXIES: '127.0.0.1',
      },
    });
    keys = await photoKeys(t, 12);
    await t.ctx.photos.cache.indexed;
  });
  afterAll(async () => {
    await t?.close();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  it('never exceeds its bound, evicts the least recently used first, and renders an evicted variant again', async () => {
    const bound = t.config.photoCacheMaxBytes;
    expect(bound).toBe(Math.floor(0.03 * 1024 * 1024));
    const firstBytes = new Map<string, Buffer>();
    for (const [i, key] of keys.entries()) {
      const response = await t.getAs(null, fpPath(key));
      expect(response.status).toBe(200);
      expect(response.headers.get('x-cache')).toBe('MISS');
      firstBytes.set(key, Buffer.from(await response.arrayBuffer()));
      // The first variant is read after every render: always the most recently used.
      if (i > 0) expect((await t.getAs(null, fpPath(keys[0]!))).headers.get('x-cache')).toBe('HIT');
      expect(await bytesUnder(cacheDir)).toBeLessThanOrEqual(bound);
    }
    const onDisk = await keysOnDisk(cacheDir);
    expect(onDisk).toContain(keys[0]);
    const survivors = keys.slice(1).filter((key) => onDisk.has(key));
    expect(survivors.length).toBeGreaterThan(0);
    expect(survivors.length).toBeLessThan(keys.length - 1);
    // What is left is what was rendered last: eviction went in order of last use.
    expect(survivors).toEqual(keys.slice(keys.length - survivors.length));
    expect(t.ctx.photos.cache.usage()).toEqual({ bytes: await bytesUnder(cacheDir), files: onDisk.size });

    const evicted = keys[1]!;
    const again = await t.getAs(null, fpPath(evicted));
    expect(again.status).toBe(200);
    expect(again.headers.get('x-cache')).toBe('MISS');
    const bytes = Buffer.from(await again.arrayBuffer());
    expect(bytes.equals(firstBytes.get(evicted)!)).toBe(true);
    expect(await sharp(bytes).metadata()).toMatchObject({ format: 'webp', width: 800, height: 400 });
    expect(await bytesUnder(cacheDir)).toBeLessThanOrEqual(bound);
  });

  it('never serves a torn or wrong file while evicting under concurrent requests', async () => {
    const bound = t.config.photoCacheMaxBytes;
    const source = new DemoPhotoSource();
    const expected = new Map<string, Buffer>();
    for (const key of keys) {
      const photo = (await findPhoto(t.store.db, key))!;
      expected.set(key, await renderVariant(await source.sourceImage(photo), LARGE));
    }
    // 240 requests over 12 variants, 24 at a time, against a cache that holds about five.
    let misses = 0;
    let next = 0;
    // Each worker is its own client: one client may have only a few renders under way.
    const worker = async (client: number) => {
      while (next < 240) {
        const key = keys[(next++ * 7) % keys.length]!;
        const response = await t.getAs(null, fpPath(key), {
          headers: { 'x-forwarded-for': `198.51.100.${client + 1}` },
        });
        const bytes = Buffer.from(await response.arrayBuffer());
        expect(response.status).toBe(200);
        expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
        expect(bytes.equals(expected.get(key)!), key).toBe(true);
        expect(response.headers.get('etag')).toBe(etagOf(bytes));
        if (response.headers.get('x-cache') === 'MISS') misses++;
      }
    };
    await Promise.all(Array.from({ length: 24 }, (_, client) => worker(client)));
    expect(misses).toBeGreaterThan(keys.length);
    expect(await bytesUnder(cacheDir)).toBeLessThanOrEqual(bound);
  });
});

describe('the disk cache after a restart', () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    t = await createTestApp({ scale: 0.005 });
    dir = await mkdtemp(join(tmpdir(), 'stoop-photos-restart-'));
  });
  afterAll(async () => {
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('rebuilds its index from the directory and evicts down to its bound, oldest and foreign files first', async () => {
    const keys = await photoKeys(t, 6);
    const first = new PhotoService({ db: t.store.db, source: new DemoPhotoSource(), cacheDir: dir });
    await first.cache.indexed;
    const sizes: number[] = [];
    for (const key of keys) sizes.push(variantOf(await first.variant(key, LARGE)).bytes.length);
    // Last used an hour apart, keys[0] the longest ago.
    const hour = 3_600_000;
    for (const [i, key] of keys.entries()) {
      const when = new Date(Date.now() - (keys.length - i) * hour);
      await utimes(first.cache.pathOf(key, LARGE), when, when);
    }
    // A variant of an older renderer, used recently: never served again, so it goes first.
    const foreign = join(dir, 'old-renderer.v0', keys[0]!.slice(0, 2), `${keys[0]}-${LARGE}.webp`);
    await mkdir(dirname(foreign), { recursive: true });
    await writeFile(foreign, Buffer.alloc(4000));
    // Temporary files of a crashed write: removed once stale, kept while a write may be under way.
    const staleTemp = `${first.cache.pathOf(keys[1]!, LARGE)}.999.aaaaaaaaaaaa.tmp`;
    const freshTemp = `${first.cache.pathOf(keys[2]!, LARGE)}.999.bbbbbbbbbbbb.tmp`;
    await writeFile(staleTemp, 'x');
    await writeFile(freshTemp, 'y');
    await utimes(staleTemp, new Date(Date.now() - 2 * hour), new Date(Date.now() - 2 * hour));

    // Room for the newest three variants.
    const bound = sizes.slice(3).reduce((a, b) => a + b, 0) + 1;
    const restarted = new PhotoService({
      db: t.store.db,
      source: new DemoPhotoSource(),
      cacheDir: dir,
      maxCacheBytes: bound,
    });
    await restarted.cache.indexed;

    expect(await bytesUnder(dir, /\.webp$/)).toBeLessThanOrEqual(bound);
    expect(await bytesUnder(join(dir, 'old-renderer.v0'))).toBe(0);
    const onDisk = await keysOnDisk(dir);
    const survivors = keys.filter((key) => onDisk.has(key));
    expect(survivors.length).toBeGreaterThan(0);
    expect(survivors).toEqual(keys.slice(keys.length - survivors.length));
    expect(restarted.cache.usage().bytes).toBe(await bytesUnder(dir, /\.webp$/));
    await expect(stat(staleTemp)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await stat(freshTemp)).isFile()).toBe(true);

    // Survivors are served from disk; an evicted variant is rendered again, within the bound.
    expect(variantOf(await restarted.variant(keys[5]!, LARGE)).rendered).toBe(false);
    expect(variantOf(await restarted.variant(keys[0]!, LARGE)).rendered).toBe(true);
    expect(await bytesUnder(dir, /\.webp$/)).toBeLessThanOrEqual(bound);
  });

  it('does not cache a variant larger than the whole bound, and still serves it', async () => {
    const [key] = await photoKeys(t, 1);
    const tiny = await mkdtemp(join(tmpdir(), 'stoop-photos-tiny-'));
    try {
      const service = new PhotoService({
        db: t.store.db,
        source: new DemoPhotoSource(),
        cacheDir: tiny,
        maxCacheBytes: 100,
        memoryCacheBytes: 0,
      });
      await service.cache.indexed;
      expect(variantOf(await service.variant(key!, LARGE)).rendered).toBe(true);
      expect(variantOf(await service.variant(key!, LARGE)).rendered).toBe(true);
      expect(await bytesUnder(tiny)).toBe(0);
    } finally {
      await rm(tiny, { recursive: true, force: true });
    }
  });
});

describe('the memory cache in front of the disk', () => {
  let t: TestApp;
  const dirs: string[] = [];
  const freshDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stoop-photos-memory-'));
    dirs.push(dir);
    return dir;
  };
  const serviceOver = (cacheDir: string, options: Partial<PhotoServiceOptions> = {}) =>
    new PhotoService({ db: t.store.db, source: new DemoPhotoSource(), cacheDir, ...options });

  beforeAll(async () => {
    t = await createTestApp({ scale: 0.005 });
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('keeps the most recently served variants within its bound and serves them without the disk', async () => {
    const keys = await photoKeys(t, 6);
    const probe = serviceOver(await freshDir(), { memoryCacheBytes: 0 });
    const rendered = new Map<string, Buffer>();
    for (const key of keys) rendered.set(key, variantOf(await probe.variant(key, LARGE)).bytes);
    // Room for the last three variants served.
    const bound = keys.slice(3).reduce((sum, key) => sum + rendered.get(key)!.length, 0);
    const dir = await freshDir();
    const service = serviceOver(dir, { memoryCacheBytes: bound });
    for (const key of keys) expect(variantOf(await service.variant(key, LARGE)).rendered).toBe(true);
    expect(service.memoryUsage()).toEqual({ bytes: bound, variants: 3 });

    await rm(dir, { recursive: true, force: true });
    for (const key of keys.slice(3)) {
      const variant = variantOf(await service.variant(key, LARGE));
      expect(variant.rendered).toBe(false);
      expect(variant.bytes.equals(rendered.get(key)!)).toBe(true);
      expect(variant.etag).toBe(etagOf(variant.bytes));
    }
    // Dropped from memory and gone from the disk: rendered again, and the bound still holds.
    expect(variantOf(await service.variant(keys[0]!, LARGE)).rendered).toBe(true);
    expect(service.memoryUsage().bytes).toBeLessThanOrEqual(bound);
  });

  it('counts its hits as uses of the disk copy, so the disk evicts in order of last use', async () => {
    const keys = await photoKeys(t, 6);
    const probe = serviceOver(await freshDir(), { memoryCacheBytes: 0 });
    const sizes = [];
    for (const key of keys) sizes.push(variantOf(await probe.variant(key, LARGE)).bytes.length);
    const dir = await freshDir();
    // The disk holds about three variants; memory holds them all.
    const service = serviceOver(dir, { maxCacheBytes: Math.max(...sizes) * 3 + 1 });
    await service.cache.indexed;
    await service.variant(keys[0]!, LARGE);
    for (const key of keys.slice(1)) {
      expect(variantOf(await service.variant(key, LARGE)).rendered).toBe(true);
      expect(variantOf(await service.variant(keys[0]!, LARGE)).rendered).toBe(false);
    }
    const onDisk = await keysOnDisk(dir);
    expect(onDisk).toContain(keys[0]);
    expect(onDisk).not.toContain(keys[1]);
  });

  it('keeps nothing larger than its whole bound, and nothing at all when set to 0', async () => {
    const [key] = await photoKeys(t, 1);
    for (const memoryCacheBytes of [100, 0]) {
      const service = serviceOver(await freshDir(), { memoryCacheBytes });
      expect(variantOf(await service.variant(key!, LARGE)).rendered).toBe(true);
      expect(service.memoryUsage()).toEqual({ bytes: 0, variants: 0 });
      // Served from the disk copy.
      expect(variantOf(await service.variant(key!, LARGE)).rendered).toBe(false);
    }
  });
});

describe('ordering a large scan without stalling the event loop', () => {
  it('sorts like Array.prototype.sort, stably, across many slices', async () => {
    // Deterministic pseudo-random times with many ties; the index records the original order.
    const items = Array.from({ length: 30_001 }, (_, index) => ({ time: (index * 7919) % 1000, index }));
    const sorted = await sortInSlices(items, (a, b) => a.time - b.time);
    expect(sorted).toEqual([...items].sort((a, b) => a.time - b.time || a.index - b.index));
    expect(items[1]).toEqual({ time: 7919 % 1000, index: 1 });
    expect(await sortInSlices([], (a: number, b: number) => a - b)).toEqual([]);
  });
});

describe('configuration', () => {
  it('reads PHOTO_CACHE_MAX_MB (MiB, fractions allowed) and PHOTO_RENDERS_PER_MINUTE', () => {
    const config = loadConfig({ PHOTO_CACHE_MAX_MB: '0.5', PHOTO_RENDERS_PER_MINUTE: '30' });
    expect(config.photoCacheMaxBytes).toBe(512 * 1024);
    expect(loadConfig({ PHOTO_MEMORY_CACHE_MB: '0.25' }).photoMemoryCacheMaxBytes).toBe(256 * 1024);
    expect(loadConfig({ PHOTO_MEMORY_CACHE_MB: '0' }).photoMemoryCacheMaxBytes).toBe(0);
    expect(() => loadConfig({ PHOTO_MEMORY_CACHE_MB: '-1' })).toThrow(ConfigError);
    expect(config.photoRendersPerMinute).toBe(30);
  });

  it.each([
    [{ PHOTO_CACHE_MAX_MB: '0' }, 'PHOTO_CACHE_MAX_MB'],
    [{ PHOTO_CACHE_MAX_MB: 'lots' }, 'PHOTO_CACHE_MAX_MB'],
    [{ PHOTO_RENDERS_PER_MINUTE: '0' }, 'PHOTO_RENDERS_PER_MINUTE'],
    [{ PHOTO_RENDERS_PER_MINUTE: '1.5' }, 'PHOTO_RENDERS_PER_MINUTE'],
  ])('rejects %o naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(variable);
  });
});
