/**
 * Dynamic client registration (issue 14 part 2; SPEC "OAuth 2.1 with PKCE" 1;
 * RFC 7591): `POST /oauth/register` with JSON client metadata. Public clients
 * only (`token_endpoint_auth_method: none`); redirect URIs https, or http on a
 * loopback host. Answers 201 with `client_id`, `client_id_issued_at` and
 * `client_id_expires_at` (the registration's end, 30 days on); errors are RFC
 * 7591 §3.2.2 bodies. Throttled per client IP.
 */
import { UNMETERED_ROUTE } from '../http/access.ts';
import type { HttpApp } from '../http/server.ts';
import type { Limits } from '../platform/limits/limits.ts';
import { OAuthError } from './errors.ts';
import {
  ClientRegistrationRequestSchema,
  ClientRegistrationResponseSchema,
  OAuthErrorSchema,
} from './oauth.schema.ts';
import type { OAuthService } from './oauth.service.ts';
import { OAUTH_RATES, throttle } from './throttle.ts';

export function registerRoutes(app: HttpApp, oauth: OAuthService, limits: Limits): void {
  app.post(
    '/oauth/register',
    {
      config: { access: UNMETERED_ROUTE },
      attachValidation: true,
      schema: {
        operationId: 'registerOAuthClient',
        tags: ['OAuth'],
        summary: 'Register a client (RFC 7591)',
        description: `Registers a public client for 30 days. Optional for apps on a loopback redirect URI: any \`client_id\` that is not registered names an unregistered client, which may use only \`http://localhost\`, \`http://127.0.0.1\` or \`http://[::1]\` redirect URIs. At most ${OAUTH_RATES.register} registrations per minute per client IP.`,
        body: ClientRegistrationRequestSchema,
        response: {
          201: ClientRegistrationResponseSchema,
          400: OAuthErrorSchema,
          429: OAuthErrorSchema,
        },
      },
    },
    async (request, reply) => {
      await throttle(limits, oauth, `oauth-register:${request.ip}`, OAUTH_RATES.register, 'registrations');
      if (!(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
        throw new OAuthError('invalid_client_metadata', 'Send the client metadata as application/json');
      }
      const registration = await oauth.register(request.body);
      reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
      return reply.code(201).send(registration);
    },
  );
}
