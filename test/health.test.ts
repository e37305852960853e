import type { Static } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthResponse } from '../src/modules/health/health.schema.ts';
import { createTestApp, getJson, type TestApp } from './support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005 });
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/health', () => {
  it('reports status, version, database and data age', async () => {
    t.clock.advance(90_000);
    const { status, body, headers } = await getJson<Static<typeof HealthResponse>>(t, '/v1/health');
    expect(status).toBe(200);
    expect(headers.get('x-request-id')).toBeTruthy();
    expect(body).toMatchObject({
      status: 'ok',
      version: '0.1.0',
      database: { dialect: t.store.dialect, status: 'ok' },
      data: { oldestAgeSeconds: 90 },
      // No upstream wired into this app: nothing refreshes, nothing logged yet.
      pipeline: { upstream: null, lastFailure: null, backgroundPending: 0, latestEventSequence: 0 },
    });
    expect(body.data.searchRentals ?? '').toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });
});
