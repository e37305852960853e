import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/http/errors.ts';
import type { ApiKeyView, IssuedApiKeyView } from '../src/modules/keys/keys.schema.ts';
import { createTestApp, TEST_NOW, type TestApp } from './support/app.ts';

let t: TestApp;
beforeAll(async () => {
  // Many bad-key requests from one IP: the anonymous window must not be what these tests hit.
  t = await createTestApp({ scale: 0, env: { RATE_LIMIT_FREE: '1000' } });
});
afterAll(async () => {
  await t?.close();
});

const RESOURCE_METADATA = 'Bearer resource_metadata="http://stoop.test/.well-known/oauth-protected-resource"';
/** RFC 6750 §3.1: a refused credential is also named `invalid_token`; a missing one carries no error code. */
const REFUSED_TOKEN = `${RESOURCE_METADATA}, error="invalid_token"`;

/** A request to the admin API; `key` null sends no Authorization header. */
async function call(key: string | null, method: string, path: string, body?: unknown, rawBody?: string) {
  const headers: Record<string, string> = {};
  const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const response = await t.getAs(key, path, {
    method,
    headers,
    ...(payload === undefined ? {} : { body: payload }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as ErrorBody };
}

async function createKey(body: Record<string, unknown>): Promise<IssuedApiKeyView> {
  const response = await call(t.internalKey, 'POST', '/v1/admin/keys', body);
  expect(response.status).toBe(201);
  return (response.body as unknown as { data: IssuedApiKeyView }).data;
}

function expectError(response: { status: number; body: ErrorBody }, status: number, code: string): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error.code).toBe(code);
  expect(response.body.error.status).toBe(status);
}

const ADMIN_OPERATIONS = (id: string) =>
  [
    ['POST', '/v1/admin/keys', { account: 'x', tier: 'PRO' }],
    ['GET', '/v1/admin/keys', undefined],
    ['GET', `/v1/admin/keys/${id}`, undefined],
    ['PATCH', `/v1/admin/keys/${id}`, { tier: 'INTERNAL' }],
    ['DELETE', `/v1/admin/keys/${id}`, undefined],
  ] as const;

