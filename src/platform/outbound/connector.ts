/**
 * One outbound POST to a vetted, pinned address (see destination.ts): the
 * connection goes to `pinned.address` whatever DNS would answer now, TLS still
 * verifies the certificate against the URL's host name, redirects are never
 * followed (a 3xx is just an answer), the whole exchange has one deadline and
 * at most `maxResponseBytes` of the answer are read.
 *
 * Connections are kept alive and reused per pinned destination (protocol,
 * vetted address, port, TLS server name): one agent per destination, so a
 * pooled socket only ever serves requests vetted to the address it is
 * connected to. A socket that errs, times out, is aborted or still has an
 * unread answer is destroyed, never pooled. A request that fails on a reused
 * socket before any answer (the receiver closed it while idle) is sent once
 * more on a new connection: deliveries are at-least-once, and receivers
 * deduplicate on `webhook-id`.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from './destination.ts';

export interface OutboundRequest {
  url: URL;
  /** The vetted address the connection must go to. */
  pinned: ResolvedAddress;
  headers: Readonly<Record<string, string>>;
  body: string;
  /** Deadline of the whole exchange (connect, send, answer), ms. */
  timeoutMs: number;
  /** Bytes of the answer's body read at most; the rest is discarded. */
  maxResponseBytes: number;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  /** `Retry-After`, as sent (seconds or an HTTP date), when present. */
  retryAfter: string | undefined;
  /** `Location` of a 3xx, for the delivery log (never followed). */
  location: string | undefined;
  /** The first bytes of the body, as text. */
  bodySnippet: string;
}

export type OutboundFailureKind = 'timeout' | 'network' | 'aborted';

export class OutboundError extends Error {
  readonly kind: OutboundFailureKind;
  constructor(kind: OutboundFailureKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutboundError';
    this.kind = kind;
  }
}

/** Sends a request; rejects with `OutboundError`. Injected by tests, so no test ever reaches a real network. */
export type Connector = (request: OutboundRequest) => Promise<OutboundResponse>;

/** A `lookup` that answers only with the pinned address: the socket cannot go anywhere else. */
function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) {
      (callback as (e: null, addresses: { address: string; family: number }[]) => void)(null, [
        { address: pinned.address, family: pinned.family },
      ]);
    } else {
      callback(null, pinned.address, pinned.family);
    }
  };
}

/** Sockets one destination may have open at once (more requests queue, within their deadline). */
export const MAX_SOCKETS_PER_DESTINATION = 16;
/**
 * How long an idle pooled socket is kept: under the 5 s idle timeout of
 * Node's and most servers' keep-alive, so we rarely write to a socket the
 * receiver is closing.
 */
export const IDLE_SOCKET_MS = 4_000;
/** Destinations whose agents are kept; the least recently used one is closed past this. */
export const MAX_POOLED_DESTINATIONS = 256;

type Agent = http.Agent | https.Agent;
const agents = new Map<string, Agent>();

/** The agent of one pinned destination; its sockets connect only to `pinned.address`. */
function agentFor(url: URL, pinned: ResolvedAddress): Agent {
  const tls = url.protocol === 'https:';
  const port = url.port || (tls ? '443' : '80');
  const key = `${url.protocol}//${pinned.address}|${pinned.family}|${port}|${tls ? url.hostname : ''}`;
  let agent = agents.get(key);
  if (agent) {
    // Most recently used last.
    agents.delete(key);
    agents.set(key, agent);
    return agent;
  }
  const options: http.AgentOptions = {
    keepAlive: true,
    maxSockets: MAX_SOCKETS_PER_DESTINATION,
    maxFreeSockets: MAX_SOCKETS_PER_DESTINATION,
    timeout: IDLE_SOCKET_MS,
    scheduling: 'lifo',
  };
  agent = tls ? new https.Agent(options) : new http.Agent(options);
  agents.set(key, agent);
  if (agents.size > MAX_POOLED_DESTINATIONS) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, Agent];
    agents.delete(oldestKey);
    // Requests in flight finish on their sockets; idle ones close now.
    oldest.destroy();
  }
  return agent;
}

/** Closes every pooled connection (stopping, tests). Requests in flight are not affected. */
export function closePooledConnections(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

/** Pooled connections per destination, open and idle: for tests and diagnostics. */
export function pooledConnectionCount(): number {
  let count = 0;
  for (const agent of agents.values()) {
    for (const list of Object.values(agent.sockets)) count += list?.length ?? 0;
    for (const list of Object.values(agent.freeSockets)) count += list?.length ?? 0;
  }
  return count;
}

/** Errors meaning the receiver closed a pooled socket we wrote to, before any answer. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** Node's http/https over a pooled keep-alive connection to the pinned address. */
export const nodeConnector: Connector = (request) => send(request, true);

function send(request: OutboundRequest, pooled: boolean): Promise<OutboundResponse> {
  return new Promise<OutboundResponse>((resolve, reject) => {
    const { url } = request;
    const client = url.protocol === 'https:' ? https : http;
    let settled = false;
    const fail = (error: OutboundError) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request.signal?.removeEventListener('abort', onAbort);
      // Destroys the socket too: it never goes back to the pool.
      req.destroy();
      reject(error);
    };
    const req = client.request(url, {
      method: 'POST',
      headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
      lookup: pinnedLookup(request.pinned),
      agent: pooled ? agentFor(url, request.pinned) : false,
    });
    // Headers and body leave at once (no Nagle wait for the second write's ACK).
    req.on('socket', (socket) => socket.setNoDelay(true));
    const began = Date.now();
    const deadline = setTimeout(
      () => fail(new OutboundError('timeout', `no complete answer within ${request.timeoutMs} ms`)),
      request.timeoutMs,
    );
    const onAbort = () => fail(new OutboundError('aborted', 'the delivery was stopped'));
    request.signal?.addEventListener('abort', onAbort, { once: true });
    if (request.signal?.aborted) onAbort();
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      if (req.reusedSocket && STALE_SOCKET_CODES.has(error.code ?? '')) {
        // The pooled socket was closed under us: once more on a new connection, within the same deadline.
        settled = true;
        clearTimeout(deadline);
        request.signal?.removeEventListener('abort', onAbort);
        req.destroy();
        const left = request.timeoutMs - (Date.now() - began);
        if (left <= 0) {
          reject(new OutboundError('timeout', `no complete answer within ${request.timeoutMs} ms`));
          return;
        }
        send({ ...request, timeoutMs: left }, false).then(resolve, reject);
        return;
      }
      fail(new OutboundError('network', error.code ?? error.message, { cause: error }));
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (complete: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        request.signal?.removeEventListener('abort', onAbort);
        // An answer read to its end leaves the socket to the pool; one cut at the cap takes it down.
        if (!complete) res.destroy();
        const header = (name: string) => {
          const value = res.headers[name];
          return Array.isArray(value) ? value[0] : value;
        };
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: header('retry-after'),
          location: header('location'),
          bodySnippet: Buffer.concat(chunks).toString('utf8'),
        });
      };
      res.on('data', (chunk: Buffer) => {
        if (size >= request.maxResponseBytes) return;
        const room = request.maxResponseBytes - size;
        const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
        chunks.push(kept);
        size += kept.length;
        if (size >= request.maxResponseBytes) finish(false);
      });
      res.on('end', () => finish(true));
      res.on('error', (error) => fail(new OutboundError('network', error.message, { cause: error })));
    });
    req.end(request.body);
  });
}
