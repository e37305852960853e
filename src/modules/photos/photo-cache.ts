import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PhotoSize } from './photo-url.ts';

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
 * that nothing serves (safe to delete).
 */
export class PhotoDiskCache {
  constructor(
    readonly root: string,
    readonly namespace: string,
  ) {}

  pathOf(key: string, size: PhotoSize): string {
    return join(this.root, this.namespace, key.slice(0, 2), `${key}-${size}.webp`);
  }

  /** The cached bytes, or null when the variant has not been rendered yet. */
  async read(key: string, size: PhotoSize): Promise<Buffer | null> {
    try {
      return await readFile(this.pathOf(key, size));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async write(key: string, size: PhotoSize, bytes: Buffer): Promise<void> {
    const path = this.pathOf(key, size);
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
}
