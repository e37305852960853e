/**
 * Where the original of a photo comes from. The service turns whatever a source
 * returns into every served size (cover crop, WebP), caches each variant on disk
 * and never asks the source again for that variant. The demo market has no real
 * photos, so its source draws them; an operator with real images implements this
 * interface over an object store or a directory and gives it to
 * the composition root (`photoSource` in `src/app.ts`).
 */
export interface PhotoRecord {
  /** 32 lowercase hex characters. */
  readonly key: string;
  readonly listingId: string | null;
  readonly buildingId: string | null;
  /** Display order within its listing or building; 0 is the lead photo. */
  readonly position: number;
  /** Size of the original, in pixels. */
  readonly width: number;
  readonly height: number;
  readonly caption: string | null;
  /** Seed the demo source draws the image from (null: derive it from the key); meaningless to other sources. */
  readonly renderSeed: number | null;
}

export interface PhotoSource {
  /**
   * Names this source's output and its version: part of the cache path, so a
   * changed renderer (or a switch to another source) never serves variants
   * produced by the old one from disk.
   */
  readonly id: string;
  /**
   * The original image, in any format sharp decodes (JPEG, PNG, WebP, AVIF,
   * SVG, TIFF…). Must be a pure function of the photo: the same photo always
   * yields the same bytes, since served variants are cached as immutable.
   */
  sourceImage(photo: PhotoRecord): Promise<Buffer>;
}
