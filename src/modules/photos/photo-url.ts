/**
 * Photo URLs as responses carry them (SPEC "Photos"):
 * `{photo_base_url}/fp/<photo_key>-<size_suffix>.webp`.
 */

/** Size suffixes served (`<name>_<width>_<height>`); the first is the documented default. */
export const PHOTO_SIZES = [
  'se_large_800_400',
  'se_medium_500_250',
  'se_small_300_150',
  'se_xlarge_1600_800',
] as const;
export type PhotoSize = (typeof PHOTO_SIZES)[number];
export const DEFAULT_PHOTO_SIZE: PhotoSize = 'se_large_800_400';

/** A photo key: 32 lowercase hex characters. */
export const PHOTO_KEY_PATTERN = '^[0-9a-f]{32}$';

export function photoUrl(photoBaseUrl: string, key: string, size: PhotoSize = DEFAULT_PHOTO_SIZE): string {
  return `${photoBaseUrl}/fp/${key}-${size}.webp`;
}

/** Pixel dimensions a size suffix stands for (`se_large_800_400` → 800 × 400). */
export function photoSizeDimensions(size: PhotoSize): { width: number; height: number } {
  const [, width, height] = /_(\d+)_(\d+)$/.exec(size)!;
  return { width: Number(width), height: Number(height) };
}
