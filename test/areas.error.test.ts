import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/http/errors.ts';
import { createTestApp, getJson, type TestApp } from './support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0 });
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/areas errors', () => {
  it.each([
    ['level=9', 'level', 'maximum'],
    ['level=abc', 'level', 'type'],
    ['perPage=0', 'perPage', 'minimum'],
    ['perPage=501', 'perPage', 'maximum'],
    ['page=0', 'page', 'minimum'],
    ['include=children,bogus', 'include', 'pattern'],
    ['parentId=12345', 'parentId', 'unknown_area'],
    ['page=36', 'page', 'page_range'],
    ['q=', 'q', 'minLength'],
    // Not finite, or not decimal: Ajv's coercion would accept these and skip every bound.
    ['page=-Infinity', 'page', 'type'],
    ['perPage=-Infinity', 'perPage', 'type'],
    ['level=Infinity', 'level', 'type'],
    ['parentId=0x64', 'parentId', 'type'],
  ])('%s → 400 INVALID_PARAMS naming %s (%s)', async (query, parameter, rule) => {
    const { status, body, headers } = await getJson<ErrorBody>(t, `/v1/areas?${query}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe('INVALID_PARAMS');
    expect(body.error.status).toBe(400);
    expect(body.error.message).toContain(parameter);
    expect(body.error.details?.params?.[0]).toMatchObject({ parameter, rule, location: 'query' });
    expect(body.error.requestId).toBe(headers.get('x-request-id'));
  });

  it('unknown routes get the error envelope with 404 NOT_FOUND', async () => {
    const { status, body } = await getJson<ErrorBody>(t, '/v1/nope');
    expect(status).toBe(404);
    expect(body.error.code).toBe('NOT_FOUND');
  });
});
