import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/platform/db/database.ts';
import { createLimits } from '../src/platform/limits/limits.ts';
import { claimProcessLease, EMBEDDED_LIMITS_LEASE } from '../src/platform/limits/process-lease.ts';
import { ROOT } from './support/cli.ts';
import {
  freePort,
  openServerStore,
  prepareServerStore,
  type ServerProcess,
  serverStore,
  startServerProcess,
} from './support/server-process.ts';
import { createTestStore } from './support/store.ts';

/**
 * Without Redis, rate windows live in the process and quota counts are
 * buffered in it, so the store's embedded limits belong to one process: it
 * holds a lease in the store, and a second server refuses to start.
 */

async function until(condition: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

describe('process lease (in one process, short heartbeat)', () => {
  let store: Store;
  beforeAll(async () => {
    store = await createTestStore();
  });
  afterAll(async () => {
    await store?.close();
  });
  const fast = { ttlMs: 1500, renewEveryMs: 300 };

  it('refuses a second claimant while the holder renews, and lets one in at once after release', async () => {
    const first = await claimProcessLease(store.db, 'one', fast);
    expect(first.acquired).toBe(true);
    const started = Date.now();
    const second = await claimProcessLease(store.db, 'one', fast);
    expect(second).toEqual({ acquired: false, holder: expect.stringMatching(/:\d+:/) });
    // Refused as soon as a renewal is seen: one heartbeat, not the whole time to live.
    expect(Date.now() - started).toBeLessThan(fast.ttlMs);
    if (!first.acquired) return;
    expect(first.lease.held()).toBe(true);

    await first.lease.release();
    expect(first.lease.held()).toBe(false);
    const third = await claimProcessLease(store.db, 'one', fast);
    expect(third.acquired).toBe(true);
    if (third.acquired) await third.lease.release();
  });

  it('takes over a lease whose holder died once it lapses', async () => {
    // A holder that never renews: a process killed without releasing.
    const expiresAt = Date.now() + 600;
    await store.db
      .insertInto('process_leases')
      .values({
        name: 'dead',
        holder: 'gone:1:x',
        expires_at: new Date(expiresAt).toISOString(),
        renewed_at: new Date().toISOString(),
      })
      .execute();
    const claim = await claimProcessLease(store.db, 'dead', fast);
    expect(claim.acquired).toBe(true);
    // Taken only once lapsed, not before.
    expect(Date.now()).toBeGreaterThan(expiresAt);
    if (claim.acquired) await claim.lease.release();
  });

  it('reports a lost lease as the limits status, for health to drain the node', async () => {
    const claim = await claimProcessLease(store.db, 'stolen', fast);
    if (!claim.acquired) throw new Error('lease not acquired');
    const limits = await createLimits({ namespace: 'test', db: store.db, lease: claim.lease });
    expect(await limits.status()).toEqual({ backend: 'memory', status: 'ok', latencyMs: null });
    // Another process took it while this one stalled past the time to live.
    await store.db
      .updateTable('process_leases')
      .set({ holder: 'other:2:y', expires_at: new Date(Date.now() + 60_000).toISOString() })
      .where('name', '=', 'stolen')
      .execute();
    expect(await until(() => !claim.lease.held(), 5000)).toBe(true);
    expect((await limits.status()).status).toBe('lease_lost');
    await limits.close();
    // Closing gives up only a lease this process holds: the other holder keeps its own.
    const row = await store.db
      .selectFrom('process_leases')
      .select('holder')
      .where('name', '=', 'stolen')
      .executeTakeFirst();
    expect(row?.holder).toBe('other:2:y');
  });
});

/** `npm start` as a child process that is expected to exit; its exit code and stderr. */
function runMainToExit(
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts'],
      { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'warn' }, timeout: timeoutMs },
      (error, _stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stderr, ms: Date.now() - started });
      },
    );
  });
}

