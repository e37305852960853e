/**
 * The OpenAPI document against the server's real behaviour: the recorded
 * example requests are replayed on the same demo market, and each answer's
 * status and headers must be declared; required parameters must be required
 * by the server and optional ones optional; refused credentials and tiers get
 * the declared 401 and 403.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOpenApiExamples, type RecordedOperation } from '../src/http/openapi-document.ts';
import { createTestApp, okJson, type TestApp, UNLIMITED } from './support/app.ts';

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
}
interface Response {
  $ref?: string;
  headers?: Record<string, { $ref?: string; required?: boolean }>;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  responses: Record<string, Response>;
  security?: Json[];
  'x-metering'?: string;
  'x-min-tier'?: string;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: {
    responses: Record<string, Response>;
    headers: Record<string, { required?: boolean }>;
  };
}
interface ErrorBody {
  error: { code: string; details?: { params?: { parameter: string }[] } };
}

/** Headers the document describes; any of them the server sends must be declared on that answer. */
const DOCUMENTED_HEADERS = [
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-quota-limit',
  'x-quota-used',
  'x-quota-remaining',
  'x-quota-overage',
  'retry-after',
  'www-authenticate',
];

let t: TestApp;
let doc: Document;
let freeKey: string;
const byId = new Map<string, { path: string; method: string; operation: Operation }>();
const recorded = Object.entries(loadOpenApiExamples().operations).filter(
  ([, example]) => example.request.method === 'GET' && example.contentType === 'application/json',
);

beforeAll(async () => {
  // The demo market the examples were recorded on (scripts/openapi-examples.ts): same seed, scale and instant.
  t = await createTestApp({ scale: 0.01, env: UNLIMITED });
  doc = await okJson<Document>(t, '/openapi.json');
  freeKey = (await t.ctx.subscriptions.issue({ accountId: 'contract-free', tier: 'FREE' })).key;
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      byId.set(operation.operationId, { path, method, operation });
    }
  }
});
afterAll(async () => {
  await t?.close();
});

function declared(operation: Operation, status: number): Response | undefined {
  const response = operation.responses[String(status)];
  if (!response?.$ref) return response;
  return doc.components.responses[response.$ref.replace('#/components/responses/', '')];
}

/** The answer's status is declared, every documented header it carries is declared, and every required one is there. */
function expectDeclaredAnswer(operation: Operation, answer: globalThis.Response) {
  const label = `${operation.operationId} ${answer.status}`;
  const declaredResponse = declared(operation, answer.status);
  expect(declaredResponse, `${label} is not declared`).toBeDefined();
  const headers = Object.fromEntries(
    Object.entries(declaredResponse!.headers ?? {}).map(([name, header]) => [name.toLowerCase(), header]),
  );
  for (const name of DOCUMENTED_HEADERS) {
    if (answer.headers.has(name)) expect(headers[name], `${label} sends ${name}`).toBeDefined();
  }
  for (const [name, header] of Object.entries(headers)) {
    const component = header.$ref
      ? doc.components.headers[header.$ref.replace('#/components/headers/', '')]
      : header;
    if (component?.required) expect(answer.headers.has(name), `${label} lacks ${name}`).toBe(true);
  }
}

