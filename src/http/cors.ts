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
import fastifyCors, { type FastifyCorsOptions, type FastifyCorsOptionsDelegateCallback } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';

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

/** The CORS answer for one request (`origin: false`: no CORS headers, the browser refuses). */
export function corsFor(request: FastifyRequest, publicOrigin: string): FastifyCorsOptions {
  const path = pathOf(request);
  const common = {
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  };
  if (OPEN_PATHS.some((prefix) => path === prefix || path.startsWith(prefix))) {
    return { ...common, origin: '*', methods: ['GET', 'POST'] };
  }
  if (path === '/mcp') {
    const origin = request.headers.origin;
    const trusted = origin !== undefined && isTrustedBrowserOrigin(origin, publicOrigin);
    return { ...common, origin: trusted ? origin : false, methods: ['GET', 'POST', 'DELETE'] };
  }
  return { origin: false };
}

/** Registers CORS before access control, so its 401s carry the headers a browser needs to read them. */
export async function installCors(app: FastifyInstance, publicUrl: string): Promise<void> {
  const publicOrigin = new URL(publicUrl).origin;
  const delegate: FastifyCorsOptionsDelegateCallback = (request, callback) => {
    callback(null, corsFor(request, publicOrigin));
  };
  await app.register(fastifyCors, () => delegate);
}
