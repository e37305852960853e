import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIERS, type Tier, tierRank } from '../src/domain/tiers.ts';
import { type AccessPolicy, registeredRoutes } from '../src/http/access.ts';
import { createTestApp, type TestApp, UNLIMITED } from './support/app.ts';
import { dropRedisNamespace, isolatedLimitsEnv } from './support/server-process.ts';

/**
 * One request per route that has an access policy, keyed `METHOD url` exactly
 * as registered. A route without a sample fails the matrix test: adding a route
 * means saying here how to call it. Samples need not succeed (a 404 for an
 * unknown id is fine); access control answers before the handler runs.
 */
const SAMPLES: Record<string, { path: string; body?: unknown }> = {
  'GET /v1/health': { path: '/v1/health' },
  'GET /v1/health/ready': { path: '/v1/health/ready' },
  'GET /v1/health/live': { path: '/v1/health/live' },
  'GET /v1/areas': { path: '/v1/areas?perPage=1' },
  'GET /v1/search/rentals': { path: '/v1/search/rentals?perPage=1' },
  'GET /v1/search/sales': { path: '/v1/search/sales?perPage=1' },
  'GET /v1/usage': { path: '/v1/usage' },
  'GET /v1/market/rentals/snapshot': { path: '/v1/market/rentals/snapshot?areaId=100' },
  'GET /v1/market/sales/snapshot': { path: '/v1/market/sales/snapshot?areaId=100' },
  'GET /v1/market/compare': { path: '/v1/market/compare?areas=100,200' },
  'GET /v1/market/rentals/trends': { path: '/v1/market/rentals/trends?areaId=100' },
  'GET /v1/market/sales/trends': { path: '/v1/market/sales/trends?areaId=100' },
  // Listing and building samples use ids no record has: a 404 still proves access was granted.
  'GET /v1/property/:id': { path: '/v1/property/1' },
  'GET /v1/property/by-url': { path: '/v1/property/by-url?url=/rental/1' },
  'GET /v1/property/:id/history': { path: '/v1/property/1/history' },
  'GET /v1/property/:id/fees': { path: '/v1/property/1/fees' },
  'GET /v1/property/:id/open-houses': { path: '/v1/property/1/open-houses' },
  'GET /v1/building/:id': { path: '/v1/building/1' },
  'GET /v1/building/:id/listings': { path: '/v1/building/1/listings' },
  'GET /v1/building/:id/scores': { path: '/v1/building/1/scores' },
  'GET /v1/building/:id/violations': { path: '/v1/building/1/violations' },
  // Photo samples name a key no photo has: a JSON 404 after access control.
  'GET /v1/photos/:key': { path: '/v1/photos/0123456789abcdef0123456789abcdef' },
  'GET /fp/:key-:size.webp': { path: '/fp/0123456789abcdef0123456789abcdef-se_large_800_400.webp' },
  'GET /fp/*': { path: '/fp/not-a-photo.jpg' },
  // Admin samples change nothing: an invalid body, or an id no key has.
  'POST /v1/admin/keys': { path: '/v1/admin/keys', body: {} },
  'GET /v1/admin/keys': { path: '/v1/admin/keys' },
  'GET /v1/admin/keys/:id': { path: '/v1/admin/keys/00000000-0000-4000-8000-000000000000' },
  'PATCH /v1/admin/keys/:id': {
    path: '/v1/admin/keys/00000000-0000-4000-8000-000000000000',
    body: { status: 'disabled' },
  },
  'DELETE /v1/admin/keys/:id': { path: '/v1/admin/keys/00000000-0000-4000-8000-000000000000' },
  // Change feed and streams: stream samples send no Accept header, so they answer 406 after access control.
  'GET /v1/events': { path: '/v1/events?limit=1' },
  'GET /v1/events/stream': { path: '/v1/events/stream' },
  'GET /v1/listing/:id': { path: '/v1/listing/1' },
  // Webhook samples change nothing: an invalid body, or an id no subscription has.
  'POST /v1/webhooks': { path: '/v1/webhooks', body: {} },
  'GET /v1/webhooks': { path: '/v1/webhooks' },
  'GET /v1/webhooks/:id': { path: '/v1/webhooks/wh_none' },
  'PATCH /v1/webhooks/:id': { path: '/v1/webhooks/wh_none', body: { active: false } },
  'DELETE /v1/webhooks/:id': { path: '/v1/webhooks/wh_none' },
  'GET /v1/webhooks/:id/deliveries': { path: '/v1/webhooks/wh_none/deliveries' },
  'POST /v1/webhooks/:id/test': { path: '/v1/webhooks/wh_none/test' },
  'POST /v1/webhooks/:id/rotate-secret': { path: '/v1/webhooks/wh_none/rotate-secret' },
  'POST /v1/webhooks/:id/deliveries/:deliveryId/retry': {
    path: '/v1/webhooks/wh_none/deliveries/whd_none/retry',
  },
  // Watcher samples change nothing: an invalid body, or an id no watcher has (the stream sample sends no Accept: 406).
  'POST /v1/watchers': { path: '/v1/watchers', body: {} },
  'GET /v1/watchers': { path: '/v1/watchers' },
  'GET /v1/watchers/:id': { path: '/v1/watchers/none' },
  'PATCH /v1/watchers/:id': { path: '/v1/watchers/none', body: { status: 'paused' } },
  'DELETE /v1/watchers/:id': { path: '/v1/watchers/none' },
  'GET /v1/watchers/:id/stream': { path: '/v1/watchers/none/stream' },
  // OAuth: discovery documents, and requests the endpoints refuse (their own RFC errors or error page).
  'GET /.well-known/oauth-authorization-server': { path: '/.well-known/oauth-authorization-server' },
  'GET /.well-known/oauth-authorization-server/mcp': { path: '/.well-known/oauth-authorization-server/mcp' },
  'GET /.well-known/oauth-protected-resource': { path: '/.well-known/oauth-protected-resource' },
  'GET /.well-known/oauth-protected-resource/mcp': { path: '/.well-known/oauth-protected-resource/mcp' },
  'POST /oauth/register': { path: '/oauth/register', body: {} },
  'GET /oauth/authorize': { path: '/oauth/authorize' },
  'POST /oauth/authorize': { path: '/oauth/authorize', body: {} },
  'POST /oauth/token': { path: '/oauth/token', body: {} },
  // MCP: the samples send no MCP Accept header (POST answers 406 after access control); GET and DELETE answer 405.
  'POST /mcp': { path: '/mcp', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
  'GET /mcp': { path: '/mcp' },
  'DELETE /mcp': { path: '/mcp' },
  'GET /.well-known/mcp/server.json': { path: '/.well-known/mcp/server.json' },
  // The front page: public and unmetered, like health.
  'GET /': { path: '/' },
};

/** Routes outside access control altogether: the documentation only. */
const UNGUARDED = /^\/(docs|openapi\.json)(\/|$)/;

type CallerName = 'anonymous' | Tier;
const CALLERS: readonly CallerName[] = ['anonymous', ...TIERS];

const HIGH_LIMITS: Record<string, string> = { ...UNLIMITED };

interface ErrorJson {
  error: { code: string; details?: { requiredTier?: string; currentTier?: string } };
}

/** What the spec says a caller gets from a route with this policy. */
function expectedOutcome(policy: AccessPolicy, caller: CallerName): 'ok' | 'missing-key' | 'tier' {
  if (policy.metering === 'none') return 'ok';
  if (caller === 'anonymous') {
    if (policy.requiresKey) return 'missing-key';
    return tierRank('FREE') < tierRank(policy.minTier) ? 'tier' : 'ok';
  }
  return tierRank(caller) < tierRank(policy.minTier) ? 'tier' : 'ok';
}

let t: TestApp;
const isolated = isolatedLimitsEnv();
const keys = {} as Record<Tier, string>;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005, env: { ...isolated, ...HIGH_LIMITS } });
  for (const tier of TIERS) {
    keys[tier] = (await t.ctx.subscriptions.issue({ accountId: `tiers-${tier}`, tier })).key;
  }
});
afterAll(async () => {
  await t?.close();
  if (isolated.REDIS_URL) await dropRedisNamespace(`stoop:${isolated.DATABASE_SCHEMA}`, isolated.REDIS_URL);
});

