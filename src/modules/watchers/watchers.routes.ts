import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { keyRoute } from '../../http/access.ts';
import { capPerPage, paramNames } from '../../http/envelope.ts';
import { assertPageInRange, pageLinks } from '../../http/pagination.ts';
import { collectionErrors, ErrorResponse } from '../../http/schemas.ts';
import { eventStreamResponse, requireEventStream, SseHub, type SseStream } from '../../http/sse.ts';
import { toWatcherView } from './watcher.mapper.ts';
import {
  CreateWatcherBody,
  UpdateWatcherBody,
  WatcherIdParams,
  WatcherListQuery,
  WatcherListResponse,
  WatcherResponse,
  WatcherStreamHeaders,
  watcherErrors,
} from './watchers.schema.ts';
import type { WatchersService } from './watchers.service.ts';

/** How often an idle watcher stream sends a `heartbeat` event. */
export const WATCHER_HEARTBEAT_MS = 15_000;
/** The reconnection delay announced to EventSource clients. */
const WATCHER_RETRY_MS = 2000;

export interface WatcherRouteServices {
  watchers: WatchersService;
  publicUrl: string;
  /** The server's connection idle timeout (ms): heartbeats come at least twice within it. */
  idleTimeoutMs?: number;
}

function accountOf(request: FastifyRequest): string {
  // Keyed routes only: access control has resolved an account.
  return request.caller.accountId as string;
}

function callerOf(request: FastifyRequest) {
  return { accountId: accountOf(request), tier: request.caller.tier };
}

const plainMeta = { dataAge: null, source: 'live' as const };

const STREAM_EVENTS = `Events:
- \`connected\`: \`{watcherId, status, lastSequence, after}\`, first: the stream is open and sends changes after \`after\`.
- \`change\`: \`id\` = the change's sequence (per watcher, from 1, no gaps); \`data\` = a \`WatcherChange\` (see \`components/schemas/WatcherChange\`): what one poll found changed, each item with \`oldValue\` and \`newValue\`.
- \`heartbeat\`: \`{at}\`, every 15 s at most (keeps proxies and the server from closing a quiet stream).
- \`error\`: \`{code, message}\` when a poll failed (\`fetch_failed\`: the live fetch failed and the stored copy was compared; \`poll_failed\`: the poll could not complete). The stream stays open. (An EventSource hands it to its \`error\` listeners with its own connection errors; this one carries \`data\`.)
- \`stopped\`: \`{reason: "paused" | "deleted", pausedReason}\` when the watcher is paused (by its owner, or by the service: \`quota_exceeded\`, \`tier_restricted\`) or deleted; the server then closes the stream (EventSource clients should \`close()\` on it, or they reconnect and get \`stopped\` again).`;

/**
 * Watchers (Business+), scoped to the caller's account: another account's
 * watcher answers 404 exactly like a missing one.
 */
