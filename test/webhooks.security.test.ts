import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookWithSecretView } from '../src/modules/webhooks/webhooks.schema.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { startLoggedApp } from './support/log-capture.ts';
import { appendTestEvents } from './support/webhook-receiver.ts';

let t: TestApp;
const keys: Record<string, string> = {};
// Plain http allowed (as in local development) but no allowlist: every non-public address is refused.
beforeAll(async () => {
  t = await createTestApp({ scale: 0, env: { WEBHOOK_ALLOW_HTTP: '1' } });
  keys.alice = (await t.ctx.subscriptions.issue({ accountId: 'alice', tier: 'BUSINESS' })).key;
  keys.bob = (await t.ctx.subscriptions.issue({ accountId: 'bob', tier: 'BUSINESS' })).key;
  keys.pro = (await t.ctx.subscriptions.issue({ accountId: 'pro', tier: 'PRO' })).key;
});
afterAll(async () => {
  await t?.close();
});

async function send(as: string | null, method: string, path: string, body?: unknown) {
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
    text,
    body: (text ? JSON.parse(text) : null) as { data: WebhookWithSecretView; error?: { code: string } },
  };
}

/** A subscription of `owner` registered directly (its URL is public, so the service accepts it). */
async function subscriptionOf(owner: string): Promise<WebhookWithSecretView> {
  const created = await t.ctx.webhooks.create(owner, {
    url: 'http://93.184.216.34/hook',
    events: ['listing.created'],
  });
  return { ...created, previousSecretExpiresAt: null } as unknown as WebhookWithSecretView;
}

describe('access', () => {
  it('needs a key (401) of Business tier or above (403 below)', async () => {
    expect((await send(null, 'GET', '/v1/webhooks')).status).toBe(401);
    const pro = await send(keys.pro!, 'POST', '/v1/webhooks', {
      url: 'http://93.184.216.34/',
      events: ['listing.created'],
    });
    expect(pro.status).toBe(403);
    expect(pro.body.error?.code).toBe('TIER_RESTRICTED');
    expect((await send(t.internalKey, 'GET', '/v1/webhooks')).status).toBe(200);
  });

  it("answers 404 for another account's subscription on every route, and lists only the caller's", async () => {
    const alices = await subscriptionOf('alice');
    const ping = await t.ctx.webhooks.test('alice', alices.id);
    const routes: [string, string, unknown?][] = [
      ['GET', `/v1/webhooks/${alices.id}`],
      ['PATCH', `/v1/webhooks/${alices.id}`, { active: false }],
      ['DELETE', `/v1/webhooks/${alices.id}`],
      ['GET', `/v1/webhooks/${alices.id}/deliveries`],
      ['POST', `/v1/webhooks/${alices.id}/test`],
      ['POST', `/v1/webhooks/${alices.id}/rotate-secret`],
      ['POST', `/v1/webhooks/${alices.id}/deliveries/${ping.id}/retry`],
    ];
    for (const [method, path, body] of routes) {
      const answer = await send(keys.bob!, method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(404);
    }
    const list = await send(keys.bob!, 'GET', '/v1/webhooks');
    expect(list.text).not.toContain(alices.id);
    // Untouched by Bob's attempts.
    const still = await t.ctx.webhooks.get('alice', alices.id);
    expect(still).toMatchObject({ active: true, secret: alices.secret });
  });
});

describe('secrets', () => {
  it('are shown only by create and rotate-secret, and answers are never cached', async () => {
    const created = await send(keys.alice!, 'POST', '/v1/webhooks', {
      url: 'http://93.184.216.34/hook',
      events: ['listing.created'],
    });
    expect(created.status).toBe(200);
    const { id, secret } = created.body.data;
    for (const [method, path, body] of [
      ['GET', `/v1/webhooks/${id}`],
      ['GET', '/v1/webhooks'],
      ['PATCH', `/v1/webhooks/${id}`, { events: ['listing.sold'] }],
    ] as [string, string, unknown?][]) {
      const answer = await send(keys.alice!, method, path, body);
      expect(answer.status).toBe(200);
      expect(answer.text).not.toContain(secret);
      expect(answer.text).not.toContain('whsec_');
      expect(answer.headers.get('cache-control')).toBe('no-store');
    }
    const rotated = await send(keys.alice!, 'POST', `/v1/webhooks/${id}/rotate-secret`);
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
  });

  it('neither secrets nor URLs reach the logs', async () => {
    const logged = await startLoggedApp({
      wiring: 'process logger',
      env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' },
    });
    try {
      const { services } = logged.composition;
      const key = (await services.subscriptions.issue({ accountId: 'logs', tier: 'BUSINESS' })).key;
      // Port 9 on loopback: nothing listens, so the delivery fails (and is logged, if anything is).
      const url = 'http://127.0.0.1:9/hook?token=receiver-private-token';
      const response = await fetch(`${logged.url}/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url, events: ['listing.created'] }),
      });
      const { data } = (await response.json()) as { data: WebhookWithSecretView };
      await appendTestEvents(logged.store, [{ listingId: 'log-1' }], services.wallClock.now().toISOString());
      await services.webhookDelivery.drain();
      await fetch(`${logged.url}/v1/webhooks/${data.id}/deliveries`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const all = logged.lines.join('\n');
      expect(all).not.toContain(data.secret);
      expect(all).not.toContain('receiver-private-token');
    } finally {
      await logged.close();
    }
  });
});

describe('SSRF at registration (allowlist off)', () => {
  it.each([
    'http://127.0.0.1/',
    'http://127.0.0.1:8080/hook',
    'http://[::1]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://192.168.0.10/',
    'http://100.64.0.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://[fd00::1]/',
    'http://0.0.0.0/',
    'http://localhost/',
  ])('refuses %s', async (url) => {
    const answer = await send(keys.alice!, 'POST', '/v1/webhooks', { url, events: ['listing.created'] });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('"parameter":"url"');
    expect(answer.text).toContain('public addresses only');
  });
});
