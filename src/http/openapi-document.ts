/**
 * Completes the OpenAPI document @fastify/swagger builds from the route
 * schemas, document-wide and from each operation's own declarations:
 *
 * - response headers (`components/headers`), on the statuses that carry them:
 *   `X-Request-Id` everywhere; `X-RateLimit-*` and `X-Quota-*` on every answer
 *   of a metered operation (`x-metering`, set from the route's access policy),
 *   `X-Quota-Overage` where a counted call can be past its quota,
 *   `WWW-Authenticate` on 401, `Retry-After` on 429 and 503;
 * - every error status an operation can answer with (`components/responses`),
 *   derived from its access policy and schema: any request can be malformed
 *   (400), a metered one can send a refused credential (401, public operations
 *   included), be below the tier (403, when the tier is above Free), past its
 *   window or quota (429) or meet the limits backend or database down (503);
 *   path parameters can name nothing (404); bodies can be too large (413) or
 *   of another media type (415); anything can fail (500);
 * - one example per error code, on the statuses that code is answered with,
 *   and one realistic success example per operation, recorded from the demo
 *   market by `scripts/openapi-examples.ts` (resources/openapi-examples.json);
 * - the `default` response of every operation: what the HTTP edge answers
 *   before any route (408, 431), with the envelope;
 * - parameters the validator fills with a default are optional for clients,
 *   whatever the TypeBox `required` list says (Ajv applies defaults first);
 * - the Standard Webhooks signature as the security of webhook operations;
 * - a body or response schema identical to a component refers to it.
 */
import { readFileSync } from 'node:fs';
import { ERROR_CODES, type ErrorCode } from './errors.ts';
import { ErrorEnvelopeSchema } from './schemas.ts';

type Json = Record<string, unknown>;

/** One answer of an operation on the demo market, and the request that got it. */
export interface RecordedOperation {
  request: { method: string; path: string };
  status: number;
  contentType: string;
  value: unknown;
}

/** What `scripts/openapi-examples.ts` records: one success answer per operation, one body per error code. */
export interface OpenApiExamples {
  /** How the examples were made (demo market seed, scale, instant). */
  source: Json;
  operations: Record<string, RecordedOperation>;
  errors: Partial<Record<ErrorCode, unknown>>;
  /** Webhook payloads as delivered, by event type (the `webhooks` section's keys). */
  webhooks: Record<string, unknown>;
}

export const EXAMPLES_FILE = new URL('../../resources/openapi-examples.json', import.meta.url);

/** The recorded examples; none when the file is absent (the document is complete without them). */
export function loadOpenApiExamples(file: URL = EXAMPLES_FILE): OpenApiExamples {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as OpenApiExamples;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      return { source: {}, operations: {}, errors: {}, webhooks: {} };
    throw error;
  }
}

export interface OpenApiDocumentOptions {
  /** The service's absolute public URL (`PUBLIC_URL`): the document's one server. */
  publicUrl: string;
  examples: OpenApiExamples;
}

/** The `servers` of the document: absolute, so generated clients and validating proxies need no base URL. */
export function openApiServers(publicUrl: string): { url: string; description: string }[] {
  return [{ url: publicUrl, description: 'This Stoop server (`PUBLIC_URL`).' }];
}

const HEADERS: Record<string, { name: string; description: string; schema: Json; required?: boolean }> = {
  XRequestId: {
    name: 'X-Request-Id',
    description: 'Identifies this request in the server log; repeated as `error.requestId` in error bodies.',
    schema: { type: 'string' },
    required: true,
  },
  XRateLimitLimit: {
    name: 'X-RateLimit-Limit',
    description:
      "Requests per minute the caller's tier allows. Sent on every answer of a metered operation once its rate window was read (not when the limits backend is unavailable, nor on malformed HTTP answered before the route).",
    schema: { type: 'integer', minimum: 0 },
  },
  XRateLimitRemaining: {
    name: 'X-RateLimit-Remaining',
    description: 'Requests left in the current one-minute window (same answers as `X-RateLimit-Limit`).',
    schema: { type: 'integer', minimum: 0 },
  },
  XRateLimitReset: {
    name: 'X-RateLimit-Reset',
    description: 'When the current window ends, in Unix seconds (same answers as `X-RateLimit-Limit`).',
    schema: { type: 'integer', minimum: 0 },
  },
  XQuotaLimit: {
    name: 'X-Quota-Limit',
    description:
      "Calls per UTC calendar month the caller's tier includes. Sent with the `X-RateLimit-*` headers, on every answer of a metered operation.",
    schema: { type: 'integer', minimum: 0 },
  },
  XQuotaUsed: {
    name: 'X-Quota-Used',
    description:
      'Calls counted this month, this one included when it was counted (a refused call is never counted).',
    schema: { type: 'integer', minimum: 0 },
  },
  XQuotaRemaining: {
    name: 'X-Quota-Remaining',
    description: 'Calls left this month before overage (never below 0).',
    schema: { type: 'integer', minimum: 0 },
  },
  XQuotaOverage: {
    name: 'X-Quota-Overage',
    description:
      "`true` when this counted call is past the monthly quota, inside the tier's overage allowance; absent otherwise.",
    schema: { type: 'string', enum: ['true'] },
  },
  RetryAfter: {
    name: 'Retry-After',
    description: 'Seconds until a retry can succeed (as `error.retryAfter`).',
    schema: { type: 'integer', minimum: 0 },
  },
  WWWAuthenticate: {
    name: 'WWW-Authenticate',
    description:
      'RFC 6750 bearer challenge naming the RFC 9728 protected-resource metadata (`resource_metadata="…"`), with `error="invalid_token"` when a credential was sent and refused.',
    schema: { type: 'string' },
    required: true,
  },
};
type HeaderKey = keyof typeof HEADERS;