export const watcherRoutes: FastifyPluginAsyncTypebox<WatcherRouteServices> = async (app, options) => {
  const { watchers, publicUrl } = options;
  const access = keyRoute('BUSINESS');
  const tags = ['Watchers'];
  const heartbeatMs = Math.min(WATCHER_HEARTBEAT_MS, Math.floor((options.idleTimeoutMs ?? Infinity) / 2));
  const hub = new SseHub();
  app.addHook('preClose', async () => hub.closeAll());

  app.post(
    '/watchers',
    {
      config: { access },
      schema: {
        operationId: 'createWatcher',
        tags,
        summary: 'Watch a listing, a building or a search',
        description:
          'Creates a watcher that polls its target every `pollInterval` seconds: a listing (fetched live through the refresh pipeline), a building (its record and on-market listings) or a search (its first 500 results, their prices and statuses). Each poll counts as one request against the account’s monthly quota; when quota and overage are used up the watcher pauses (`pausedReason: quota_exceeded`). What a poll finds changed is recorded as a `watcher.change` event (see `components/schemas/WatcherChange`), pushed on `GET /v1/watchers/{id}/stream` and delivered to the account’s webhooks subscribed to `watcher.change`. The target is read from the store now as the baseline; the first poll is due one interval later.',
        body: CreateWatcherBody,
        response: { 201: WatcherResponse, 409: ErrorResponse, ...watcherErrors },
      },
    },
    async (request, reply) => {
      const created = await watchers.create(callerOf(request), request.body);
      reply.header('Location', `${request.routeOptions.url}/${created.id}`);
      return reply.status(201).send({ data: toWatcherView(created), meta: plainMeta });
    },
  );

  const knownList = paramNames(WatcherListQuery);
  app.get(
    '/watchers',
    {
      config: { access },
      schema: {
        operationId: 'listWatchers',
        tags,
        summary: 'List your watchers',
        description: 'The caller account’s watchers, oldest first.',
        querystring: WatcherListQuery,
        response: { 200: WatcherListResponse, ...collectionErrors },
      },
    },
    async (request) => {
      const capped = capPerPage(request.query.perPage ?? 20, request.caller.maxPerPage);
      const page = { page: request.query.page ?? 1, perPage: capped.perPage };
      const result = await watchers.list(accountOf(request), page);
      assertPageInRange(page, result.total);
      return {
        data: result.items.map(toWatcherView),
        meta: {
          total: result.total,
          page: page.page,
          perPage: page.perPage,
          links: pageLinks(publicUrl, request.url, page, result.total, knownList),
          warnings: capped.warnings,
        },
      };
    },
  );

  app.get(
    '/watchers/:id',
    {
      config: { access },
      schema: {
        operationId: 'getWatcher',
        tags,
        summary: 'Get a watcher',
        description:
          'One of the caller account’s watchers: its target, interval, status (and why it is paused), last poll and last change.',
        params: WatcherIdParams,
        response: { 200: WatcherResponse, ...watcherErrors },
      },
    },
    async (request) => {
      const found = await watchers.get(accountOf(request), request.params.id);
      return { data: toWatcherView(found), meta: plainMeta };
    },
  );

  app.patch(
    '/watchers/:id',
    {
      config: { access },
      schema: {
        operationId: 'updateWatcher',
        tags,
        summary: 'Pause, resume or re-time a watcher',
        description:
          '`status: paused` stops polling (open streams get `stopped`); `status: active` resumes it, whatever paused it, with a poll due at once. A new `pollInterval` (same minimums as at creation) counts from now. `updatedAt` changes.',
        params: WatcherIdParams,
        body: UpdateWatcherBody,
        response: { 200: WatcherResponse, ...watcherErrors },
      },
    },
    async (request) => {
      const changed = await watchers.update(callerOf(request), request.params.id, request.body);
      return { data: toWatcherView(changed), meta: plainMeta };
    },
  );

  app.delete(
    '/watchers/:id',
    {
      config: { access },
      schema: {
        operationId: 'deleteWatcher',
        tags,
        summary: 'Delete a watcher',
        description:
          'Removes the watcher and the changes it kept; polling stops (a poll in flight records nothing), and open streams get `stopped`.',
        params: WatcherIdParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...watcherErrors },
      },
    },
    async (request, reply) => {
      await watchers.remove(accountOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/watchers/:id/stream',
    {
      config: { access },
      preHandler: requireEventStream,
      schema: {
        operationId: 'streamWatcherChanges',
        tags,
        summary: 'A watcher’s changes as a stream (SSE)',
        description: `The changes a watcher records, as Server-Sent Events, pushed as polls find them. Requires \`Accept: text/event-stream\` (406 otherwise); access, limits and an unknown watcher (404) are JSON errors before the stream starts. Starts after \`Last-Event-ID\` (sent by EventSource clients when they reconnect: changes are kept, so none is missed across reconnects or server restarts), else after \`after\`, else after the last change recorded (new changes only). Counts as one request when opened; polls are counted as they run.\n\n${STREAM_EVENTS}`,
        params: WatcherIdParams,
        querystring: Type.Object({
          after: Type.Optional(
            Type.Integer({
              minimum: 0,
              maximum: Number.MAX_SAFE_INTEGER,
              description:
                'Start after this change sequence (0: every change kept). `Last-Event-ID` takes precedence.',
            }),
          ),
        }),
        headers: WatcherStreamHeaders,
        response: {
          200: eventStreamResponse(
            '`connected`, then `change` events (`id` = sequence), `heartbeat`, `error`, and `stopped` at the end.',
          ),
          ...watcherErrors,
          406: ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request);
      const { id } = request.params;
      // Read before the stream opens: an unknown watcher or a store outage is a normal JSON error.
      const found = await watchers.get(accountId, id);
      const lastEventId = request.headers['last-event-id'];
      const after =
        lastEventId !== undefined ? Number(lastEventId) : (request.query.after ?? found.lastSequence);
      const stream = hub.open(reply, { heartbeatMs, retryMs: WATCHER_RETRY_MS });
      stream.send({
        event: 'connected',
        data: JSON.stringify({
          watcherId: id,
          status: found.status,
          lastSequence: found.lastSequence,
          after,
        }),
      });
      void pump(stream, watchers, accountId, id, after, request.log);
      return reply;
    },
  );
};

/** Writes a watcher's changes to the stream until it stops, the client goes away, or the store fails. */
async function pump(
  stream: SseStream,
  watchers: WatchersService,
  accountId: string,
  id: string,
  after: number,
  log: FastifyBaseLogger,
): Promise<void> {
  const abort = new AbortController();
  stream.onClose(() => abort.abort());
  try {
    for await (const item of watchers.follow(accountId, id, after, abort.signal)) {
      if (item.kind === 'change') {
        stream.send({ event: 'change', id: item.change.data.sequence, data: JSON.stringify(item.change) });
      } else if (item.kind === 'error') {
        stream.send({ event: 'error', data: JSON.stringify({ code: item.code, message: item.message }) });
      } else {
        stream.send({
          event: 'stopped',
          data: JSON.stringify({ reason: item.reason, pausedReason: item.pausedReason }),
        });
        break;
      }
      await stream.drained();
      if (stream.closed) break;
    }
  } catch (error) {
    log.warn({ err: error, watcherId: id }, 'watcher stream: the store could not be read');
    stream.send({
      event: 'error',
      data: JSON.stringify({
        code: 'unavailable',
        message: 'The watcher’s changes cannot be read; reconnect to resume',
      }),
    });
  } finally {
    stream.end();
  }
}
