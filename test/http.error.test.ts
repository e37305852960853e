import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, limitsApp, type TestApp } from './support/app.ts';
import { openRaw } from './support/raw-http.ts';

interface ErrorEnvelope {
  error: {
    code: string;
    status: number;
    requestId: string;
    details: { params: { parameter: string; rule: string }[] };
  };
}

describe('router-level rejections use the one error envelope', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ scale: 0 });
  });
  afterAll(async () => {
    await t.close();
  });

  it('an undecodable percent-encoding in the path is a 400 naming the path', async () => {
    const response = await t.get('/v1/photos/%zz');
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorEnvelope;
    expect(body.error.code).toBe('INVALID_PARAMS');
    expect(body.error.requestId).toBe(response.headers.get('x-request-id'));
    expect(body.error.details.params[0]).toMatchObject({ parameter: 'path', rule: 'encoding' });
  });

  it('an over-long path parameter is a 400, not a bare framework error', async () => {
    const response = await t.get(`/v1/photos/${'a'.repeat(300)}`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorEnvelope;
    expect(body.error.code).toBe('INVALID_PARAMS');
    expect(body.error.details.params[0]).toMatchObject({ parameter: 'path', rule: 'max_length' });
  });
});

describe('every error links to its entry in the error catalogue', () => {
  const limited = limitsApp({ RATE_LIMIT_FREE: '1' });
  const docsOf = (t: TestApp, code: string) => `${t.config.publicUrl}/docs#/Errors/${code}`;

  it('404 for an unknown route, 405, 401 and router-level 400s carry `docs`', async () => {
    const t = limited.get();
    const cases: [string, RequestInit, number, string][] = [
      ['/v1/nowhere', {}, 404, 'NOT_FOUND'],
      ['/mcp', { headers: { authorization: `Bearer ${t.internalKey}` } }, 405, 'METHOD_NOT_ALLOWED'],
      ['/v1/photos/%zz', {}, 400, 'INVALID_PARAMS'],
      ['/v1/webhooks', { method: 'POST', body: '{' }, 401, 'MISSING_API_KEY'],
    ];
    for (const [path, init, status, code] of cases) {
      const response = await fetch(`${t.url}${path}`, init);
      expect(response.status, path).toBe(status);
      const body = (await response.json()) as { error: { code: string; docs: string } };
      expect(body.error.code, path).toBe(code);
      expect(body.error.docs, path).toBe(docsOf(t, code));
    }
  });

  it('429 carries `docs`', async () => {
    const t = limited.get();
    let response = await t.getAs(null, '/v1/areas');
    for (let i = 0; i < 3 && response.status !== 429; i++) response = await t.getAs(null, '/v1/areas');
    expect(response.status).toBe(429);
    const body = (await response.json()) as { error: { code: string; docs: string } };
    expect(body.error.docs).toBe(docsOf(t, body.error.code));
  });

  it('an error answered below Fastify (malformed HTTP) carries `docs`', async () => {
    const t = limited.get();
    const connection = await openRaw(t.url);
    connection.write('GARBAGE\r\n\r\n');
    const response = await connection.response(5000);
    connection.destroy();
    expect(response?.status).toBe(400);
    const body = JSON.parse(response!.body) as { error: { code: string; docs: string } };
    expect(body.error).toMatchObject({ code: 'INVALID_REQUEST', docs: docsOf(t, 'INVALID_REQUEST') });
  });
});
