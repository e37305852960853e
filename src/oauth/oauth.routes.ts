/**
 * The OAuth 2.1 authorization server's routes, registered at the root (not
 * under /v1): discovery, registration, the consent page and the token
 * endpoint. This plugin parses form bodies for its own routes and answers
 * every error in the OAuth family (JSON `{error, error_description}`, or an
 * HTML page on the consent endpoint), never the REST error envelope.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError } from 'fastify';
import { ApiError } from '../http/errors.ts';
import type { Limits } from '../platform/limits/limits.ts';
import { authorizeRoutes, RepeatedParameterError, sendErrorPage, singleValued } from './authorize.ts';
import { OAuthError } from './errors.ts';
import { metadataRoutes } from './metadata.ts';
import type { OAuthService } from './oauth.service.ts';
import { registerRoutes } from './register.ts';
import { tokenRoutes } from './token.ts';

export interface OAuthRouteServices {
  oauth: OAuthService;
  limits: Limits;
}

/** Form bodies are small: a few parameters and an API key. */
const FORM_BODY_LIMIT = 16 * 1024;

function toOAuthError(error: unknown): OAuthError {
  if (error instanceof OAuthError) return error;
  if (error instanceof RepeatedParameterError) return new OAuthError('invalid_request', error.message);
  if (error instanceof ApiError) {
    if (error.status === 503) {
      return new OAuthError(
        'temporarily_unavailable',
        'The service is temporarily unavailable; retry shortly',
        {
          status: 503,
          retryAfter: error.details?.retryAfter ?? 1,
        },
      );
    }
    if (error.status < 500) return new OAuthError('invalid_request', error.message, { status: error.status });
  }
  const fastifyError = error as Partial<FastifyError>;
  if (
    fastifyError.statusCode !== undefined &&
    fastifyError.statusCode >= 400 &&
    fastifyError.statusCode < 500
  ) {
    const description =
      fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? 'Unsupported Content-Type: send application/x-www-form-urlencoded (application/json for registration)'
        : fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? 'The request body is too large'
          : 'The request body could not be read';
    return new OAuthError('invalid_request', description, { status: fastifyError.statusCode });
  }
  return new OAuthError(
    'server_error',
    'An internal error occurred; it has been logged with the request id',
    {
      status: 500,
    },
  );
}

export const oauthRoutes: FastifyPluginAsyncTypebox<OAuthRouteServices> = async (app, { oauth, limits }) => {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => {
      try {
        done(null, singleValued(body as string));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
  );
  app.setErrorHandler((error, request, reply) => {
    const oauthError = toOAuthError(error);
    if (oauthError.status >= 500) request.log.error({ err: error }, 'oauth request failed');
    if (oauthError.retryAfter !== undefined) reply.header('Retry-After', String(oauthError.retryAfter));
    if (request.routeOptions.url === '/oauth/authorize') {
      return sendErrorPage(reply, oauthError.status, 'Authorization failed', oauthError.message);
    }
    return reply
      .header('Cache-Control', 'no-store')
      .header('Pragma', 'no-cache')
      .code(oauthError.status)
      .send(oauthError.body());
  });
  metadataRoutes(app, oauth);
  registerRoutes(app, oauth, limits);
  authorizeRoutes(app, oauth, limits);
  tokenRoutes(app, oauth, limits);
};
