import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINT_WINDOW_MAX } from '../src/jobs/deliveries/endpoint-windows.ts';
import {
  closePooledConnections,
  nodeConnector,
  OutboundError,
  pooledConnectionCount,
} from '../src/platform/outbound/connector.ts';
import type { ResolvedAddress } from '../src/platform/outbound/destination.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { appendTestEvents } from './support/webhook-receiver.ts';

/**
 * Keep-alive in the node connector: pooled per pinned destination, never
 * reused across vetted addresses, dropped on error. Loopback only: every
 * server here listens on 127.0.0.0/8.
 */

interface CountingServer {
  port: number;
  /** Connections accepted, and requests (with the connection each came on). */
  connections: number;
  requests: { url: string; connection: number }[];
  /** Closes every connection, idle or not; the server keeps listening. */
  dropConnections(): void;
  close(): Promise<void>;
}

async function countingServer(
  host: string,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  port = 0,
): Promise<CountingServer> {
  const state = { connections: 0, requests: [] as { url: string; connection: number }[] };
  const ids = new WeakMap<object, number>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.requests.push({ url: req.url ?? '', connection: ids.get(req.socket) ?? -1 });
      handle(req, res);
    });
  });
  server.on('connection', (socket) => {
    ids.set(socket, state.connections);
    state.connections++;
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return state.connections;
    },
    requests: state.requests,
    dropConnections: () => server.closeAllConnections(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const ok = (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(204);
  res.end();
};

function post(port: number, path: string, pinned: ResolvedAddress = { address: '127.0.0.1', family: 4 }) {
  return nodeConnector({
    // A name DNS cannot answer: the connection can only go to the pinned address.
    url: new URL(`http://hooks.invalid:${port}${path}`),
    pinned,
    headers: { 'content-type': 'application/json' },
    body: '{"n":1}',
    timeoutMs: 2000,
    maxResponseBytes: 4096,
  });
}

afterEach(() => {
  closePooledConnections();
});

describe('connection reuse', () => {
  let server: CountingServer;
  beforeAll(async () => {
    server = await countingServer('127.0.0.1', (req, res) => {
      if (req.url === '/reset') {
        // Dropped without an answer, on a fresh socket or a pooled one.
        req.socket.destroy();
        return;
      }
      if (req.url === '/big') {
        res.writeHead(200);
        res.end('x'.repeat(100_000));
        return;
      }
      ok(req, res);
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('sends consecutive requests to one destination over one connection', async () => {
    const before = server.connections;
    for (let i = 0; i < 5; i++) expect((await post(server.port, '/a')).status).toBe(204);
    expect(server.connections - before).toBe(1);
    expect(pooledConnectionCount()).toBe(1);
  });

  it('does not pool a socket whose answer was cut at the body cap', async () => {
    const before = server.connections;
    const big = await post(server.port, '/big');
    expect(big.bodySnippet).toHaveLength(4096);
    expect((await post(server.port, '/a')).status).toBe(204);
    expect(server.connections - before).toBe(2);
  });

  it('a socket error fails that request only; the next one gets a working connection', async () => {
    const before = server.connections;
    // A fresh connection dropped: a network error, not retried (it may have been received).
    await expect(post(server.port, '/reset')).rejects.toMatchObject({ kind: 'network' });
    expect((await post(server.port, '/a')).status).toBe(204);
    expect(server.connections - before).toBe(2);
  });

  it('a pooled socket the receiver drops is replaced by a new connection, once', async () => {
    expect((await post(server.port, '/a')).status).toBe(204);
    const before = server.connections;
    const requests = server.requests.length;
    // Sent on the pooled socket, which the receiver drops: sent once more on a new connection, dropped again.
    const error = await post(server.port, '/reset').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundError);
    expect((error as OutboundError).kind).toBe('network');
    expect(server.requests.length - requests).toBe(2);
    expect(server.connections - before).toBe(1);
    expect((await post(server.port, '/a')).status).toBe(204);
  });
});

describe('pooling is per vetted address', () => {
  let a: CountingServer;
  let b: CountingServer;
  beforeAll(async () => {
    a = await countingServer('127.0.0.1', ok);
    // The same port on another loopback address: one URL, two possible vetted addresses.
    b = await countingServer('127.0.0.2', ok, a.port);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('never sends a request vetted to one address over a socket connected to another', async () => {
    await post(a.port, '/x', { address: '127.0.0.1', family: 4 });
    await post(a.port, '/x', { address: '127.0.0.2', family: 4 });
    await post(a.port, '/x', { address: '127.0.0.1', family: 4 });
    await post(a.port, '/x', { address: '127.0.0.2', family: 4 });
    expect(a.requests).toHaveLength(2);
    expect(b.requests).toHaveLength(2);
    expect(a.connections).toBe(1);
    expect(b.connections).toBe(1);
  });
});

describe('the delivery worker over pooled connections', () => {
  let t: TestApp;
  let rx: CountingServer;
  beforeAll(async () => {
    t = await createTestApp({
      scale: 0,
      env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' },
    });
    rx = await countingServer('127.0.0.1', ok);
  });
  afterAll(async () => {
    await rx?.close();
    await t?.close();
  });

  const statuses = async (id: string) =>
    (await t.ctx.webhooks.deliveries('keepalive', id, { page: 1, perPage: 50 })).items.map((d) => d.status);

  it('delivers a burst to one endpoint over a few pooled connections, not one each', async () => {
    const hook = await t.ctx.webhooks.create('keepalive', {
      url: `http://127.0.0.1:${rx.port}/one`,
      events: ['listing.created'],
    });
    const before = rx.connections;
    const events = 3 * ENDPOINT_WINDOW_MAX;
    await appendTestEvents(
      t.store,
      Array.from({ length: events }, (_, i) => ({ listingId: `ka-${i}` })),
      t.clock.now().toISOString(),
    );
    await t.ctx.webhookDelivery.drain();
    expect(rx.requests.filter((r) => r.url === '/one')).toHaveLength(events);
    // The endpoint's window opens 1, 2, 4, …: at most a connection per attempt in flight, each reused after.
    const opened = rx.connections - before;
    expect(opened).toBeGreaterThanOrEqual(1);
    expect(opened).toBeLessThanOrEqual(ENDPOINT_WINDOW_MAX);
    expect(await statuses(hook.id)).toEqual(Array(events).fill('succeeded'));
  });

  it('after the receiver drops its connections, the next deliveries still go through', async () => {
    const hook = await t.ctx.webhooks.create('keepalive', {
      url: `http://127.0.0.1:${rx.port}/two`,
      events: ['listing.rented'],
    });
    const at = () => t.clock.now().toISOString();
    await appendTestEvents(t.store, [{ type: 'listing.rented', listingId: 'ka-r1' }], at());
    await t.ctx.webhookDelivery.drain();
    // The receiver restarts its connections (as a deploy would): the pooled socket is dead.
    rx.dropConnections();
    await appendTestEvents(t.store, [{ type: 'listing.rented', listingId: 'ka-r2' }], at());
    await t.ctx.webhookDelivery.drain();
    expect(rx.requests.filter((r) => r.url === '/two')).toHaveLength(2);
    expect(await statuses(hook.id)).toEqual(['succeeded', 'succeeded']);
  });
});
