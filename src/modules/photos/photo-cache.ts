import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { LruIndex, sortInSlices } from './lru-index.ts';
import type { PhotoSize } from './photo-url.ts';

/** Background work of the cache that no request awaits; failures are reported, never thrown. */
export type CacheMaintenance = 'scan' | 'evict';

export interface PhotoDiskCacheOptions {
  readonly root: string;
  readonly namespace: string;
  /** Bound on the bytes of cached files under `root` (every namespace), enforced by LRU eviction. */
  readonly maxBytes: number;
  /** A scan or an eviction failed on a file (other than "already gone"). */
  readonly onMaintenanceError?: (error: unknown, operation: CacheMaintenance, file: string) => void;
}

/** Eviction frees down to this share of the bound, so a run of new variants does not evict on every write. */
const LOW_WATER = 0.9;
/** Files unlinked (or stat'ed, when scanning) at once: bounded work per turn of the event loop. */
const IO_SLICE = 64;
/** A `.tmp` file older than this is a crashed write (a write takes milliseconds): the scan removes it. */
const STALE_TEMP_MS = 60 * 60 * 1000;
const FAN_OUT = /^[0-9a-f]{2}$/;
const VARIANT_FILE = /^[0-9a-f]{32}-[a-z0-9_]+\.webp$/;

/**
 * Rendered variants on disk: `<root>/<namespace>/<key[0..2]>/<key>-<size>.webp`.
 * The namespace names the source and pipeline that produced the bytes, so a new
 * renderer starts from an empty directory instead of serving the old drawings;
 * the two-character fan-out keeps directories small at hundreds of thousands
 * of variants.
 *
 * Writes are atomic: bytes go to a temporary file in the same directory, which
 * is then renamed over the final name. A reader — in this process or another
 * sharing the directory — sees either no file or a complete one, never a torn
 * image; a crash mid-write leaves at most a `<name>.<pid>.<random>.tmp` file
 * that nothing serves (the start-up scan removes it after an hour).
 *
 * Bounded: the bytes of the files under `root` stay within `maxBytes`. An
 * in-memory LRU index knows each file's size and when this process last read
 * or wrote it; a write first evicts the least recently used files (async
 * unlinks, `IO_SLICE` at a time) until the new variant fits, and a variant that
 * cannot fit is served without being cached. Eviction is safe under concurrent
 * reads: a reader that opened a file before its unlink reads it whole, one that
 * comes after finds nothing and renders again. A hit costs no I/O beyond the
 * file read (the index is memory only).
 *
 * At start the index is rebuilt from the directory in the background: files are
 * ordered by their last access or modification time, older than anything this
 * process touches meanwhile, and variants of other namespaces (old renderers)
 * count towards the bound and go first. Until that scan ends the bound is not
 * enforced; then one eviction pass brings the directory within it.
 *
 * The bound is this process's: processes sharing a directory each count the
 * files they have seen, so the directory belongs to one server process.
 */
export class PhotoDiskCache {
  readonly root: string;
  readonly namespace: string;
  readonly maxBytes: number;
  /** Resolves once the start-up scan and the eviction it calls for are done; never rejects. */
  readonly indexed: Promise<void>;
  private readonly index = new LruIndex();
  /** Bytes of writes under way: counted against the bound before they reach the disk. */
  private reserved = 0;
  private scanning = true;
  /** Files removed from the index whose unlink has not completed: a read of one must not re-index it. */
  private readonly unlinking = new Set<string>();
  private eviction: Promise<void> | null = null;
  private readonly onMaintenanceError: NonNullable<PhotoDiskCacheOptions['onMaintenanceError']>;

  constructor(options: PhotoDiskCacheOptions) {
    this.root = options.root;
    this.namespace = options.namespace;
    this.maxBytes = options.maxBytes;
    this.onMaintenanceError = options.onMaintenanceError ?? (() => {});
    this.indexed = this.rebuildIndex();
  }

  pathOf(key: string, size: PhotoSize): string {
    return join(this.root, this.nameOf(key, size));
  }

  /** What the index holds: the bytes and number of cached files it accounts for. */
  usage(): { bytes: number; files: number } {
    return { bytes: this.index.bytes, files: this.index.files };
  }

