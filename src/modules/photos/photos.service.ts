import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import sharp from 'sharp';
import type { Database } from '../../platform/db/tables.ts';
import { type CacheMaintenance, PhotoDiskCache } from './photo-cache.ts';
import type { PhotoRecord, PhotoSource } from './photo-source.ts';
import { type PhotoSize, photoSizeDimensions } from './photo-url.ts';
import { findPhoto } from './photos.repository.ts';
import {
  isRenderRefusal,
  RenderAdmission,
  type RenderBudgetOptions,
  type RenderRefusal,
} from './render-admission.ts';

/**
 * Names the resize/encode settings below; with the source id it forms the disk
 * cache namespace. Bump it when the output of `renderVariant` changes.
 */
const PIPELINE_VERSION = 'cover-flat-webp80-1';
const WEBP_QUALITY = 80;
/** A render that takes longer than this is abandoned (a hostile or broken original). */
const RENDER_TIMEOUT_SECONDS = 30;
/** PHOTO_CACHE_MAX_MB's default, for services built without one. */
export const DEFAULT_PHOTO_CACHE_MAX_BYTES = 2048 * 1024 * 1024;
/** PHOTO_MEMORY_CACHE_MB's default, for services built without one. */
export const DEFAULT_PHOTO_MEMORY_CACHE_BYTES = 32 * 1024 * 1024;
/** Renders of one client under way at once: above a browser's 6 connections per host. */
const DEFAULT_MAX_PENDING_RENDERS_PER_CLIENT = 8;

export interface PhotoVariant {
  /** WebP bytes of exactly the size's width × height. */
  readonly bytes: Buffer;
  /** Strong validator: a hash of the bytes, quoted as the ETag header wants it. */
  readonly etag: string;
  /** True for the one call that rendered this variant; false when it came from the cache. */
  readonly rendered: boolean;
}

/** A variant as the caches hold it. */
type CachedVariant = Omit<PhotoVariant, 'rendered'>;

export interface PhotoServiceOptions {
  db: Kysely<Database>;
  source: PhotoSource;
  /** Directory of the on-disk variant cache (PHOTO_CACHE_DIR). */
  cacheDir: string;
  /**
   * Renders running at once. Each holds a libuv worker thread, which the file
   * reads that serve cached photos need too; the default (2) leaves the rest of
   * the default pool of 4 free.
   */
  maxConcurrentRenders?: number;
  /** Bound on the bytes of the disk cache (PHOTO_CACHE_MAX_MB); least recently used variants go first. */
  maxCacheBytes?: number;
  /**
   * Bound on the bytes of variants kept in memory (PHOTO_MEMORY_CACHE_MB): the
   * most recently served ones, answered without a file read or a hash. 0: none.
   */
  memoryCacheBytes?: number;
  /**
   * Per-client admission of new renders (cache misses): a budget per minute and
   * a bound on renders under way. Without it renders are not metered (callers
   * inside the process: tests, tools).
   */
  renderBudget?: Omit<RenderBudgetOptions, 'maxPendingPerClient'> & { maxPendingPerClient?: number };
  /**
   * The disk cache failed: a read (other than "not there") or a write, for
   * which the variant is still served, rendered afresh (a broken cache costs
   * CPU, not availability); or the background scan or eviction, on `file`.
   * This hears about it.
   */
  onCacheError?: (error: unknown, operation: 'read' | 'write' | CacheMaintenance, file: string) => void;
}

/** Strong ETag of a variant: the first 128 bits of its SHA-256, hex. */
export function etagOf(bytes: Buffer): string {
  return `"${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}"`;
}

/**
 * Serves photo variants: each (key, size) is rendered from the source — cover
 * crop to the size, WebP — then read from the bounded disk cache until it is
 * evicted. Concurrent requests for a variant share one lookup and
 * load-or-render (single flight), so a burst of first requests renders once; across processes sharing
 * the cache directory a duplicate render is harmless, as the atomic write makes
 * the last identical copy win.
 *
 * A hit is never refused. A miss is a new render, charged to the client that
 * asked (`renderBudget`); a client past its budget, or with too many renders
 * under way, gets a `RenderRefusal` instead. A request that joins a render
 * already under way for the same variant is not charged.
 */
export class PhotoService {
  readonly cache: PhotoDiskCache;
  /**
   * Recently served variants, in front of the disk cache: a hit there costs a
   * file read (four trips to libuv's thread pool) and a SHA-256 of the bytes,
   * which made the image host the slowest cached route under load. Entries
   * never go stale: a (key, size) renders to the same bytes under one
   * namespace, and existence is still checked in the photos table first.
   */
  private readonly recent: LRUCache<string, CachedVariant> | null;
  private readonly inFlight = new Map<string, Promise<PhotoVariant | RenderRefusal | null>>();
  private readonly renders: RenderSlots;
  private readonly admission: RenderAdmission | null;

