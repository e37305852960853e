/**
 * The authorization endpoint (issue 14 part 3; SPEC "OAuth 2.1 with PKCE" 2):
 * `GET /oauth/authorize` validates the request (response_type=code, client,
 * redirect URI, PKCE S256, state, resource, scope) and shows the consent page;
 * `POST /oauth/authorize` (form-encoded) takes the user's decision: an API key
 * (checked with the subscription provider), "Continue as Free", or Deny, and
 * redirects with `code`, `state` and `iss` (RFC 9207).
 *
 * A bad, unknown or expired client, or a redirect URI it did not register, is
 * shown on the page (400) and never redirected; other errors go back to the
 * redirect URI as RFC 6749 §4.1.2.1 errors. The page is CSRF-protected by a
 * token bound to the request's parameters (HMAC with a key shared through the
 * store) and to a SameSite=Strict cookie, checks Origin when sent, cannot be
 * framed and is never cached. Wrong keys are throttled per client IP.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { UNMETERED_ROUTE } from '../http/access.ts';
import type { HttpApp } from '../http/server.ts';
import type { Limits } from '../platform/limits/limits.ts';
import { consentPage, errorPage, STYLE_HASH } from './consent-page.ts';
import { OAuthError } from './errors.ts';
import { AuthorizeFormSchema, AuthorizeQuerySchema } from './oauth.schema.ts';
import {
  AUTHORIZE_PARAMETERS,
  type AuthorizationRequest,
  type ClientView,
  CONSENT_FORM_TTL_MS,
  type Consent,
  type OAuthService,
} from './oauth.service.ts';
import { assertNotThrottled, OAUTH_RATES, throttle } from './throttle.ts';

const CSRF_COOKIE = 'stoop_oauth_csrf';
const NONCE = /^[A-Za-z0-9_-]{22}$/;
const HTML_RESPONSE = { content: { 'text/html': { schema: { type: 'string' } } } };

/** Parameters given more than once are refused (RFC 6749 §3.1). */
export class RepeatedParameterError extends Error {
  constructor(readonly parameter: string) {
    super(`The parameter "${parameter}" is repeated`);
  }
}

/** A query string or form body as single-valued parameters. */
export function singleValued(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(values, name)) throw new RepeatedParameterError(name);
    values[name] = value;
  }
  return values;
}

function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

