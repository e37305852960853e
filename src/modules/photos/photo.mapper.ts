import { photoUrl } from './photo-url.ts';
import type { ListingPhoto } from './photos.schema.ts';

/** A photo row as listing and building reads select it. */
export interface PhotoRow {
  key: string;
  width: number;
  height: number;
  caption: string | null;
}

/** The one mapping from a photo row to the API's PhotoRef. */
export function toPhoto(row: PhotoRow, photoBaseUrl: string): ListingPhoto {
  return {
    key: row.key,
    url: photoUrl(photoBaseUrl, row.key),
    width: row.width,
    height: row.height,
    caption: row.caption,
  };
}
