import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compose } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { ENDPOINT_WINDOW_MAX, EndpointWindows } from '../src/jobs/deliveries/endpoint-windows.ts';
import { fanOutBatch } from '../src/jobs/deliveries/fan-out.ts';
import { RETRY_SCHEDULE_MS } from '../src/jobs/deliveries/retry-policy.ts';
import { claimNextDelivery } from '../src/modules/webhooks/webhooks.repository.ts';
import type { WebhookDeliveryView, WebhookWithSecretView } from '../src/modules/webhooks/webhooks.schema.ts';
import { ManualClock } from '../src/platform/clock.ts';
import { openStore, type Store } from '../src/platform/db/database.ts';
import { migrateToLatest } from '../src/platform/db/migrate.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { createTestApp, TEST_NOW, type TestApp } from './support/app.ts';
import { onThisThread, TEST_DIALECT, testSchemaName } from './support/store.ts';
import {
  type Answer,
  appendTestEvents,
  startReceiver,
  type WebhookReceiver,
} from './support/webhook-receiver.ts';

const LOCAL = { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' };

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await createTestApp({ scale: 0, env: LOCAL });
  key = (await t.ctx.subscriptions.issue({ accountId: 'hooks-delivery', tier: 'BUSINESS' })).key;
});
afterAll(async () => {
  await t?.close();
});

async function call<T>(method: string, path: string, body?: unknown) {
  const response = await t.getAs(key, path, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as { data: T } };
}

async function subscribe(rx: WebhookReceiver, events = ['listing.created']): Promise<WebhookWithSecretView> {
  const created = await call<WebhookWithSecretView>('POST', '/v1/webhooks', { url: rx.url, events });
  expect(created.status).toBe(200);
  rx.secrets.push(created.body.data.secret);
  return created.body.data;
}

async function deliveries(id: string): Promise<WebhookDeliveryView[]> {
  return (await call<WebhookDeliveryView[]>('GET', `/v1/webhooks/${id}/deliveries`)).body.data;
}

const now = () => t.clock.now().toISOString();

/** Runs `body` with a receiver answering by `answer`, closed afterwards. */
async function withReceiver(answer: (n: number) => Answer, body: (rx: WebhookReceiver) => Promise<void>) {
  const rx = await startReceiver(t.clock, answer);
  try {
    await body(rx);
  } finally {
    await rx.close();
  }
}