/** Headers of every page of the endpoint: no framing, no caching, no referrer, no script. */
function pageHeaders(reply: FastifyReply, formTarget?: string): FastifyReply {
  const formAction = formTarget ? `'self' ${formTarget}` : `'self'`;
  return reply
    .type('text/html; charset=utf-8')
    .header(
      'Content-Security-Policy',
      `default-src 'none'; style-src ${STYLE_HASH}; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .header('X-Frame-Options', 'DENY')
    .header('Cache-Control', 'no-store')
    .header('Pragma', 'no-cache')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff');
}

export function sendErrorPage(
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
): FastifyReply {
  return pageHeaders(reply).code(status).send(errorPage(title, message));
}

export function authorizeRoutes(app: HttpApp, oauth: OAuthService, limits: Limits): void {
  const secureCookie = oauth.issuer.startsWith('https:');

  const sign = async (nonce: string, issued: string, raw: Readonly<Record<string, string>>) => {
    const key = await oauth.consentKey();
    const bound = JSON.stringify([nonce, issued, ...AUTHORIZE_PARAMETERS.map((name) => raw[name] ?? null)]);
    return createHmac('sha256', key).update(bound).digest('base64url');
  };

  /** The consent page for a valid request, with a fresh CSRF token (and the cookie it is bound to). */
  const renderConsent = async (
    request: FastifyRequest,
    reply: FastifyReply,
    authorization: AuthorizationRequest,
    client: ClientView,
    status = 200,
    error?: string,
  ) => {
    const existing = readCookie(request, CSRF_COOKIE);
    const nonce =
      existing !== undefined && NONCE.test(existing) ? existing : randomBytes(16).toString('base64url');
    const issued = String(oauth.now().getTime());
    const token = `${issued}.${await sign(nonce, issued, authorization.raw)}`;
    const redirect = new URL(authorization.redirectUri);
    reply.header(
      'Set-Cookie',
      `${CSRF_COOKIE}=${nonce}; Path=/oauth/authorize; Max-Age=${CONSENT_FORM_TTL_MS / 1000}; HttpOnly; SameSite=Strict${secureCookie ? '; Secure' : ''}`,
    );
    // The decision's redirect leaves for the client's origin: Chromium applies form-action to it.
    return pageHeaders(reply, redirect.origin)
      .code(status)
      .send(
        consentPage({
          clientLabel: client.label,
          redirectHost: redirect.host,
          resourceLabel:
            authorization.resource === oauth.mcpResource
              ? 'the Stoop MCP tools'
              : 'the Stoop API and MCP tools',
          hidden: { ...authorization.raw, csrf_token: token },
          ...(error ? { error } : {}),
        }),
      );
  };

  const csrfValid = async (
    request: FastifyRequest,
    form: Record<string, string>,
    raw: Record<string, string>,
  ) => {
    const nonce = readCookie(request, CSRF_COOKIE);
    const [issued, mac] = (form.csrf_token ?? '').split('.');
    if (nonce === undefined || !NONCE.test(nonce) || !issued || !mac || !/^\d{1,16}$/.test(issued))
      return false;
    const age = oauth.now().getTime() - Number(issued);
    if (age < 0 || age > CONSENT_FORM_TTL_MS) return false;
    const expected = Buffer.from(await sign(nonce, issued, raw));
    const given = Buffer.from(mac);
    return expected.length === given.length && timingSafeEqual(expected, given);
  };

  /**
   * Origin, when the browser names one, must be this server (as published or
   * as addressed). The page's own `Referrer-Policy: no-referrer` makes its
   * form post say `Origin: null`: that is left to the SameSite=Strict cookie
   * and the bound token, which a cross-site post cannot carry.
   */
  const originAllowed = (request: FastifyRequest) => {
    const origin = request.headers.origin;
    if (origin === undefined || origin === 'null') return true;
    return origin === new URL(oauth.issuer).origin || origin === `${request.protocol}://${request.host}`;
  };

  app.get(
    '/oauth/authorize',
    {
      config: { access: UNMETERED_ROUTE },
      attachValidation: true,
      schema: {
        operationId: 'authorizeOAuth',
        tags: ['OAuth'],
        summary: 'Consent page (authorization request)',
        description:
          'Validates the authorization request and shows an HTML consent page naming the client and where it redirects, with an API-key field, "Continue as Free" and "Deny". A bad client or redirect URI is explained on the page (400) and never redirected; other errors are redirected to the client as RFC 6749 §4.1.2.1 errors (`error`, `error_description`, `state`, `iss`).',
        querystring: AuthorizeQuerySchema,
        response: {
          200: HTML_RESPONSE,
          302: { description: 'An error sent back to the redirect URI.' },
          400: HTML_RESPONSE,
        },
      },
    },
    async (request, reply) => {
      await throttle(
        limits,
        oauth,
        `oauth-authorize:${request.ip}`,
        OAUTH_RATES.authorize,
        'authorization requests',
      );
      const query = singleValued(request.url.split('?')[1] ?? '');
      const check = await oauth.checkAuthorization(query);
      if (check.kind === 'page') return sendErrorPage(reply, 400, check.title, check.message);
      if (check.kind === 'redirect')
        return reply.header('Cache-Control', 'no-store').redirect(check.location, 302);
      return renderConsent(request, reply, check.request, check.client);
    },
  );

  app.post(
    '/oauth/authorize',
    {
      config: { access: UNMETERED_ROUTE },
      attachValidation: true,
      schema: {
        operationId: 'decideOAuth',
        tags: ['OAuth'],
        summary: 'Submit the consent form',
        description: `Form-encoded (\`application/x-www-form-urlencoded\`): the authorize parameters as received, \`csrf_token\` from the page (with its cookie), \`action\` (\`approve\` with \`api_key\`, \`free\`, \`deny\`). On success: 302 to the redirect URI with \`code\`, \`state\` and \`iss\`; on \`deny\`: \`error=access_denied\`. A wrong key re-renders the page with an error (401); more than ${OAUTH_RATES.failedKeys} wrong keys a minute from one IP are refused (429).`,
        consumes: ['application/x-www-form-urlencoded'],
        body: AuthorizeFormSchema,
        response: {
          302: { description: 'The decision, sent back to the redirect URI.' },
          400: HTML_RESPONSE,
          401: HTML_RESPONSE,
          403: HTML_RESPONSE,
          429: HTML_RESPONSE,
        },
      },
    },
    async (request, reply) => {
      await throttle(
        limits,
        oauth,
        `oauth-authorize:${request.ip}`,
        OAUTH_RATES.authorize,
        'authorization requests',
      );
      if (
        !(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')
      ) {
        return sendErrorPage(reply, 400, 'Bad request', 'The consent form must be posted form-encoded.');
      }
      if (!originAllowed(request)) {
        return sendErrorPage(reply, 403, 'Forbidden', 'The consent form was posted from another site.');
      }
      const form = request.body as Record<string, string>;
      const params: Record<string, string> = {};
      for (const name of AUTHORIZE_PARAMETERS) if (form[name] !== undefined) params[name] = form[name];
      const check = await oauth.checkAuthorization(params);
      if (check.kind === 'page') return sendErrorPage(reply, 400, check.title, check.message);
      if (check.kind === 'redirect') return reply.redirect(check.location, 302);
      const { request: authorization, client } = check;
      if (!(await csrfValid(request, form, authorization.raw))) {
        return renderConsent(
          request,
          reply,
          authorization,
          client,
          400,
          'This form expired or did not come from this page. Please decide again.',
        );
      }
      const decide = async (consent: Consent) => {
        const code = await oauth.issueCode(authorization, consent);
        return reply.header('Cache-Control', 'no-store').redirect(
          oauth.redirectWith(authorization.redirectUri, {
            code,
            ...(authorization.state !== undefined ? { state: authorization.state } : {}),
          }),
          302,
        );
      };
      switch (form.action) {
        case 'deny':
          return reply.header('Cache-Control', 'no-store').redirect(
            oauth.redirectWith(authorization.redirectUri, {
              error: 'access_denied',
              error_description: 'The user denied the request',
              ...(authorization.state !== undefined ? { state: authorization.state } : {}),
            }),
            302,
          );
        case 'free':
          return decide(null);
        case 'approve': {
          const key = (form.api_key ?? '').trim();
          if (key.length === 0) {
            return renderConsent(
              request,
              reply,
              authorization,
              client,
              400,
              'Enter your API key, or continue as Free.',
            );
          }
          const failures = `oauth-key-fail:${request.ip}`;
          try {
            await assertNotThrottled(limits, oauth, failures, OAUTH_RATES.failedKeys, 'wrong API keys');
          } catch (error) {
            if (!(error instanceof OAuthError) || error.retryAfter === undefined) throw error;
            reply.header('Retry-After', String(error.retryAfter));
            return renderConsent(request, reply, authorization, client, error.status, error.message);
          }
          const checked = await oauth.checkKey(key);
          if (checked === 'INVALID' || checked === 'EXPIRED') {
            await throttle(limits, oauth, failures, Number.MAX_SAFE_INTEGER, 'wrong API keys');
            return renderConsent(
              request,
              reply,
              authorization,
              client,
              401,
              checked === 'EXPIRED'
                ? 'The subscription of this API key has ended.'
                : 'This API key is not valid (unknown, disabled or revoked).',
            );
          }
          return decide(checked);
        }
        default:
          return renderConsent(
            request,
            reply,
            authorization,
            client,
            400,
            'Choose one of the buttons below.',
          );
      }
    },
  );
}