const RATE_HEADERS: HeaderKey[] = ['XRateLimitLimit', 'XRateLimitRemaining', 'XRateLimitReset'];
const QUOTA_HEADERS: HeaderKey[] = ['XQuotaLimit', 'XQuotaUsed', 'XQuotaRemaining'];

/** Error statuses, their component names and what they mean. */
const ERROR_STATUSES: Record<number, { name: string; description: string }> = {
  400: {
    name: 'BadRequest',
    description:
      'Invalid parameters (`INVALID_PARAMS`) or body (`INVALID_BODY`), each offending one named in `details.params`; or HTTP the server cannot parse (`INVALID_REQUEST`).',
  },
  401: {
    name: 'Unauthorized',
    description:
      'The credential is missing (operations that need one), malformed, unknown, revoked or expired. Public operations answer 401 too when a credential is sent and refused.',
  },
  403: { name: 'Forbidden', description: "The caller's tier is below the operation's (`x-min-tier`)." },
  404: { name: 'NotFound', description: 'Nothing has the given id.' },
  405: { name: 'MethodNotAllowed', description: 'The method is not served at this path.' },
  406: { name: 'NotAcceptable', description: 'The `Accept` header excludes every media type served.' },
  409: { name: 'Conflict', description: 'The request conflicts with the current state of the resource.' },
  413: { name: 'PayloadTooLarge', description: 'The body is over the size limit.' },
  415: { name: 'UnsupportedMediaType', description: 'The body is not sent as `application/json`.' },
  429: {
    name: 'TooManyRequests',
    description:
      'Past the rate window (`RATE_LIMIT_EXCEEDED`, Retry-After: the window end) or the monthly quota and its overage (`QUOTA_EXCEEDED`, Retry-After: the next month).',
  },
  500: {
    name: 'InternalError',
    description: 'An unexpected failure; logged with the request id, nothing internal revealed.',
  },
  502: { name: 'BadGateway', description: 'The upstream data source failed.' },
  503: {
    name: 'ServiceUnavailable',
    description: 'The database or the limits backend is unavailable; retry after `Retry-After` seconds.',
  },
};

/** What every operation may meet at the HTTP edge, before any route: the error envelope. */
const DEFAULT_RESPONSE_DESCRIPTION =
  'Any other status: the error envelope. The HTTP edge answers a request that is too slow (408 `REQUEST_TIMEOUT`) or whose headers are too large (431 `HEADERS_TOO_LARGE`) before any route, and closes the connection.';

type Metering = 'count' | 'rate' | 'none';

/** Headers of an answer with `status` of an operation metered as `metering`. */
function headersFor(status: number, metering: Metering): HeaderKey[] {
  const keys: HeaderKey[] = ['XRequestId'];
  if (status === 401) keys.push('WWWAuthenticate');
  if (status === 429 || status === 503) keys.push('RetryAfter');
  if (metering !== 'none') keys.push(...RATE_HEADERS, ...QUOTA_HEADERS);
  // Overage is flagged once the call was counted: never on the refusals of access control.
  if (metering === 'count' && ![401, 403, 429].includes(status)) keys.push('XQuotaOverage');
  return keys;
}

const headerRefs = (keys: HeaderKey[]): Json =>
  Object.fromEntries(keys.map((key) => [HEADERS[key]!.name, { $ref: `#/components/headers/${key}` }]));

const codesOf = (status: number): ErrorCode[] =>
  (Object.keys(ERROR_CODES) as ErrorCode[]).filter((code) => ERROR_CODES[code] === status);

const FAMILY_SUFFIX: Record<Metering, string> = { count: '', rate: 'RateOnly', none: 'Unmetered' };

