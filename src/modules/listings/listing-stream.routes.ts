import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { keyRoute } from '../../http/access.ts';
import { assertPathId } from '../../http/path-id.ts';
import { ErrorResponse } from '../../http/schemas.ts';
import { eventStreamResponse, requireEventStream, SseHub } from '../../http/sse.ts';
import { ListingIdParams } from '../property/property.schema.ts';
import type { ListingStreamService } from './listing-stream.service.ts';

export interface ListingStreamRouteServices {
  listingStream: ListingStreamService;
}

/** `GET /listing/{id}`: the listing stream (SSE; Pro, Business, Internal). */
export const listingStreamRoutes: FastifyPluginAsyncTypebox<ListingStreamRouteServices> = async (
  app,
  { listingStream },
) => {
  const hub = new SseHub();
  app.addHook('preClose', async () => hub.closeAll());

  app.get(
    '/listing/:id',
    {
      config: { access: keyRoute('PRO') },
      preValidation: assertPathId('Listing'),
      preHandler: requireEventStream,
      schema: {
        operationId: 'streamListing',
        tags: ['Listings'],
        summary: 'Stream a listing: cached, then live (SSE)',
        description:
          'One-time fresh retrieval of a listing as Server-Sent Events. Requires `Accept: text/event-stream` (406 naming the media type otherwise). Access, limits and a listing the store does not have (404) are answered as JSON errors before the stream starts; the rate-limit and quota headers are on the stream response. Counts as one request.\n\nEvents, in this order:\n1. `cached`: the stored listing (a `ListingDetail`), at once.\n2. `live`: the listing fetched from upstream now (a `ListingDetail`); or, instead, `error`: `{code, message}` with `code` one of `fetch_failed` (upstream failed), `timeout` (no answer within the live budget, at most 8 s), `not_found` (upstream no longer has the listing). (An EventSource hands this event to its `error` listeners together with its own connection errors; this one carries `data`.)\n3. `done`: `{}`; the server then closes the stream (EventSource clients should call `close()` on `done`, or they reconnect and start a new stream).\n\nThe whole stream lasts under 10 s. For ongoing monitoring use the change feed (`GET /v1/events/stream`).',
        params: ListingIdParams,
        response: {
          200: eventStreamResponse('`cached`, then `live` or `error`, then `done`.'),
          400: ErrorResponse,
          401: ErrorResponse,
          403: ErrorResponse,
          404: ErrorResponse,
          406: ErrorResponse,
          429: ErrorResponse,
          500: ErrorResponse,
          503: ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      // Read before the stream opens: an unknown listing or a store outage is a normal JSON error.
      const cached = await listingStream.cached(id);
      const stream = hub.open(reply);
      stream.send({ event: 'cached', data: cached });
      void (async () => {
        try {
          const result = await listingStream.live(id);
          if (result.kind === 'live') stream.send({ event: 'live', data: result.json });
          else
            stream.send({
              event: 'error',
              data: JSON.stringify({ code: result.code, message: result.message }),
            });
        } catch (error) {
          request.log.warn({ err: error, listingId: id }, 'listing stream: live read failed');
          stream.send({
            event: 'error',
            data: JSON.stringify({ code: 'fetch_failed', message: 'The live fetch could not complete' }),
          });
        }
        stream.send({ event: 'done', data: '{}' });
        stream.end();
      })();
      return reply;
    },
  );
};
