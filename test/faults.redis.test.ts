import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLimits } from '../src/platform/limits/limits.ts';
import {
  freePort,
  prepareServerStore,
  redisAnswers,
  type ServerProcess,
  serverStore,
  startServerProcess,
} from './support/server-process.ts';
import { createTestStore } from './support/store.ts';

/**
 * The service on its own throwaway Redis (never the machine's 6379), which the
 * test stalls, kills and restarts: metered routes fail closed with 503 and
 * Retry-After, promptly, while health reports the outage and readiness drains
 * the node; the process stays up and serves again by itself once Redis returns.
 */

const SEARCH = '/v1/search/rentals?perPage=1';

/** A disposable redis-server: no persistence, loopback only, its own temp dir. */
class ThrowawayRedis {
  private child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'stoop-redis-'));

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    if (!(await poll(() => redisAnswers(this.url, 200), 10_000))) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not answer on port ${this.port}`);
    }
  }

  /** Sends a signal: SIGSTOP stalls it (connections stay open, nothing answers), SIGCONT resumes it. */
  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  /** Kills it outright (no shutdown, connections reset) and waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  }

  async dispose(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Polls `condition` every 50 ms until it holds or `timeoutMs` passes; whether it held. */
async function poll(condition: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

interface HealthJson {
  status: string;
  database: { status: string };
  limits: { backend: string; status: string; latencyMs: number | null };
}

interface ErrorJson {
  error: { code: string; retryAfter?: number; details?: { checks?: Record<string, string> } };
}

describe('Redis outage (throwaway redis-server)', () => {
  const place = serverStore('fault-redis');
  let redis: ThrowawayRedis;
  let server: ServerProcess;
  let key = '';

  const call = (path: string, withKey = true) =>
    fetch(`${server.url}${path}`, withKey ? { headers: { authorization: `Bearer ${key}` } } : {});
  const health = async () => (await (await call('/v1/health', false)).json()) as HealthJson;

  beforeAll(async () => {
    redis = new ThrowawayRedis(await freePort());
    await redis.start();
    key = await prepareServerStore(place, 'redis-fault');
    server = await startServerProcess({
      port: await freePort(),
      env: {
        ...place.env,
        REDIS_URL: redis.url,
        REDIS_PREFIX: 'stoop-fault',
        RATE_LIMIT_STARTER: '100000',
      },
    });
  });

  afterAll(async () => {
    await server?.stop();
    await redis?.dispose();
    rmSync(place.dataDir, { recursive: true, force: true });
  });

  it('serves metered routes and reports Redis as ok', async () => {
    expect((await call(SEARCH)).status).toBe(200);
    expect(await health()).toMatchObject({
      status: 'ok',
      limits: { backend: 'redis', status: 'ok', latencyMs: expect.any(Number) },
    });
    expect((await call('/v1/health/ready', false)).status).toBe(200);
  });

  it('fails closed within the command timeout while Redis is stalled, and serves again when it resumes', async () => {
    redis.signal('SIGSTOP');
    try {
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 20 }, () => call(SEARCH)));
      // Each command gives up after 1 s: nothing waits on a Redis that does not answer.
      expect(Date.now() - started).toBeLessThan(5000);
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.headers.get('retry-after')).toBe('1');
        expect(((await answer.json()) as ErrorJson).error.code).toBe('SERVICE_UNAVAILABLE');
      }
      expect((await health()).limits.status).toBe('unreachable');
      expect((await call('/v1/health/ready', false)).status).toBe(503);
    } finally {
      redis.signal('SIGCONT');
    }
    expect(await poll(async () => (await call(SEARCH)).status === 200, 10_000)).toBe(true);
  });

  it('answers 503 with Retry-After at once while Redis is down; health degrades, readiness drains, the process stays up', async () => {
    await redis.kill();
    // The client notices the reset connection at once; wait (bounded) until health says so.
    expect(await poll(async () => (await health()).limits.status === 'unreachable', 5000)).toBe(true);

    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => call(i % 10 === 0 ? '/v1/usage' : SEARCH)),
    );
    // Offline, commands fail immediately: no queue, no waiting for a reconnect.
    expect(Date.now() - started).toBeLessThan(5000);
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('1');
      const body = (await answer.json()) as ErrorJson;
      expect(body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryAfter: 1 });
    }

    expect(await health()).toMatchObject({
      status: 'degraded',
      database: { status: 'ok' },
      limits: { backend: 'redis', status: 'unreachable', latencyMs: null },
    });
    const ready = await call('/v1/health/ready', false);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as ErrorJson).error.details?.checks).toEqual({
      database: 'ok',
      limits: 'unreachable',
    });
    expect((await call('/v1/health/live', false)).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  });

  it('serves again by itself once Redis is back on the same port', async () => {
    await redis.start();
    expect(await poll(async () => (await call(SEARCH)).status === 200, 15_000)).toBe(true);
    expect(await health()).toMatchObject({ status: 'ok', limits: { status: 'ok' } });
    expect((await call('/v1/health/ready', false)).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  });
});

describe('Redis absent at start', () => {
  it('starts after a bounded wait, fails closed, and meters once Redis appears', async () => {
    const store = await createTestStore();
    const redis = new ThrowawayRedis(await freePort());
    try {
      const started = Date.now();
      const limits = await createLimits({
        redisUrl: redis.url,
        namespace: 'stoop-fault-start',
        db: store.db,
      });
      try {
        // Boot waits a few seconds for the first connection, not for ever.
        expect(Date.now() - started).toBeLessThan(8000);
        expect(await limits.status()).toEqual({ backend: 'redis', status: 'unreachable', latencyMs: null });
        await expect(limits.rate.consume('ip:192.0.2.1', 10)).rejects.toThrow();
        await expect(limits.quota.increment('ip:192.0.2.1', '2026-11', 100)).rejects.toThrow();

        await redis.start();
        expect(await poll(async () => (await limits.status()).status === 'ok', 10_000)).toBe(true);
        expect(await limits.rate.consume('ip:192.0.2.1', 10)).toMatchObject({ allowed: true, remaining: 9 });
        expect(await limits.quota.increment('ip:192.0.2.1', '2026-11', 100)).toEqual({
          allowed: true,
          used: 1,
        });
      } finally {
        await limits.close();
      }
    } finally {
      await redis.dispose();
      await store.close();
    }
  });
});