describe('two server processes on one store without Redis', () => {
  const place = serverStore('lease');
  const running: ServerProcess[] = [];
  let env: Record<string, string> = {};
  let key = '';

  beforeAll(async () => {
    // The schema, the area tree and a key exist before any server starts, as in a deployment.
    key = await prepareServerStore(place, 'lease');
    env = {
      ...place.env,
      // Explicitly none, even in a run that has Redis (the PostgreSQL pass).
      REDIS_URL: '',
    };
    await start();
  });

  afterAll(async () => {
    await Promise.all(running.map((s) => s.stop()));
    rmSync(place.dataDir, { recursive: true, force: true });
  });

  async function start(): Promise<ServerProcess> {
    const server = await startServerProcess({ port: await freePort(), env });
    running.push(server);
    return server;
  }

  it('refuses a second server with one line saying to set REDIS_URL; the first keeps serving', async () => {
    const first = running[0]!;
    const second = await runMainToExit({ ...env, PORT: String(await freePort()) }, 50_000);
    expect(second.code).toBe(1);
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^Invalid configuration: REDIS_URL must be set .*another one \(.+\) already serves it/,
    );

    const response = await fetch(`${first.url}/v1/search/rentals?perPage=1`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    const health = (await (await fetch(`${first.url}/v1/health`)).json()) as { limits: unknown };
    expect(health.limits).toEqual({ backend: 'memory', status: 'ok', latencyMs: null });
  });

  it('lets the next server start at once after a clean stop, continuing the quota count', async () => {
    const before = running.pop()!;
    const used = Number(
      (
        await fetch(`${before.url}/v1/search/rentals?perPage=1`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).headers.get('x-quota-used'),
    );
    await before.stop();
    // No wait for the lease to lapse: a clean stop gives it up.
    const store = await openServerStore(place);
    try {
      const lease = await store.db
        .selectFrom('process_leases')
        .selectAll()
        .where('name', '=', EMBEDDED_LIMITS_LEASE)
        .executeTakeFirst();
      expect(lease).toBeUndefined();
    } finally {
      await store.close();
    }
    const next = await start();
    const response = await fetch(`${next.url}/v1/search/rentals?perPage=1`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    // The stopped server flushed its counts before giving the lease up.
    expect(Number(response.headers.get('x-quota-used'))).toBe(used + 1);
  });

  it('takes over from a server killed without releasing, once its lease lapses', async () => {
    const killed = running.pop()!;
    killed.child.kill('SIGKILL');
    await until(() => killed.child.exitCode !== null || killed.child.signalCode !== null, 5000);
    const store = await openServerStore(place);
    const lease = () =>
      store.db
        .selectFrom('process_leases')
        .select(['holder', 'expires_at'])
        .where('name', '=', EMBEDDED_LIMITS_LEASE)
        .executeTakeFirstOrThrow();
    try {
      // The killed server left its lease behind, still live for up to its time to live (15 s).
      const left = await lease();
      expect(left.holder).toContain(`:${killed.child.pid}:`);
      expect(Date.parse(left.expires_at)).toBeGreaterThan(Date.now());
      // Brought forward: the lease lapses in 3 s rather than in up to 15 (about as long as the
      // next server takes to reach its claim, so it may watch the lease lapse or find it lapsed;
      // claimProcessLease's watching is the subject of the test above). Nothing renews it: its
      // holder is dead.
      const lapsesAt = Date.now() + 3000;
      await store.db
        .updateTable('process_leases')
        .set({ expires_at: new Date(lapsesAt).toISOString() })
        .where('name', '=', EMBEDDED_LIMITS_LEASE)
        .where('holder', '=', left.holder)
        .execute();
      const next = await start();
      expect(Date.now()).toBeGreaterThan(lapsesAt);
      expect((await fetch(`${next.url}/v1/health/ready`)).status).toBe(200);
      expect((await lease()).holder).toContain(`:${next.child.pid}:`);
    } finally {
      await store.close();
    }
  });
});
