/**
 * A start that is asked to stop (StartServerOptions.signal: a SIGINT or
 * SIGTERM while `npm start` boots) ends at its next step, closes what it had
 * opened — the port, the embedded-limits lease, the store — and rejects with
 * the abort's reason; an interrupted demo load is loaded again by the next start.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import { isDemoLoadInterrupted } from '../src/demo/market/load.ts';
import { EMBEDDED_LIMITS_LEASE } from '../src/platform/limits/process-lease.ts';
import { healthStatus, isolatedLimitsEnv, openServerStore, serverStore } from './support/server-process.ts';

const place = serverStore('boot-stop');
let server: RunningServer | undefined;

afterAll(async () => {
  await server?.close();
  rmSync(place.dataDir, { recursive: true, force: true });
});

function configWith(env: Record<string, string>) {
  return loadConfig({
    ...isolatedLimitsEnv(),
    // After the limits settings: the store this test opens itself is the one in `place`.
    ...place.env,
    DEMO_UPSTREAM: 'false',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    ...env,
  });
}

describe('a start asked to stop', () => {
  it('ends the demo load between transactions, closes the port, lease and store, and the next start loads again', async () => {
    const config = configWith({ DEMO: 'true', DEMO_SCALE: '0.02' });
    const stop = new AbortController();
    const reason = new Error('stop requested');
    let url = '';
    const started = performance.now();
    const outcome = await startServer(config, {
      signal: stop.signal,
      onStarting: (at) => {
        url = at;
        // The demo load is next: it must notice the abort at its next transaction.
        stop.abort(reason);
      },
    }).then(
      (running) => {
        server = running;
        return running;
      },
      (error: unknown) => error,
    );
    expect(outcome).toBe(reason);
    // A full load of this scale takes seconds; stopping takes one transaction at most.
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(url).not.toBe('');
    expect(await healthStatus(url)).toBeNull();

    // The store was closed by the start (or this open would wait on its lock) and the lease released.
    const store = await openServerStore(place);
    try {
      expect(await isDemoLoadInterrupted(store)).toBe(true);
      const leases = await store.db
        .selectFrom('process_leases')
        .select('name')
        .where('name', '=', EMBEDDED_LIMITS_LEASE)
        .execute();
      expect(leases).toEqual([]);
    } finally {
      await store.close();
    }

    // The next start sees the interrupted load, loads the market again and serves.
    server = await startServer(config);
    const search = await fetch(`${server.url}/v1/search/rentals?perPage=1`);
    expect(search.status).toBe(200);
    const body = (await search.json()) as { meta: { total: number } };
    expect(body.meta.total).toBeGreaterThan(0);
    const store2 = server.store;
    expect(await isDemoLoadInterrupted(store2)).toBe(false);
    await server.close();
    server = undefined;
  }, 120_000);

  it('stops before composing when asked after the store is prepared, and releases what it took', async () => {
    const config = configWith({ DEMO: 'false' });
    const stop = new AbortController();
    const reason = new Error('stop requested');
    let url = '';
    const outcome = await startServer(config, {
      signal: stop.signal,
      onStarting: (at) => {
        url = at;
        stop.abort(reason);
      },
    }).catch((error: unknown) => error);
    expect(outcome).toBe(reason);
    expect(await healthStatus(url)).toBeNull();
    const store = await openServerStore(place);
    try {
      const leases = await store.db.selectFrom('process_leases').select('name').execute();
      expect(leases).toEqual([]);
    } finally {
      await store.close();
    }
  }, 60_000);
});