function responseComponentName(status: number, metering: Metering): string {
  return `${ERROR_STATUSES[status]!.name}${FAMILY_SUFFIX[metering]}`;
}

const ENVELOPE_REF = '#/components/schemas/ErrorEnvelope';

/** True for a response whose JSON body is the error envelope (not OAuth's or JSON-RPC's error shape). */
function isEnvelopeResponse(response: Json): boolean {
  const content = response.content as Record<string, { schema?: Json }> | undefined;
  return content?.['application/json']?.schema?.$ref === ENVELOPE_REF;
}

interface Operation extends Json {
  operationId?: string;
  parameters?: Json[];
  requestBody?: Json;
  responses?: Record<string, Json>;
  security?: Json[];
  'x-metering'?: Metering;
  'x-min-tier'?: string;
}

/** The error statuses an operation can answer with, from its access policy and its schema. */
export function derivedErrorStatuses(operation: Operation): number[] {
  const metering = operation['x-metering'] ?? 'none';
  const statuses = new Set<number>([400, 500]);
  if (metering !== 'none') {
    for (const status of [401, 429, 503]) statuses.add(status);
    if (operation['x-min-tier'] !== undefined && operation['x-min-tier'] !== 'FREE') statuses.add(403);
  }
  if ((operation.parameters ?? []).some((parameter) => parameter.in === 'path')) statuses.add(404);
  if (operation.requestBody) {
    statuses.add(413);
    statuses.add(415);
  }
  return [...statuses];
}

/** Parameters with a default are filled in by the validator: optional for clients. */
function relaxDefaultedParameters(operation: Operation): void {
  for (const parameter of operation.parameters ?? []) {
    const schema = parameter.schema as Json | undefined;
    if (parameter.required === true && parameter.in !== 'path' && schema?.default !== undefined) {
      parameter.required = false;
    }
  }
  const bodySchema = (operation.requestBody?.content as Record<string, { schema?: Json }> | undefined)?.[
    'application/json'
  ]?.schema;
  const properties = bodySchema?.properties as Record<string, Json> | undefined;
  if (bodySchema && properties && Array.isArray(bodySchema.required)) {
    bodySchema.required = (bodySchema.required as string[]).filter(
      (name) => properties[name]?.default === undefined,
    );
  }
}

function completeOperation(
  operation: Operation,
  examples: OpenApiExamples,
  usedResponses: Map<string, { status: number; metering: Metering }>,
): void {
  const metering = operation['x-metering'] ?? 'none';
  const responses = operation.responses ?? {};
  operation.responses = responses;
  relaxDefaultedParameters(operation);

  const reference = (status: number): Json => {
    const name = responseComponentName(status, metering);
    usedResponses.set(name, { status, metering });
    return { $ref: `#/components/responses/${name}` };
  };

  for (const status of derivedErrorStatuses(operation)) {
    if (responses[String(status)] === undefined) responses[String(status)] = reference(status);
  }
  for (const [code, response] of Object.entries(responses)) {
    const status = Number(code);
    if ('$ref' in response) continue;
    if (status >= 400 && ERROR_STATUSES[status] && isEnvelopeResponse(response)) {
      // A route's own words for the status stay (3.1 lets a reference carry a description).
      const own = response.description;
      const generic = own === undefined || own === 'Default Response' || own === ENVELOPE_DESCRIPTION;
      responses[code] = generic ? reference(status) : { ...reference(status), description: own };
      continue;
    }
    const keys = Number.isInteger(status) ? headersFor(status, metering) : ['XRequestId'];
    response.headers = { ...headerRefs(keys as HeaderKey[]), ...(response.headers as Json | undefined) };
  }
  responses.default ??= { $ref: '#/components/responses/EdgeError' };

  const recorded = operation.operationId ? examples.operations[operation.operationId] : undefined;
  if (recorded) {
    const content = responses[String(recorded.status)]?.content as Record<string, Json> | undefined;
    const media = content?.[recorded.contentType];
    if (media) media.examples = { demo: { summary: 'From the demo market', value: recorded.value } };
  }
}

/** What the generator writes for an envelope response a route gave no words of its own. */
const ENVELOPE_DESCRIPTION = ErrorEnvelopeSchema.description;

/** Codes answered at the HTTP edge, before any route: the `default` response of every operation. */
const EDGE_CODES: ErrorCode[] = ['REQUEST_TIMEOUT', 'HEADERS_TOO_LARGE'];

