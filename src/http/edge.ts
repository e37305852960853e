/**
 * The HTTP edge: how much of the server one client can hold, and for how
 * long, and what a client gets when its HTTP never reaches a route (a request
 * too slow, too large or not HTTP at all).
 *
 * Contract:
 * - headers must arrive within `headersTimeoutMs` and the whole request within
 *   `requestTimeoutMs`, else 408 `REQUEST_TIMEOUT`; a connection on which
 *   nothing moves for `idleTimeoutMs` is closed, an idle kept-alive one after
 *   `keepAliveTimeoutMs`; at most `maxConnections` are open at once (more are
 *   closed as they arrive); bodies over `bodyLimitBytes` are 413;
 * - an answer given before the request body was read (401, 403, 413, 429 …)
 *   carries `Connection: close` and the connection is closed once it is sent,
 *   so a trickling body is never read on;
 * - an `Expect` other than `100-continue` is ignored, not a bare 417;
 * - what Node's HTTP parser rejects (malformed request line or header, bad
 *   framing: 400 `INVALID_REQUEST`; headers over 16 KiB: 431
 *   `HEADERS_TOO_LARGE`; timeouts: 408) is answered with the one error
 *   envelope, an `X-Request-Id`, and `Connection: close`, then the connection
 *   is closed.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError, errorBody } from './errors.ts';

export type EdgeLimits = Config['http'];

/** Node's default, stated so the 431 limit does not depend on a `--max-http-header-size` flag. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** How long a connection answered with a parser error may still drain what the client sends. */
const LINGER_MS = 1000;

/** At most one "connection cap reached" warning per this interval (with the count refused since). */
const DROP_REPORT_INTERVAL_MS = 10_000;

/** The error Node passes to `clientError`: a parser error (`HPE_*`), a timeout or a socket error. */
interface ClientError extends Error {
  code?: string;
  /** The parser's static description of what it rejected (never the client's bytes). */
  reason?: string;
}

/** The socket's response in progress; Node's own field, read as Node's default handler reads it. */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

export interface HttpEdge {
  /** Options for `Fastify()`: timeouts, body limit, Node server options, the client-error handler. */
  readonly fastifyOptions: ReturnType<typeof fastifyOptionsFor>;
  /**
   * Installs the rest on the app, before any route: the connection cap, the
   * Host check, and `Connection: close` on answers given before the body was
   * read. Call it after the hook that sets `X-Request-Id` and before access
   * control (a malformed request is refused before credentials are looked at).
   */
  install(app: FastifyInstance): void;
}

/** `publicUrl` (PUBLIC_URL) is the origin of the `docs` link of the errors answered here. */
export function httpEdge(limits: EdgeLimits, publicUrl: string): HttpEdge {
  // The id of the request a response belongs to, so a timeout answered below
  // Fastify carries the id that request was logged with.
  const requestIds = new WeakMap<ServerResponse, string>();
  return {
    fastifyOptions: fastifyOptionsFor(limits, requestIds, publicUrl),
    install: (app) => install(app, limits, requestIds),
  };
}

function fastifyOptionsFor(
  limits: EdgeLimits,
  requestIds: WeakMap<ServerResponse, string>,
  publicUrl: string,
) {
  return {
    bodyLimit: limits.bodyLimitBytes,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Fastify's name for the socket inactivity timeout.
    connectionTimeout: limits.idleTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      maxHeaderSize: MAX_HEADER_BYTES,
      // Node checks the two timeouts on this period (30 s by default, which
      // would let a request outlive its timeout by that much).
      connectionsCheckingInterval: Math.min(
        1000,
        Math.max(50, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)),
      ),
      // A missing Host is answered with the envelope (see `install`), not with Node's bare 400.
      requireHostHeader: false,
    } satisfies ServerOptions,
    clientErrorHandler: clientErrorHandler(limits, requestIds, publicUrl),
  };
}

