import { DEFAULT_PHOTO_SIZE, photoSizeDimensions, photoUrl } from './photo-url.ts';
import type { ListingPhoto } from './photos.schema.ts';

/** A photo row as listing and building reads select it. */
export interface PhotoRow {
  key: string;
  width: number;
  height: number;
  caption: string | null;
}

const DEFAULT_DIMENSIONS = photoSizeDimensions(DEFAULT_PHOTO_SIZE);

/**
 * The one mapping from a photo row to the API's PhotoRef. `width` × `height`
 * are those of the image `url` serves (the default size, cover-cropped from the
 * original), so a client can lay out the `<img>` before it loads.
 */
export function toPhoto(row: Omit<PhotoRow, 'width' | 'height'>, photoBaseUrl: string): ListingPhoto {
  return {
    key: row.key,
    url: photoUrl(photoBaseUrl, row.key),
    width: DEFAULT_DIMENSIONS.width,
    height: DEFAULT_DIMENSIONS.height,
    caption: row.caption,
  };
}
