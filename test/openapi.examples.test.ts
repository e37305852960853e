import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../src/http/errors.ts';
import { createTestApp, okJson, type TestApp } from './support/app.ts';

type Json = Record<string, unknown>;
interface Media {
  schema?: Json;
  examples?: Record<string, { $ref?: string; value?: unknown }>;
}
interface Response {
  $ref?: string;
  description?: string;
  content?: Record<string, Media>;
}
interface Operation {
  operationId: string;
  responses: Record<string, Response>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: {
    responses: Record<string, Response>;
    examples: Record<string, { value: { error: { code: string; status: number } } }>;
  };
}

/**
 * Operations without a JSON example, and why: their success answer has no
 * JSON body to show (an image, an HTML page, a redirect, no content).
 */
const WITHOUT_JSON_EXAMPLE: Record<string, string> = {
  getPhoto: 'image/webp',
  getPhotoFile: 'image/webp',
  deleteWebhook: '204, no body',
  deleteWatcher: '204, no body',
  authorizeOAuth: 'HTML consent page',
  decideOAuth: '302 redirect',
  mcpStream: '405 only (stateless transport)',
  mcpEndSession: '405 only (stateless transport)',
};

let t: TestApp;
let doc: Document;
let ajv: Ajv2020;
const operations: { path: string; method: string; operation: Operation }[] = [];
beforeAll(async () => {
  t = await createTestApp({ scale: 0 });
  doc = await okJson<Document>(t, '/openapi.json');
  ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv);
  // The document itself is the schema store: `#/components/schemas/…` resolves inside it.
  ajv.addSchema({ ...doc, $id: 'stoop-openapi' });
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) operations.push({ path, method, operation });
  }
});
afterAll(async () => {
  await t?.close();
});

const pointer = (...segments: string[]) =>
  segments.map((s) => s.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

function validatorAt(...segments: string[]): ValidateFunction {
  return ajv.compile({ $ref: `stoop-openapi#/${pointer(...segments)}` });
}

function resolveResponse(response: Response): Response {
  if (!response.$ref) return response;
  const name = response.$ref.replace('#/components/responses/', '');
  const target = doc.components.responses[name];
  expect(target, response.$ref).toBeDefined();
  return target!;
}

describe('success examples (recorded from the demo market)', () => {
  it('every operation with a JSON success answer has one, others are listed with the reason', () => {
    const missing = operations
      .filter(({ operation }) =>
        Object.entries(operation.responses).some(
          ([status, response]) =>
            status.startsWith('2') && resolveResponse(response).content?.['application/json'] !== undefined,
        ),
      )
      .filter(({ operation }) =>
        Object.values(operation.responses).every(
          (response) => !Object.values(response.content ?? {}).some((media) => media.examples?.demo),
        ),
      )
      .map(({ operation }) => operation.operationId)
      .filter((id) => WITHOUT_JSON_EXAMPLE[id] === undefined);
    expect(missing).toEqual([]);
    expect(operations.length).toBeGreaterThan(40);
  });

  it('each validates against its response schema (Ajv 2020 over the document components)', () => {
    let checked = 0;
    let rejectedEmpty = 0;
    for (const { path, method, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [mediaType, media] of Object.entries(response.content ?? {})) {
          const example = media.examples?.demo;
          if (!example) continue;
          expect(status.startsWith('2'), `${operation.operationId} example under ${status}`).toBe(true);
          const validate = validatorAt(
            'paths',
            path,
            method,
            'responses',
            status,
            'content',
            mediaType,
            'schema',
          );
          const valid = validate(example.value);
          expect(valid, `${operation.operationId}: ${ajv.errorsText(validate.errors)}`).toBe(true);
          // The validator is not vacuous: an empty object is not an answer (bar JSON-RPC's open shape).
          if (!validate({})) rejectedEmpty++;
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect(rejectedEmpty).toBeGreaterThan(40);
  });

  it('lists in examples are trimmed to at most two items', () => {
    const longest = (value: unknown): number =>
      Array.isArray(value)
        ? Math.max(value.length, ...value.map(longest))
        : value !== null && typeof value === 'object'
          ? Math.max(0, ...Object.values(value).map(longest))
          : 0;
    for (const { operation } of operations) {
      for (const response of Object.values(operation.responses)) {
        for (const media of Object.values(response.content ?? {})) {
          if (media.examples?.demo)
            expect(longest(media.examples.demo.value), operation.operationId).toBeLessThanOrEqual(2);
        }
      }
    }
  });
});

describe('webhook payload examples', () => {
  it('the recorded deliveries validate against their webhook request bodies', () => {
    const webhooks = (doc as unknown as { webhooks: Record<string, { post: { requestBody: Response } }> })
      .webhooks;
    let checked = 0;
    for (const [type, item] of Object.entries(webhooks)) {
      const example = item.post.requestBody.content?.['application/json']?.examples?.demo;
      if (!example) continue;
      const validate = validatorAt(
        'webhooks',
        type,
        'post',
        'requestBody',
        'content',
        'application/json',
        'schema',
      );
      expect(validate(example.value), `${type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      expect(validate({}), type).toBe(false);
      checked++;
    }
    // A listing event (from the feed) and the test delivery (as the delivery worker sent it).
    expect(checked).toBeGreaterThanOrEqual(2);
  });
});

describe('error examples', () => {
  it('every error code an operation can answer with has an example: the envelope, with its own status', () => {
    const validate = validatorAt('components', 'schemas', 'ErrorEnvelope');
    const declared = new Set(
      operations.flatMap(({ operation }) => Object.keys(operation.responses).map((status) => Number(status))),
    );
    const codes = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((code) => declared.has(ERROR_CODES[code]));
    expect(codes).toEqual(expect.arrayContaining(['INVALID_API_KEY', 'TIER_RESTRICTED', 'QUOTA_EXCEEDED']));
    for (const code of [...codes, 'REQUEST_TIMEOUT', 'HEADERS_TOO_LARGE'] as ErrorCode[]) {
      const example = doc.components.examples[code];
      expect(example, code).toBeDefined();
      expect(validate(example!.value), `${code}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      expect(example!.value.error.code).toBe(code);
      expect(example!.value.error.status).toBe(ERROR_CODES[code]);
    }
  });

  it('each error response shows one example per code of its status, and no other', () => {
    for (const [name, response] of Object.entries(doc.components.responses)) {
      const examples = response.content?.['application/json']?.examples ?? {};
      const codes = Object.keys(examples);
      expect(codes.length, name).toBeGreaterThan(0);
      const statuses = new Set(codes.map((code) => ERROR_CODES[code as ErrorCode]));
      if (name === 'EdgeError') {
        expect(codes.sort()).toEqual(['HEADERS_TOO_LARGE', 'REQUEST_TIMEOUT']);
        continue;
      }
      expect(statuses.size, name).toBe(1);
      const [status] = [...statuses];
      const expected = (Object.keys(ERROR_CODES) as ErrorCode[]).filter(
        (code) => ERROR_CODES[code] === status,
      );
      expect(codes.sort(), name).toEqual(expected.sort());
      for (const code of codes) expect(examples[code]!.$ref).toBe(`#/components/examples/${code}`);
    }
  });

  it('an operation refers to an error response only under that response status', () => {
    for (const { operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!response.$ref || status === 'default') continue;
        const examples = resolveResponse(response).content?.['application/json']?.examples ?? {};
        for (const code of Object.keys(examples)) {
          expect(ERROR_CODES[code as ErrorCode], `${operation.operationId} ${status}`).toBe(Number(status));
        }
      }
    }
  });
});
