/**
 * Server-Sent Events: the one writer behind every stream (the listing stream,
 * the change feed stream, later watcher streams).
 *
 * Contract:
 * - A stream is opened only after access control and every check that can
 *   fail has run: an error before that is the normal JSON error envelope; once
 *   open, the status is 200 and failures travel as SSE `error` events.
 * - The body is handed to Fastify as a stream (`reply.send`), not hijacked, so
 *   the headers set by the request hooks (X-Request-Id, X-RateLimit-*,
 *   X-Quota-*) are on the response, and the request is logged when it ends.
 * - A client that goes away (or a server that closes) ends the stream: its
 *   heartbeat timer is cleared and its close listeners run exactly once, so
 *   nothing outlives the connection.
 */
import { PassThrough } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';

export const EVENT_STREAM = 'text/event-stream';

/**
 * Whether the Accept header asks for `text/event-stream` (with a non-zero q).
 * Wildcards do not count: a stream-only URL answers 406 unless the client says
 * it reads a stream, as every EventSource client does.
 */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    if (type !== EVENT_STREAM) return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * A preHandler hook for stream-only routes: 406 naming the media type unless
 * the client accepts it. It runs after parameter validation, so a bad
 * parameter is the same 400 whatever the Accept header says.
 */
export async function requireEventStream(request: FastifyRequest): Promise<void> {
  if (!acceptsEventStream(request.headers.accept)) {
    throw new ApiError(
      'NOT_ACCEPTABLE',
      `This endpoint serves only ${EVENT_STREAM}: send "Accept: ${EVENT_STREAM}"`,
      { acceptable: [EVENT_STREAM] },
    );
  }
}

export interface SseFrame {
  /** The SSE event name; absent: a default `message` event. */
  event?: string;
  /** The event id (EventSource sends the last one back as `Last-Event-ID` on reconnect). */
  id?: string | number;
  /** The data, already serialized (JSON text without line breaks, or any text). */
  data: string | Buffer;
}

export interface SseOptions {
  /** Sends a `heartbeat` event this often (ms) while the stream is open; 0 or absent: none. */
  heartbeatMs?: number;
  /** The reconnection delay (ms) announced to EventSource clients; absent: theirs. */
  retryMs?: number;
}

const NEWLINE = /\r\n|\r|\n/;

/** One frame in the wire format: each data line prefixed, ended by a blank line. */
export function encodeFrame(frame: SseFrame): Buffer {
  let head = '';
  if (frame.event !== undefined) head += `event: ${frame.event}\n`;
  if (frame.id !== undefined) head += `id: ${frame.id}\n`;
  const data = typeof frame.data === 'string' ? frame.data : frame.data.toString('utf8');
  const body = data
    .split(NEWLINE)
    .map((line) => `data: ${line}\n`)
    .join('');
  return Buffer.from(`${head}${body}\n`);
}

/** One open stream. Writes after the stream ended are ignored. */
export class SseStream {
  private readonly body = new PassThrough();
  private heartbeat: NodeJS.Timeout | undefined;
  private ended = false;
  private readonly closeListeners = new Set<() => void>();

  private constructor(
    private readonly reply: FastifyReply,
    private readonly hub: SseHub,
  ) {}

  /** @internal use `SseHub.open`. */
  static start(reply: FastifyReply, hub: SseHub, options: SseOptions): SseStream {
    const stream = new SseStream(reply, hub);
    // The response closes when it ends or the connection drops, whichever comes first.
    reply.raw.once('close', () => stream.finish());
    reply
      .code(200)
      .header('content-type', `${EVENT_STREAM}; charset=utf-8`)
      .header('cache-control', 'no-store')
      .header('x-accel-buffering', 'no');
    // First bytes at once, so the client sees the headers without waiting for an event.
    stream.body.write(options.retryMs !== undefined ? `retry: ${options.retryMs}\n\n` : ': open\n\n');
    if (options.heartbeatMs && options.heartbeatMs > 0) {
      stream.heartbeat = setInterval(() => {
        stream.send({ event: 'heartbeat', data: JSON.stringify({ at: new Date().toISOString() }) });
      }, options.heartbeatMs);
      stream.heartbeat.unref();
    }
    void reply.send(stream.body);
    return stream;
  }

  /** True once the client went away or the stream was ended. */
  get closed(): boolean {
    return this.ended;
  }

  /**
   * Writes one frame. Returns false when the client's buffer is full (wait for
   * `drained()` before writing much more) or the stream is closed.
   */
  send(frame: SseFrame): boolean {
    if (this.ended) return false;
    return this.body.write(encodeFrame(frame));
  }

  /** Resolves when buffered frames have been handed to the socket, or the stream closed. */
  drained(): Promise<void> {
    if (this.ended || !this.body.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.body.off('drain', done);
        stopListening();
        resolve();
      };
      this.body.once('drain', done);
      const stopListening = this.onClose(done);
    });
  }

  /**
   * Runs `listener` once when the stream ends, for whatever reason (at once if
   * it already has). Returns a function that removes it.
   */
  onClose(listener: () => void): () => void {
    if (this.ended) {
      listener();
      return () => {};
    }
    this.closeListeners.add(listener);
    return () => {
      this.closeListeners.delete(listener);
    };
  }

  /** Ends the stream after the frames written so far. */
  end(): void {
    if (this.ended) return;
    this.body.end();
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    this.hub.forget(this);
    // A client that went away: drop what it will never read.
    if (!this.body.writableEnded) this.body.destroy();
    else if (this.reply.raw.destroyed) this.body.destroy();
    const listeners = [...this.closeListeners];
    this.closeListeners.clear();
    for (const listener of listeners) {
      try {
        listener();
      } catch {
        // A failing listener must not keep the others from cleaning up.
      }
    }
  }
}

/**
 * The open streams of one route plugin: `closeAll` ends them when the server
 * closes, so a long-lived stream never holds a shutdown.
 */
export class SseHub {
  private readonly streams = new Set<SseStream>();

  open(reply: FastifyReply, options: SseOptions = {}): SseStream {
    const stream = SseStream.start(reply, this, options);
    if (!stream.closed) this.streams.add(stream);
    return stream;
  }

  /** Streams open now. */
  get size(): number {
    return this.streams.size;
  }

  closeAll(): void {
    for (const stream of [...this.streams]) stream.end();
  }

  /** @internal called by a stream as it ends. */
  forget(stream: SseStream): void {
    this.streams.delete(stream);
  }
}

/** An SSE response in a route schema (OpenAPI): a text stream whose events the description lists. */
export function eventStreamResponse(description: string) {
  return {
    description,
    content: {
      'text/event-stream': {
        schema: Type.String({
          description: 'A stream of Server-Sent Events (`event:`, `id:`, `data:` lines).',
        }),
      },
    },
  };
}