function send(
  caller: CallerName,
  sample: { path: string; body?: unknown },
  method: string,
): Promise<Response> {
  const init: RequestInit = { method };
  if (sample.body !== undefined) {
    init.body = JSON.stringify(sample.body);
    init.headers = { 'content-type': 'application/json' };
  }
  return t.getAs(caller === 'anonymous' ? null : keys[caller], sample.path, init);
}

describe('tier matrix, generated from the route table', () => {
  it('has a sample request for every guarded route, and no stale samples', () => {
    const routes = registeredRoutes(t.app).filter((r) => r.method !== 'HEAD');
    const guarded = routes.filter((r) => r.access !== undefined).map((r) => `${r.method} ${r.url}`);
    expect(guarded.length).toBeGreaterThan(0);
    expect(guarded.filter((id) => !(id in SAMPLES))).toEqual([]);
    expect(Object.keys(SAMPLES).filter((id) => !guarded.includes(id))).toEqual([]);
    // Every other route is documentation: a data route without a policy would escape limits.
    expect(routes.filter((r) => r.access === undefined && !UNGUARDED.test(r.url))).toEqual([]);
  });

  it('answers every route × caller as its policy says', async () => {
    const failures: string[] = [];
    const routes = registeredRoutes(t.app).filter((r) => r.method !== 'HEAD' && r.access !== undefined);
    for (const route of routes) {
      const policy = route.access!;
      const sample = SAMPLES[`${route.method} ${route.url}`];
      if (!sample) continue; // reported by the test above
      for (const caller of CALLERS) {
        const response = await send(caller, sample, route.method);
        const body = (await response.text()) || '{}';
        const where = `${route.method} ${route.url} as ${caller}: ${response.status} ${body.slice(0, 200)}`;
        const expected = expectedOutcome(policy, caller);
        // The consent page answers in HTML.
        const json = response.headers.get('content-type')?.includes('json') ?? false;
        const error = json ? (JSON.parse(body) as Partial<ErrorJson>).error : undefined;
        if (expected === 'missing-key') {
          if (response.status !== 401 || error?.code !== 'MISSING_API_KEY')
            failures.push(`${where}; expected 401 MISSING_API_KEY`);
          if (!response.headers.get('www-authenticate')?.includes('resource_metadata='))
            failures.push(`${where}; expected WWW-Authenticate`);
        } else if (expected === 'tier') {
          if (
            response.status !== 403 ||
            error?.code !== 'TIER_RESTRICTED' ||
            error.details?.requiredTier !== policy.minTier
          )
            failures.push(`${where}; expected 403 TIER_RESTRICTED requiredTier ${policy.minTier}`);
        } else if ([401, 403, 429].includes(response.status) || response.status >= 500) {
          failures.push(`${where}; expected access`);
        }
        const metered = response.headers.has('x-ratelimit-limit') && response.headers.has('x-quota-used');
        if (metered !== (policy.metering !== 'none')) failures.push(`${where}; metering headers ${metered}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('rejects bad credentials with 401 and a WWW-Authenticate pointer, even on public routes', async () => {
    const { key } = await t.ctx.subscriptions.issue({
      accountId: 'tiers-expired',
      tier: 'PRO',
      subscriptionEndsAt: '2026-10-31T00:00:00.000Z',
    });
    const cases: [Record<string, string>, string][] = [
      [{ authorization: 'Bearer STOOP-00000000-0000-4000-8000-000000000000' }, 'INVALID_API_KEY'],
      [{ authorization: 'Bearer not-a-key' }, 'INVALID_API_KEY'],
      [{ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer ${key}` }, 'EXPIRED_API_KEY'],
    ];
    for (const [headers, code] of cases) {
      const response = await t.getAs(null, '/v1/search/rentals?perPage=1', { headers });
      expect(response.status).toBe(401);
      expect(((await response.json()) as ErrorJson).error.code).toBe(code);
      expect(response.headers.get('www-authenticate')).toBe(
        'Bearer resource_metadata="http://stoop.test/.well-known/oauth-protected-resource", error="invalid_token"',
      );
      expect(response.headers.get('x-ratelimit-limit')).toBe(HIGH_LIMITS.RATE_LIMIT_FREE);
    }
  });
});

