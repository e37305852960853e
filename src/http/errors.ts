/**
 * The one error type of the API. Expected failures are thrown or returned as
 * `ApiError`; anything else becomes a logged 500 `INTERNAL_ERROR` whose message
 * reveals nothing internal.
 */
export const ERROR_CODES = {
  INVALID_PARAMS: 400,
  INVALID_BODY: 400,
  /** Not valid HTTP/1.1 (request line, header syntax, framing); the connection is closed. */
  INVALID_REQUEST: 400,
  MISSING_API_KEY: 401,
  INVALID_API_KEY: 401,
  EXPIRED_API_KEY: 401,
  TIER_RESTRICTED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  /** The request (headers or body) did not arrive in time; the connection is closed. */
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMIT_EXCEEDED: 429,
  QUOTA_EXCEEDED: 429,
  /** The request line and headers exceed the server's limit; the connection is closed. */
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ParamIssue {
  /** The offending parameter (query, path or body field name). */
  parameter: string;
  /** Where it was sent: query, path, body, header. */
  location: 'query' | 'path' | 'body' | 'header';
  /** Machine-readable rule it broke: type, minimum, maximum, enum, range, unknown_area, page_range, unknown_parameter, … */
  rule: string;
  message: string;
}

export interface ErrorDetails {
  params?: ParamIssue[];
  requiredTier?: string;
  retryAfter?: number;
  [key: string]: unknown;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_CODES[code];
    this.details = details;
  }

  static invalidParam(issue: Omit<ParamIssue, 'location'> & { location?: ParamIssue['location'] }): ApiError {
    const full: ParamIssue = { location: 'query', ...issue };
    return new ApiError('INVALID_PARAMS', `Invalid parameter "${full.parameter}": ${full.message}`, {
      params: [full],
    });
  }

  static notFound(what: string, id: string | number): ApiError {
    return new ApiError('NOT_FOUND', `${what} ${JSON.stringify(String(id))} was not found`);
  }
}

/** The OpenAPI tag whose description holds the error catalogue (src/http/error-catalogue.ts). */
export const ERRORS_TAG = 'Errors';

/**
 * Where a code is documented: its entry in the `Errors` section of the docs
 * page, deep-linked as Swagger UI links its sections (`#/<tag>/<entry>`:
 * opening the link expands the section holding the catalogue).
 */
export function errorDocsUrl(publicUrl: string, code: ErrorCode): string {
  return `${publicUrl.replace(/\/+$/, '')}/docs#/${ERRORS_TAG}/${code}`;
}

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    status: number;
    requestId?: string;
    /** Absolute URL of the code's entry in the error catalogue. */
    docs: string;
    /** Seconds to wait before retrying (429s); same as the Retry-After header. */
    retryAfter?: number;
    details?: ErrorDetails;
  };
}

/** The envelope of an error; `publicUrl` (PUBLIC_URL) is the origin of its `docs` link. */
export function errorBody(error: ApiError, requestId: string | undefined, publicUrl: string): ErrorBody {
  return {
    error: {
      code: error.code,
      message: error.message,
      status: error.status,
      ...(requestId ? { requestId } : {}),
      docs: errorDocsUrl(publicUrl, error.code),
      ...(error.details?.retryAfter !== undefined ? { retryAfter: error.details.retryAfter } : {}),
      ...(error.details ? { details: error.details } : {}),
    },
  };
}