describe('retries', () => {
  it('a receiver answering 500 three times, then 200, gets exactly one successful delivery', async () => {
    await withReceiver(
      (n) => (n < 3 ? { status: 500, body: 'boom' } : { status: 200 }),
      async (rx) => {
        const hook = await subscribe(rx);
        await appendTestEvents(t.store, [{ listingId: 'retry-1' }], now());
        const drain = () => t.ctx.webhookDelivery.drain();
        await drain();
        expect(rx.received).toHaveLength(1);
        let [d] = await deliveries(hook.id);
        expect(d).toMatchObject({
          status: 'pending',
          attempts: 1,
          responseStatus: 500,
          lastError: 'HTTP 500: boom',
        });
        // Not due yet: nothing is sent before the schedule says so.
        await drain();
        expect(rx.received).toHaveLength(1);
        for (const [i, delay] of RETRY_SCHEDULE_MS.slice(1, 4).entries()) {
          const due = Date.parse(d!.nextAttemptAt!) - t.clock.now().getTime();
          // The schedule's delay, ±10% jitter.
          expect(due).toBeGreaterThanOrEqual(delay * 0.9 - 1);
          expect(due).toBeLessThanOrEqual(delay * 1.1 + 1);
          t.clock.advance(due);
          await drain();
          expect(rx.received).toHaveLength(i + 2);
          [d] = await deliveries(hook.id);
        }
        expect(d).toMatchObject({
          status: 'succeeded',
          attempts: 4,
          responseStatus: 200,
          nextAttemptAt: null,
        });
        // Every attempt was signed (verified), with the same webhook-id: receivers deduplicate on it.
        expect(rx.received.every((r) => r.verifiedWith === 0)).toBe(true);
        expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
        t.clock.advance(86_400_000);
        await drain();
        expect(rx.received).toHaveLength(4);
      },
    );
  });

  it('honours Retry-After when it asks for longer than the schedule', async () => {
    await withReceiver(
      () => ({ status: 503, headers: { 'retry-after': '120' } }),
      async (rx) => {
        const hook = await subscribe(rx);
        await call('POST', `/v1/webhooks/${hook.id}/test`);
        await t.ctx.webhookDelivery.drain();
        const [d] = await deliveries(hook.id);
        expect(Date.parse(d!.nextAttemptAt!) - t.clock.now().getTime()).toBe(120_000);
      },
    );
  });

  it('does not follow redirects: a 3xx is a failed attempt, the target gets nothing', async () => {
    await withReceiver(
      () => ({ status: 200 }),
      async (target) => {
        await withReceiver(
          () => ({ status: 302, headers: { location: target.url } }),
          async (rx) => {
            const hook = await subscribe(rx);
            await call('POST', `/v1/webhooks/${hook.id}/test`);
            await t.ctx.webhookDelivery.drain();
            const [d] = await deliveries(hook.id);
            expect(d).toMatchObject({ status: 'pending', responseStatus: 302 });
            expect(d!.lastError).toContain('not followed');
            expect(target.received).toHaveLength(0);
          },
        );
      },
    );
  });

  it('dead-letters after the last scheduled attempt; a retry by hand delivers it', async () => {
    let healthy = false;
    await withReceiver(
      () => (healthy ? { status: 204 } : { status: 500 }),
      async (rx) => {
        const hook = await subscribe(rx);
        await call('POST', `/v1/webhooks/${hook.id}/test`);
        for (let i = 0; i < RETRY_SCHEDULE_MS.length; i++) {
          const [d] = await deliveries(hook.id);
          if (d!.nextAttemptAt) t.clock.set(d!.nextAttemptAt);
          await t.ctx.webhookDelivery.drain();
        }
        expect(rx.received).toHaveLength(RETRY_SCHEDULE_MS.length);
        const [failed] = await deliveries(hook.id);
        expect(failed).toMatchObject({
          status: 'failed',
          attempts: RETRY_SCHEDULE_MS.length,
          nextAttemptAt: null,
        });

        healthy = true;
        const retried = await call<WebhookDeliveryView>(
          'POST',
          `/v1/webhooks/${hook.id}/deliveries/${failed!.id}/retry`,
        );
        expect(retried.status).toBe(202);
        expect(retried.body.data.status).toBe('pending');
        await t.ctx.webhookDelivery.drain();
        const [done] = await deliveries(hook.id);
        expect(done).toMatchObject({ status: 'succeeded', responseStatus: 204 });
        expect(rx.received).toHaveLength(RETRY_SCHEDULE_MS.length + 1);
      },
    );
  });

  it('deactivates an endpoint failing for 5 days and says why in the delivery log', async () => {
    await withReceiver(
      () => ({ status: 500 }),
      async (rx) => {
        const hook = await subscribe(rx);
        await call('POST', `/v1/webhooks/${hook.id}/test`);
        await t.ctx.webhookDelivery.drain();
        const first = (await call<{ failingSince: string }>('GET', `/v1/webhooks/${hook.id}`)).body.data;
        expect(first.failingSince).toBe(now());
        t.clock.advance(5 * 86_400_000);
        await call('POST', `/v1/webhooks/${hook.id}/test`);
        await t.ctx.webhookDelivery.drain();
        const after = (
          await call<{ active: boolean; disabledReason: string }>('GET', `/v1/webhooks/${hook.id}`)
        ).body.data;
        expect(after.active).toBe(false);
        expect(after.disabledReason).toContain('5 days');
        const log = await deliveries(hook.id);
        expect(log.some((d) => d.status === 'failed' && d.lastError?.includes('deactivated'))).toBe(true);
        // Nothing more is sent; the older delivery was cancelled.
        expect(log.every((d) => d.status !== 'pending')).toBe(true);
        const count = rx.received.length;
        t.clock.advance(86_400_000);
        await t.ctx.webhookDelivery.drain();
        expect(rx.received).toHaveLength(count);
      },
    );
  });
});

