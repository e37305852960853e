/**
 * The OAuth endpoints' own error family (RFC 6749 §4.1.2.1 and §5.2, RFC 7591
 * §3.2.2, RFC 8707 §2): `{error, error_description}` with the RFC's codes,
 * never the REST API's `{error: {code, …}}` envelope — OAuth clients parse
 * these bodies by the RFCs.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'slow_down';

export interface OAuthErrorBody {
  error: OAuthErrorCode;
  error_description: string;
}

export class OAuthError extends Error {
  readonly code: OAuthErrorCode;
  readonly status: number;
  /** Seconds, for 429 and 503 answers (sent as Retry-After). */
  readonly retryAfter: number | undefined;

  constructor(
    code: OAuthErrorCode,
    description: string,
    options: { status?: number; retryAfter?: number } = {},
  ) {
    super(description);
    this.name = 'OAuthError';
    this.code = code;
    // RFC 6749 §5.2: 400 except invalid_client, which is 401 when the client tried to authenticate.
    this.status = options.status ?? (code === 'invalid_client' ? 401 : 400);
    this.retryAfter = options.retryAfter;
  }

  body(): OAuthErrorBody {
    return { error: this.code, error_description: this.message };
  }
}
