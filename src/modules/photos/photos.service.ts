import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import sharp from 'sharp';
import type { Database } from '../../platform/db/tables.ts';
import { PhotoDiskCache } from './photo-cache.ts';
import type { PhotoRecord, PhotoSource } from './photo-source.ts';
import { type PhotoSize, photoSizeDimensions } from './photo-url.ts';
import { findPhoto } from './photos.repository.ts';

/**
 * Names the resize/encode settings below; with the source id it forms the disk
 * cache namespace. Bump it when the output of `renderVariant` changes.
 */
const PIPELINE_VERSION = 'cover-flat-webp80-1';
const WEBP_QUALITY = 80;
/** A render that takes longer than this is abandoned (a hostile or broken original). */
const RENDER_TIMEOUT_SECONDS = 30;

export interface PhotoVariant {
  /** WebP bytes of exactly the size's width × height. */
  readonly bytes: Buffer;
  /** Strong validator: a hash of the bytes, quoted as the ETag header wants it. */
  readonly etag: string;
  /** True for the one call that rendered this variant; false when it came from the cache. */
  readonly rendered: boolean;
}

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
  /**
   * The disk cache failed to read (other than "not there") or to write. The
   * variant is still served, rendered afresh: a broken cache costs CPU, not
   * availability. This hears about it.
   */
  onCacheError?: (error: unknown, operation: 'read' | 'write', key: string, size: PhotoSize) => void;
}

/** Strong ETag of a variant: the first 128 bits of its SHA-256, hex. */
export function etagOf(bytes: Buffer): string {
  return `"${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}"`;
}

/**
 * Serves photo variants: each (key, size) is rendered once from the source —
 * cover crop to the size, WebP — then read from the disk cache. Concurrent
 * requests for a variant share one load-or-render (single flight), so a burst
 * of first requests renders once; across processes sharing the cache directory
 * a duplicate render is harmless, as the atomic write makes the last identical
 * copy win.
 */
export class PhotoService {
  readonly cache: PhotoDiskCache;
  private readonly inFlight = new Map<string, Promise<PhotoVariant>>();
  private readonly renders: RenderSlots;

  constructor(private readonly options: PhotoServiceOptions) {
    this.cache = new PhotoDiskCache(options.cacheDir, `${options.source.id}.${PIPELINE_VERSION}`);
    this.renders = new RenderSlots(options.maxConcurrentRenders ?? 2);
  }

  /** The variant, or null when no photo has this key. */
  async variant(key: string, size: PhotoSize): Promise<PhotoVariant | null> {
    // The table decides existence even when a variant is on disk: a photo that
    // left the store stops being served.
    const photo = await findPhoto(this.options.db, key);
    if (!photo) return null;
    const id = `${key}-${size}`;
    const pending = this.inFlight.get(id);
    if (pending) return { ...(await pending), rendered: false };
    const job = this.loadOrRender(photo, size).finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, job);
    return job;
  }

  private async loadOrRender(photo: PhotoRecord, size: PhotoSize): Promise<PhotoVariant> {
    const cached = await this.cache.read(photo.key, size).catch((error: unknown) => {
      this.options.onCacheError?.(error, 'read', photo.key, size);
      return null;
    });
    if (cached) return { bytes: cached, etag: etagOf(cached), rendered: false };
    const original = await this.options.source.sourceImage(photo);
    const bytes = await this.renders.run(() => renderVariant(original, size));
    try {
      await this.cache.write(photo.key, size, bytes);
    } catch (error) {
      this.options.onCacheError?.(error, 'write', photo.key, size);
    }
    return { bytes, etag: etagOf(bytes), rendered: true };
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