describe('subscriptions are re-checked at each attempt', () => {
  it('a deleted subscription gets nothing more', async () => {
    await withReceiver(
      () => ({ status: 200 }),
      async (rx) => {
        const hook = await subscribe(rx);
        await appendTestEvents(t.store, [{ listingId: 'del-1' }, { listingId: 'del-2' }], now());
        await fanOutBatch(t.store.db, t.store.dialect, t.ctx.areaTree, now());
        expect((await call('DELETE', `/v1/webhooks/${hook.id}`)).status).toBe(204);
        await t.ctx.webhookDelivery.drain();
        expect(rx.received).toHaveLength(0);
      },
    );
  });

  it('a deactivated subscription gets nothing more, even for deliveries already claimed', async () => {
    await withReceiver(
      () => ({ status: 200 }),
      async (rx) => {
        const hook = await subscribe(rx);
        await appendTestEvents(t.store, [{ listingId: 'off-1' }, { listingId: 'off-2' }], now());
        await fanOutBatch(t.store.db, t.store.dialect, t.ctx.areaTree, now());
        // Deactivated behind the API's back (another process): the attempt itself re-checks.
        await t.store.db
          .updateTable('webhook_subscriptions')
          .set({ active: 0 })
          .where('id', '=', hook.id)
          .execute();
        await t.ctx.webhookDelivery.drain();
        expect(rx.received).toHaveLength(0);
        expect((await deliveries(hook.id)).map((d) => d.status)).toEqual(['cancelled', 'cancelled']);

        await t.store.db
          .updateTable('webhook_subscriptions')
          .set({ active: 1 })
          .where('id', '=', hook.id)
          .execute();
        await call('PATCH', `/v1/webhooks/${hook.id}`, { active: false });
        await appendTestEvents(t.store, [{ listingId: 'off-3' }], now());
        await t.ctx.webhookDelivery.drain();
        expect(rx.received).toHaveLength(0);
      },
    );
  });
});

describe('isolation', () => {
  it('a slow receiver does not delay another subscriber', async () => {
    await withReceiver(
      () => ({ status: 200, delayMs: 30_000 }),
      async (slow) => {
        await withReceiver(
          () => ({ status: 200 }),
          async (fast) => {
            await subscribe(slow);
            await subscribe(fast);
            t.ctx.webhookDelivery.start();
            try {
              const started = Date.now();
              await appendTestEvents(
                t.store,
                Array.from({ length: 5 }, (_, i) => ({ listingId: `iso-${i}` })),
                now(),
              );
              await fast.waitFor(5, 3000);
              expect(Date.now() - started).toBeLessThan(3000);
              // The slow one has had one request at most (its window stays at one while it has not answered).
              expect(slow.received.length).toBeLessThanOrEqual(1);
              // The quick one's window opened past one, within its ceiling.
              expect(fast.peakOpen()).toBeLessThanOrEqual(ENDPOINT_WINDOW_MAX);
            } finally {
              await t.ctx.webhookDelivery.stop();
            }
          },
        );
      },
    );
  }, 15_000);
});