describe('authentication on admin routes', () => {
  it('no Authorization header → 401 MISSING_API_KEY with the OAuth resource metadata link', async () => {
    const victim = await createKey({ account: 'victim', tier: 'PRO' });
    for (const [method, path, body] of ADMIN_OPERATIONS(victim.id)) {
      const response = await call(null, method, path, body);
      expectError(response, 401, 'MISSING_API_KEY');
      expect(response.headers.get('www-authenticate')).toBe(RESOURCE_METADATA);
    }
    const after = await call(t.internalKey, 'GET', `/v1/admin/keys/${victim.id}`);
    expect((after.body as unknown as { data: ApiKeyView }).data).toMatchObject({
      tier: 'PRO',
      status: 'active',
    });
  });

  it('a well-formed key that was never issued → 401 INVALID_API_KEY', async () => {
    const response = await call(`STOOP-${randomUUID()}`, 'GET', '/v1/admin/keys');
    expectError(response, 401, 'INVALID_API_KEY');
    expect(response.headers.get('www-authenticate')).toBe(REFUSED_TOKEN);
  });

  it.each([
    ['another scheme', (key: string) => `Basic ${key}`],
    ['no scheme', (key: string) => key],
    ['scheme only', () => 'Bearer'],
    ['two tokens', (key: string) => `Bearer ${key} ${key}`],
    ['lower-case prefix', (key: string) => `Bearer ${key.replace('STOOP', 'stoop')}`],
    ['upper-case uuid', (key: string) => `Bearer STOOP-${key.slice(6).toUpperCase()}`],
    ['truncated', (key: string) => `Bearer ${key.slice(0, -1)}`],
    ['trailing characters', (key: string) => `Bearer ${key}x`],
  ])('malformed Authorization (%s) → 401 INVALID_API_KEY, also on public routes', async (_name, header) => {
    const key = (await createKey({ account: 'malformed', tier: 'INTERNAL' })).key;
    for (const path of ['/v1/admin/keys', '/v1/usage', '/v1/areas?level=1']) {
      const response = await t.getAs(null, path, { headers: { authorization: header(key) } });
      expect(response.status, `${path}: ${header(key)}`).toBe(401);
      expect(((await response.json()) as ErrorBody).error.code).toBe('INVALID_API_KEY');
      expect(response.headers.get('www-authenticate')).toBe(REFUSED_TOKEN);
    }
    // The same key, well-formed, works: the header shape is what failed.
    expect((await t.getAs(key, '/v1/admin/keys')).status).toBe(200);
  });

  it('disabled and revoked keys → 401 INVALID_API_KEY on their very next request', async () => {
    const disabled = await createKey({ account: 'locked', tier: 'INTERNAL' });
    const revoked = await createKey({ account: 'locked', tier: 'INTERNAL' });
    expect((await call(disabled.key, 'GET', '/v1/admin/keys')).status).toBe(200);
    expect((await call(revoked.key, 'GET', '/v1/admin/keys')).status).toBe(200);

    await call(t.internalKey, 'PATCH', `/v1/admin/keys/${disabled.id}`, { status: 'disabled' });
    await call(t.internalKey, 'DELETE', `/v1/admin/keys/${revoked.id}`);

    for (const key of [disabled.key, revoked.key]) {
      expectError(await call(key, 'GET', '/v1/admin/keys'), 401, 'INVALID_API_KEY');
      // Public routes do not silently downgrade a rejected key to anonymous.
      expectError(await call(key, 'GET', '/v1/usage'), 401, 'INVALID_API_KEY');
    }
  });

  it('an ended subscription → 401 EXPIRED_API_KEY from the end instant on', async () => {
    const endsAt = new Date(TEST_NOW.getTime() + 60 * 60_000);
    const key = await createKey({
      account: 'lapsed',
      tier: 'INTERNAL',
      subscriptionEndsAt: endsAt.toISOString(),
    });
    try {
      t.clock.set(endsAt.getTime() - 1);
      expect((await call(key.key, 'GET', '/v1/admin/keys')).status).toBe(200);
      t.clock.set(endsAt);
      const atEnd = await call(key.key, 'GET', '/v1/admin/keys');
      expectError(atEnd, 401, 'EXPIRED_API_KEY');
      expect(atEnd.headers.get('www-authenticate')).toBe(REFUSED_TOKEN);
      t.clock.advance(30 * 24 * 60 * 60_000);
      expectError(await call(key.key, 'GET', '/v1/usage'), 401, 'EXPIRED_API_KEY');
    } finally {
      t.clock.set(TEST_NOW);
    }
  });
});

describe('tier gate on admin routes', () => {
  it.each(['FREE', 'STARTER', 'PRO', 'BUSINESS'])(
    '%s keys → 403 TIER_RESTRICTED naming INTERNAL',
    async (tier) => {
      const caller = await createKey({ account: `tier-${tier.toLowerCase()}`, tier });
      for (const [method, path, body] of ADMIN_OPERATIONS(caller.id)) {
        const response = await call(caller.key, method, path, body);
        expectError(response, 403, 'TIER_RESTRICTED');
        expect(response.body.error.message).toContain('INTERNAL');
        expect(response.body.error.details).toMatchObject({ requiredTier: 'INTERNAL', currentTier: tier });
      }
      // Its own PATCH to INTERNAL (and DELETE) did nothing.
      const after = await call(t.internalKey, 'GET', `/v1/admin/keys/${caller.id}`);
      expect((after.body as unknown as { data: ApiKeyView }).data).toMatchObject({ tier, status: 'active' });
    },
  );
});

