import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';

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
