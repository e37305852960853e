import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { UNMETERED_ROUTE } from '../../http/access.ts';
import { HOME_STYLE_HASH, HomeIndexSchema, type HomePageInput, homeIndex, homePage } from './home.page.ts';

export type HomeRouteOptions = HomePageInput;

/**
 * The q-value the Accept header gives `type` (its most specific matching
 * range: exact, then `major/*`, then `*\/*`); no header: everything at 1.
 */
export function acceptQuality(accept: string | undefined, type: string): number {
  if (accept === undefined || accept.trim() === '') return 1;
  const [major] = type.split('/');
  let best = { specificity: -1, q: 0 };
  for (const range of accept.split(',')) {
    const [mediaRange = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const specificity =
      mediaRange === type ? 2 : mediaRange === `${major}/*` ? 1 : mediaRange === '*/*' ? 0 : -1;
    if (specificity <= best.specificity) continue;
    const qParam = params.find((param) => param.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    best = { specificity, q: Number.isFinite(q) ? Math.min(Math.max(q, 0), 1) : 0 };
  }
  return best.q;
}

/** JSON only when asked for more than HTML: browsers, curl and `*\/*` get the page. */
function prefersJson(accept: string | undefined): boolean {
  return acceptQuality(accept, 'application/json') > acceptQuality(accept, 'text/html');
}

/** The page's headers: no script, no framing, nothing fetched but its own hashed style. */
function htmlHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header(
      'Content-Security-Policy',
      `default-src 'none'; style-src ${HOME_STYLE_HASH}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    )
    .header('X-Frame-Options', 'DENY')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff');
}

/**
 * `GET /` (and HEAD): the front page, or with `Accept: application/json` a
 * small JSON index of the same links. Public and outside rate limits and
 * quotas, like health; not an API operation, so hidden from the OpenAPI
 * document. It reads no query string (no querystring schema), so any query
 * is ignored rather than refused.
 */
export const homeRoutes: FastifyPluginAsyncTypebox<HomeRouteOptions> = async (app, options) => {
  const input: HomePageInput = {
    publicUrl: options.publicUrl,
    version: options.version,
    demoData: options.demoData,
  };
  // Both answers depend on configuration only: built once.
  const page = homePage(input);
  const index = homeIndex(input);
  app.get(
    '/',
    {
      config: { access: UNMETERED_ROUTE },
      schema: { hide: true, response: { 200: HomeIndexSchema } },
    },
    async (request, reply) => {
      reply.header('Vary', 'Accept').header('Cache-Control', 'no-cache');
      if (prefersJson(request.headers.accept)) {
        return reply.header('X-Content-Type-Options', 'nosniff').send(index);
      }
      return htmlHeaders(reply).send(page);
    },
  );
};
