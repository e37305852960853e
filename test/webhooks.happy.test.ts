import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTING_EVENT_TYPES } from '../src/domain/events.ts';
import type {
  WebhookDeliveryView,
  WebhookView,
  WebhookWithSecretView,
} from '../src/modules/webhooks/webhooks.schema.ts';
import { createTestApp, TEST_NOW, type TestApp } from './support/app.ts';
import { appendTestEvents, startReceiver, type WebhookReceiver } from './support/webhook-receiver.ts';

let t: TestApp;
let key: string;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await createTestApp({
    scale: 0.02,
    env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,localhost' },
  });
  key = (await t.ctx.subscriptions.issue({ accountId: 'hooks-happy', tier: 'BUSINESS' })).key;
  receiver = await startReceiver(t.clock);
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

async function call<T>(method: string, path: string, body?: unknown, as = key) {
  const response = await t.getAs(as, path, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: (text ? JSON.parse(text) : null) as { data: T; meta?: Record<string, unknown> },
  };
}

async function subscribe(body: Record<string, unknown>): Promise<WebhookWithSecretView> {
  const created = await call<WebhookWithSecretView>('POST', '/v1/webhooks', body);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.data;
}

describe('subscriptions', () => {
  it('creates a subscription with a whsec_ secret shown once, no-store, active', async () => {
    const created = await call<WebhookWithSecretView>('POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['listing.created', 'listing.price_decreased'],
    });
    expect(created.status).toBe(200);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const hook = created.body.data;
    expect(hook).toMatchObject({
      url: receiver.url,
      events: ['listing.created', 'listing.price_decreased'],
      filters: null,
      active: true,
      disabledReason: null,
      failingSince: null,
      createdAt: TEST_NOW.toISOString(),
      updatedAt: TEST_NOW.toISOString(),
      previousSecretExpiresAt: null,
    });
    expect(hook.id).toMatch(/^wh_[0-9a-f]{24}$/);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(hook.secret.slice(6), 'base64')).toHaveLength(24);
    expect(created.headers.get('location')).toBe(`/v1/webhooks/${hook.id}`);

    const read = await call<WebhookView>('GET', `/v1/webhooks/${hook.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).not.toHaveProperty('secret');
    expect(read.body.data).toMatchObject({ id: hook.id, url: receiver.url, active: true });
    expect(read.body.meta).toEqual({ dataAge: null, source: 'live' });
  });

  it('lists the account’s subscriptions, oldest first, with paging links', async () => {
    const mine = await call<WebhookView[]>('GET', '/v1/webhooks?perPage=1');
    expect(mine.status).toBe(200);
    expect(mine.body.data).toHaveLength(1);
    expect(mine.body.data[0]).not.toHaveProperty('secret');
    const meta = mine.body.meta as { total: number; links: { next: string | null } };
    expect(meta.total).toBeGreaterThanOrEqual(1);
    expect(meta.links.next === null).toBe(meta.total === 1);
  });

  it('changes url, events, filters and active; updatedAt moves; deactivating and reactivating', async () => {
    const hook = await subscribe({ url: receiver.url, events: ['listing.sold'] });
    t.clock.advance(60_000);
    const patched = await call<WebhookView>('PATCH', `/v1/webhooks/${hook.id}`, {
      events: ['listing.rented', 'listing.sold'],
      filters: { listingType: 'rental', minBeds: 1 },
      active: false,
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      events: ['listing.rented', 'listing.sold'],
      filters: { listingType: 'rental', minBeds: 1 },
      active: false,
      createdAt: hook.createdAt,
    });
    expect(patched.body.data.updatedAt).not.toBe(hook.updatedAt);
    const back = await call<WebhookView>('PATCH', `/v1/webhooks/${hook.id}`, { active: true, filters: null });
    expect(back.body.data).toMatchObject({ active: true, filters: null });
  });

  it('deletes: 204, then 404', async () => {
    const hook = await subscribe({ url: receiver.url, events: ['listing.sold'] });
    const deleted = await call('DELETE', `/v1/webhooks/${hook.id}`);
    expect(deleted.status).toBe(204);
    expect((await call('GET', `/v1/webhooks/${hook.id}`)).status).toBe(404);
  });
});

describe('delivery', () => {
  it('delivers every matching event, signed per Standard Webhooks, with the catalogue payload', async () => {
    const rx = await startReceiver(t.clock);
    try {
      const hook = await subscribe({ url: rx.url, events: ['listing.created', 'listing.sold'] });
      rx.secrets.push(hook.secret);
      await appendTestEvents(
        t.store,
        [
          { type: 'listing.created', listingId: 'L1' },
          { type: 'listing.price_increased', listingId: 'L1', oldValue: 3000, newValue: 3100 },
          {
            type: 'listing.sold',
            listingId: 'L2',
            listingType: 'sale',
            oldValue: 'IN_CONTRACT',
            newValue: 9e5,
          },
        ],
        t.clock.now().toISOString(),
      );
      await t.ctx.webhookDelivery.drain();
      expect(rx.received).toHaveLength(2);
      for (const r of rx.received) {
        expect(r.verifiedWith).toBe(0);
        expect(r.headers['content-type']).toBe('application/json');
        expect(r.headers['webhook-timestamp']).toBe(String(Math.floor(t.clock.now().getTime() / 1000)));
        expect(r.headers['webhook-id']).toBe((r.verified as { id: string }).id);
      }
      const payloads = rx.received.map((r) => r.verified as Record<string, unknown>);
      expect(payloads.map((p) => p.type)).toEqual(['listing.created', 'listing.sold']);
      expect(payloads[1]).toMatchObject({
        id: expect.stringMatching(/^evt_\d+$/),
        type: 'listing.sold',
        data: { listingId: 'L2', listingType: 'sale', oldValue: 'IN_CONTRACT', newValue: 9e5 },
      });

      const log = await call<WebhookDeliveryView[]>('GET', `/v1/webhooks/${hook.id}/deliveries`);
      expect(log.status).toBe(200);
      expect(log.body.data).toHaveLength(2);
      for (const d of log.body.data) {
        expect(d).toMatchObject({
          status: 'succeeded',
          attempts: 1,
          responseStatus: 200,
          nextAttemptAt: null,
        });
        expect(d.latencyMs).toBeGreaterThanOrEqual(0);
      }
      const succeeded = await call<WebhookDeliveryView[]>(
        'GET',
        `/v1/webhooks/${hook.id}/deliveries?status=failed`,
      );
      expect(succeeded.body.data).toEqual([]);
    } finally {
      await rx.close();
    }
  });

  it('only delivers events recorded after the subscription was made', async () => {
    await appendTestEvents(t.store, [{ type: 'listing.delisted' }], t.clock.now().toISOString());
    const rx = await startReceiver(t.clock);
    try {
      const hook = await subscribe({ url: rx.url, events: ['listing.delisted'] });
      rx.secrets.push(hook.secret);
      await appendTestEvents(
        t.store,
        [{ type: 'listing.delisted', listingId: 'after' }],
        t.clock.now().toISOString(),
      );
      await t.ctx.webhookDelivery.drain();
      expect(rx.received.map((r) => (r.verified as { data: { listingId: string } }).data.listingId)).toEqual([
        'after',
      ]);
    } finally {
      await rx.close();
    }
  });

  it('narrows by filters: areas with descendants, listing type, price and bedrooms', async () => {
    const listings = await t.store.db
      .selectFrom('listings')
      .select(['id', 'area_id', 'price', 'bedroom_count', 'listing_type'])
      .where('listing_type', '=', 'rental')
      .limit(200)
      .execute();
    const borough = (areaId: number) => t.ctx.areaTree.borough(areaId)?.id;
    const target = listings[0]!;
    const boroughId = borough(target.area_id)!;
    const rx = await startReceiver(t.clock);
    try {
      const hook = await subscribe({
        url: rx.url,
        events: ['listing.created'],
        filters: {
          areas: [boroughId],
          listingType: 'rental',
          minPrice: target.price,
          maxPrice: target.price,
          minBeds: target.bedroom_count,
          maxBeds: target.bedroom_count,
        },
      });
      rx.secrets.push(hook.secret);
      const expected = listings.filter(
        (l) =>
          borough(l.area_id) === boroughId &&
          l.price === target.price &&
          l.bedroom_count === target.bedroom_count,
      );
      await appendTestEvents(
        t.store,
        listings.map((l) => ({
          type: 'listing.created' as const,
          listingId: l.id,
          listingType: 'rental' as const,
        })),
        t.clock.now().toISOString(),
      );
      await t.ctx.webhookDelivery.drain();
      const got = rx.received.map((r) => (r.verified as { data: { listingId: string } }).data.listingId);
      expect(got.sort()).toEqual(expected.map((l) => l.id).sort());
      expect(got.length).toBeGreaterThan(0);
      expect(got.length).toBeLessThan(listings.length);
    } finally {
      await rx.close();
    }
  });

  it('sends a signed test ping through the same path', async () => {
    const rx = await startReceiver(t.clock);
    try {
      const hook = await subscribe({ url: rx.url, events: ['listing.created'] });
      rx.secrets.push(hook.secret);
      const queued = await call<WebhookDeliveryView>('POST', `/v1/webhooks/${hook.id}/test`);
      expect(queued.status).toBe(202);
      expect(queued.body.data).toMatchObject({ eventType: 'webhook.ping', status: 'pending', attempts: 0 });
      await t.ctx.webhookDelivery.drain();
      expect(rx.received).toHaveLength(1);
      expect(rx.received[0]!.verified).toMatchObject({
        type: 'webhook.ping',
        data: { subscriptionId: hook.id },
      });
    } finally {
      await rx.close();
    }
  });

  it('after a rotation signs with both secrets for 24 hours, then with the new one only', async () => {
    const rx = await startReceiver(t.clock);
    try {
      const hook = await subscribe({ url: rx.url, events: ['listing.created'] });
      const rotated = await call<WebhookWithSecretView>('POST', `/v1/webhooks/${hook.id}/rotate-secret`);
      expect(rotated.status).toBe(200);
      const fresh = rotated.body.data;
      expect(fresh.secret).not.toBe(hook.secret);
      expect(fresh.previousSecretExpiresAt).toBe(
        new Date(t.clock.now().getTime() + 86_400_000).toISOString(),
      );
      // A receiver still on the old secret and one already on the new one both verify.
      rx.secrets.push(hook.secret);
      await call('POST', `/v1/webhooks/${hook.id}/test`);
      await t.ctx.webhookDelivery.drain();
      expect(rx.received[0]!.verifiedWith).toBe(0);
      expect(rx.received[0]!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
      rx.secrets.splice(0, 1, fresh.secret);
      await call('POST', `/v1/webhooks/${hook.id}/test`);
      await t.ctx.webhookDelivery.drain();
      expect(rx.received[1]!.verifiedWith).toBe(0);

      t.clock.advance(86_400_000 + 1000);
      rx.secrets.splice(0, 1, hook.secret);
      await call('POST', `/v1/webhooks/${hook.id}/test`);
      await t.ctx.webhookDelivery.drain();
      expect(rx.received[2]!.verifiedWith).toBe(-1);
      expect(rx.received[2]!.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    } finally {
      await rx.close();
    }
  });
});

describe('OpenAPI', () => {
  it('documents every webhook operation with security, the Webhooks tag and the verification recipe', async () => {
    const doc = (await (await t.get('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { security?: unknown; tags?: string[]; description?: string }>>;
      components: { schemas: Record<string, unknown> };
    };
    const operations = [
      ['/v1/webhooks', 'post'],
      ['/v1/webhooks', 'get'],
      ['/v1/webhooks/{id}', 'get'],
      ['/v1/webhooks/{id}', 'patch'],
      ['/v1/webhooks/{id}', 'delete'],
      ['/v1/webhooks/{id}/deliveries', 'get'],
      ['/v1/webhooks/{id}/test', 'post'],
      ['/v1/webhooks/{id}/deliveries/{deliveryId}/retry', 'post'],
      ['/v1/webhooks/{id}/rotate-secret', 'post'],
    ] as const;
    for (const [path, method] of operations) {
      const operation = doc.paths[path]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      expect(operation!.security).toEqual([{ apiKey: [] }]);
      expect(operation!.tags).toEqual(['Webhooks']);
    }
    expect(doc.paths['/v1/webhooks']!.post!.description).toContain('webhook-signature');
    expect(doc.components.schemas).toHaveProperty('Webhook');
    expect(doc.components.schemas).toHaveProperty('WebhookDelivery');
    expect(LISTING_EVENT_TYPES.length).toBe(8);
  });
});
