/**
 * Two real server processes over one store (SQLite file or PostgreSQL schema),
 * each running its own webhook delivery worker: 1,000 deliveries arrive
 * exactly once each, signed — claims in the store keep the processes apart.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSubscriptionProvider } from '../src/modules/keys/subscriptions.ts';
import { systemClock } from '../src/platform/clock.ts';
import {
  dropRedisNamespace,
  freePort,
  isolatedLimitsEnv,
  openServerStore,
  prepareServerStore,
  redisAnswers,
  type ServerProcess,
  type ServerStore,
  serverStore,
  startServerProcess,
  TEST_REDIS_URL,
} from './support/server-process.ts';
import { appendTestEvents, startReceiver, type WebhookReceiver } from './support/webhook-receiver.ts';

const SUBSCRIPTIONS = 4;
const EVENTS = 250;

/** Several servers on one store need Redis for their shared limits: without one, there is nothing to run. */
const redisUp = await redisAnswers(TEST_REDIS_URL);

describe.skipIf(!redisUp)('webhook delivery across processes', () => {
  let place: ServerStore;
  let limitsEnv: Record<string, string>;
  let servers: ServerProcess[] = [];
  let rx: WebhookReceiver;

  beforeAll(async () => {
    place = serverStore('webhooks-processes');
    limitsEnv = isolatedLimitsEnv();
    await prepareServerStore(place, 'processes-setup');
    rx = await startReceiver(systemClock);
    // Several servers on one store share their limits through Redis (they refuse to start without it).
    const env = {
      ...limitsEnv,
      ...place.env,
      REDIS_URL: TEST_REDIS_URL,
      WEBHOOK_ALLOW_HTTP: '1',
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    };
    servers = await Promise.all([0, 1].map(async () => startServerProcess({ port: await freePort(), env })));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await rx?.close();
    if (limitsEnv?.REDIS_PREFIX) await dropRedisNamespace(limitsEnv.REDIS_PREFIX);
    if (place) rmSync(place.dataDir, { recursive: true, force: true });
  });

  it('two server processes deliver 1,000 events exactly once each', async () => {
    const store = await openServerStore(place);
    try {
      const key = (
        await new LocalSubscriptionProvider(store.db, systemClock, 'STOOP').issue({
          accountId: 'processes',
          tier: 'BUSINESS',
        })
      ).key;
      for (let i = 0; i < SUBSCRIPTIONS; i++) {
        // Alternate the processes the subscriptions are made through: either one's API will do.
        const response = await fetch(`${servers[i % 2]!.url}/v1/webhooks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: rx.url, events: ['listing.created'] }),
        });
        expect(response.status).toBe(200);
        rx.secrets.push(((await response.json()) as { data: { secret: string } }).data.secret);
      }
      // Written as the refresh pipeline writes them, by neither server: both workers race for them.
      for (let batch = 0; batch < 5; batch++) {
        await appendTestEvents(
          store,
          Array.from({ length: EVENTS / 5 }, (_, i) => ({ listingId: `p-${batch}-${i}` })),
          new Date().toISOString(),
        );
      }
      const expected = SUBSCRIPTIONS * EVENTS;
      await rx.waitFor(expected, 90_000);
      // Nothing more arrives: no delivery was made twice.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(rx.received).toHaveLength(expected);
      expect(rx.received.every((r) => r.verifiedWith !== -1)).toBe(true);
      const distinct = new Set(rx.received.map((r) => `${r.verifiedWith}/${r.headers['webhook-id']}`));
      expect(distinct.size).toBe(expected);
      const states = await store.db
        .selectFrom('webhook_deliveries')
        .select(['status'])
        .where('event_type', '=', 'listing.created')
        .execute();
      expect(states).toHaveLength(expected);
      expect(states.every((s) => s.status === 'succeeded')).toBe(true);
    } finally {
      await store.close();
    }
  }, 150_000);
});
