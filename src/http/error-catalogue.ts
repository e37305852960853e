/**
 * The error catalogue: every code of the one error envelope with its status,
 * what it means and what a client should do about it. It is published twice
 * from this one source — as the description of the `Errors` tag of the
 * OpenAPI document (so the docs page has a section per code) and in the
 * README — and every error body links to its entry (`error.docs`).
 */
import { ERROR_CODES, type ErrorCode } from './errors.ts';

export { ERRORS_TAG, errorDocsUrl } from './errors.ts';

interface CatalogueEntry {
  /** What happened, in a sentence. */
  meaning: string;
  /** What the client should change or do next. */
  action: string;
}

/** One entry per code; the type makes a new code without an entry a compile error. */
export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, CatalogueEntry>> = {
  INVALID_PARAMS: {
    meaning:
      'A query or path parameter is invalid: wrong type, out of range, not one of the allowed values, unknown to the operation, or an unknown id (`details.params` names each parameter, its location and the rule it broke).',
    action:
      'Fix the named parameter. An unknown parameter is never ignored: the message suggests the closest known one or lists them. Enum values are case-insensitive; the message lists every allowed value.',
  },
  INVALID_BODY: {
    meaning:
      'The JSON body is not valid JSON, is empty, or a field is missing, of the wrong type, not an allowed value or not a field of the operation (`details.params` names it).',
    action:
      'Fix the named field. Bodies are strict: enum values must be sent exactly as listed (case-sensitive) and unknown fields are rejected.',
  },
  INVALID_REQUEST: {
    meaning: 'The request is not valid HTTP/1.1 (request line, header syntax, framing, missing Host).',
    action: 'Fix the client or proxy that sent it; the connection is closed after this answer.',
  },
  MISSING_API_KEY: {
    meaning: 'The operation needs a credential and none was sent.',
    action: 'Send `Authorization: Bearer <API key or OAuth access token>`.',
  },
  INVALID_API_KEY: {
    meaning: 'The credential sent is not a known, active API key or access token.',
    action: 'Check the key for typos, or ask the operator for a new one; do not retry with the same key.',
  },
  EXPIRED_API_KEY: {
    meaning: 'The subscription of the API key has ended.',
    action: 'Renew the subscription or use a current key.',
  },
  TIER_RESTRICTED: {
    meaning: "The operation needs a higher tier than the credential's (`details.requiredTier`).",
    action: 'Use a key of the required tier or above.',
  },
  NOT_FOUND: {
    meaning: 'No route matches the path, or the listing, building, area or record named does not exist.',
    action: 'Check the path (see the operations below) and the id; ids come from search and list results.',
  },
  METHOD_NOT_ALLOWED: {
    meaning: 'The path exists but not with this HTTP method.',
    action: 'Use one of the methods the operation declares.',
  },
  NOT_ACCEPTABLE: {
    meaning: 'The `Accept` header names no media type the operation can answer with.',
    action: 'Accept `application/json` (or the type the operation documents, e.g. `text/event-stream`).',
  },
  REQUEST_TIMEOUT: {
    meaning: 'The headers or the whole request did not arrive in time; the connection is closed.',
    action: 'Send the request promptly; retry on a new connection.',
  },
  CONFLICT: {
    meaning: 'The request conflicts with the current state of the record (e.g. a duplicate).',
    action: 'Read the record again and retry with a request that fits its current state.',
  },
  PAYLOAD_TOO_LARGE: {
    meaning: 'The body exceeds the size limit.',
    action: 'Send a smaller body.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    meaning: 'The body is not sent as `application/json`.',
    action: 'Send JSON with `Content-Type: application/json`.',
  },
  RATE_LIMIT_EXCEEDED: {
    meaning: "Too many requests in the current window for the credential's tier (or the client IP).",
    action: 'Wait `retryAfter` seconds (the `Retry-After` header), then retry; spread requests out.',
  },
  QUOTA_EXCEEDED: {
    meaning: "The credential's monthly quota is used up.",
    action: 'Wait until the quota resets (`retryAfter`), or use a key of a higher tier.',
  },
  HEADERS_TOO_LARGE: {
    meaning: 'The request line and headers exceed the server limit; the connection is closed.',
    action: 'Send fewer or shorter headers (or a shorter URL).',
  },
  INTERNAL_ERROR: {
    meaning: 'An unexpected failure on the server; it has been logged with the request id.',
    action: 'Retry later; if it persists, report the `requestId` to the operator.',
  },
  UPSTREAM_ERROR: {
    meaning: 'A source the server depends on answered with an error.',
    action: 'Retry later.',
  },
  SERVICE_UNAVAILABLE: {
    meaning: 'The service cannot answer now (database unavailable, node not ready).',
    action: 'Wait `retryAfter` seconds (the `Retry-After` header), then retry.',
  },
};

/** The catalogue as a Markdown table, one row per code (for the OpenAPI tag and the README). */
export function errorCatalogueMarkdown(): string {
  const rows = (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).map((code) => {
    const entry = ERROR_CATALOGUE[code];
    return `| <a id="${code}"></a>\`${code}\` | ${ERROR_CODES[code]} | ${entry.meaning} | ${entry.action} |`;
  });
  return ['| Code | Status | Meaning | What to do |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** The rules every error follows, stated once for the docs page and the README. */
export const ERROR_RULES = [
  'Every error (REST, including unknown routes, 405, 429 and 5xx) answers the one envelope `{error: {code, message, status, requestId, docs, details?}}`; `docs` links to the code below. OAuth endpoints answer the RFC 6749 shape and `/mcp` JSON-RPC errors their own.',
  'Unknown query parameters are a 400 `INVALID_PARAMS` with rule `unknown_parameter`, naming the parameter and suggesting the closest known one (or listing the operation’s parameters): a typo never widens a search. MCP tool arguments follow the same rule. Exceptions: `/oauth/authorize` ignores unknown parameters (RFC 6749 §3.1); the docs pages, `/openapi.json`, `/.well-known/*`, `/mcp` and `/fp/*` take no parameters and ignore them.',
  'Enum values in query and path parameters (and MCP tool arguments) are case-insensitive and trimmed: `status=active`, `buildingType=condo`, `amenities=Gym, pool` are read as `ACTIVE`, `CONDO`, `gym,pool`. JSON bodies are strict (exact values). A bad value’s message lists every allowed value.',
] as const;

/** The description of the `Errors` tag: the rules, then the catalogue. */
export function errorsTagDescription(): string {
  return `${ERROR_RULES.map((rule) => `- ${rule}`).join('\n')}\n\n${errorCatalogueMarkdown()}`;
}