describe('POST /v1/admin/keys validation', () => {
  it.each([
    [{ tier: 'PRO' }, 'account', 'required'],
    [{ account: '', tier: 'PRO' }, 'account', 'minLength'],
    [{ account: 'a b', tier: 'PRO' }, 'account', 'pattern'],
    [{ account: 'a/../b', tier: 'PRO' }, 'account', 'pattern'],
    [{ account: 'a'.repeat(101), tier: 'PRO' }, 'account', 'maxLength'],
    [{ account: 'acme' }, 'tier', 'required'],
    [{ account: 'acme', tier: 'GOLD' }, 'tier', 'enum'],
    [{ account: 'acme', tier: 'pro' }, 'tier', 'enum'],
    [{ account: 'acme', tier: 'PRO', subscriptionEndsAt: 'tomorrow' }, 'subscriptionEndsAt', 'format'],
    [
      { account: 'acme', tier: 'PRO', subscriptionEndsAt: '2027-01-01T00:00:00' },
      'subscriptionEndsAt',
      'format',
    ],
    [
      { account: 'acme', tier: 'PRO', subscriptionEndsAt: '2027-02-30T00:00:00Z' },
      'subscriptionEndsAt',
      'format',
    ],
    [
      { account: 'acme', tier: 'PRO', subscriptionEndAt: '2027-01-01T00:00:00Z' },
      'subscriptionEndAt',
      'additionalProperties',
    ],
    // Bodies are JSON: their types are never coerced (an array is not its first item, a number not text).
    [{ account: ['acme'], tier: 'PRO' }, 'account', 'type'],
    [{ account: 42, tier: 'PRO' }, 'account', 'type'],
    [{ account: 'acme', tier: ['PRO'] }, 'tier', 'type'],
    // A new key must not be issued already expired, nor with an end no calendar reaches.
    [
      { account: 'acme', tier: 'PRO', subscriptionEndsAt: '0000-01-01T00:00:00Z' },
      'subscriptionEndsAt',
      'range',
    ],
    [
      { account: 'acme', tier: 'PRO', subscriptionEndsAt: '9999-12-31T23:59:59-05:00' },
      'subscriptionEndsAt',
      'range',
    ],
    [
      { account: 'acme', tier: 'PRO', subscriptionEndsAt: '2020-01-01T00:00:00Z' },
      'subscriptionEndsAt',
      'past',
    ],
    [
      { account: 'acme', tier: 'PRO', subscriptionEndsAt: TEST_NOW.toISOString() },
      'subscriptionEndsAt',
      'past',
    ],
  ])('%j → 400 INVALID_BODY naming %s (%s)', async (body, parameter, rule) => {
    const before = await call(t.internalKey, 'GET', '/v1/admin/keys');
    const response = await call(t.internalKey, 'POST', '/v1/admin/keys', body);
    expectError(response, 400, 'INVALID_BODY');
    expect(response.body.error.message).toContain(parameter);
    expect(response.body.error.details?.params?.[0]).toMatchObject({ parameter, rule, location: 'body' });
    const after = await call(t.internalKey, 'GET', '/v1/admin/keys');
    expect((after.body as unknown as { data: unknown[] }).data).toHaveLength(
      (before.body as unknown as { data: unknown[] }).data.length,
    );
  });

  it('a body that is not JSON, or none → 400 INVALID_BODY', async () => {
    expectError(
      await call(t.internalKey, 'POST', '/v1/admin/keys', undefined, '{"account":'),
      400,
      'INVALID_BODY',
    );
    expectError(await call(t.internalKey, 'POST', '/v1/admin/keys'), 400, 'INVALID_BODY');
    expectError(await call(t.internalKey, 'POST', '/v1/admin/keys', ['acme', 'PRO']), 400, 'INVALID_BODY');
  });

  it('a bad account filter → 400 INVALID_PARAMS', async () => {
    const response = await call(t.internalKey, 'GET', '/v1/admin/keys?account=a%20b');
    expectError(response, 400, 'INVALID_PARAMS');
    expect(response.body.error.details?.params?.[0]).toMatchObject({
      parameter: 'account',
      location: 'query',
    });
  });
});

