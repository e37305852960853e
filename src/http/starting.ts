/**
 * The listening socket of `npm start`, bound before the slow part of the
 * start (schema, demo market, composition) and kept until shutdown, so a
 * client never meets "connection refused" while the node prepares.
 *
 * Contract while starting (before `serve`):
 * - `GET /v1/health` is 200 with the shape of the real health answer
 *   (`live: true`, `ready: false`, the readiness components as the boot
 *   reports them, e.g. `demo: loading 37%`); `GET /v1/health/live` is 200;
 *   `GET /v1/health/ready` is 503 `SERVICE_UNAVAILABLE` naming what is pending
 *   (`Retry-After: 1`, as the application's readiness route);
 * - `GET /` for a browser is a small HTML page saying so (503, refreshes itself);
 * - everything else is 503 `SERVICE_UNAVAILABLE` in the one error envelope,
 *   saying what the node is doing;
 * - every answer carries `X-Request-Id`, and the other 503s `Retry-After: 5`.
 *
 * Then the Fastify application, built with `serverFactory` over the same
 * server, takes the socket over (`serve`): the `request` listener is swapped
 * in one step, so every request is answered by exactly one of the two, and
 * kept-alive connections carry on with the application.
 */
import { randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyServerFactory, RawServerDefault } from 'fastify';
import type { Config } from '../config.ts';
import { NOT_READY_RETRY_AFTER_S, notReadyError } from '../modules/health/health.routes.ts';
import type { Health } from '../modules/health/health.schema.ts';
import { noBackfillCoverage } from '../modules/health/health.service.ts';
import type { ReadinessRegistry } from '../modules/health/readiness.ts';
import { httpEdge } from './edge.ts';
import { ApiError, errorBody } from './errors.ts';

/** Seconds a client is told to wait before asking a starting node again. */
const STARTING_RETRY_AFTER_S = 5;

export interface StartingServer {
  /** The server the application is built over (`serverFactory` returns it). */
  readonly server: Server;
  /** Where it listens, as Fastify's `listen` reports it (`http://127.0.0.1:8080`). */
  readonly url: string;
  /** For `Fastify({ serverFactory })`: hands the application this server and keeps its handler for `serve`. */
  readonly serverFactory: FastifyServerFactory<RawServerDefault>;
  /** Every request from now on goes to the application (call once it is ready). */
  serve(): void;
  /**
   * Stops accepting connections and closes the idle ones (and each one that
   * falls idle after); resolves once every connection has ended (the
   * application ends its streams on close). `now`: every connection is cut.
   */
  close(options?: { now?: boolean }): Promise<void>;
}

/**
 * Binds `config.host:config.port` with the starting handler. `localhost` is
 * bound on each address it resolves to, as Fastify's `listen` does.
 */
export async function listenWhileStarting(
  config: Config,
  readiness: ReadinessRegistry,
): Promise<StartingServer> {
  // The same Node server options, timeouts and connection cap the application's edge declares.
  const edge = httpEdge(config.http, config.publicUrl).fastifyOptions;
  const create = (): Server => {
    const server = createServer(edge.http);
    server.keepAliveTimeout = edge.keepAliveTimeout;
    server.requestTimeout = edge.requestTimeout;
    server.setTimeout(edge.connectionTimeout);
    return server;
  };
  const startedAt = Date.now();
  const starting = startingHandler(config, readiness, startedAt);
  const main = create();
  main.maxConnections = config.http.maxConnections;
  main.on('request', starting);
  await listen(main, config.port, config.host);
  const address = main.address() as AddressInfo;
  const servers = [main];
  if (config.host === 'localhost') {
    const resolved = await lookup('localhost', { all: true }).catch(() => []);
    const others = resolved.filter((a) => a.address !== address.address);
    for (const other of others) {
      const server = create();
      server.on('request', starting);
      // As Fastify: a secondary address that cannot be bound is not a failed start.
      await listen(server, address.port, other.address).then(
        () => servers.push(server),
        () => {},
      );
    }
  }

  let handler: RequestListener | null = null;
  return {
    server: main,
    url: urlOf(address),
    serverFactory: (fastifyHandler) => {
      handler = fastifyHandler as RequestListener;
      return main;
    },
    serve: () => {
      if (handler === null) throw new Error('the application was not built over this server');
      for (const server of servers) {
        // One synchronous step: a request is emitted to the old listener or the new one, never to neither.
        server.removeListener('request', starting);
        server.on('request', handler);
      }
    },
    close: async (options = {}) => {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              // Node closes the idle connections when it closes; one answered later may stay kept alive.
              const sweep = setInterval(() => server.closeIdleConnections(), 100);
              server.close(() => {
                clearInterval(sweep);
                resolve();
              });
              if (options.now) server.closeAllConnections();
            }),
        ),
      );
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => reject(error);
    server.once('error', failed);
    server.listen({ port, host }, () => {
      server.removeListener('error', failed);
      resolve();
    });
  });
}

