/**
 * Background work never stalls requests (issue 12 part 1): a real server over a
 * store another thread can open (a SQLite file, or PostgreSQL), with the demo
 * market, replicating from the market simulator as a RESO feed (`stoop origin`
 * in its own process, as an operator's feed would be), runs the history
 * backfill and a refresh cycle on its jobs worker while this process — the
 * server's — measures how long its event loop is held
 * (`monitorEventLoopDelay`) and how long a liveness ping over real HTTP takes.
 *
 * The longest hold is the loop's own CPU time (support/event-loop-activity.ts:
 * preemption on a busy machine does not count); the delay bound is generous
 * for slow, shared CI machines (scheduling noise alone reaches tens of
 * milliseconds there). The same scenario with the jobs on the
 * request thread (before the worker) measured, on a loaded 2-core machine: a
 * longest activity of 194 ms and a p99 delay of 101 ms during the backfill,
 * 489 ms and 365 ms during the refresh cycle; with the worker, 13–54 ms and
 * 8–25 ms, then 24–92 ms and 9–24 ms.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import { baseJobs } from '../src/jobs/deliveries/with-deliveries.ts';
import {
  LISTINGS_HIGH_WATER_MARK,
  writeHighWaterMark,
} from '../src/jobs/refresh/pipeline-state.repository.ts';
import { WorkerJobs } from '../src/jobs/worker/worker-jobs.ts';
import type { PeriodicJobStatus } from '../src/platform/jobs/periodic-job.ts';
import { type LoopActivity, watchEventLoop } from './support/event-loop-activity.ts';
import { openServerStore, type ServerStore, serverStore } from './support/server-process.ts';

const SCALE = '0.02';

/** `stoop origin` in a child process; resolves its URL once it serves. */
function startOriginProcess(): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(
    join('node_modules', '.bin', 'tsx'),
    ['src/cli.ts', 'origin', '--port', '0', '--scale', SCALE, '--speed', '600', '--no-latency'],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LOG_LEVEL: 'silent' } },
  );
  const url = new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const match = /serving RESO Web API at (\S+)/.exec(err);
      if (match) resolve(match[1] as string);
    });
    child.on('exit', (code) => reject(new Error(`stoop origin exited (${code}): ${err}`)));
  });
  return { child, url };
}

/** Longest acceptable hold of the event loop by the server's own work, ms of CPU time. */
const MAX_ACTIVE_MS = 120;
/** Bound on the 99th percentile of event-loop delay, ms (scheduling noise included). */
const MAX_P99_DELAY_MS = 50;

interface Measurement extends LoopActivity {
  maxPingMs: number;
  pings: number;
}

/** Runs `work` while watching the event loop and pinging /v1/health/live every 5 ms. */
async function measure(url: string, work: () => Promise<unknown>): Promise<Measurement> {
  const watch = watchEventLoop();
  let done = false;
  let maxPingMs = 0;
  let pings = 0;
  const pinging = (async () => {
    while (!done) {
      const started = performance.now();
      const response = await fetch(`${url}/v1/health/live`);
      await response.arrayBuffer();
      maxPingMs = Math.max(maxPingMs, performance.now() - started);
      pings++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  let activity: LoopActivity;
  try {
    await work();
  } finally {
    done = true;
    await pinging;
    activity = watch.stop();
  }
  return { ...activity, maxPingMs, pings };
}

function job(server: RunningServer, name: string): PeriodicJobStatus | undefined {
  return server.jobs.status().find((j) => j.name === name);
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('background jobs on a serving process', () => {
  let place: ServerStore;
  let server: RunningServer;
  let origin: ChildProcess;

  beforeAll(async () => {
    place = serverStore('event-loop');
    const started = startOriginProcess();
    origin = started.child;
    const config = loadConfig(
      {
        ...place.env,
        DEMO: 'true',
        DEMO_SCALE: SCALE,
        UPSTREAM_URL: await started.url,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'silent',
      },
      'test',
    );
    server = await startServer(config);
    // fetch loads its HTTP client on first use: not part of what is measured.
    await (await fetch(`${server.url}/v1/health/live`)).arrayBuffer();
  });

  afterAll(async () => {
    await server?.close();
    origin?.kill('SIGTERM');
    rmSync(place.dataDir, { recursive: true, force: true });
  });

  it('runs the history backfill and a refresh cycle without holding the event loop', async () => {
    // The backfill starts with the jobs (none is covered yet) and walks back a month at a time.
    const backfill = await measure(server.url, () =>
      until(() => {
        const progress = job(server, 'market-snapshots')?.progress;
        return typeof progress?.firstDate === 'string' && progress.firstDate < daysAgo(progress, 120);
      }, 120_000),
    );

    // A heavy cycle: replication resumes from long before the market, so every listing comes again.
    const store = await openServerStore(place);
    try {
      await writeHighWaterMark(store.db, LISTINGS_HIGH_WATER_MARK, '2000-01-01T00:00:00.000Z', new Date());
    } finally {
      await store.close();
    }
    const cycle = await measure(server.url, () => server.jobs.trigger('refresh:search'));
    const search = job(server, 'refresh:search');
    expect(search?.lastRunAt).not.toBeNull();
    expect(search?.lastError).toBeNull();

    const line = (m: Measurement) =>
      `longest hold ${m.maxHeldMs.toFixed(1)} ms on CPU (${m.maxActiveWallMs.toFixed(1)} ms wall), max delay ${m.maxDelayMs.toFixed(1)} ms, p99 ${m.p99DelayMs.toFixed(1)} ms, ping max ${m.maxPingMs.toFixed(1)} ms (${m.pings} pings)`;
    process.stderr.write(`event loop: backfill ${line(backfill)}; refresh cycle ${line(cycle)}\n`);
    expect(backfill.pings).toBeGreaterThan(10);
    expect(backfill.maxHeldMs).toBeLessThan(MAX_ACTIVE_MS);
    expect(backfill.p99DelayMs).toBeLessThan(MAX_P99_DELAY_MS);
    expect(cycle.maxHeldMs).toBeLessThan(MAX_ACTIVE_MS);
    expect(cycle.p99DelayMs).toBeLessThan(MAX_P99_DELAY_MS);
  }, 240_000);

  it('restarts a worker that dies, without failing the process, and serves meanwhile', async () => {
    const jobs = baseJobs(server.jobs);
    if (!(jobs instanceof WorkerJobs)) throw new Error('the server runs its jobs in-process');
    const before = jobs.restarts;
    await jobs.thread?.terminate();
    const live = await fetch(`${server.url}/v1/health/live`);
    expect(live.status).toBe(200);
    await until(() => jobs.restarts > before && jobs.thread !== null, 30_000);
    // The restarted worker answers: a triggered run completes.
    await jobs.trigger('scores');
    expect(job(server, 'scores')?.lastRunAt).not.toBeNull();
  }, 60_000);

  it('stops the worker cleanly: status stays readable and nothing runs after stop', async () => {
    await server.jobs.stop();
    expect(server.jobs.status().every((j) => !j.running)).toBe(true);
    // A second stop is a no-op.
    await server.jobs.stop();
  });
});

/** The date `days` before the progress's last date (ISO yyyy-mm-dd). */
function daysAgo(progress: Readonly<Record<string, unknown>>, days: number): string {
  const last = Date.parse(`${String(progress.lastDate)}T00:00:00.000Z`);
  return new Date(last - days * 86_400_000).toISOString().slice(0, 10);
}
