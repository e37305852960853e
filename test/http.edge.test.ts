/**
 * The HTTP edge over real sockets: what a slow, hostile or broken client gets.
 * Every wait is bounded and well under the test timeout; timeouts are set
 * short in these apps so the tests observe them.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/http/errors.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { getRequest, openRaw, type RawConnection, type RawResponse } from './support/raw-http.ts';

/** A response must be the one error envelope, with the request id in header and body, closing the connection. */
function expectClosingEnvelope(response: RawResponse | null, status: number, code: string): ErrorBody {
  expect(response, 'a complete response').not.toBeNull();
  expect(response!.status).toBe(status);
  expect(response!.headers['content-type']).toMatch(/^application\/json/);
  expect(response!.headers.connection).toBe('close');
  const body = JSON.parse(response!.body) as ErrorBody;
  expect(body.error).toMatchObject({ code, status });
  expect(body.error.requestId).toMatch(/^[0-9a-f-]{36}$/);
  expect(response!.headers['x-request-id']).toBe(body.error.requestId);
  return body;
}

/** A small metered read: a complete request that any app here serves. */
const AREAS = '/v1/areas?level=1&perPage=1';

const open: RawConnection[] = [];
async function connectTo(t: TestApp): Promise<RawConnection> {
  const connection = await openRaw(t.url);
  open.push(connection);
  return connection;
}
afterEach(() => {
  for (const connection of open.splice(0)) connection.destroy();
});

describe('timeouts', () => {
  const REQUEST_TIMEOUT_MS = 1000;
  const HEADERS_TIMEOUT_MS = 500;
  const KEEP_ALIVE_TIMEOUT_MS = 300;
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      scale: 0,
      env: {
        HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a body trickling in is cut off at the request timeout with a 408 envelope', async () => {
    const connection = await connectTo(t);
    connection.write(
      'POST /v1/admin/keys HTTP/1.1\r\nHost: stoop.test\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${t.internalKey}\r\nContent-Length: 1000\r\n\r\n{`,
    );
    // A byte every 100 ms: never idle, never done.
    connection.trickle('"account":"slow",'.repeat(50), 100);
    const closedAfter = await connection.closed(REQUEST_TIMEOUT_MS + 3000);
    expect(closedAfter, 'the server closed the connection').not.toBeNull();
    expect(closedAfter!).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expectClosingEnvelope(await connection.response(0), 408, 'REQUEST_TIMEOUT');
  });

  it('headers sent slowly time out with a 408 envelope', async () => {
    const connection = await connectTo(t);
    connection.write('GET /v1/health HTTP/1.1\r\nHost: stoop.test\r\nX-Slow: ');
    connection.trickle('a'.repeat(1000), 100);
    const closedAfter = await connection.closed(HEADERS_TIMEOUT_MS + 3000);
    expect(closedAfter, 'the server closed the connection').not.toBeNull();
    expectClosingEnvelope(await connection.response(0), 408, 'REQUEST_TIMEOUT');
  });

  it('an idle kept-alive connection is closed after the keep-alive timeout', async () => {
    const connection = await connectTo(t);
    connection.write(getRequest(AREAS, t.internalKey));
    const response = await connection.response(5000);
    expect(response?.status).toBe(200);
    expect(response?.headers.connection).toBe('keep-alive');
    const answeredAt = connection.elapsed();
    const closedAfter = await connection.closed(KEEP_ALIVE_TIMEOUT_MS + 3000);
    expect(closedAfter, 'the server closed the idle connection').not.toBeNull();
    expect(closedAfter! - answeredAt).toBeGreaterThanOrEqual(KEEP_ALIVE_TIMEOUT_MS - 100);
  });
});