describe('PATCH /v1/admin/keys/{id} validation and lifecycle', () => {
  it.each([
    [{}, 'body'],
    [{ tier: 'GOLD' }, 'tier'],
    [{ status: 'deleted' }, 'status'],
    [{ subscriptionEndsAt: 'soon' }, 'subscriptionEndsAt'],
    [{ tierr: 'PRO' }, 'tierr'],
    [{ tier: ['PRO'] }, 'tier'],
    [{ status: ['disabled'] }, 'status'],
    [{ subscriptionEndsAt: 0 }, 'subscriptionEndsAt'],
    [{ subscriptionEndsAt: '0000-01-01T00:00:00Z' }, 'subscriptionEndsAt'],
    [{ subscriptionEndsAt: '1999-12-31T23:59:59.999Z' }, 'subscriptionEndsAt'],
  ])('%j → 400 INVALID_BODY naming %s, key unchanged', async (body, parameter) => {
    const key = await createKey({ account: 'patch-errors', tier: 'PRO' });
    const response = await call(t.internalKey, 'PATCH', `/v1/admin/keys/${key.id}`, body);
    expectError(response, 400, 'INVALID_BODY');
    expect(response.body.error.message).toContain(parameter);
    const after = await call(t.internalKey, 'GET', `/v1/admin/keys/${key.id}`);
    expect((after.body as unknown as { data: ApiKeyView }).data.updatedAt).toBe(key.updatedAt);
  });

  it.each([
    [{ status: 'active' }],
    [{ status: 'disabled' }],
    [{ tier: 'INTERNAL' }],
    [{ subscriptionEndsAt: null }],
  ])('a revoked key is final: %j → 409 CONFLICT, still rejected', async (body) => {
    const key = await createKey({ account: 'revoked', tier: 'PRO' });
    await call(t.internalKey, 'DELETE', `/v1/admin/keys/${key.id}`);
    const response = await call(t.internalKey, 'PATCH', `/v1/admin/keys/${key.id}`, body);
    expectError(response, 409, 'CONFLICT');
    expect(response.body.error.message).toContain('revoked');
    const after = await call(t.internalKey, 'GET', `/v1/admin/keys/${key.id}`);
    expect((after.body as unknown as { data: ApiKeyView }).data).toMatchObject({
      status: 'revoked',
      tier: 'PRO',
    });
    expectError(await call(key.key, 'GET', '/v1/usage'), 401, 'INVALID_API_KEY');
  });

  it('re-revoking a revoked key with PATCH is a no-op 200', async () => {
    const key = await createKey({ account: 'revoked', tier: 'PRO' });
    await call(t.internalKey, 'DELETE', `/v1/admin/keys/${key.id}`);
    const response = await call(t.internalKey, 'PATCH', `/v1/admin/keys/${key.id}`, { status: 'revoked' });
    expect(response.status).toBe(200);
  });
});

describe('unknown ids', () => {
  it.each(['GET', 'PATCH', 'DELETE'])(
    '%s of an unknown id, or of a key instead of an id → 404 NOT_FOUND',
    async (method) => {
      const existing = await createKey({ account: 'by-key', tier: 'PRO' });
      const body = method === 'PATCH' ? { tier: 'STARTER' } : undefined;
      for (const id of [randomUUID(), 'not-a-uuid', existing.key]) {
        const response = await call(t.internalKey, method, `/v1/admin/keys/${encodeURIComponent(id)}`, body);
        expectError(response, 404, 'NOT_FOUND');
        expect(JSON.stringify(response.body)).not.toContain(existing.key);
      }
      const after = await call(t.internalKey, 'GET', `/v1/admin/keys/${existing.id}`);
      expect((after.body as unknown as { data: ApiKeyView }).data).toMatchObject({
        tier: 'PRO',
        status: 'active',
      });
    },
  );
});