describe('perPage is capped by tier, with a warning', () => {
  const cases: [CallerName, number][] = [
    ['anonymous', 10],
    ['FREE', 10],
    ['STARTER', 50],
    ['PRO', 500],
    ['BUSINESS', 500],
  ];
  for (const path of ['/v1/search/rentals', '/v1/areas']) {
    for (const [caller, max] of cases) {
      it(`${path} as ${caller}: at most ${max}`, async () => {
        const response = await send(caller, { path: `${path}?perPage=500` }, 'GET');
        expect(response.status).toBe(200);
        const body = (await response.json()) as {
          data: unknown[];
          meta: { perPage: number; total: number; warnings: string[] };
        };
        expect(body.meta.perPage).toBe(max);
        expect(body.data.length).toBe(Math.min(max, body.meta.total));
        expect(body.meta.total).toBeGreaterThan(50);
        const capWarnings = body.meta.warnings.filter((w) => w.includes('perPage'));
        if (max < 500) {
          expect(capWarnings).toHaveLength(1);
          expect(capWarnings[0]).toContain(String(max));
        } else {
          expect(capWarnings).toEqual([]);
        }
      });
    }
  }
});

describe('client IP for anonymous buckets', () => {
  async function ipApp(env: Record<string, string>): Promise<{ app: TestApp; cleanup(): Promise<void> }> {
    const own = isolatedLimitsEnv();
    const app = await createTestApp({ scale: 0, env: { ...own, RATE_LIMIT_FREE: '2', ...env } });
    return {
      app,
      cleanup: async () => {
        await app.close();
        if (own.REDIS_URL) await dropRedisNamespace(`stoop:${own.DATABASE_SCHEMA}`, own.REDIS_URL);
      },
    };
  }
  const from = (app: TestApp, forwardedFor: string | null) =>
    app.getAs(null, '/v1/search/rentals?perPage=1', {
      headers: forwardedFor === null ? {} : { 'x-forwarded-for': forwardedFor },
    });

  it('believes X-Forwarded-For from a trusted proxy (TRUSTED_PROXIES=127.0.0.1)', async () => {
    const { app, cleanup } = await ipApp({ TRUSTED_PROXIES: '127.0.0.1' });
    try {
      expect((await from(app, '203.0.113.1')).status).toBe(200);
      // Only the hop the trusted proxy saw counts: a client cannot pick its bucket by prepending.
      expect((await from(app, '198.51.100.9, 203.0.113.1')).status).toBe(200);
      const spent = await from(app, '203.0.113.1');
      expect(spent.status).toBe(429);
      expect(spent.headers.get('x-quota-used')).toBe('2');

      const other = await from(app, '203.0.113.2');
      expect(other.status).toBe(200);
      expect(other.headers.get('x-ratelimit-remaining')).toBe('1');
      expect(other.headers.get('x-quota-used')).toBe('1');
      const usage = await app.getAs(null, '/v1/usage', { headers: { 'x-forwarded-for': '203.0.113.2' } });
      expect(((await usage.json()) as { data: { used: number } }).data.used).toBe(1);
      // The proxy's own address is one more bucket.
      expect((await from(app, null)).headers.get('x-quota-used')).toBe('1');
    } finally {
      await cleanup();
    }
  });

  it('ignores X-Forwarded-For without TRUSTED_PROXIES', async () => {
    const { app, cleanup } = await ipApp({});
    try {
      expect((await from(app, '203.0.113.1')).status).toBe(200);
      const second = await from(app, '203.0.113.2');
      expect(second.status).toBe(200);
      expect(second.headers.get('x-quota-used')).toBe('2');
      const third = await from(app, '203.0.113.3');
      expect(third.status).toBe(429);
      expect(((await third.json()) as ErrorJson).error.code).toBe('RATE_LIMIT_EXCEEDED');
    } finally {
      await cleanup();
    }
  });
});
