/**
 * Credentials out of the logs. Clients put keys and tokens where they should
 * not — `?api_key=…` in a URL, a key as a path segment, `Bearer …` inside an
 * error message — and any of those would otherwise be written verbatim by the
 * request log, an error's message or stack, or a job's log line.
 *
 * Contract: text that passes through `credentialRedactor` holds no API key
 * (`<PREFIX>-<uuid>`, any letter case, percent-encoded or not), no bearer
 * credential, and no value of a query-style parameter named like a secret
 * (`token=`, `access_token=`, `code=`, `client_secret=`, `api_key=`, `key=`, …);
 * everything else is kept, so a line still says what was asked. The logger
 * options (`redactingLogOptions`) apply it to every logged URL and error, and
 * to each finished log line as a last guard.
 */
import { type LoggerOptions, stdSerializers } from 'pino';

export const REDACTED = '[redacted]';

/** Query-style parameter names whose values are credentials (OAuth 2.1 and API-key conventions). */
const SECRET_PARAMETER_NAMES = [
  'access_token',
  'refresh_token',
  'id_token',
  'token',
  'code',
  'code_verifier',
  'client_secret',
  'client_assertion',
  'api_key',
  'apikey',
  'key',
  'password',
  'secret',
];

/** `name=value` with a secret name (not the tail of a longer name), up to the next separator or quote. */
const SECRET_PARAMETER = new RegExp(
  `(?<![A-Za-z0-9_])(${SECRET_PARAMETER_NAMES.join('|')})=[^&#\\s"'\\\\]*`,
  'gi',
);

/**
 * `Bearer <token68>` (RFC 7235), whatever separates the two: a space, an
 * encoded space (`%20`, `+`), or an escaped tab or newline inside a JSON line.
 */
const BEARER = /\bBearer(?:\s|%20|\+|\\[tn])+[A-Za-z0-9\-._~+/%]+=*/gi;

/**
 * OAuth codes and tokens (src/oauth): recognizable by their prefix wherever a
 * client puts them (a path segment, an unnamed parameter). Kept in step with
 * the prefixes in src/oauth/oauth.service.ts.
 */
const OAUTH_SECRET = /\bstoop_(at|rt|ac)_[A-Za-z0-9_-]+/g;

/** A percent-escape of an unreserved character (RFC 3986 §2.3): equivalent to the character itself. */
const ESCAPE = /%([0-9A-Fa-f]{2})/g;
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

function decodeUnreservedEscapes(text: string): string {
  return text.replace(ESCAPE, (sequence, hex: string) => {
    const character = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(character) ? character : sequence;
  });
}

export type Redactor = (text: string) => string;

/**
 * A redactor for this deployment's key prefix. Escapes of unreserved
 * characters are decoded first (`%53TOOP%2D…` is `STOOP-…`), so encoding a key
 * does not carry it past the patterns.
 */
export function credentialRedactor(apiKeyPrefix: string): Redactor {
  // At least eight hex digits or hyphens: a key, or a cut-off piece of one
  // (error messages quote truncated input), but not a key hint (`STOOP-…1a2b`).
  const apiKey = new RegExp(`${escapeRegExp(apiKeyPrefix)}-[0-9a-f][0-9a-f-]{7,}`, 'gi');
  // What every pattern below needs to match (an escape may hide one): text
  // without any of these is returned as is, after one scan instead of five.
  const suspicious = new RegExp(
    `${escapeRegExp(apiKeyPrefix)}-|bearer|stoop_(?:at|rt|ac)_|%|${SECRET_PARAMETER.source}`,
    'i',
  );
  return (text) => {
    if (!suspicious.test(text)) return text;
    const normalized = text.includes('%') ? decodeUnreservedEscapes(text) : text;
    return normalized
      .replace(apiKey, `${apiKeyPrefix}-${REDACTED}`)
      .replace(BEARER, `Bearer ${REDACTED}`)
      .replace(OAUTH_SECRET, (_match, kind: string) => `stoop_${kind}_${REDACTED}`)
      .replace(SECRET_PARAMETER, (_match, name: string) => `${name}=${REDACTED}`);
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** What the request serializer reads: a Fastify request (or a raw Node request). */
interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
  host?: string;
  headers?: Readonly<Record<string, string | string[] | undefined>>;
  socket?: { remotePort?: number } | null;
}

/**
 * Pino options that keep credentials out of every line: the request
 * serializer (Fastify's fields, the URL redacted), the error serializer
 * (message and stack redacted; the parser's raw bytes dropped), and a final
 * pass over each serialized line for whatever else quotes a credential
 * (messages, other fields).
 */
export function redactingLogOptions(
  apiKeyPrefix: string,
): Required<Pick<LoggerOptions, 'serializers' | 'hooks'>> {
  const redact = credentialRedactor(apiKeyPrefix);
  return {
    serializers: {
      req: (request: LoggedRequest) => ({
        method: request.method,
        url: request.url === undefined ? undefined : redact(request.url),
        version: request.headers?.['accept-version'],
        host: request.host,
        remoteAddress: request.ip,
        remotePort: request.socket?.remotePort,
      }),
      err: (error: Error) => {
        const serialized = stdSerializers.err(error);
        if (typeof serialized !== 'object' || serialized === null) return serialized;
        // Node's HTTP parser errors carry the client's raw bytes (keys included), as numbers a pattern cannot see.
        const { rawPacket: _rawPacket, ...rest } = serialized as typeof serialized & { rawPacket?: unknown };
        return {
          ...rest,
          ...(typeof rest.message === 'string' ? { message: redact(rest.message) } : {}),
          ...(typeof rest.stack === 'string' ? { stack: redact(rest.stack) } : {}),
        };
      },
    },
    hooks: { streamWrite: redact },
  };
}
