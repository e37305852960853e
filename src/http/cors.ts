/**
 * Cross-origin access for the endpoints a browser-based MCP client (the MCP
 * Inspector, web agents) calls directly: OAuth discovery, registration and the
 * token endpoint, and `/mcp`. Everything else stays same-origin.
 *
 * - Discovery, registration and token: any origin. They carry no ambient
 *   credential (no cookies; a public client proves itself with PKCE), so
 *   `Access-Control-Allow-Origin: *` exposes nothing a server-side client could
 *   not already read.
 * - `/mcp`: only the service's own origin and loopback origins, the same set the
 *   endpoint's DNS-rebinding check admits (MCP transport spec); the response
 *   exposes `WWW-Authenticate`, so a browser client can start OAuth discovery
 *   from a 401.
 * - The consent page is never cross-origin (it is a top-level navigation).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { appendVary } from './formats.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a browser page of `origin` may call the MCP endpoint: the service's own
 * origin or a loopback one (a locally run client). Requests without an Origin
 * header (every non-browser client) are not subject to this.
 */
export function isTrustedBrowserOrigin(origin: string, publicOrigin: string): boolean {
  if (origin === publicOrigin) return true;
  try {
    return LOOPBACK_HOSTS.has(new URL(origin).hostname);
  } catch {
    return false;
  }
}

const OPEN_PATHS = ['/.well-known/', '/oauth/register', '/oauth/token'];

const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Mcp-Protocol-Version',
  'Mcp-Session-Id',
  'Last-Event-ID',
];
const EXPOSED_HEADERS = [
  'WWW-Authenticate',
  'Mcp-Session-Id',
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-Quota-Limit',
  'X-Quota-Used',
  'X-Quota-Remaining',
  'Retry-After',
];

function pathOf(request: FastifyRequest): string {
  const url = request.url;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Which cross-origin rule a path falls under; null: none (same-origin only). */
type CorsRule = 'open' | 'mcp';

function ruleFor(path: string): CorsRule | null {
  if (path === '/mcp') return 'mcp';
  return OPEN_PATHS.some((prefix) => path.startsWith(prefix)) ? 'open' : null;
}

const METHODS: Readonly<Record<CorsRule, string>> = { open: 'GET, POST', mcp: 'GET, POST, DELETE' };
const PREFLIGHT_MAX_AGE_S = '600';

/**
 * The CORS protocol (Fetch standard §3.2) for the rules above, in one
 * onRequest hook registered before access control, so its 401s carry the
 * headers a browser needs to read them. A path under no rule costs one prefix
 * check and gets no CORS header at all (`Vary: Origin` included: its answer
 * never depends on the origin). `@fastify/cors` did the same work through a
 * per-request options delegate that was ~10% of a search's CPU on paths that
 * never grant anything.
 *
 * - An actual request from an allowed origin gets `Access-Control-Allow-Origin`
 *   and `Access-Control-Expose-Headers`; the rule's paths always get
 *   `Vary: Origin`.
 * - A preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`)
 *   from an allowed origin is answered 204 here, before authentication (the
 *   browser sends it without credentials), with the methods, headers and max
 *   age. Any other OPTIONS request is a 404 like an unknown route.
 */
export function installCors(app: FastifyInstance, publicUrl: string): void {
  const publicOrigin = new URL(publicUrl).origin;
  const exposed = EXPOSED_HEADERS.join(', ');
  const allowedHeaders = ALLOWED_HEADERS.join(', ');
  app.addHook('onRequest', (request, reply, done) => {
    const rule = ruleFor(pathOf(request));
    if (rule === null) return done();
    appendVary(reply, 'Origin');
    const origin = request.headers.origin;
    const allowed =
      rule === 'open'
        ? '*'
        : origin !== undefined && isTrustedBrowserOrigin(origin, publicOrigin)
          ? origin
          : null;
    if (allowed === null) return done();
    reply.header('Access-Control-Allow-Origin', allowed);
    reply.header('Access-Control-Expose-Headers', exposed);
    const preflight =
      request.method === 'OPTIONS' &&
      origin !== undefined &&
      request.headers['access-control-request-method'];
    if (!preflight) return done();
    void reply
      .code(204)
      .header('Access-Control-Allow-Methods', METHODS[rule])
      .header('Access-Control-Allow-Headers', allowedHeaders)
      .header('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_S)
      .send();
  });
  // Preflights need a route to reach the hook; whatever the hook did not answer is unknown.
  app.options('*', { schema: { hide: true } }, (_request, reply) => {
    reply.callNotFound();
  });
}