describe('early answers, body limit and parser errors', () => {
  const BODY_LIMIT = 4096;
  let t: TestApp;
  let proKey: string;
  beforeAll(async () => {
    // Default (long) timeouts: whatever closes a connection here is not a timeout.
    t = await createTestApp({ scale: 0, env: { HTTP_BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
    proKey = (await t.ctx.subscriptions.issue({ accountId: 'edge', tier: 'PRO' })).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ['no key', () => '', 401, 'MISSING_API_KEY'],
    ['a key of too low a tier', () => `Authorization: Bearer ${proKey}\r\n`, 403, 'TIER_RESTRICTED'],
  ])(
    'a POST refused early (%s) is answered and its connection closed, without reading the trickling body',
    async (_case, authorization, status, code) => {
      const connection = await connectTo(t);
      connection.write(
        'POST /v1/admin/keys HTTP/1.1\r\nHost: stoop.test\r\nContent-Type: application/json\r\n' +
          `${authorization()}Content-Length: 100000\r\n\r\n{`,
      );
      connection.trickle('"a":1,'.repeat(1000), 50);
      const response = await connection.response(5000);
      expectClosingEnvelope(response, status, code);
      const answeredAt = connection.elapsed();
      const closedAfter = await connection.closed(2000);
      expect(closedAfter, 'the server closed the connection after answering').not.toBeNull();
      expect(closedAfter! - answeredAt).toBeLessThan(1000);
    },
  );

  it('a declared body over the limit is a 413 envelope and the connection is closed', async () => {
    const connection = await connectTo(t);
    connection.write(
      'POST /v1/admin/keys HTTP/1.1\r\nHost: stoop.test\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${t.internalKey}\r\nContent-Length: ${BODY_LIMIT + 1}\r\n\r\n{"a":`,
    );
    expectClosingEnvelope(await connection.response(5000), 413, 'PAYLOAD_TOO_LARGE');
    expect(await connection.closed(2000), 'closed').not.toBeNull();
  });

  it('a chunked body growing past the limit is a 413 envelope and the connection is closed', async () => {
    const connection = await connectTo(t);
    connection.write(
      'POST /v1/admin/keys HTTP/1.1\r\nHost: stoop.test\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${t.internalKey}\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = 'x'.repeat(1024);
    for (let i = 0; i <= BODY_LIMIT / chunk.length; i += 1) {
      connection.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    }
    expectClosingEnvelope(await connection.response(5000), 413, 'PAYLOAD_TOO_LARGE');
    expect(await connection.closed(2000), 'closed').not.toBeNull();
  });

  it('complete requests keep their connection alive', async () => {
    const connection = await connectTo(t);
    connection.write(getRequest(AREAS, t.internalKey));
    expect((await connection.nthResponse(0, 5000))?.headers.connection).toBe('keep-alive');
    const body = JSON.stringify({ account: 'kept-alive', tier: 'PRO' });
    connection.write(
      'POST /v1/admin/keys HTTP/1.1\r\nHost: stoop.test\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${t.internalKey}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    const created = await connection.nthResponse(1, 5000);
    expect(created?.status).toBe(201);
    expect(created?.headers.connection).toBe('keep-alive');
    // Refused, but the body came whole: the connection stays usable.
    connection.write(
      'POST /v1/admin/keys HTTP/1.1\r\nHost: stoop.test\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    );
    const refused = await connection.nthResponse(2, 5000);
    expect(refused?.status).toBe(401);
    expect(refused?.headers.connection).toBe('keep-alive');
    connection.write(getRequest(AREAS, t.internalKey));
    expect((await connection.nthResponse(3, 5000))?.status).toBe(200);
  });

  it('an unknown expectation is ignored, not answered with a bare 417', async () => {
    const connection = await connectTo(t);
    connection.write(getRequest(AREAS, t.internalKey).replace('\r\n\r\n', '\r\nExpect: tea\r\n\r\n'));
    const response = await connection.response(5000);
    expect(response?.status).toBe(200);
    expect(response?.headers['x-request-id']).toBeDefined();
  });

  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n', 400, 'INVALID_REQUEST'],
    ['an unknown method', 'BREW /v1/health HTTP/1.1\r\nHost: stoop.test\r\n\r\n', 400, 'INVALID_REQUEST'],
    [
      'an unsupported HTTP version',
      'GET /v1/health HTTP/7.0\r\nHost: stoop.test\r\n\r\n',
      400,
      'INVALID_REQUEST',
    ],
    [
      'a control character in a header',
      'GET /v1/health HTTP/1.1\r\nHost: stoop.test\r\nX-Bad: a\u0001b\r\n\r\n',
      400,
      'INVALID_REQUEST',
    ],
    [
      'a malformed header name',
      'GET /v1/health HTTP/1.1\r\nHost: stoop.test\r\nBad Name: x\r\n\r\n',
      400,
      'INVALID_REQUEST',
    ],
    [
      'an invalid Content-Length',
      'POST /v1/admin/keys HTTP/1.1\r\nHost: stoop.test\r\nContent-Length: ten\r\n\r\n',
      400,
      'INVALID_REQUEST',
    ],
    [
      'both Content-Length and Transfer-Encoding',
      'POST /v1/admin/keys HTTP/1.1\r\nHost: stoop.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'INVALID_REQUEST',
    ],
    ['an HTTP/1.1 request without Host', 'GET /v1/health HTTP/1.1\r\n\r\n', 400, 'INVALID_REQUEST'],
    [
      'headers over 16 KiB',
      `GET /v1/health HTTP/1.1\r\nHost: stoop.test\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
    ],
  ])(
    '%s is answered with the error envelope and the connection closed',
    async (_case, request, status, code) => {
      const connection = await connectTo(t);
      connection.write(request);
      const body = expectClosingEnvelope(await connection.response(5000), status, code);
      expect(body.error.message).not.toBe('');
      expect(await connection.closed(2000), 'closed').not.toBeNull();
    },
  );
});

describe('connection cap', () => {
  const MAX_CONNECTIONS = 3;
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ scale: 0, env: { HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS) } });
  });
  afterAll(async () => {
    await t?.close();
  });

  const serverConnections = () =>
    new Promise<number>((resolve, reject) =>
      t.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );

  it('refuses connections past the cap and accepts again once one closes', async () => {
    const held: RawConnection[] = [];
    for (let i = 0; i < MAX_CONNECTIONS; i += 1) held.push(await connectTo(t));
    held[0]!.write(getRequest(AREAS, t.internalKey));
    expect((await held[0]!.response(5000))?.status, 'a connection within the cap is served').toBe(200);

    const extra = await connectTo(t);
    extra.write(getRequest(AREAS, t.internalKey));
    expect(await extra.closed(2000), 'the connection past the cap is closed').not.toBeNull();
    expect(extra.received()).toBe('');

    held[0]!.destroy();
    const deadline = Date.now() + 2000;
    while ((await serverConnections()) >= MAX_CONNECTIONS && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const again = await connectTo(t);
    again.write(getRequest(AREAS, t.internalKey));
    expect((await again.response(5000))?.status, 'a slot freed is usable again').toBe(200);
  });
});