/**
 * Answers an error raised below Fastify (Node's parser, the request and header
 * timeouts) with the error envelope and closes the connection. Socket errors
 * (a reset, a broken pipe) and sockets whose response has already started get
 * no answer: the connection is just closed.
 */
function clientErrorHandler(
  limits: EdgeLimits,
  requestIds: WeakMap<ServerResponse, string>,
  publicUrl: string,
) {
  const answered = new WeakSet<Socket>();
  // Fastify calls it with the app as `this`.
  return function answerClientError(
    this: { log: FastifyBaseLogger },
    error: ClientError,
    socket: HttpSocket,
  ): void {
    // A parser in error keeps reporting the bytes that still come in: one answer is enough.
    if (answered.has(socket)) return;
    answered.add(socket);
    const apiError = apiErrorFor(error, limits);
    const response = socket._httpMessage ?? null;
    if (apiError === null || socket.destroyed || !socket.writable || response?.headersSent === true) {
      socket.destroy();
      return;
    }
    const requestId = (response && requestIds.get(response)) ?? randomUUID();
    this.log.info(
      {
        reqId: requestId,
        code: error.code,
        statusCode: apiError.status,
        remoteAddress: socket.remoteAddress,
      },
      'client error answered',
    );
    const body = JSON.stringify(errorBody(apiError, requestId, publicUrl));
    socket.end(
      `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
    // Closing at once, with unread bytes from the client still queued, would
    // reset the connection and could discard the answer before the client
    // reads it; a client that does not hang up is cut off after a grace period.
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  };
}

function apiErrorFor(error: ClientError, limits: EdgeLimits): ApiError | null {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new ApiError(
      'REQUEST_TIMEOUT',
      `The request did not arrive in time: headers are due within ${seconds(limits.headersTimeoutMs)} and the whole request within ${seconds(limits.requestTimeoutMs)}`,
    );
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError(
      'HEADERS_TOO_LARGE',
      `The request line and headers exceed ${MAX_HEADER_BYTES / 1024} KiB`,
    );
  }
  if (error.code?.startsWith('HPE_')) {
    const reason = typeof error.reason === 'string' && error.reason !== '' ? `: ${error.reason}` : '';
    return new ApiError('INVALID_REQUEST', `The request is not valid HTTP/1.1${reason}`);
  }
  return null;
}

function seconds(ms: number): string {
  return `${ms / 1000} s`;
}

function install(
  app: FastifyInstance,
  limits: EdgeLimits,
  requestIds: WeakMap<ServerResponse, string>,
): void {
  app.server.maxConnections = limits.maxConnections;
  let refusedSinceReport = 0;
  let lastReportAt = Number.NEGATIVE_INFINITY;
  app.server.on('drop', () => {
    refusedSinceReport += 1;
    const now = Date.now();
    if (now - lastReportAt < DROP_REPORT_INTERVAL_MS) return;
    app.log.warn(
      { refused: refusedSinceReport, maxConnections: limits.maxConnections },
      'connection cap reached: new connections are refused',
    );
    refusedSinceReport = 0;
    lastReportAt = now;
  });

  // Node answers an `Expect` other than 100-continue with a bare 417; RFC 9110
  // §10.1.1 lets a server ignore it instead, so the request is served as any other.
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    app.server.emit('request', request, response);
  });

  // Callback hooks: they run on every request, and most of the time decide at once.
  app.addHook('onRequest', (request, reply, done) => {
    requestIds.set(reply.raw, request.id);
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400.
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      reply.header('Connection', 'close');
      done(new ApiError('INVALID_REQUEST', 'The request is not valid HTTP/1.1: the Host header is missing'));
      return;
    }
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.raw.complete) {
      done(null, payload);
      return;
    }
    // Hooks that settle at once run between the parser's "headers complete"
    // and its reading of a body that came in the same packet: let it finish
    // that packet before judging.
    setImmediate(() => {
      // Answered before the body arrived: reading on would let a client
      // trickle a body for as long as it likes, so the connection ends here.
      if (!request.raw.complete) reply.header('Connection', 'close');
      done(null, payload);
    });
  });
}