describe('endpoint windows', () => {
  it('a burst to a quick endpoint goes several at a time, never past the ceiling, each event once', async () => {
    await withReceiver(
      () => ({ status: 200, delayMs: 25 }),
      async (rx) => {
        await subscribe(rx);
        const events = 40;
        await appendTestEvents(
          t.store,
          Array.from({ length: events }, (_, i) => ({ listingId: `burst-${i}` })),
          now(),
        );
        t.ctx.webhookDelivery.start();
        try {
          await rx.waitFor(events, 5000);
        } finally {
          await t.ctx.webhookDelivery.stop();
        }
        expect(rx.peakOpen()).toBeGreaterThan(1);
        expect(rx.peakOpen()).toBeLessThanOrEqual(ENDPOINT_WINDOW_MAX);
        const ids = rx.received.map((r) => r.headers['webhook-id']);
        expect(new Set(ids).size).toBe(events);
        expect(rx.received.every((r) => r.verifiedWith === 0)).toBe(true);
      },
    );
  });

  it('an endpoint that fails gets one attempt at a time', async () => {
    await withReceiver(
      () => ({ status: 500, delayMs: 25 }),
      async (rx) => {
        const hook = await subscribe(rx);
        const events = 12;
        await appendTestEvents(
          t.store,
          Array.from({ length: events }, (_, i) => ({ listingId: `failing-${i}` })),
          now(),
        );
        await t.ctx.webhookDelivery.drain();
        // Every delivery had its first attempt (retries are not due yet), one after another.
        expect(rx.received).toHaveLength(events);
        expect(rx.peakOpen()).toBe(1);
        const log = await deliveries(hook.id);
        expect(log.filter((d) => d.status === 'pending' && d.attempts === 1)).toHaveLength(events);
      },
    );
  });

  it('opens by doubling on quick answers and closes to one on a failure or a slow answer', () => {
    const windows = new EndpointWindows(8, 1000);
    expect(windows.free('a')).toBe(1);
    for (const expected of [2, 4, 8, 8]) {
      windows.signal('a', windows.classifyAnswer(10));
      expect(windows.windowOf('a')).toBe(expected);
    }
    windows.take('a', 3);
    expect(windows.free('a')).toBe(5);
    expect(windows.used).toBe(3);
    windows.signal('a', windows.classifyAnswer(1000));
    expect(windows.windowOf('a')).toBe(1);
    // Three taken against a window of one: full, and no room is given out.
    expect(windows.full()).toEqual(['a']);
    expect(windows.free('a')).toBe(-2);
    windows.signal('a', 'fast');
    windows.signal('a', 'failed');
    expect(windows.windowOf('a')).toBe(1);
    windows.give('a', 3);
    expect(windows.used).toBe(0);
    expect(windows.full()).toEqual([]);
    windows.signal('b', 'fast');
    windows.forget('b');
    expect(windows.windowOf('b')).toBe(1);
  });
});

describe('durability', () => {
  /** A store that outlives its process: a SQLite file, or one PostgreSQL schema opened twice. */
  function durableStore(): { open(): Promise<Store>; cleanup(): void } {
    if (TEST_DIALECT === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'stoop-webhooks-'));
      const databaseUrl = `sqlite:${join(dir, 'stoop.sqlite')}`;
      return {
        open: () => openStore({ dialect: 'sqlite', databaseUrl }),
        cleanup: () => rmSync(dir, { recursive: true, force: true }),
      };
    }
    const schema = testSchemaName();
    return {
      open: () =>
        openStore({
          dialect: 'postgres',
          databaseUrl: process.env.DATABASE_URL as string,
          schema,
          poolSize: 4,
        }),
      cleanup: () => {},
    };
  }

  it('deliveries pending when the server stops are delivered after it restarts, once each', async () => {
    const durable = durableStore();
    const clock = new ManualClock(TEST_NOW);
    const config = loadConfig({ LOG_LEVEL: 'silent', DEMO: 'false', ...LOCAL });
    const rx = await startReceiver(clock);
    try {
      let store = await durable.open();
      await migrateToLatest(store);
      await syncAreas(store);
      let composition = await compose({ config, store: onThisThread(store), wallClock: clock });
      const hook = await composition.services.webhooks.create('durable', {
        url: rx.url,
        events: ['listing.created'],
      });
      rx.secrets.push(hook.secret);
      const at = clock.now().toISOString();
      await appendTestEvents(
        store,
        Array.from({ length: 6 }, (_, i) => ({ listingId: `d-${i}` })),
        at,
      );
      await fanOutBatch(store.db, store.dialect, composition.services.areaTree, at);
      // One delivery was claimed by a worker that then died; more events arrive before the fan-out.
      await claimNextDelivery(
        store.db,
        store.dialect,
        hook.id,
        at,
        new Date(clock.now().getTime() + 60_000).toISOString(),
        'dead',
      );
      await appendTestEvents(store, [{ listingId: 'd-6' }, { listingId: 'd-7' }], at);
      await composition.close();
      await store.close();
      expect(rx.received).toHaveLength(0);

      store = await durable.open();
      composition = await compose({ config, store: onThisThread(store), wallClock: clock });
      await composition.services.webhookDelivery.drain();
      expect(rx.received).toHaveLength(7);
      // The dead worker's claim lapses, then its delivery goes too.
      clock.advance(61_000);
      await composition.services.webhookDelivery.drain();
      expect(rx.received).toHaveLength(8);
      const ids = rx.received.map((r) => (r.verified as { data: { listingId: string } }).data.listingId);
      expect(ids.sort()).toEqual(Array.from({ length: 8 }, (_, i) => `d-${i}`));
      await composition.close();
      await store.close();
    } finally {
      await rx.close();
      durable.cleanup();
    }
  });

  it('two workers on one store deliver 1,000 events exactly once each', async () => {
    const durable = durableStore();
    const clock = new ManualClock(TEST_NOW);
    const config = loadConfig({ LOG_LEVEL: 'silent', DEMO: 'false', ...LOCAL });
    const rx = await startReceiver(clock);
    const stores: Store[] = [];
    const compositions: Awaited<ReturnType<typeof compose>>[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const store = await durable.open();
        if (i === 0) {
          await migrateToLatest(store);
          await syncAreas(store);
        }
        stores.push(store);
        compositions.push(
          await compose({
            config,
            store: onThisThread(store),
            wallClock: clock,
            webhookDelivery: { pollMs: 20 },
          }),
        );
      }
      const first = compositions[0]!.services;
      for (let i = 0; i < 4; i++) {
        const hook = await first.webhooks.create('two-workers', { url: rx.url, events: ['listing.created'] });
        rx.secrets.push(hook.secret);
      }
      for (const c of compositions) c.services.webhookDelivery.start();
      for (let batch = 0; batch < 5; batch++) {
        await appendTestEvents(
          stores[0]!,
          Array.from({ length: 50 }, (_, i) => ({ listingId: `w-${batch}-${i}` })),
          clock.now().toISOString(),
        );
      }
      await rx.waitFor(1000, 60_000);
      // Nothing more arrives: no delivery was made twice.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(rx.received).toHaveLength(1000);
      expect(rx.received.every((r) => r.verifiedWith !== -1)).toBe(true);
      const pairs = new Set(rx.received.map((r) => `${r.verifiedWith}/${r.headers['webhook-id']}`));
      expect(pairs.size).toBe(1000);
    } finally {
      for (const c of compositions) await c.close();
      for (const s of stores) await s.close();
      await rx.close();
      durable.cleanup();
    }
  }, 90_000);
});

