import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_IDLE_SLABS, ResponseSlabs, SLAB_BYTES } from '../src/http/response-slabs.ts';

/**
 * The pool's contract over real sockets: a slab is reused only after its
 * response has been handed to the kernel, so a response still waiting for a
 * slow client keeps its bytes while other responses come and go.
 */

const BODY_BYTES = 100 * 1024;

let server: Server | undefined;
afterEach(async () => {
  const running = server;
  server = undefined;
  if (!running) return;
  running.closeAllConnections();
  await new Promise((resolve) => running.close(resolve));
});

/** How many of the fill server's responses were handled, and how they ended. */
const ended = { handled: 0, finished: 0, cutShort: 0 };

/** A server whose every answer is BODY_BYTES of one letter (`/?fill=A`), written into a lent slab. */
async function fillServer(slabs: ResponseSlabs): Promise<number> {
  ended.handled = 0;
  ended.finished = 0;
  ended.cutShort = 0;
  server = createServer((request, response) => {
    ended.handled++;
    response.on('finish', () => ended.finished++);
    response.on('close', () => {
      if (!response.writableFinished) ended.cutShort++;
    });
    const fill = new URL(request.url ?? '/', 'http://x').searchParams.get('fill') ?? '?';
    const body = slabs.forResponse(response, BODY_BYTES);
    body.fill(fill);
    response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(body.length) });
    response.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function fetchBody(port: number, fill: string): Promise<Buffer> {
  const res = await fetch(`http://127.0.0.1:${port}/?fill=${fill}`);
  return Buffer.from(await res.arrayBuffer());
}

/** Opens a socket that sends `count` pipelined requests and reads nothing until told. */
async function stalledClient(port: number, fill: string, count: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.pause();
  socket.write(`GET /?fill=${fill} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(count));
  return socket;
}

/**
 * Waits until the server has handled requests whose responses have not
 * finished for a while (a write blocked on a client that does not read);
 * resolves with how many.
 */
async function blockedResponses(): Promise<number> {
  await until(() => ended.handled > ended.finished, 'a response blocked on the stalled client');
  await sleep(100);
  const blocked = ended.handled - ended.finished;
  expect(blocked).toBeGreaterThan(0);
  return blocked;
}

/**
 * Reads back-to-back HTTP/1.1 responses from a socket's chunks, however the
 * chunks split them (a header can straddle two): frames each body by its
 * content-length and counts body bytes that are not 'S'.
 */
function pipelinedReader() {
  const state = { responses: 0, bodyBytes: 0, foreign: 0 };
  let header = Buffer.alloc(0);
  let bodyLeft = 0;
  const S = 'S'.charCodeAt(0);
  return {
    get responses() {
      return state.responses;
    },
    get bodyBytes() {
      return state.bodyBytes;
    },
    get foreign() {
      return state.foreign;
    },
    read(chunk: Buffer): void {
      let at = 0;
      while (at < chunk.length) {
        if (bodyLeft > 0) {
          const take = Math.min(bodyLeft, chunk.length - at);
          for (let i = at; i < at + take; i++) if (chunk[i] !== S) state.foreign++;
          state.bodyBytes += take;
          bodyLeft -= take;
          at += take;
          continue;
        }
        header = Buffer.concat([header, chunk.subarray(at)]);
        at = chunk.length;
        const end = header.indexOf('\r\n\r\n');
        if (end < 0) break;
        const text = header.subarray(0, end).toString('latin1');
        const length = /\r\ncontent-length: *(\d+)/i.exec(text);
        if (!text.startsWith('HTTP/1.1 200') || !length) throw new Error(`unexpected response head: ${text}`);
        state.responses++;
        bodyLeft = Number(length[1]);
        const rest = header.subarray(end + 4);
        header = Buffer.alloc(0);
        if (rest.length > 0) this.read(rest);
      }
    },
  };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe('ResponseSlabs', () => {
  it('lends a slab per response and takes it back once the response is written', async () => {
    const slabs = new ResponseSlabs();
    const port = await fillServer(slabs);
    const first = await fetchBody(port, 'a');
    expect(first.equals(Buffer.alloc(BODY_BYTES, 'a'))).toBe(true);
    await until(() => ended.finished === 1, 'the first response to finish');
    expect(slabs.idleCount).toBe(1);
    // Sequential responses keep reusing the one slab.
    for (const fill of 'bcdef')
      expect((await fetchBody(port, fill)).every((b) => b === fill.charCodeAt(0))).toBe(true);
    await until(() => ended.finished === 6, 'the responses to finish');
    expect(slabs.idleCount).toBe(1);
  });

  it('keeps the slab of a response a client has not read while other responses reuse the pool', async () => {
    const slabs = new ResponseSlabs();
    const port = await fillServer(slabs);
    // Enough pipelined answers that the socket's kernel buffers fill and a write stays pending in Node.
    const pipelined = 200;
    const stalled = await stalledClient(port, 'S', pipelined);
    const blocked = await blockedResponses();

    // Meanwhile other clients go through the pool: a slab taken back too early would be overwritten here.
    const others = await Promise.all(
      Array.from({ length: 40 }, (_, i) => fetchBody(port, 'abcdefgh'[i % 8]!)),
    );
    others.forEach((body, i) => {
      expect(body.every((b) => b === 'abcdefgh'.charCodeAt(i % 8))).toBe(true);
    });
    // The stalled client's answers are still waiting: nothing of theirs was given back yet.
    expect(ended.finished).toBeLessThanOrEqual(ended.handled - blocked);

    // Now read everything the stalled client was sent: every body byte is still its own letter.
    const expectedBytes = pipelined * BODY_BYTES;
    const reader = pipelinedReader();
    stalled.on('data', (chunk: Buffer) => reader.read(chunk));
    stalled.resume();
    await until(() => reader.bodyBytes >= expectedBytes, 'the stalled client to read every answer');
    expect(reader.responses).toBe(pipelined);
    expect(reader.foreign).toBe(0);
    expect(reader.bodyBytes).toBe(expectedBytes);
    stalled.destroy();
    expect(ended.finished).toBe(40 + pipelined);
    expect(slabs.idleCount).toBeLessThanOrEqual(MAX_IDLE_SLABS);
  });

  it('leaves the slab of a response cut short to the garbage collector', async () => {
    const slabs = new ResponseSlabs();
    const port = await fillServer(slabs);
    const stalled = await stalledClient(port, 'S', 200);
    await blockedResponses();
    stalled.destroy();
    await until(() => ended.cutShort > 0, 'the cut-short response to close');
    // Only responses that finished (handed wholly to the kernel) gave theirs back.
    expect(slabs.idleCount).toBeLessThanOrEqual(ended.finished);
    // The server goes on serving from the pool.
    expect((await fetchBody(port, 'z')).every((b) => b === 'z'.charCodeAt(0))).toBe(true);
  });

  it('gives bodies larger than a slab memory of their own', () => {
    const slabs = new ResponseSlabs();
    const listeners: string[] = [];
    const response = {
      on: (event: string) => {
        listeners.push(event);
        return response;
      },
    } as unknown as Parameters<ResponseSlabs['forResponse']>[0];
    const big = slabs.forResponse(response, SLAB_BYTES + 1);
    expect(big.length).toBe(SLAB_BYTES + 1);
    expect(big.buffer.byteLength).toBeGreaterThan(SLAB_BYTES);
    // Nothing to give back, so nothing listens for the response's end.
    expect(listeners).toEqual([]);
  });
});