describe('the document matches what the server answers', () => {
  it('there are recorded GET requests to replay, for most operations', () => {
    expect(recorded.length).toBeGreaterThan(25);
  });

  it('each recorded request answers with a declared status and declared headers', async () => {
    for (const [operationId, example] of recorded) {
      const entry = byId.get(operationId);
      expect(entry, operationId).toBeDefined();
      const answer = await t.get(example.request.path);
      await answer.arrayBuffer();
      expectDeclaredAnswer(entry!.operation, answer);
    }
  });

  it('a required query parameter left out is a 400 naming it; an optional one left out is not', async () => {
    let required = 0;
    let optional = 0;
    for (const [operationId, example] of recorded as [string, RecordedOperation][]) {
      const { operation } = byId.get(operationId)!;
      const url = new URL(example.request.path, 'http://stoop.test');
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'query' || !url.searchParams.has(parameter.name)) continue;
        const without = new URL(url);
        without.searchParams.delete(parameter.name);
        const answer = await t.get(`${without.pathname}${without.search}`);
        const body = (await answer.json()) as ErrorBody;
        const label = `${operationId} without ${parameter.name}`;
        if (parameter.required) {
          required++;
          expect(answer.status, label).toBe(400);
          expect(
            body.error.details?.params?.map((p) => p.parameter),
            label,
          ).toContain(parameter.name);
          expectDeclaredAnswer(operation, answer);
        } else {
          optional++;
          expect(answer.status, `${label}: ${JSON.stringify(body)}`).not.toBe(400);
        }
      }
    }
    // Trends' metric and interval (defaulted by the validator) are among the optional ones.
    expect(required).toBeGreaterThan(3);
    expect(optional).toBeGreaterThan(5);
  });

  it('trends metric and interval are optional in the document', () => {
    for (const operationId of ['getRentalMarketTrends', 'getSaleMarketTrends']) {
      const parameters = byId.get(operationId)!.operation.parameters ?? [];
      for (const name of ['metric', 'interval']) {
        expect(parameters.find((p) => p.name === name)?.required ?? false, `${operationId} ${name}`).toBe(
          false,
        );
      }
      expect(parameters.find((p) => p.name === 'areaId')?.required).toBe(true);
    }
  });

  it('a refused key on a public operation is a declared 401 with WWW-Authenticate', async () => {
    const publicOnes = recorded.filter(([id]) => {
      const { operation } = byId.get(id)!;
      return (
        operation['x-metering'] !== 'none' && JSON.stringify(operation.security) === '[{},{"apiKey":[]}]'
      );
    });
    expect(publicOnes.length).toBeGreaterThan(5);
    for (const [operationId, example] of publicOnes) {
      const answer = await t.getAs('STOOP-00000000-0000-4000-8000-000000000000', example.request.path);
      expect(answer.status, operationId).toBe(401);
      expect(((await answer.json()) as ErrorBody).error.code).toBe('INVALID_API_KEY');
      expectDeclaredAnswer(byId.get(operationId)!.operation, answer);
    }
  });

  it('a Free key on an operation above Free is a declared 403', async () => {
    const gated = recorded.filter(([id]) => {
      const tier = byId.get(id)!.operation['x-min-tier'];
      return tier !== undefined && tier !== 'FREE';
    });
    expect(gated.length).toBeGreaterThan(5);
    for (const [operationId, example] of gated) {
      const answer = await t.getAs(freeKey, example.request.path);
      expect(answer.status, operationId).toBe(403);
      expect(((await answer.json()) as ErrorBody).error.code).toBe('TIER_RESTRICTED');
      expectDeclaredAnswer(byId.get(operationId)!.operation, answer);
    }
  });

  it('metered answers carry typed rate-limit and quota headers; unmetered ones none', async () => {
    const search = await t.get('/v1/search/rentals?perPage=1');
    await search.arrayBuffer();
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-quota-used']) {
      expect(Number.isInteger(Number(search.headers.get(name))), name).toBe(true);
    }
    const health = await t.get('/v1/health');
    await health.arrayBuffer();
    expect(health.headers.has('x-ratelimit-limit')).toBe(false);
    const healthHeaders = Object.keys(declared(byId.get('getHealth')!.operation, 200)!.headers ?? {});
    expect(healthHeaders).toEqual(['X-Request-Id']);
  });

  it('servers is the absolute PUBLIC_URL', async () => {
    const { servers } = await okJson<{ servers: { url: string }[] }>(t, '/openapi.json');
    expect(servers.map((s) => s.url)).toEqual([t.config.publicUrl]);
    expect(t.config.publicUrl).toMatch(/^https?:\/\//);
  });
});
