import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIERS, type Tier } from '../src/domain/tiers.ts';
import type { WatcherView } from '../src/modules/watchers/watchers.schema.ts';
import type { ListingRow } from '../src/platform/db/tables.ts';
import { createTestApp, type TestApp, UNLIMITED } from './support/app.ts';

const HIGH_LIMITS: Record<string, string> = { ...UNLIMITED };

let t: TestApp;
const keys = {} as Record<Tier | 'alice' | 'bob', string>;
let listing: ListingRow;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005, env: HIGH_LIMITS });
  for (const tier of TIERS)
    keys[tier] = (await t.ctx.subscriptions.issue({ accountId: `ws-${tier}`, tier })).key;
  keys.alice = (await t.ctx.subscriptions.issue({ accountId: 'alice', tier: 'BUSINESS' })).key;
  keys.bob = (await t.ctx.subscriptions.issue({ accountId: 'bob', tier: 'BUSINESS' })).key;
  listing = await t.store.db
    .selectFrom('listings')
    .selectAll()
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
});
afterAll(async () => {
  await t?.close();
});

async function send(
  key: string | null,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await t.getAs(key, path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    text,
    body: (text ? JSON.parse(text) : null) as {
      data: WatcherView & WatcherView[];
      error?: { code: string; details?: { requiredTier?: string } };
    },
  };
}

describe('access', () => {
  it('needs a key (401), of Business tier or above (403 below it)', async () => {
    const body = { watchType: 'listing', listingId: listing.id };
    expect((await send(null, 'POST', '/v1/watchers', body)).status).toBe(401);
    for (const tier of ['FREE', 'STARTER', 'PRO'] as const) {
      const answer = await send(keys[tier], 'POST', '/v1/watchers', body);
      expect(answer.status, tier).toBe(403);
      expect(answer.body.error).toMatchObject({
        code: 'TIER_RESTRICTED',
        details: { requiredTier: 'BUSINESS' },
      });
      const stream = await send(keys[tier], 'GET', '/v1/watchers/x/stream', undefined, {
        accept: 'text/event-stream',
      });
      expect(stream.status, tier).toBe(403);
    }
    for (const tier of ['BUSINESS', 'INTERNAL'] as const) {
      expect((await send(keys[tier], 'POST', '/v1/watchers', body)).status, tier).toBe(201);
    }
  });
});

describe('owner scoping', () => {
  it("answers 404 for another account's watcher on every route, lists only the caller's, and leaves it untouched", async () => {
    const created = await send(keys.alice, 'POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: listing.id,
    });
    const id = created.body.data.id;
    const routes: [string, string, unknown?, Record<string, string>?][] = [
      ['GET', `/v1/watchers/${id}`],
      ['PATCH', `/v1/watchers/${id}`, { status: 'paused' }],
      ['DELETE', `/v1/watchers/${id}`],
      ['GET', `/v1/watchers/${id}/stream`, undefined, { accept: 'text/event-stream' }],
    ];
    for (const [method, path, body, headers] of routes) {
      const answer = await send(keys.bob, method, path, body, headers);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.text).not.toContain('alice');
    }
    const list = await send(keys.bob, 'GET', '/v1/watchers');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(id);
    const still = await send(keys.alice, 'GET', `/v1/watchers/${id}`);
    expect(still.body.data).toMatchObject({ id, status: 'active' });
    // The owner's other key (same account) sees it.
    const other = (await t.ctx.subscriptions.issue({ accountId: 'alice', tier: 'INTERNAL' })).key;
    expect((await send(other, 'GET', `/v1/watchers/${id}`)).status).toBe(200);
  });

  it('never exposes the account id or the stored snapshot', async () => {
    const created = await send(keys.alice, 'POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: listing.id,
    });
    expect(created.text).not.toContain('alice');
    expect(Object.keys(created.body.data)).not.toContain('snapshot');
    expect(Object.keys(created.body.data)).not.toContain('accountId');
  });
});
