/**
 * The token endpoint (issue 14 part 4; SPEC "OAuth 2.1 with PKCE" 3–4):
 * `POST /oauth/token`, form-encoded only. `authorization_code`: the code is
 * single-use (a replay revokes what it obtained), bound to the client, the
 * redirect URI, the PKCE verifier (S256) and the resource, and lives 5
 * minutes. `refresh_token`: rotated on every use (a replayed old token revokes
 * the whole grant), re-validating the API key behind the grant so tier changes
 * and revocations apply. Answers carry `Cache-Control: no-store`; errors are
 * RFC 6749 §5.2 bodies. Throttled per client IP.
 */
import { UNMETERED_ROUTE } from '../http/access.ts';
import type { HttpApp } from '../http/server.ts';
import type { Limits } from '../platform/limits/limits.ts';
import { OAuthError } from './errors.ts';
import { OAuthErrorSchema, TokenFormSchema, TokenResponseSchema } from './oauth.schema.ts';
import type { OAuthService } from './oauth.service.ts';
import { OAUTH_RATES, throttle } from './throttle.ts';

export function tokenRoutes(app: HttpApp, oauth: OAuthService, limits: Limits): void {
  app.post(
    '/oauth/token',
    {
      config: { access: UNMETERED_ROUTE },
      attachValidation: true,
      schema: {
        operationId: 'oauthToken',
        tags: ['OAuth'],
        summary: 'Exchange a code or a refresh token for tokens',
        description: `Form-encoded. \`grant_type=authorization_code\` with \`code\`, \`client_id\`, \`redirect_uri\`, \`code_verifier\` (and \`resource\` if the authorization named one); or \`grant_type=refresh_token\` with \`refresh_token\` and \`client_id\`. Access tokens live 1 hour and keep their tier until they expire; refresh tokens are single-use, and a grant (with every refresh token it yields) ends 30 days after consent. Errors: RFC 6749 §5.2 (\`invalid_request\`, \`invalid_client\` (401), \`invalid_grant\`, \`unsupported_grant_type\`, \`invalid_scope\`, \`invalid_target\`). At most ${OAUTH_RATES.token} requests per minute per client IP.`,
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenFormSchema,
        response: {
          200: TokenResponseSchema,
          400: OAuthErrorSchema,
          401: OAuthErrorSchema,
          429: OAuthErrorSchema,
        },
      },
    },
    async (request, reply) => {
      reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
      await throttle(limits, oauth, `oauth-token:${request.ip}`, OAUTH_RATES.token, 'token requests');
      if (
        !(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')
      ) {
        throw new OAuthError(
          'invalid_request',
          'The token request must be application/x-www-form-urlencoded',
        );
      }
      const form = request.body as Record<string, string>;
      if (form.client_secret !== undefined) {
        throw new OAuthError('invalid_client', 'Clients are public (PKCE): send no client_secret');
      }
      switch (form.grant_type) {
        case undefined:
          throw new OAuthError('invalid_request', 'grant_type is required');
        case 'authorization_code':
          return oauth.exchangeCode(form);
        case 'refresh_token':
          return oauth.refresh(form);
        default:
          throw new OAuthError(
            'unsupported_grant_type',
            'grant_type must be authorization_code or refresh_token',
          );
      }
    },
  );
}
