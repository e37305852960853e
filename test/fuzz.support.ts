/**
 * Shared pieces of the fuzz suites (test/fuzz.*.test.ts): the operations of
 * the API as the route table and the OpenAPI document declare them, hostile
 * values, and the checks every answer to hostile input must pass.
 */
import { expect } from 'vitest';
import { type AccessPolicy, registeredRoutes } from '../src/http/access.ts';
import { ERROR_CODES, type ErrorBody } from '../src/http/errors.ts';
import type { TestApp } from './support/app.ts';

export interface ParameterSchema {
  type?: string | string[];
  enum?: string[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  default?: unknown;
}

export interface Parameter {
  name: string;
  in: 'query' | 'path';
  required: boolean;
  schema: ParameterSchema;
}

/** One route as the fuzzers call it: the route table's entry joined with its OpenAPI operation. */
export interface Operation {
  method: string;
  /** OpenAPI form: `/v1/building/{id}`. */
  path: string;
  access: AccessPolicy;
  parameters: Parameter[];
  /** Top-level fields of the JSON body, when the operation takes one. */
  bodyFields: string[];
  /** Hidden from the OpenAPI document (a wildcard fallback route): fuzzed through its wildcard only. */
  hidden: boolean;
  /** Answers only `text/event-stream` (406 without it in Accept): called with that Accept, the stream left unread. */
  streamOnly: boolean;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: (Omit<Parameter, 'in'> & { in: Parameter['in'] | 'header' })[];
        requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
        responses?: Record<string, { content?: Record<string, unknown> }>;
      }
    >
  >;
}

/** `/v1/building/:id` → `/v1/building/{id}`, `/fp/:key-:size.webp` → `/fp/{key}-{size}.webp`. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z]+)/g, '{$1}');
}

/** HTML pages under access control but not API operations (hidden from the document): fuzzed by their query string. */
const UNDOCUMENTED_PAGES: ReadonlySet<string> = new Set(['/']);

/**
 * Every route under access control (every API route), with the parameters the
 * OpenAPI document declares for it. A route the document does not describe
 * must be a hidden wildcard (`/fp/*`) or a page (`/`); anything else fails the caller's check.
 */
export async function apiOperations(
  t: TestApp,
): Promise<{ operations: Operation[]; undocumented: string[] }> {
  const document = (await (await t.get('/openapi.json')).json()) as OpenApiDocument;
  const operations: Operation[] = [];
  const undocumented: string[] = [];
  for (const route of registeredRoutes(t.app)) {
    if (route.access === undefined || route.method === 'HEAD') continue;
    const path = openApiPath(route.url);
    const operation = document.paths[path]?.[route.method.toLowerCase()];
    if (operation) {
      const success = Object.keys(operation.responses?.['200']?.content ?? {});
      operations.push({
        method: route.method,
        path,
        access: route.access,
        // Header parameters (Last-Event-ID) are not URL input: their own tests cover them.
        parameters: (operation.parameters ?? []).filter((p): p is Parameter => p.in !== 'header'),
        bodyFields: Object.keys(operation.requestBody?.content['application/json']?.schema.properties ?? {}),
        hidden: false,
        streamOnly: success.length > 0 && success.every((type) => type === 'text/event-stream'),
      });
    } else if (path.endsWith('/*') || UNDOCUMENTED_PAGES.has(path)) {
      operations.push({
        method: route.method,
        path,
        access: route.access,
        parameters: [],
        bodyFields: [],
        hidden: true,
        streamOnly: false,
      });
    } else {
      undocumented.push(`${route.method} ${route.url}`);
    }
  }
  return { operations, undocumented };
}

/** A value as sent: `raw` values go into the URL unencoded (malformed percent-encoding), lists repeat the parameter. */
export type SentValue = string | { raw: string } | readonly string[];

/** Lone surrogates have no UTF-8 form: they travel as U+FFFD, as a browser would send them. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function encodeText(text: string): string {
  return encodeURIComponent(text.replace(LONE_SURROGATE, '\uFFFD'));
}

export function encodeValue(value: SentValue): string[] {
  if (typeof value === 'string') return [encodeText(value)];
  if ('raw' in value) return [value.raw];
  return value.map(encodeText);
}

export function describeValue(value: SentValue): string {
  const shown = JSON.stringify(value);
  return shown.length > 80 ? `${shown.slice(0, 80)}…(${shown.length} chars)` : shown;
}

/** Builds a request target: path parameters substituted, query parameters appended in order. */
export function requestTarget(
  operation: Operation,
  values: ReadonlyMap<string, SentValue>,
  extraQuery = '',
): string {
  let path = operation.path;
  const query: string[] = [];
  for (const [name, value] of values) {
    const placeholder = `{${name}}`;
    if (path.includes(placeholder)) path = path.replace(placeholder, encodeValue(value)[0] ?? '');
    else if (name === '*' && path.endsWith('/*')) path = `${path.slice(0, -1)}${encodeValue(value)[0] ?? ''}`;
    else for (const encoded of encodeValue(value)) query.push(`${encodeText(name)}=${encoded}`);
  }
  if (extraQuery) query.push(extraQuery);
  return query.length > 0 ? `${path}?${query.join('&')}` : path;
}

