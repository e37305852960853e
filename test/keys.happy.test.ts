import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyView, IssuedApiKeyView } from '../src/modules/keys/keys.schema.ts';
import { createTestApp, TEST_NOW, type TestApp } from './support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0 });
});
afterAll(async () => {
  await t?.close();
});

const KEY_FORMAT = /^STOOP-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A JSON request to the admin API as the test's INTERNAL key. */
async function admin<T>(method: string, path: string, body?: unknown) {
  const response = await t.getAs(t.internalKey, path, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as { data: T } };
}

async function createKey(body: Record<string, unknown>): Promise<IssuedApiKeyView> {
  const { status, body: created } = await admin<IssuedApiKeyView>('POST', '/v1/admin/keys', body);
  expect(status).toBe(201);
  return created.data;
}

/** The tier the service sees for a key, via the unmetered-by-quota usage endpoint. */
async function usageTier(key: string): Promise<string | number> {
  const response = await t.getAs(key, '/v1/usage');
  if (response.status !== 200) return response.status;
  return ((await response.json()) as { data: { tier: string } }).data.tier;
}

describe('POST /v1/admin/keys', () => {
  it('issues a key that works on its next request, shown once, with Location and no-store', async () => {
    const { status, headers, body } = await admin<IssuedApiKeyView>('POST', '/v1/admin/keys', {
      account: 'acme',
      tier: 'PRO',
    });
    expect(status).toBe(201);
    const key = body.data;
    expect(key.key).toMatch(KEY_FORMAT);
    expect(key).toMatchObject({
      account: 'acme',
      tier: 'PRO',
      status: 'active',
      hint: `STOOP-…${key.key.slice(-4)}`,
      subscriptionEndsAt: null,
      createdAt: TEST_NOW.toISOString(),
      updatedAt: TEST_NOW.toISOString(),
    });
    expect(headers.get('location')).toBe(`/v1/admin/keys/${key.id}`);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(await usageTier(key.key)).toBe('PRO');

    const fetched = await admin<ApiKeyView>('GET', `/v1/admin/keys/${key.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.data).not.toHaveProperty('key');
    const { key: _secret, ...record } = key;
    expect(fetched.body.data).toEqual(record);
  });

  it('normalises subscriptionEndsAt to UTC', async () => {
    const key = await createKey({
      account: 'acme',
      tier: 'STARTER',
      subscriptionEndsAt: '2027-01-01T00:00:00+05:00',
    });
    expect(key.subscriptionEndsAt).toBe('2026-12-31T19:00:00.000Z');
  });
});

describe('GET /v1/admin/keys', () => {
  it('lists every account, or one account, oldest first, without keys or hashes', async () => {
    const a = await createKey({ account: 'list-a', tier: 'FREE' });
    t.clock.advance(1000);
    const b = await createKey({ account: 'list-b', tier: 'BUSINESS' });
    t.clock.advance(1000);
    const a2 = await createKey({ account: 'list-a', tier: 'STARTER' });

    const all = await admin<ApiKeyView[]>('GET', '/v1/admin/keys');
    expect(all.status).toBe(200);
    expect(all.headers.get('cache-control')).toBe('no-store');
    const ids = all.body.data.map((k) => k.id);
    expect(ids).toEqual(expect.arrayContaining([a.id, b.id, a2.id]));
    expect(ids.indexOf(a.id)).toBeLessThan(ids.indexOf(b.id));
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a2.id));
    for (const item of all.body.data) {
      expect(Object.keys(item).sort()).toEqual(
        ['account', 'createdAt', 'hint', 'id', 'status', 'subscriptionEndsAt', 'tier', 'updatedAt'].sort(),
      );
    }

    const onlyA = await admin<ApiKeyView[]>('GET', '/v1/admin/keys?account=list-a');
    expect(onlyA.body.data.map((k) => k.id)).toEqual([a.id, a2.id]);
    const none = await admin<ApiKeyView[]>('GET', '/v1/admin/keys?account=nobody');
    expect(none.body.data).toEqual([]);
  });
});

describe('PATCH /v1/admin/keys/{id}', () => {
  it('changes the tier, effective on the next request', async () => {
    const key = await createKey({ account: 'patch', tier: 'STARTER' });
    expect(await usageTier(key.key)).toBe('STARTER');
    t.clock.advance(1000);
    const { status, body } = await admin<ApiKeyView>('PATCH', `/v1/admin/keys/${key.id}`, {
      tier: 'BUSINESS',
    });
    expect(status).toBe(200);
    expect(body.data).toMatchObject({ id: key.id, tier: 'BUSINESS', status: 'active' });
    expect(body.data.updatedAt > key.updatedAt).toBe(true);
    expect(await usageTier(key.key)).toBe('BUSINESS');
  });

  it('disables and re-enables a key, each effective on the next request', async () => {
    const key = await createKey({ account: 'patch', tier: 'PRO' });
    expect(await usageTier(key.key)).toBe('PRO');
    const disabled = await admin<ApiKeyView>('PATCH', `/v1/admin/keys/${key.id}`, { status: 'disabled' });
    expect(disabled.body.data.status).toBe('disabled');
    expect(await usageTier(key.key)).toBe(401);
    const enabled = await admin<ApiKeyView>('PATCH', `/v1/admin/keys/${key.id}`, { status: 'active' });
    expect(enabled.body.data.status).toBe('active');
    expect(await usageTier(key.key)).toBe('PRO');
  });

  it('sets, extends and clears the subscription end; several fields at once', async () => {
    const key = await createKey({ account: 'patch', tier: 'PRO' });
    const end = new Date(TEST_NOW.getTime() - 1000).toISOString();
    const ended = await admin<ApiKeyView>('PATCH', `/v1/admin/keys/${key.id}`, { subscriptionEndsAt: end });
    expect(ended.body.data.subscriptionEndsAt).toBe(end);
    expect(await usageTier(key.key)).toBe(401);

    const both = await admin<ApiKeyView>('PATCH', `/v1/admin/keys/${key.id}`, {
      subscriptionEndsAt: null,
      tier: 'STARTER',
    });
    expect(both.body.data).toMatchObject({ subscriptionEndsAt: null, tier: 'STARTER' });
    expect(await usageTier(key.key)).toBe('STARTER');
  });
});

describe('DELETE /v1/admin/keys/{id}', () => {
  it('revokes (record kept), effective on the next request, and is idempotent', async () => {
    const key = await createKey({ account: 'gone', tier: 'PRO' });
    expect(await usageTier(key.key)).toBe('PRO');
    const first = await admin<ApiKeyView>('DELETE', `/v1/admin/keys/${key.id}`);
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ id: key.id, status: 'revoked', account: 'gone' });
    expect(await usageTier(key.key)).toBe(401);

    const again = await admin<ApiKeyView>('DELETE', `/v1/admin/keys/${key.id}`);
    expect(again.status).toBe(200);
    expect(again.body.data.status).toBe('revoked');
    const fetched = await admin<ApiKeyView>('GET', `/v1/admin/keys/${key.id}`);
    expect(fetched.body.data.status).toBe('revoked');
  });
});

describe('Bearer keys', () => {
  it('accept the scheme in any case, and serve the key tier', async () => {
    const key = await createKey({ account: 'bearer', tier: 'BUSINESS' });
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const response = await t.getAs(null, '/v1/usage', {
        headers: { authorization: `${scheme} ${key.key}` },
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { data: { tier: string } }).data.tier).toBe('BUSINESS');
    }
  });

  it('a key is valid until the instant its subscription ends', async () => {
    const key = await createKey({
      account: 'expiring',
      tier: 'PRO',
      subscriptionEndsAt: new Date(TEST_NOW.getTime() + 60 * 60_000).toISOString(),
    });
    t.clock.set(new Date(TEST_NOW.getTime() + 60 * 60_000 - 1));
    try {
      expect(await usageTier(key.key)).toBe('PRO');
    } finally {
      t.clock.set(TEST_NOW);
    }
  });
});