  constructor(private readonly options: PhotoServiceOptions) {
    this.cache = new PhotoDiskCache({
      root: options.cacheDir,
      namespace: `${options.source.id}.${PIPELINE_VERSION}`,
      maxBytes: options.maxCacheBytes ?? DEFAULT_PHOTO_CACHE_MAX_BYTES,
      onMaintenanceError: (error, operation, file) => options.onCacheError?.(error, operation, file),
    });
    const memoryBytes = options.memoryCacheBytes ?? DEFAULT_PHOTO_MEMORY_CACHE_BYTES;
    this.recent =
      memoryBytes > 0
        ? new LRUCache({ maxSize: memoryBytes, sizeCalculation: (variant) => variant.bytes.length })
        : null;
    this.renders = new RenderSlots(options.maxConcurrentRenders ?? 2);
    const budget = options.renderBudget;
    this.admission = budget
      ? new RenderAdmission({
          ...budget,
          maxPendingPerClient: budget.maxPendingPerClient ?? DEFAULT_MAX_PENDING_RENDERS_PER_CLIENT,
        })
      : null;
  }

  /**
   * The variant; null when no photo has this key; a refusal when it is not on
   * disk and `client` may not render now. `client` is whom a render is charged
   * to (the caller's limits bucket); undefined: a caller inside the process,
   * never refused.
   */
  async variant(key: string, size: PhotoSize, client?: string): Promise<PhotoVariant | RenderRefusal | null> {
    const id = `${key}-${size}`;
    const pending = this.inFlight.get(id);
    if (pending) {
      const outcome = await pending;
      if (outcome === null) return null;
      if (!isRenderRefusal(outcome)) return { ...outcome, rendered: false };
      // The request that started it was refused on its own budget; this one has its own.
      return this.variant(key, size, client);
    }
    // Set before the first await, so every concurrent request joins this one (lookup included).
    const job = this.lookUpAndLoad(id, key, size, client).finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, job);
    return job;
  }

  private async lookUpAndLoad(
    id: string,
    key: string,
    size: PhotoSize,
    client: string | undefined,
  ): Promise<PhotoVariant | RenderRefusal | null> {
    // The table decides existence even when a variant is on disk: a photo that
    // left the store stops being served.
    const photo = await findPhoto(this.options.db, key);
    if (!photo) return null;
    return this.loadOrRender(id, photo, size, client);
  }

  /** `id` names the variant (`<key>-<size>`) in the memory cache, as in `inFlight`. */
  private async loadOrRender(
    id: string,
    photo: PhotoRecord,
    size: PhotoSize,
    client: string | undefined,
  ): Promise<PhotoVariant | RenderRefusal> {
    const recent = this.recent?.get(id);
    if (recent) {
      this.cache.touch(photo.key, size);
      return { ...recent, rendered: false };
    }
    const cached = await this.cache.read(photo.key, size).catch((error: unknown) => {
      this.options.onCacheError?.(error, 'read', this.cache.pathOf(photo.key, size));
      return null;
    });
    if (cached) return { ...this.remember(id, cached), rendered: false };
    const ticket = this.admission && client !== undefined ? await this.admission.admit(client) : null;
    if (ticket && isRenderRefusal(ticket)) return ticket;
    try {
      const original = await this.options.source.sourceImage(photo);
      const bytes = await this.renders.run(() => renderVariant(original, size));
      try {
        await this.cache.write(photo.key, size, bytes);
      } catch (error) {
        this.options.onCacheError?.(error, 'write', this.cache.pathOf(photo.key, size));
      }
      // Kept in memory even when the disk write failed: a broken disk does not make every hit a render.
      return { ...this.remember(id, bytes), rendered: true };
    } finally {
      ticket?.release();
    }
  }

  /** The variant with its ETag, kept among the recent ones (a variant over the whole bound is not). */
  private remember(id: string, bytes: Buffer): CachedVariant {
    const variant = { bytes, etag: etagOf(bytes) };
    this.recent?.set(id, variant);
    return variant;
  }

  /** What the memory cache holds: bytes and variants. */
  memoryUsage(): { bytes: number; variants: number } {
    return { bytes: this.recent?.calculatedSize ?? 0, variants: this.recent?.size ?? 0 };
  }
}

/** Cover-crops an original of any format sharp reads to the size, centred, as opaque WebP. */
export async function renderVariant(original: Buffer, size: PhotoSize): Promise<Buffer> {
  const { width, height } = photoSizeDimensions(size);
  // Flattened: photos are opaque, and an alpha channel (SVG and PNG originals carry one) only adds bytes.
  return sharp(original)
    .timeout({ seconds: RENDER_TIMEOUT_SECONDS })
    .resize(width, height, { fit: 'cover', position: 'centre' })
    .flatten({ background: '#ffffff' })
    .webp({ quality: WEBP_QUALITY })
    .toBuffer();
}

/** At most `limit` tasks at once; the rest wait in arrival order. */
class RenderSlots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active++;
    // A finishing task hands its slot straight to the next waiter, so `active` stays put.
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