/** Numbers that are not finite, not decimal, or far out of any documented range. */
export const HOSTILE_NUMBERS: readonly SentValue[] = [
  'Infinity',
  '-Infinity',
  '+Infinity',
  'NaN',
  '1e400',
  '-1e400',
  '1e-400',
  '-0',
  '0x1F',
  '0b101',
  '1e308',
  '-1e308',
  '9'.repeat(400),
  '9007199254740993',
  '-1',
  '2.5',
];

/** Everything else a hostile or careless client sends. */
export const HOSTILE_STRINGS: readonly SentValue[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0007\u001b[31m',
  '\u202egnp.exe',
  '\uFEFF1',
  '😀',
  'Ünïcödé',
  '\uD800',
  "' OR '1'='1",
  '1; DROP TABLE listings;--',
  '1 UNION SELECT * FROM api_keys',
  '"',
  '\\',
  '%',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent literally
  '${7*7}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '../../../etc/passwd',
  '__proto__',
  'constructor',
  'null',
  'true',
  '[]',
  '{}',
  'x'.repeat(5000),
  'é'.repeat(2000),
  { raw: '%' },
  { raw: '%zz' },
  { raw: '%E0%A4%A' },
  { raw: '%ED%A0%80' },
  { raw: '%C0%AF' },
  { raw: '%FF%FE' },
  { raw: '%00' },
  { raw: '%2500' },
  ['1', '2'],
  ['a', 'b', 'c'],
  Array.from({ length: 60 }, (_, i) => String(i)),
];

export const HOSTILE_VALUES: readonly SentValue[] = [...HOSTILE_NUMBERS, ...HOSTILE_STRINGS];

/** Every answer body stays within this, whatever was asked (list pages of the default size included). */
export const MAX_RESPONSE_BYTES = 256 * 1024;
/** Error envelopes and list `meta` (links, warnings) stay within this. */
export const MAX_ENVELOPE_BYTES = 16 * 1024;
/** A request that takes longer than this hangs, as far as the suite is concerned. */
export const REQUEST_TIMEOUT_MS = 10_000;

/** Statuses an error may have with no parameter to name (auth, tier, unknown resource, lifecycle). */
// 405: a method the route does not offer (GET and DELETE /mcp).
const UNNAMED_ERRORS = new Set([401, 403, 404, 405, 409, 413, 415]);

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  bytes: number;
}

/**
 * Runs `task` over `items` with at most `width` in flight: the server spends
 * most of a request waiting on the database, so a few at a time keep the
 * sweep short without changing what each request sees.
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  width: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

/** Sends one request with a deadline; a hang fails the test naming the request. */
export async function send(
  t: TestApp,
  key: string | null,
  method: string,
  target: string,
  init: RequestInit = {},
): Promise<Answer> {
  let response: Response;
  try {
    response = await t.getAs(key, target, {
      ...init,
      method,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new Error(`${method} ${target.slice(0, 200)} did not answer: ${String(error)}`);
  }
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    // An open stream: its status and headers are the answer; the events are the stream tests' business.
    await response.body?.cancel();
    return { status: response.status, headers: response.headers, text: '', bytes: 0 };
  }
  const buffer = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    headers: response.headers,
    text: buffer.toString('utf8'),
    bytes: buffer.length,
  };
}

/**
 * The contract for any answer to hostile input: never a 5xx, bounded size, and
 * every 4xx the one error envelope; a 400 names one of `named` (the
 * operation's parameters or body fields, or `path` for router-level
 * rejections) in its message and details.
 */
/** A JSON-RPC 2.0 error response (`/mcp`): `{jsonrpc: "2.0", id, error: {code: integer, message}}`. */
function isJsonRpcError(body: unknown): boolean {
  const candidate = body as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } };
  return (
    candidate.jsonrpc === '2.0' &&
    Number.isInteger(candidate.error?.code) &&
    typeof candidate.error?.message === 'string'
  );
}

export function expectCleanAnswer(answer: Answer, named: ReadonlySet<string>, context: string): void {
  const where = `${context} → ${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, where).toBeLessThan(500);
  expect(answer.bytes, where).toBeLessThanOrEqual(MAX_RESPONSE_BYTES);
  const type = answer.headers.get('content-type') ?? '';
  if (answer.status >= 400) {
    expect(type, where).toContain('application/json');
    expect(answer.bytes, where).toBeLessThanOrEqual(MAX_ENVELOPE_BYTES);
    const body = JSON.parse(answer.text) as ErrorBody;
    // The MCP endpoint's transport answers in JSON-RPC's shape (what an MCP client reads), not the envelope.
    if (isJsonRpcError(body) && [400, 403, 406].includes(answer.status)) return;
    expect(Object.keys(ERROR_CODES), where).toContain(body.error.code);
    expect(ERROR_CODES[body.error.code], where).toBe(answer.status);
    expect(body.error.status, where).toBe(answer.status);
    expect(body.error.requestId, where).toBe(answer.headers.get('x-request-id'));
    if (answer.status === 400) {
      const issue = body.error.details?.params?.[0];
      expect(issue, where).toBeDefined();
      expect([...named], where).toContain(issue!.parameter.split('.')[0]);
      expect(body.error.message, where).toContain(`"${issue!.parameter}"`);
    } else {
      expect(UNNAMED_ERRORS.has(answer.status), where).toBe(true);
    }
  } else if (type.includes('application/json')) {
    const body = JSON.parse(answer.text) as { meta?: unknown };
    if (body.meta !== undefined) {
      expect(JSON.stringify(body.meta).length, where).toBeLessThanOrEqual(MAX_ENVELOPE_BYTES);
    }
  }
}
