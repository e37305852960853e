/**
 * The demo's in-process market simulator runs on its own worker thread
 * (issue 12 part 1): a real server as `npm start` runs it (the demo market,
 * the simulator started by the server, its jobs on their worker) over a store
 * another thread can open (a SQLite file, or PostgreSQL).
 *
 * - A full refresh cycle (every listing replicated again from the simulator)
 *   does not hold this process's event loop, the server's request thread:
 *   before the simulator had its thread it served every page here (see
 *   MAX_TOTAL_ACTIVE_MS for what that cost).
 * - The simulator reports a thread id that is not this thread's.
 * - A simulator thread that dies is restarted on the same address; upstream
 *   calls fail as `unavailable` meanwhile and the process keeps serving.
 */
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { threadId } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import { OriginThread } from '../src/demo/simulator/origin-thread.ts';
import {
  LISTINGS_HIGH_WATER_MARK,
  writeHighWaterMark,
} from '../src/jobs/refresh/pipeline-state.repository.ts';
import { systemClock } from '../src/platform/clock.ts';
import { UpstreamError } from '../src/upstream/source.ts';
import { type LoopActivity, watchEventLoop } from './support/event-loop-activity.ts';
import { openServerStore, type ServerStore, serverStore } from './support/server-process.ts';

const SCALE = '0.02';
/**
 * This thread's event-loop activity during a full cycle at this scale, ms:
 * serving the simulator's pages here cost 890–1,220 ms of it in total (with
 * the market before its steady-state history, ~15% smaller), with runs of
 * 100–410 ms; on its own thread 30–150 ms in total on SQLite and up to ~380 ms
 * on PostgreSQL, whose longer cycle wakes this thread more often for the
 * jobs' progress messages (on a machine 2.4× slower, 267 ms of CPU time in
 * total and 7.7 ms at most at once). The bounds are on the thread's CPU time
 * (support/event-loop-activity.ts): preemption on a loaded machine stretched
 * the wall time of the same cycle to 573 ms.
 */
const MAX_TOTAL_ACTIVE_MS = 550;
const MAX_ACTIVE_MS = 120;

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the in-process market simulator on its own thread', () => {
  let place: ServerStore;
  let server: RunningServer;

  const simulator = (): OriginThread => {
    const thread = server.upstream?.simulator;
    if (!thread) throw new Error('the server runs no in-process simulator');
    return thread;
  };

  beforeAll(async () => {
    place = serverStore('simulator-thread');
    const config = loadConfig(
      {
        ...place.env,
        DEMO: 'true',
        DEMO_SCALE: SCALE,
        SIM_SPEED: '600',
        SIM_LATENCY: 'false',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'silent',
      },
      'test',
    );
    server = await startServer(config);
    await server.upstream?.origin;
    // fetch loads its HTTP client on first use: not part of what is measured.
    await (await fetch(`${server.url}/v1/health/live`)).arrayBuffer();
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    rmSync(place.dataDir, { recursive: true, force: true });
  });

  it('serves a full refresh cycle without holding the request thread', async () => {
    let cycle: LoopActivity;
    // Replication resumes from long before the market: every listing comes again, page by page.
    const store = await openServerStore(place);
    try {
      await writeHighWaterMark(store.db, LISTINGS_HIGH_WATER_MARK, '2000-01-01T00:00:00.000Z', new Date());
    } finally {
      await store.close();
    }
    const watch = watchEventLoop();
    try {
      await server.jobs.trigger('refresh:search');
    } finally {
      cycle = watch.stop();
    }
    const search = server.jobs.status().find((j) => j.name === 'refresh:search');
    expect(search?.lastError).toBeNull();
    expect(search?.lastRunAt).not.toBeNull();
    process.stderr.write(
      `simulator thread: full refresh cycle, request thread's longest hold ${cycle.maxHeldMs.toFixed(1)} ms on CPU (${cycle.maxActiveWallMs.toFixed(1)} ms wall), total ${cycle.totalHeldMs.toFixed(0)} ms on CPU (${cycle.totalActiveWallMs.toFixed(0)} ms wall), longest delay ${cycle.maxDelayMs.toFixed(1)} ms\n`,
    );
    expect(cycle.totalHeldMs).toBeLessThan(MAX_TOTAL_ACTIVE_MS);
    expect(cycle.maxHeldMs).toBeLessThan(MAX_ACTIVE_MS);
  }, 240_000);

  it('reports the thread it serves from, which is not the request thread', async () => {
    const origin = await server.upstream?.origin;
    expect(origin?.threadId).toBeGreaterThan(0);
    expect(origin?.threadId).not.toBe(threadId);
    expect(simulator().threadId).toBe(origin?.threadId);
    expect(simulator().serving).toBe(true);
  });

  it('restarts a simulator thread that dies, on the same address, without failing the process', async () => {
    const thread = simulator();
    const first = await thread.origin;
    const dead = thread.thread;
    if (!dead) throw new Error('no simulator thread');
    const before = thread.restarts;
    await dead.terminate();
    expect(thread.serving).toBe(false);
    // Meanwhile upstream calls fail as unavailable, and the service answers.
    const failure = await server.upstream?.source.searchListings({ pageSize: 1 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect((failure as UpstreamError).kind).toBe('unavailable');
    expect((await fetch(`${server.url}/v1/health/live`)).status).toBe(200);

    await until(() => thread.restarts > before && thread.serving, 60_000);
    expect(thread.threadId).not.toBe(first.threadId);
    expect(thread.threadId).not.toBe(threadId);
    // The same address answers again: the service's source and its jobs worker reach it.
    const page = await server.upstream?.source.searchListings({ pageSize: 5 });
    expect(page?.listings.length).toBeGreaterThan(0);
    const response = await fetch(`${first.url}/Property?$top=1`);
    expect(response.status).toBe(200);
    await server.jobs.trigger('refresh:search');
    expect(server.jobs.status().find((j) => j.name === 'refresh:search')?.lastError).toBeNull();
  }, 120_000);
});

describe('the simulator thread alone', () => {
  const options = {
    seed: 7,
    scale: 0.005,
    start: new Date('2026-01-05T12:00:00Z'),
    clock: systemClock,
    speed: 1,
    host: '127.0.0.1',
    latency: false,
    faultRate: 0,
    log: { info: () => {}, warn: () => {}, error: () => {} },
  };

  it('rejects `origin` when it cannot start, and does not restart', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const thread = new OriginThread({ ...options, port });
      await expect(thread.origin).rejects.toThrow(/EADDRINUSE/);
      await until(() => thread.thread === null, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(thread.restarts).toBe(0);
      expect(thread.serving).toBe(false);
      await thread.close();
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 30_000);

  it('closes: the thread ends and its port no longer answers', async () => {
    const thread = new OriginThread({ ...options, port: 0 });
    const origin = await thread.origin;
    expect((await fetch(`${origin.url}/Property?$top=1`)).status).toBe(200);
    const worker = thread.thread;
    const exited = new Promise<number>((resolve) => worker?.once('exit', resolve));
    await thread.close();
    await exited;
    await expect(fetch(`${origin.url}/Property?$top=1`)).rejects.toThrow();
  }, 30_000);
});
