/**
 * OpenAPI description of the OAuth endpoints: metadata documents, the
 * registration body, the form fields of the authorize and token requests and
 * the RFC 6749 error bodies. Bodies are judged by the endpoint code (errors in
 * the RFCs' family), so these schemas document rather than validate requests.
 */
import { Type } from '@sinclair/typebox';

export const OAuthErrorSchema = Type.Object(
  {
    error: Type.String({
      description:
        'RFC 6749 §5.2 / RFC 7591 §3.2.2 / RFC 8707 code: `invalid_request`, `invalid_client`, `invalid_grant`, `unsupported_grant_type`, `invalid_scope`, `invalid_target`, `invalid_redirect_uri`, `invalid_client_metadata`, `slow_down` (429, with Retry-After: the per-IP throttle), `temporarily_unavailable` (503), `server_error`.',
    }),
    error_description: Type.String({ description: 'What was wrong, for a human.' }),
  },
  { $id: 'OAuthError', description: 'An OAuth error (never the REST error envelope).' },
);

export const AuthorizationServerMetadataSchema = Type.Object(
  {
    issuer: Type.String(),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    registration_endpoint: Type.String(),
    scopes_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String()),
    response_modes_supported: Type.Array(Type.String()),
    grant_types_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    code_challenge_methods_supported: Type.Array(Type.String()),
    authorization_response_iss_parameter_supported: Type.Boolean(),
    service_documentation: Type.String(),
  },
  { $id: 'OAuthAuthorizationServerMetadata', description: 'RFC 8414 authorization server metadata.' },
);

export const ProtectedResourceMetadataSchema = Type.Object(
  {
    resource: Type.String(),
    authorization_servers: Type.Array(Type.String()),
    bearer_methods_supported: Type.Array(Type.String()),
    scopes_supported: Type.Array(Type.String()),
    resource_name: Type.String(),
    resource_documentation: Type.String(),
  },
  { $id: 'OAuthProtectedResourceMetadata', description: 'RFC 9728 protected resource metadata.' },
);

export const ClientRegistrationRequestSchema = Type.Object(
  {
    client_name: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Shown to the user on the consent page.',
    }),
    redirect_uris: Type.Array(Type.String(), {
      minItems: 1,
      maxItems: 10,
      description:
        'https URLs, or http on localhost / 127.0.0.1 / [::1] (any port at authorization time, RFC 8252 §7.3); no fragment, no credentials.',
    }),
    token_endpoint_auth_method: Type.Optional(Type.Literal('none', { description: 'Public clients only.' })),
    grant_types: Type.Optional(
      Type.Array(Type.Union([Type.Literal('authorization_code'), Type.Literal('refresh_token')])),
    ),
    response_types: Type.Optional(Type.Array(Type.Literal('code'))),
    scope: Type.Optional(Type.String({ description: 'Space-separated; only `api` is supported.' })),
    client_uri: Type.Optional(Type.String()),
    logo_uri: Type.Optional(Type.String()),
  },
  {
    $id: 'OAuthClientRegistrationRequest',
    additionalProperties: true,
    description: 'RFC 7591 client metadata; other fields are ignored.',
  },
);

export const ClientRegistrationResponseSchema = Type.Object(
  {
    client_id: Type.String({ description: '`stoop_client_…`' }),
    client_id_issued_at: Type.Integer({ description: 'Seconds since the epoch.' }),
    client_id_expires_at: Type.Integer({
      description:
        'Stoop extension: when the registration ends (seconds since the epoch), 30 days after issue. An expired client gets `invalid_client` and must register again.',
    }),
    client_name: Type.String(),
    redirect_uris: Type.Array(Type.String()),
    grant_types: Type.Array(Type.String()),
    response_types: Type.Array(Type.String()),
    token_endpoint_auth_method: Type.Literal('none'),
    scope: Type.String(),
  },
  { $id: 'OAuthClientRegistration', additionalProperties: true },
);

const authorizeFields = {
  response_type: Type.String({ description: 'Must be `code`.' }),
  client_id: Type.String({
    description:
      'A registered client id (`stoop_client_…`), or any other string naming an unregistered client, which may use only loopback redirect URIs.',
  }),
  redirect_uri: Type.String({
    description: 'Exactly as registered (a loopback URI may name another port).',
  }),
  code_challenge: Type.String({ description: 'PKCE: base64url(SHA-256(code_verifier)), 43–128 characters.' }),
  code_challenge_method: Type.String({ description: 'Must be `S256` (`plain` is refused).' }),
  state: Type.Optional(Type.String({ description: 'Returned unchanged; up to 1024 characters.' })),
  resource: Type.Optional(
    Type.String({
      description:
        'RFC 8707: the public URL (REST and MCP) or `<public URL>/mcp` (MCP only); default the public URL. Anything else: `invalid_target`.',
    }),
  ),
  scope: Type.Optional(Type.String({ description: 'Only `api` (the default).' })),
};

export const AuthorizeQuerySchema = Type.Object(authorizeFields, { additionalProperties: true });

export const AuthorizeFormSchema = Type.Object(
  {
    ...authorizeFields,
    csrf_token: Type.String({ description: 'From the consent page; bound to the parameters and a cookie.' }),
    action: Type.Union([Type.Literal('approve'), Type.Literal('free'), Type.Literal('deny')], {
      description: '`approve` with `api_key`, `free` (Free tier, no key) or `deny`.',
    }),
    api_key: Type.Optional(
      Type.String({ description: 'The API key whose tier the tokens carry (with `approve`).' }),
    ),
  },
  { additionalProperties: true },
);

export const TokenFormSchema = Type.Object(
  {
    grant_type: Type.Union([Type.Literal('authorization_code'), Type.Literal('refresh_token')]),
    client_id: Type.String(),
    code: Type.Optional(Type.String({ description: 'authorization_code: the code from the redirect.' })),
    redirect_uri: Type.Optional(
      Type.String({ description: 'authorization_code: as in the authorize request.' }),
    ),
    code_verifier: Type.Optional(Type.String({ description: 'authorization_code: the PKCE verifier.' })),
    refresh_token: Type.Optional(Type.String({ description: 'refresh_token: the newest refresh token.' })),
    resource: Type.Optional(Type.String({ description: 'If sent, must equal the authorized resource.' })),
    scope: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const TokenResponseSchema = Type.Object(
  {
    access_token: Type.String({ description: '`stoop_at_…`, opaque; send as `Authorization: Bearer …`.' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds: 3600.' }),
    refresh_token: Type.String({ description: '`stoop_rt_…`, single-use: every refresh returns a new one.' }),
    scope: Type.String(),
    tier: Type.String({ description: 'Stoop extension: the tier the access token carries.' }),
  },
  { $id: 'OAuthTokenResponse' },
);

export const OAUTH_SCHEMAS = [
  OAuthErrorSchema,
  AuthorizationServerMetadataSchema,
  ProtectedResourceMetadataSchema,
  ClientRegistrationRequestSchema,
  ClientRegistrationResponseSchema,
  TokenResponseSchema,
];