describe('fan-out', () => {
  it('bounds a transaction’s deliveries and resumes after the last event it consumed', async () => {
    const hooks = [];
    for (let i = 0; i < 3; i++) {
      hooks.push(
        await t.ctx.webhooks.create('hooks-delivery', {
          url: `http://127.0.0.1:9/bounded-${i}`,
          events: ['listing.open_house_added'],
        }),
      );
    }
    await appendTestEvents(
      t.store,
      Array.from({ length: 500 }, (_, i) => ({
        type: 'listing.open_house_added' as const,
        listingId: `b-${i}`,
      })),
      now(),
    );
    const batches: number[] = [];
    for (;;) {
      const consumed = await fanOutBatch(t.store.db, t.store.dialect, t.ctx.areaTree, now());
      if (consumed === 0) break;
      batches.push(consumed);
    }
    expect(batches).toEqual([334, 166]);
    for (const hook of hooks) {
      const page = await t.ctx.webhooks.deliveries('hooks-delivery', hook.id, { page: 1, perPage: 1 });
      expect(page.total).toBe(500);
      await t.ctx.webhooks.remove('hooks-delivery', hook.id);
    }
  });
});

describe('delivery log retention', () => {
  it('forgets finished deliveries 30 days after they finished, keeps the rest', async () => {
    await withReceiver(
      () => ({ status: 200 }),
      async (rx) => {
        const hook = await subscribe(rx, ['listing.rented']);
        await appendTestEvents(t.store, [{ type: 'listing.rented', listingId: 'old' }], now());
        await t.ctx.webhookDelivery.drain();
        expect(await deliveries(hook.id)).toHaveLength(1);
        t.clock.advance(31 * 86_400_000);
        await appendTestEvents(t.store, [{ type: 'listing.rented', listingId: 'new' }], now());
        await t.ctx.webhookDelivery.drain();
        const left = await deliveries(hook.id);
        expect(left.map((d) => d.eventId)).toHaveLength(1);
        expect(left[0]!.status).toBe('succeeded');
        expect(rx.received).toHaveLength(2);
      },
    );
  });
});