function errorResponseComponent(
  codes: ErrorCode[],
  description: string,
  headers: HeaderKey[],
  examples: OpenApiExamples,
): Json {
  const recorded = codes.filter((code) => examples.errors[code] !== undefined);
  const media: Json = { schema: { $ref: ENVELOPE_REF } };
  if (recorded.length > 0) {
    media.examples = Object.fromEntries(
      recorded.map((code) => [code, { $ref: `#/components/examples/${code}` }]),
    );
  }
  return {
    description,
    headers: headerRefs(headers),
    content: { 'application/json': media },
  };
}

const WEBHOOK_SIGNATURE_SCHEME = {
  type: 'apiKey',
  in: 'header',
  name: 'webhook-signature',
  description:
    'Deliveries are signed per Standard Webhooks (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">` keyed with the subscription secret (`whsec_…`, base64 after the prefix), several space-separated while a rotated-out secret is still valid. Receivers verify it and reject timestamps more than 5 minutes off their clock.',
};

/**
 * Routes that give a component's schema object itself (not a `Type.Ref`) get
 * it inlined by the generator; a body or response identical to a component
 * becomes a reference to it, so clients get the named type.
 */
function referenceComponentSchemas(operations: Operation[], schemas: Json): void {
  const byText = new Map(Object.entries(schemas).map(([name, schema]) => [JSON.stringify(schema), name]));
  const mediaOf = (holder: Json | undefined) =>
    Object.values((holder?.content as Record<string, Json> | undefined) ?? {});
  for (const operation of operations) {
    const holders = [operation.requestBody, ...Object.values(operation.responses ?? {})];
    for (const media of holders.flatMap(mediaOf)) {
      const name = media.schema === undefined ? undefined : byText.get(JSON.stringify(media.schema));
      if (name !== undefined) media.schema = { $ref: `#/components/schemas/${name}` };
    }
  }
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function operationsOf(pathItems: Record<string, Json> | undefined): Operation[] {
  return Object.values(pathItems ?? {}).flatMap((item) =>
    HTTP_METHODS.filter((method) => item[method] !== undefined).map((method) => item[method] as Operation),
  );
}

/** The document as served: the generated one completed (see the module comment). Mutates and returns it. */
export function completeOpenApiDocument<T extends object>(document: T, options: OpenApiDocumentOptions): T {
  const doc = document as Json & {
    paths?: Record<string, Json>;
    webhooks?: Record<string, Json>;
    components?: Json;
  };
  const { examples } = options;
  doc.servers = openApiServers(options.publicUrl);
  doc.components ??= {};
  const components = doc.components as Record<string, Json>;
  referenceComponentSchemas(operationsOf(doc.paths), components.schemas ?? {});
  const used = new Map<string, { status: number; metering: Metering }>();
  for (const operation of operationsOf(doc.paths)) completeOperation(operation, examples, used);

  for (const [type, item] of Object.entries(doc.webhooks ?? {})) {
    const payload = examples.webhooks?.[type];
    const media = (
      (item.post as Operation | undefined)?.requestBody?.content as Record<string, Json> | undefined
    )?.['application/json'];
    if (payload !== undefined && media)
      media.examples = { demo: { summary: 'As delivered', value: payload } };
  }
  for (const operation of operationsOf(doc.webhooks)) {
    operation.security = [{ webhookSignature: [] }];
    const responses = (operation.responses ?? {}) as Record<string, Json>;
    responses['4XX'] ??= {
      description:
        'The delivery is refused (e.g. a signature that does not verify) and retried with backoff, like any non-2xx answer or a timeout.',
    };
    operation.responses = responses;
  }

  components.headers = Object.fromEntries(
    Object.entries(HEADERS).map(([key, { name: _name, required, ...header }]) => [
      key,
      required ? { ...header, required } : header,
    ]),
  );
  const sorted = [...used.entries()].sort(([a], [b]) => a.localeCompare(b));
  components.responses = {
    ...Object.fromEntries(
      sorted.map(([name, { status, metering }]) => [
        name,
        errorResponseComponent(
          codesOf(status),
          ERROR_STATUSES[status]!.description,
          headersFor(status, metering),
          examples,
        ),
      ]),
    ),
    EdgeError: errorResponseComponent(EDGE_CODES, DEFAULT_RESPONSE_DESCRIPTION, ['XRequestId'], examples),
  };
  const usedCodes = new Set([...[...used.values()].flatMap(({ status }) => codesOf(status)), ...EDGE_CODES]);
  components.examples = Object.fromEntries(
    (Object.keys(ERROR_CODES) as ErrorCode[])
      .filter((code) => usedCodes.has(code) && examples.errors[code] !== undefined)
      .map((code) => [code, { summary: `${ERROR_CODES[code]} ${code}`, value: examples.errors[code] }]),
  );
  components.securitySchemes = { ...components.securitySchemes, webhookSignature: WEBHOOK_SIGNATURE_SCHEME };
  return document;
}
