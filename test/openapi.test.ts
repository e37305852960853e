import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, getJson, type TestApp } from './support/app.ts';

interface OpenApiDoc {
  openapi: string;
  info: { version: string };
  paths: Record<
    string,
    Record<string, { operationId?: string; parameters?: { name: string; in: string }[] }>
  >;
  components: { schemas: Record<string, unknown> };
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0 });
});
afterAll(async () => {
  await t?.close();
});

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const { status, body } = await getJson<OpenApiDoc>(t, '/openapi.json');
    expect(status).toBe(200);
    expect(body.openapi).toBe('3.1.0');
    expect(body.info.version).toBe('1.0.0');
    const result = await new Validator().validate(body as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every search parameter of the spec, and shared components', async () => {
    const { body } = await getJson<OpenApiDoc>(t, '/openapi.json');
    const names = (path: string) => (body.paths[path]?.get?.parameters ?? []).map((p) => p.name);
    const shared = [
      'areas',
      'minPrice',
      'maxPrice',
      'minBeds',
      'maxBeds',
      'minBaths',
      'maxBaths',
      'buildingType',
      'minDaysOnMarket',
      'maxDaysOnMarket',
      'listedAfter',
      'listedBefore',
      'hasOpenHouse',
      'has3dTour',
      'minSqft',
      'maxSqft',
      'petsAllowed',
      'amenities',
      'maxMonthlyCost',
      'minTransitScore',
      'fiberOnly',
      'minDownloadMbps',
      'sort',
      'sortDir',
      'page',
      'perPage',
    ];
    expect(names('/v1/search/rentals')).toEqual(expect.arrayContaining([...shared, 'noFee']));
    expect(shared.length + 1).toBe(27);
    expect(names('/v1/search/sales')).toEqual(expect.arrayContaining([...shared, 'saleType']));
    expect(names('/v1/search/sales')).not.toContain('noFee');
    expect(names('/v1/areas')).toEqual(
      expect.arrayContaining(['level', 'parentId', 'q', 'include', 'page', 'perPage']),
    );
    for (const component of ['ListingSummary', 'ErrorEnvelope', 'PaginatedMeta', 'Area']) {
      expect(body.components.schemas).toHaveProperty(component);
    }
  });

  it("states every operation's access policy (security, lowest tier, metering)", async () => {
    const { body } = await getJson<{ paths: Record<string, Record<string, Record<string, unknown>>> }>(
      t,
      '/openapi.json',
    );
    const operations = Object.values(body.paths).flatMap((methods) => Object.values(methods));
    expect(operations.length).toBeGreaterThan(4);
    for (const operation of operations) {
      expect(operation, String(operation.operationId)).toHaveProperty('x-min-tier');
      expect(operation).toHaveProperty('security');
    }
    expect(body.paths['/v1/health']?.get?.security).toEqual([]);
    expect(body.paths['/v1/search/rentals']?.get?.security).toEqual([{}, { apiKey: [] }]);
  });

  it('declares the headers each answer carries, and the statuses access control and bodies add', async () => {
    interface Response {
      $ref?: string;
      headers?: Record<string, unknown>;
    }
    interface Operation {
      operationId: string;
      security: unknown[];
      requestBody?: unknown;
      responses: Record<string, Response>;
      'x-metering': string;
      'x-min-tier': string;
    }
    const { body } = await getJson<{
      paths: Record<string, Record<string, Operation>>;
      webhooks: Record<string, Record<string, { security?: unknown[] }>>;
      components: { responses: Record<string, Response>; headers: Record<string, unknown> };
    }>(t, '/openapi.json');
    const resolve = (response: Response) =>
      response.$ref ? body.components.responses[response.$ref.split('/').pop()!]! : response;
    const headersOf = (operation: Operation, status: string) =>
      Object.keys(resolve(operation.responses[status]!).headers ?? {});
    for (const methods of Object.values(body.paths)) {
      for (const operation of Object.values(methods)) {
        const label = operation.operationId;
        const metered = operation['x-metering'] !== 'none';
        expect(operation.responses, label).toHaveProperty('default');
        expect(operation.responses, label).toHaveProperty('500');
        for (const status of Object.keys(operation.responses)) {
          expect(headersOf(operation, status), `${label} ${status}`).toContain('X-Request-Id');
          const rateHeaders = headersOf(operation, status).includes('X-RateLimit-Limit');
          if (status !== 'default') expect(rateHeaders, `${label} ${status}`).toBe(metered);
        }
        if (metered) {
          for (const status of ['401', '429', '503'])
            expect(operation.responses, label).toHaveProperty(status);
          expect(headersOf(operation, '401')).toContain('WWW-Authenticate');
          expect(headersOf(operation, '429')).toContain('Retry-After');
          if (operation['x-min-tier'] !== 'FREE') expect(operation.responses, label).toHaveProperty('403');
        }
        if (operation['x-metering'] === 'count')
          expect(headersOf(operation, '200' in operation.responses ? '200' : '400')).toContain(
            'X-Quota-Overage',
          );
        if (operation.requestBody) {
          for (const status of ['413', '415']) expect(operation.responses, label).toHaveProperty(status);
        }
      }
    }
    for (const methods of Object.values(body.webhooks)) {
      for (const operation of Object.values(methods))
        expect(operation.security).toEqual([{ webhookSignature: [] }]);
    }
    expect(Object.keys(body.components.headers)).toEqual(
      expect.arrayContaining([
        'XRequestId',
        'XRateLimitRemaining',
        'XQuotaUsed',
        'RetryAfter',
        'WWWAuthenticate',
      ]),
    );
  });

  it('serves an interactive reference page at /docs', async () => {
    const response = await t.get('/docs/');
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('<html');
  });
});
