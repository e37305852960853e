import { type Static, Type } from '@sinclair/typebox';
import { ErrorResponse, PatternString, StringEnum } from '../../http/schemas.ts';
import { DEFAULT_PHOTO_SIZE, PHOTO_KEY_PATTERN, PHOTO_SIZES } from './photo-url.ts';

const SIZES_NOTE = `\`<name>_<width>_<height>\`; the image is cropped to fill exactly that many pixels. One of ${PHOTO_SIZES.map((s) => `\`${s}\``).join(', ')}.`;

export const PhotoKey = PatternString(PHOTO_KEY_PATTERN, 'a photo key: 32 lowercase hex characters', {
  description: 'Photo key as listing and building responses carry it: 32 lowercase hex characters.',
});

export const PhotoParams = Type.Object({ key: PhotoKey });

export const PhotoQuery = Type.Object({
  size: Type.Optional(
    StringEnum(PHOTO_SIZES, { default: DEFAULT_PHOTO_SIZE, description: `Size suffix: ${SIZES_NOTE}` }),
  ),
});

export const PhotoFileParams = Type.Object({
  key: PhotoKey,
  size: StringEnum(PHOTO_SIZES, { description: `Size suffix: ${SIZES_NOTE}` }),
});

/**
 * The binary body as OpenAPI describes it. Not a TypeBox schema on purpose:
 * @fastify/swagger publishes a response's `content` map as is, and the route
 * sends a Buffer, which Fastify never passes through a serializer.
 */
const photoBody = {
  description: 'The photo as WebP, exactly the width × height its size names.',
  headers: {
    ETag: {
      type: 'string',
      description: 'Strong validator (a hash of the bytes): send it back in If-None-Match to get a 304.',
    },
    'Cache-Control': {
      type: 'string',
      description:
        '`public, max-age=31536000, immutable`: the bytes behind a URL never change, so any cache may keep them.',
    },
    'X-Cache': {
      type: 'string',
      enum: ['HIT', 'MISS'],
      description: '`MISS` when this request rendered the variant, `HIT` when it was already rendered.',
    },
  },
  content: { 'image/webp': { schema: { type: 'string', format: 'binary' } } },
};

const notModified = {
  type: 'null',
  description:
    'Not Modified: If-None-Match carried the current ETag. No body; ETag and Cache-Control repeated.',
};

/** Responses of the metered `/v1/photos/{key}` (429: request window, quota, or render budget). */
export const photoResponses = {
  200: photoBody,
  304: notModified,
  400: ErrorResponse,
  404: ErrorResponse,
  429: ErrorResponse,
  500: ErrorResponse,
  503: ErrorResponse,
};

/** Responses of the image-host path: requests are not metered, renders are (429 past the render budget). */
export const photoFileResponses = {
  200: photoBody,
  304: notModified,
  400: ErrorResponse,
  404: ErrorResponse,
  429: ErrorResponse,
  500: ErrorResponse,
};

export const ListingPhotoSchema = Type.Object(
  {
    key: Type.String({ pattern: PHOTO_KEY_PATTERN, description: '32-character hex photo key.' }),
    url: Type.String({
      description: 'Default-size image: `{photo_base_url}/fp/<key>-se_large_800_400.webp`.',
    }),
    width: Type.Integer({
      minimum: 1,
      description: 'Width in pixels of the image at `url` (other sizes: the suffix names them).',
    }),
    height: Type.Integer({ minimum: 1, description: 'Height in pixels of the image at `url`.' }),
    caption: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'PhotoRef', description: 'One photo: its key, default-size URL, dimensions and caption.' },
);
export type ListingPhoto = Static<typeof ListingPhotoSchema>;
