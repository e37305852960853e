import { connect, type Socket } from 'node:net';

/** One HTTP/1.1 response as it came over the wire. */
export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

/**
 * A plain TCP connection to the server, for what `fetch` cannot do: send a
 * request byte by byte, send broken HTTP, or watch when the server hangs up.
 */
export interface RawConnection {
  readonly socket: Socket;
  /** Milliseconds since the connection was opened. */
  elapsed(): number;
  /** Sends bytes; a write the server refuses (it closed) is ignored, as a client would see it. */
  write(data: string | Buffer): void;
  /** Every byte received so far, as text. */
  received(): string;
  /** The first complete response, once it has arrived; null when none arrives within `withinMs`. */
  response(withinMs: number): Promise<RawResponse | null>;
  /** The `index`-th complete response (0-based) on this connection; null when not within `withinMs`. */
  nthResponse(index: number, withinMs: number): Promise<RawResponse | null>;
  /** When the server closed the connection (ms since open); null when it is still open after `withinMs`. */
  closed(withinMs: number): Promise<number | null>;
  /** Sends `text` one character every `everyMs` until stopped or the connection closes. */
  trickle(text: string, everyMs: number): () => void;
  destroy(): void;
}

export async function openRaw(baseUrl: string): Promise<RawConnection> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect({ host: hostname, port: Number(port) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const openedAt = performance.now();
  const chunks: Buffer[] = [];
  let closedAt: number | null = null;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of waiters) waiter();
  };
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    notify();
  });
  // A server that hangs up on a client still writing resets the connection: expected here.
  socket.on('error', () => {});
  socket.on('close', () => {
    closedAt = performance.now() - openedAt;
    notify();
  });
  const timers = new Set<NodeJS.Timeout>();

  /** Resolves with `check()` once it is not null, or null after `withinMs`. */
  const waitFor = <T>(check: () => T | null, withinMs: number): Promise<T | null> =>
    new Promise((resolve) => {
      const first = check();
      if (first !== null) return resolve(first);
      const waiter = () => {
        const value = check();
        if (value === null) return;
        finish(value);
      };
      const timer = setTimeout(() => finish(null), withinMs);
      const finish = (value: T | null) => {
        clearTimeout(timer);
        waiters.delete(waiter);
        resolve(value);
      };
      waiters.add(waiter);
    });

  const connection: RawConnection = {
    socket,
    elapsed: () => performance.now() - openedAt,
    write(data) {
      if (!socket.destroyed && socket.writable) socket.write(data);
    },
    received: () => Buffer.concat(chunks).toString('utf8'),
    response: (withinMs) => connection.nthResponse(0, withinMs),
    nthResponse: (index, withinMs) =>
      waitFor(() => parseResponses(Buffer.concat(chunks))[index] ?? null, withinMs),
    closed: (withinMs) => waitFor(() => closedAt, withinMs),
    trickle(text, everyMs) {
      let next = 0;
      const timer = setInterval(() => {
        if (next >= text.length || socket.destroyed || !socket.writable) {
          clearInterval(timer);
          return;
        }
        socket.write(text[next]!);
        next += 1;
      }, everyMs);
      timers.add(timer);
      return () => clearInterval(timer);
    },
    destroy() {
      for (const timer of timers) clearInterval(timer);
      socket.destroy();
    },
  };
  return connection;
}

/** The complete responses in a byte stream (Content-Length framing; what the service sends). */
export function parseResponses(bytes: Buffer): RawResponse[] {
  const responses: RawResponse[] = [];
  let offset = 0;
  for (;;) {
    const headEnd = bytes.indexOf('\r\n\r\n', offset);
    if (headEnd < 0) return responses;
    const [statusLine, ...headerLines] = bytes.subarray(offset, headEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const bodyStart = headEnd + 4;
    if (bytes.length < bodyStart + length) return responses;
    responses.push({
      status,
      headers,
      body: bytes.subarray(bodyStart, bodyStart + length).toString('utf8'),
    });
    offset = bodyStart + length;
  }
}

/** A complete GET for `path` on a kept-alive connection, with the key when given. */
export function getRequest(path: string, key?: string): string {
  const authorization = key === undefined ? '' : `Authorization: Bearer ${key}\r\n`;
  return `GET ${path} HTTP/1.1\r\nHost: stoop.test\r\n${authorization}\r\n`;
}