/** As Fastify's `listen` reports it: the wildcard IPv4 address as loopback, IPv6 in brackets. */
function urlOf(address: AddressInfo): string {
  if (address.family === 'IPv6' || address.address.includes(':')) {
    return `http://[${address.address}]:${address.port}`;
  }
  const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address;
  return `http://${host}:${address.port}`;
}

/** What the node is doing, for messages: the first pending start step. */
function phrase(readiness: ReadinessRegistry): string {
  const states = readiness.states();
  if (!states.schema.ready) return 'preparing the database schema';
  if (!states.demo.ready) {
    const percent = /(\d+)%/.exec(states.demo.detail ?? '')?.[1];
    return percent === undefined ? 'loading the demo market' : `loading the demo market (${percent}%)`;
  }
  return 'starting its services';
}

function startingHandler(config: Config, readiness: ReadinessRegistry, startedAt: number): RequestListener {
  const { publicUrl } = config;
  const uptimeSeconds = () => Math.floor((Date.now() - startedAt) / 1000);

  const health = (): Health => ({
    // Dependencies are probed once the services run; a store that cannot be opened fails the start instead.
    status: 'ok',
    live: true,
    ready: false,
    readiness: { pending: readiness.pending(), components: readiness.states() },
    version: config.version,
    uptimeSeconds: uptimeSeconds(),
    time: new Date().toISOString(),
    database: { dialect: config.dialect, status: 'ok', latencyMs: null },
    limits: { backend: config.redisUrl ? 'redis' : 'memory', status: 'ok', latencyMs: null },
    data: { searchRentals: null, searchSales: null, buildings: null, oldestAgeSeconds: null },
    pipeline: {
      upstream: config.upstream.url
        ? 'reso'
        : config.demo.enabled && config.simulator.enabled
          ? 'simulator'
          : null,
      lastFailure: null,
      backgroundPending: 0,
      latestEventSequence: null,
    },
    background: {
      backfill: noBackfillCoverage(false),
      jobs: [],
    },
  });

  const unavailable = (message: string, requestId: string) => {
    const pending = readiness.pending();
    const error = new ApiError('SERVICE_UNAVAILABLE', message, {
      pending,
      retryAfter: STARTING_RETRY_AFTER_S,
    });
    return errorBody(error, requestId, publicUrl);
  };

  return (request: IncomingMessage, response: ServerResponse) => {
    const requestId = randomUUID();
    response.setHeader('X-Request-Id', requestId);
    response.setHeader('Cache-Control', 'no-store');
    // As the edge does: a body this handler will not read is not waited for.
    if (
      request.headers['content-length'] !== undefined ||
      request.headers['transfer-encoding'] !== undefined
    ) {
      response.setHeader('Connection', 'close');
    }
    const read = request.method === 'GET' || request.method === 'HEAD';
    const path = (request.url ?? '/').split('?')[0];

    if (read && path === '/v1/health') return send(response, 200, health());
    if (read && path === '/v1/health/live') {
      return send(response, 200, { status: 'live', uptimeSeconds: uptimeSeconds() });
    }
    if (read && path === '/v1/health/ready') {
      // As the application's readiness route answers a node that is not ready.
      response.setHeader('Retry-After', String(NOT_READY_RETRY_AFTER_S));
      const state = {
        checks: { database: 'ok', limits: 'ok' } as const,
        pending: readiness.pending(),
        components: readiness.states(),
      };
      const error = notReadyError(state, 'starting');
      return send(response, 503, errorBody(error, requestId, publicUrl));
    }
    response.setHeader('Retry-After', String(STARTING_RETRY_AFTER_S));
    const message = `Stoop is starting: ${phrase(readiness)}. Retry shortly; GET /v1/health shows progress.`;
    if (read && path === '/' && (request.headers.accept ?? '').includes('text/html')) {
      return sendHtml(response, startingPage(message));
    }
    return send(response, 503, unavailable(message, requestId));
  };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  response.end(response.req.method === 'HEAD' ? undefined : text);
}

function sendHtml(response: ServerResponse, page: string): void {
  response.writeHead(503, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(page),
    'Content-Security-Policy':
      "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    'X-Content-Type-Options': 'nosniff',
  });
  response.end(response.req.method === 'HEAD' ? undefined : page);
}

/** A page that reloads itself until the real front page answers. */
function startingPage(message: string): string {
  const escaped = message.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="${STARTING_RETRY_AFTER_S}">
<title>Stoop is starting</title></head>
<body><h1>Stoop is starting</h1><p>${escaped}</p><p>This page reloads itself; <a href="/v1/health">/v1/health</a> shows progress.</p></body></html>
`;
}