  /** The cached bytes, or null when the variant is not on disk (never rendered, or evicted). */
  async read(key: string, size: PhotoSize): Promise<Buffer | null> {
    const name = this.nameOf(key, size);
    let bytes: Buffer;
    try {
      bytes = await readFile(join(this.root, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // Deleted behind the index's back (PHOTO_CACHE_DIR is documented as safe to delete).
      this.index.remove(name);
      return null;
    }
    // A file the index does not know yet (still scanning, or written by another process) is now known.
    if (!this.index.touch(name) && !this.unlinking.has(name)) this.index.add(name, bytes.length);
    return bytes;
  }

  /**
   * Records a use of the variant served from elsewhere (the memory cache in
   * front of this one), so eviction still goes in order of last use.
   */
  touch(key: string, size: PhotoSize): void {
    this.index.touch(this.nameOf(key, size));
  }

  /**
   * Stores a variant, evicting least recently used files first so the bound
   * holds. Resolves false when the variant was not cached: it alone exceeds the
   * bound, or writes under way leave it no room.
   */
  async write(key: string, size: PhotoSize, bytes: Buffer): Promise<boolean> {
    if (bytes.length > this.maxBytes) return false;
    const name = this.nameOf(key, size);
    this.reserved += bytes.length;
    try {
      if (!(await this.makeRoom())) return false;
      await writeAtomically(join(this.root, name), bytes);
      this.index.add(name, bytes.length);
      return true;
    } finally {
      this.reserved -= bytes.length;
    }
  }

  private nameOf(key: string, size: PhotoSize): string {
    return `${this.namespace}/${key.slice(0, 2)}/${key}-${size}.webp`;
  }

  private overBound(limit: number): boolean {
    return this.index.bytes + this.reserved > limit;
  }

  /** Evicts until what is cached plus what is being written fits; false when nothing is left to evict. */
  private async makeRoom(): Promise<boolean> {
    while (this.overBound(this.maxBytes)) {
      // Until the scan has found every file, the oldest ones are not known yet: evicting
      // now would take the recently used ones. The scan's own eviction pass follows it.
      if (this.scanning) return true;
      if (this.index.files === 0) return false;
      await this.evict();
    }
    return true;
  }

  /** One eviction pass at a time; every writer waiting for room shares it. */
  private evict(): Promise<void> {
    this.eviction ??= this.evictToLowWater().finally(() => {
      this.eviction = null;
    });
    return this.eviction;
  }

  private async evictToLowWater(): Promise<void> {
    const target = Math.floor(this.maxBytes * LOW_WATER);
    while (this.overBound(target)) {
      const victims: string[] = [];
      while (victims.length < IO_SLICE && this.overBound(target)) {
        const oldest = this.index.takeOldest();
        if (oldest === undefined) break;
        victims.push(oldest);
      }
      if (victims.length === 0) return;
      for (const name of victims) this.unlinking.add(name);
      await Promise.all(
        victims.map(async (name) => {
          try {
            await unlink(join(this.root, name));
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
              this.onMaintenanceError(error, 'evict', name);
          } finally {
            this.unlinking.delete(name);
          }
        }),
      );
    }
  }

  /** Indexes what is on disk (see the class comment), then evicts down to the bound. */
  private async rebuildIndex(): Promise<void> {
    try {
      // Other namespaces first (never served by this process), then by age. In slices:
      // a large cache holds hundreds of thousands of files, too many to order in one turn.
      const found = await sortInSlices(
        await this.scanDirectory(),
        (a, b) => Number(b.foreign) - Number(a.foreign) || a.time - b.time,
      );
      const older = new Map<string, number>();
      for (const [i, { name, bytes }] of found.entries()) {
        older.set(name, bytes);
        if (i % 4096 === 4095) await nextTurn();
      }
      this.index.prependOlder(older);
    } catch (error) {
      this.onMaintenanceError(error, 'scan', this.root);
    } finally {
      this.scanning = false;
    }
    if (this.overBound(this.maxBytes)) await this.evict();
  }

  private async scanDirectory(): Promise<{ name: string; bytes: number; time: number; foreign: boolean }[]> {
    const found: { name: string; bytes: number; time: number; foreign: boolean }[] = [];
    for (const namespace of await this.directories(this.root)) {
      for (const fanOut of await this.directories(join(this.root, namespace))) {
        if (!FAN_OUT.test(fanOut)) continue;
        const dir = `${namespace}/${fanOut}`;
        const files = await this.fileNames(join(this.root, dir));
        for (let i = 0; i < files.length; i += IO_SLICE) {
          await Promise.all(
            files.slice(i, i + IO_SLICE).map(async (file) => {
              const name = `${dir}/${file}`;
              const isVariant = VARIANT_FILE.test(file);
              if (!isVariant && !file.endsWith('.tmp')) return;
              const info = await stat(join(this.root, name)).catch(() => null);
              if (!info?.isFile()) return;
              if (isVariant) {
                found.push({
                  name,
                  bytes: info.size,
                  time: Math.max(info.atimeMs, info.mtimeMs),
                  foreign: namespace !== this.namespace,
                });
              } else if (Date.now() - info.mtimeMs > STALE_TEMP_MS) {
                await unlink(join(this.root, name)).catch((error: unknown) => {
                  if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
                    this.onMaintenanceError(error, 'scan', name);
                });
              }
            }),
          );
        }
      }
    }
    return found;
  }

  /** Subdirectory names; none when the directory does not exist (yet). */
  private async directories(path: string): Promise<string[]> {
    const entries = await readdir(path, { withFileTypes: true }).catch(notThere);
    return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  }

  private async fileNames(path: string): Promise<string[]> {
    const entries = await readdir(path, { withFileTypes: true }).catch(notThere);
    return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
  }
}

/** An empty listing for a directory that is not there; any other failure propagates. */
function notThere(error: unknown): never[] {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return [];
  throw error;
}

/** Temporary file in the same directory, synced, then renamed over the final name. */
async function writeAtomically(path: string, bytes: Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const file = await open(temp, 'wx');
    try {
      await file.writeFile(bytes);
      // On disk before the rename, or a power cut could leave the final name pointing at nothing.
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
