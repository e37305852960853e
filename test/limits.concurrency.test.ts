import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import {
  dropRedisNamespace,
  freePort,
  isolatedLimitsEnv,
  prepareServerStore,
  redisAnswers,
  type ServerProcess,
  serverStore,
  startServerProcess,
  TEST_REDIS_URL,
} from './support/server-process.ts';

const BURST = 200;
const STARTER_PER_MINUTE = 30;
const PATH = '/v1/search/rentals?perPage=1';

interface Outcome {
  status: number;
  headers: Headers;
  body: { error?: { code: string; retryAfter?: number } };
}

async function burst(urls: readonly string[], key: string): Promise<Outcome[]> {
  return Promise.all(
    Array.from({ length: BURST }, async (_, i) => {
      const response = await fetch(`${urls[i % urls.length]}${PATH}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      return {
        status: response.status,
        headers: response.headers,
        body: (await response.json()) as Outcome['body'],
      };
    }),
  );
}

/**
 * Exactly the per-minute budget passes, every refusal is a well-formed 429, every answer is metered.
 * `wallNowMs`: the servers' wall clock (reset times are on it).
 */
function expectExactlyOneWindow(outcomes: Outcome[], wallNowMs = Date.now()): void {
  const allowed = outcomes.filter((o) => o.status === 200);
  const refused = outcomes.filter((o) => o.status !== 200);
  expect(allowed).toHaveLength(STARTER_PER_MINUTE);
  expect(refused).toHaveLength(BURST - STARTER_PER_MINUTE);

  for (const o of outcomes) {
    expect(o.headers.get('x-ratelimit-limit')).toBe(String(STARTER_PER_MINUTE));
    expect(o.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    expect(Number(o.headers.get('x-ratelimit-reset'))).toBeGreaterThan(wallNowMs / 1000 - 1);
    expect(o.headers.get('x-quota-limit')).toBe('5000');
    expect(o.headers.get('x-quota-used')).toMatch(/^\d+$/);
    expect(o.headers.get('x-quota-remaining')).toMatch(/^\d+$/);
  }
  for (const o of refused) {
    expect(o.status).toBe(429);
    expect(o.body.error?.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(o.headers.get('x-ratelimit-remaining')).toBe('0');
    const retryAfter = Number(o.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(o.body.error?.retryAfter).toBe(retryAfter);
  }
  // Each admitted request took its own window slot and its own quota unit: no lost updates.
  const remaining = allowed.map((o) => Number(o.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
  expect(remaining).toEqual(Array.from({ length: STARTER_PER_MINUTE }, (_, i) => i));
  const used = allowed.map((o) => Number(o.headers.get('x-quota-used'))).sort((a, b) => a - b);
  expect(used).toEqual(Array.from({ length: STARTER_PER_MINUTE }, (_, i) => i + 1));
  // Refused requests are not counted against the quota.
  for (const o of refused)
    expect(Number(o.headers.get('x-quota-used'))).toBeLessThanOrEqual(STARTER_PER_MINUTE);
}

describe('rate limit under concurrency, one process', () => {
  let t: TestApp;
  const env = isolatedLimitsEnv();
  beforeAll(async () => {
    t = await createTestApp({ scale: 0, env });
  });
  afterAll(async () => {
    await t?.close();
    if (env.REDIS_URL) await dropRedisNamespace(`stoop:${env.DATABASE_SCHEMA}`, env.REDIS_URL);
  });

  it(`admits exactly ${STARTER_PER_MINUTE} of ${BURST} concurrent STARTER requests`, async () => {
    const { key } = await t.ctx.subscriptions.issue({ accountId: 'burst', tier: 'STARTER' });
    expectExactlyOneWindow(await burst([t.url], key), t.clock.now().getTime());
    // Counted under the key's account, which all of its keys share.
    expect(await t.ctx.limits.quota.used('acct:burst', '2026-11')).toBe(STARTER_PER_MINUTE);
  });
});

const redisUp = await redisAnswers(TEST_REDIS_URL);
if (!redisUp) {
  console.warn(
    `limits.concurrency: skipping the two-process test, no Redis answers at ${TEST_REDIS_URL} (set REDIS_URL).`,
  );
}

describe.skipIf(!redisUp)(
  `rate limit under concurrency, two processes sharing Redis (${TEST_REDIS_URL})`,
  () => {
    const place = serverStore('limits');
    const servers: ServerProcess[] = [];
    let key = '';

    beforeAll(async () => {
      // The schema, the area tree and the key exist before either server starts, as in a deployment.
      key = await prepareServerStore(place, 'two-processes');
      const ports = [await freePort(), await freePort()];
      const env = {
        ...place.env,
        REDIS_URL: TEST_REDIS_URL,
        // Its own namespace, removed after the test: counters are per account, and
        // the account name is the same in every run.
        REDIS_PREFIX: `stoop:${place.schema}`,
      };
      const started = await Promise.allSettled(ports.map((port) => startServerProcess({ port, env })));
      for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
      const failed = started.find((s) => s.status === 'rejected');
      if (failed) throw failed.reason;
    });

    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop()));
      await dropRedisNamespace(`stoop:${place.schema}`);
      // The `t_…` schema is dropped by the global teardown (test/support/global-setup.ts).
      rmSync(place.dataDir, { recursive: true, force: true });
    });

    it(`admits exactly ${STARTER_PER_MINUTE} of ${BURST} concurrent requests split across both`, async () => {
      const outcomes = await burst(
        servers.map((s) => s.url),
        key,
      );
      expectExactlyOneWindow(outcomes);
      // Both processes answered, and both refused: the budget is shared, not per process.
      const byServer = servers.map((_, n) => outcomes.filter((_, i) => i % servers.length === n));
      for (const answers of byServer) expect(answers.some((o) => o.status === 429)).toBe(true);
    });
  },
);
