import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PUBLIC_ROUTE, UNMETERED_ROUTE } from '../../http/access.ts';
import { ApiError } from '../../http/errors.ts';
import { DEFAULT_PHOTO_SIZE, PHOTO_KEY_PATTERN, PHOTO_SIZES, type PhotoSize } from './photo-url.ts';
import {
  PhotoFileParams,
  PhotoParams,
  PhotoQuery,
  photoFileResponses,
  photoResponses,
} from './photos.schema.ts';
import type { PhotoService, PhotoVariant } from './photos.service.ts';
import { isRenderRefusal, type RenderRefusal } from './render-admission.ts';

/** The bytes behind a (key, size) never change: a year, and no revalidation while fresh. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
const KEY = new RegExp(PHOTO_KEY_PATTERN);

export interface PhotoRouteServices {
  photos: PhotoService;
}

function variantSender(photos: PhotoService) {
  return async (request: FastifyRequest, reply: FastifyReply, key: string, size: PhotoSize) => {
    // A render is charged to the caller as access control identified it: the client IP
    // when anonymous (always, on /fp/), else the key's account.
    const variant = await photos.variant(key, size, request.caller.bucket);
    if (!variant) throw ApiError.notFound('Photo', key);
    if (isRenderRefusal(variant)) throw renderRefused(variant);
    return sendVariant(request, reply, variant);
  };
}

function renderRefused(refusal: RenderRefusal): ApiError {
  const message =
    refusal.refused === 'budget'
      ? `Photo render budget of ${refusal.limit} new renders per minute exceeded; photos already rendered are still served`
      : `Too many photo renders under way for this client (at most ${refusal.limit} at once); retry shortly`;
  return new ApiError('RATE_LIMIT_EXCEEDED', message, { retryAfter: refusal.retryAfterSeconds });
}

/**
 * `/photos/{key}?size=`: the API endpoint SPEC lists among the no-key ones;
 * like every public data route it is rate-limited and counted (Free-tier
 * limits by IP without a key).
 */
export const photoApiRoutes: FastifyPluginAsyncTypebox<PhotoRouteServices> = async (app, { photos }) => {
  const serve = variantSender(photos);
  app.get(
    '/photos/:key',
    {
      config: { access: PUBLIC_ROUTE },
      preValidation: rejectMalformedKey,
      schema: {
        operationId: 'getPhoto',
        tags: ['Photos'],
        summary: 'Photo by key',
        description: `A listing or building photo as WebP, cropped to fill the requested size (default \`${DEFAULT_PHOTO_SIZE}\`). No key needed; metered like every public endpoint (Free-tier limits by IP without a key). Photo URLs in responses use the unmetered \`/fp/{key}-{size}.webp\` form instead. Rendering a variant not rendered yet is also charged to the caller's render budget (as on \`/fp/\`). Responses carry a strong ETag and are cacheable for a year; If-None-Match answers 304.`,
        params: PhotoParams,
        querystring: PhotoQuery,
        response: photoResponses,
      },
    },
    async (request, reply) =>
      serve(request, reply, request.params.key, request.query.size ?? DEFAULT_PHOTO_SIZE),
  );
};

/**
 * `/fp/{key}-{size}.webp`: the image-host layout that photo URLs in responses
 * point at (`PHOTO_BASE_URL`, this service by default). Requests are not
 * metered: a client rendering one search page loads dozens of images, which
 * must not spend the 10-per-minute Free window its data requests need, and
 * these are the URLs a CDN in front of the service fetches from. The work it
 * can cause is bounded: only keys in the photos table are served, a variant on
 * disk is served without limit, a new render is charged to the client IP's
 * render budget (429 past it), and the disk cache has a size bound.
 */
export const photoFileRoutes: FastifyPluginAsyncTypebox<PhotoRouteServices> = async (app, { photos }) => {
  const serve = variantSender(photos);
  app.get(
    '/fp/:key-:size.webp',
    {
      config: { access: UNMETERED_ROUTE },
      preValidation: rejectMalformedKey,
      schema: {
        operationId: 'getPhotoFile',
        tags: ['Photos'],
        summary: 'Photo file (image host)',
        description:
          "What photo URLs in responses point at: `{photo_base_url}/fp/<key>-<size>.webp`. Same bytes as `/v1/photos/{key}?size=<size>`. Public and outside request rate limits and quotas, like a CDN: a page of results loads many images. A variant already rendered is always served; rendering a new one (`X-Cache: MISS`) is charged to the client IP's render budget (`PHOTO_RENDERS_PER_MINUTE`, and a few renders at once), past which the answer is 429 `RATE_LIMIT_EXCEEDED` with Retry-After. Immutable: cache for a year; If-None-Match answers 304.",
        params: PhotoFileParams,
        response: photoFileResponses,
      },
    },
    async (request, reply) => serve(request, reply, request.params.key, request.params.size),
  );

  // Anything else under /fp/ is a file name that does not follow the layout;
  // say what the layout is instead of a bare "no route".
  app.get('/fp/*', { config: { access: UNMETERED_ROUTE }, schema: { hide: true } }, async (request) => {
    throw malformedFileName((request.params as { '*': string })['*']);
  });
};

async function rejectMalformedKey(request: FastifyRequest): Promise<void> {
  const { key } = request.params as { key?: string };
  if (key !== undefined && !KEY.test(key)) {
    throw ApiError.invalidParam({
      parameter: 'key',
      location: 'path',
      rule: 'pattern',
      message: 'must be a photo key: 32 lowercase hexadecimal characters',
    });
  }
}

function malformedFileName(file: string): ApiError {
  const layout = `photo files are named "<key>-<size>.webp" (a 32-character lowercase hex key; size one of ${PHOTO_SIZES.join(', ')})`;
  return ApiError.invalidParam({
    parameter: 'file',
    location: 'path',
    rule: file.endsWith('.webp') ? 'pattern' : 'extension',
    message: file.endsWith('.webp')
      ? `"${file.slice(0, 100)}" does not follow the layout: ${layout}`
      : `photos are served as WebP only: ${layout}`,
  });
}

/** If-None-Match (weak comparison, as RFC 9110 specifies for it): `*` or any listed tag. */
function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

function sendVariant(request: FastifyRequest, reply: FastifyReply, variant: PhotoVariant): FastifyReply {
  reply.header('ETag', variant.etag);
  reply.header('Cache-Control', IMMUTABLE);
  reply.header('X-Cache', variant.rendered ? 'MISS' : 'HIT');
  if (matchesIfNoneMatch(request.headers['if-none-match'], variant.etag)) return reply.code(304).send();
  reply.header('X-Content-Type-Options', 'nosniff');
  return reply.type('image/webp').send(variant.bytes);
}
