import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger } from 'fastify';
import { keyRoute } from '../../http/access.ts';
import { collectionErrors, ErrorResponse } from '../../http/schemas.ts';
import { eventStreamResponse, requireEventStream, SseHub, type SseStream } from '../../http/sse.ts';
import {
  EventFeedResponse,
  EventsQuery,
  EventsStreamHeaders,
  EventsStreamQuery,
  FEED_DEFAULT_LIMIT,
} from './events.schema.ts';
import type { EventFeedService, FeedFilter } from './events.service.ts';

/** How often an idle change stream sends a `heartbeat` event (well inside proxies' and the server's idle timeouts). */
export const FEED_HEARTBEAT_MS = 15_000;
/** The reconnection delay announced to EventSource clients. */
const FEED_RETRY_MS = 2000;

export interface EventRouteServices {
  events: EventFeedService;
  /**
   * The server's connection idle timeout (ms): heartbeats come at least twice
   * within it, so a quiet stream is never cut as idle.
   */
  idleTimeoutMs?: number;
}

/** The feed names no record by id: a keyed collection's errors. */
const errors = collectionErrors;

const EXACTNESS =
  'A consumer that starts at `after=0` and always passes `meta.next` as the next `after` sees every event exactly once, in sequence order (sequences can have gaps).';

/** `/events`: the listing change feed, paged or streamed (Pro+). */
export const eventRoutes: FastifyPluginAsyncTypebox<EventRouteServices> = async (app, options) => {
  const { events } = options;
  const heartbeatMs = Math.min(FEED_HEARTBEAT_MS, Math.floor((options.idleTimeoutMs ?? Infinity) / 2));
  const tags = ['Events'];
  const hub = new SseHub();
  // Open streams would hold the server's close: end them first.
  app.addHook('preClose', async () => hub.closeAll());

  app.get(
    '/events',
    {
      config: { access: keyRoute('PRO') },
      schema: {
        operationId: 'listEvents',
        tags,
        summary: 'Listing change feed',
        description: `Pages the durable listing event log in sequence order: every change the refresh pipeline detected (the types and payloads of \`webhooks\`), optionally narrowed to some \`types\` and \`areas\`. ${EXACTNESS} A page reaches at most to the end of the log as it was when read; \`meta.hasMore\` says whether to read on at once or later. To follow the log as it grows, use \`GET /v1/events/stream\`.`,
        querystring: EventsQuery,
        response: { 200: EventFeedResponse, ...errors },
      },
    },
    async (request): Promise<EventFeedResponse> => {
      const { query } = request;
      const limit = query.limit ?? FEED_DEFAULT_LIMIT;
      const page = await events.page({
        after: query.after ?? 0,
        limit,
        filter: events.filter(query.types, query.areas),
      });
      return {
        data: page.data,
        meta: { next: page.next, hasMore: page.hasMore, latest: page.latest, limit },
      };
    },
  );

  app.get(
    '/events/stream',
    {
      config: { access: keyRoute('PRO') },
      preHandler: requireEventStream,
      schema: {
        operationId: 'streamEvents',
        tags,
        summary: 'Listing change feed as a stream (SSE)',
        description: `The change feed of \`GET /v1/events\` as Server-Sent Events, pushed as events are appended. Requires \`Accept: text/event-stream\` (406 otherwise). Starts after \`Last-Event-ID\` (sent by EventSource clients when they reconnect), else after \`after\`, else at the end of the log. Counts as one request against the quota when opened.\n\nEvents:\n- (default \`message\` event) \`id\`: the event's sequence; \`data\`: a \`ListingEvent\` (see \`components/schemas/ListingEvent\`), in sequence order.\n- \`heartbeat\`: \`{at}\`, every ${heartbeatMs / 1000} s (keeps proxies and the server from closing a quiet stream).\n- \`error\`: \`{code: "unavailable", message}\` when the log cannot be read; the stream then closes, and a reconnecting client resumes from its \`Last-Event-ID\`.\n\n${EXACTNESS}`,
        querystring: EventsStreamQuery,
        headers: EventsStreamHeaders,
        response: {
          200: eventStreamResponse('A stream of listing events: `id` = sequence, `data` = ListingEvent.'),
          ...errors,
          406: ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const { query } = request;
      const filter = events.filter(query.types, query.areas);
      const lastEventId = request.headers['last-event-id'];
      const after =
        lastEventId !== undefined ? Number(lastEventId) : (query.after ?? (await events.latest()));
      const stream = hub.open(reply, { heartbeatMs, retryMs: FEED_RETRY_MS });
      void pump(stream, events, after, filter, request.log);
      return reply;
    },
  );
};

/** Writes the feed to the stream until the client goes away (or the log cannot be read). */
async function pump(
  stream: SseStream,
  events: EventFeedService,
  after: number,
  filter: FeedFilter,
  log: FastifyBaseLogger,
): Promise<void> {
  const abort = new AbortController();
  stream.onClose(() => abort.abort());
  try {
    for await (const page of events.follow(after, filter, abort.signal)) {
      for (const event of page.data) stream.send({ id: event.sequence, data: JSON.stringify(event) });
      await stream.drained();
      if (stream.closed) break;
    }
  } catch (error) {
    log.warn({ err: error }, 'event stream: the log could not be read');
    stream.send({
      event: 'error',
      data: JSON.stringify({
        code: 'unavailable',
        message: 'The event log cannot be read; reconnect to resume',
      }),
    });
  } finally {
    stream.end();
  }
}
