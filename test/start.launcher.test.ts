/**
 * `npm start` (src/start.ts) and `stoop serve` run the service in a Node
 * process started with the flags it needs (src/runtime-flags.ts), pass signals
 * on, and exit as the service did; the service stops gracefully on SIGTERM
 * whether it serves or is still starting.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isDemoLoadInterrupted } from '../src/demo/market/load.ts';
import { serviceNodeFlags } from '../src/runtime-flags.ts';
import {
  freePort,
  healthStatus,
  isolatedLimitsEnv,
  openServerStore,
  serverStore,
  startServerProcess,
} from './support/server-process.ts';

const place = serverStore('launcher');
const loading = serverStore('launcher-loading');

afterAll(() => {
  rmSync(place.dataDir, { recursive: true, force: true });
  rmSync(loading.dataDir, { recursive: true, force: true });
});

/** Processes a test started, killed with their children if the test fails before ending them. */
const started: ChildProcess[] = [];

afterEach(() => {
  for (const child of started.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    // The launchers pass SIGTERM on; SIGKILL would leave their children behind.
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  }
});

/** `node <args>` in the repository with `env` added, its stderr kept. */
function spawnNode(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, args, {
    cwd: new URL('..', import.meta.url),
    env: { ...process.env, ...env, HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return { child, stderr: () => stderr };
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function exitOf(child: ChildProcess): Promise<[number | null, NodeJS.Signals | null]> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
}

describe('serviceNodeFlags', () => {
  it('leaves the request thread a core of its own: one V8 helper per further core, at least one, at most four', () => {
    expect([1, 2, 3, 4, 5, 16].map((cores) => serviceNodeFlags(cores, undefined)[0])).toEqual([
      '--v8-pool-size=1',
      '--v8-pool-size=1',
      '--v8-pool-size=2',
      '--v8-pool-size=3',
      '--v8-pool-size=4',
      '--v8-pool-size=4',
    ]);
  });

  it('keeps request-lived objects out of the old generation (no allocation-site pretenuring)', () => {
    for (const options of [undefined, '--v8-pool-size=3']) {
      expect(serviceNodeFlags(2, options)).toContain('--no-allocation-site-pretenuring');
    }
  });

  it('leaves a pool size the operator set in NODE_OPTIONS alone', () => {
    expect(serviceNodeFlags(2, '--max-old-space-size=2048 --v8-pool-size=3')).toEqual([
      '--no-allocation-site-pretenuring',
    ]);
    expect(serviceNodeFlags(2, '--max-old-space-size=2048')).toEqual([
      '--v8-pool-size=1',
      '--no-allocation-site-pretenuring',
    ]);
  });

  it('gives flags this Node accepts', () => {
    // A flag Node does not know stops `npm start` at once: run them.
    const run = spawnSync(process.execPath, [...serviceNodeFlags(2, undefined), '-e', 'process.exit(0)'], {
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});

/** The command line of each child process of `pid` (Linux /proc). */
function childCommandLines(pid: number): string[][] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  return children.map((child) => readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').filter(Boolean));
}

describe.runIf(process.platform === 'linux')('npm start', () => {
  it('serves from a process started with the service flags, and ends it on SIGTERM with exit code 0', async () => {
    const server = await startServerProcess({
      port: await freePort(),
      env: { ...place.env, ...isolatedLimitsEnv() },
      entry: 'src/start.ts',
      timeoutMs: 60_000,
    });
    const launcher = server.child;
    // Served: the SIGTERM below tests the graceful close (a start stopped early is tested further down).
    while (!server.stderr().includes('Stoop is serving')) await new Promise((r) => setTimeout(r, 50));
    const [service, ...others] = childCommandLines(launcher.pid!);
    expect(others).toEqual([]);
    expect(service).toEqual(
      expect.arrayContaining([...serviceNodeFlags(), expect.stringMatching(/src\/main\.ts$/)]),
    );
    const health = await fetch(`${server.url}/v1/health`);
    expect(health.status).toBe(200);
    await health.arrayBuffer();

    const exit = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      launcher.once('exit', (code, signal) => resolve([code, signal])),
    );
    launcher.kill('SIGTERM');
    expect(await exit).toEqual([0, null]);
    // The service shut down with it: its port no longer answers.
    await expect(fetch(`${server.url}/v1/health`)).rejects.toThrow();
  }, 90_000);

  it('`stoop serve` runs the same service process with the same flags, and a SIGTERM to `stoop` ends it with exit code 0', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const stoop = spawnNode(['bin/stoop.js', 'serve', '--port', String(port)], {
      ...place.env,
      ...isolatedLimitsEnv(),
    });
    const exit = exitOf(stoop.child);
    await until(() => stoop.stderr().includes('Stoop is serving'), 60_000, `"serving" (${stoop.stderr()})`);
    // bin/stoop.js → the CLI → the service, started with the service flags.
    const [cli, ...otherClis] = childCommandLines(stoop.child.pid!);
    expect(otherClis).toEqual([]);
    expect(cli).toEqual(expect.arrayContaining([expect.stringMatching(/src\/cli\.ts$/), 'serve']));
    const cliPid = Number(
      readFileSync(`/proc/${stoop.child.pid}/task/${stoop.child.pid}/children`, 'utf8').trim(),
    );
    const [service] = childCommandLines(cliPid);
    expect(service).toEqual(
      expect.arrayContaining([...serviceNodeFlags(), expect.stringMatching(/src\/main\.ts$/)]),
    );
    expect(await healthStatus(url)).toBe(200);

    stoop.child.kill('SIGTERM');
    expect(await exit).toEqual([0, null]);
    expect(await healthStatus(url)).toBeNull();
  }, 90_000);

  it('a SIGTERM while the demo market loads stops the start and exits 0, leaving the load marked for the next start', async () => {
    const env = {
      ...loading.env,
      ...isolatedLimitsEnv(),
      DEMO: 'true',
      DEMO_SCALE: '0.1',
      DEMO_UPSTREAM: 'false',
    };
    const port = await freePort();
    const first = spawnNode(['--import', 'tsx', 'src/start.ts'], { ...env, PORT: String(port) });
    const firstExit = exitOf(first.child);
    await until(() => first.stderr().includes('Loading the synthetic demo market'), 60_000, 'the demo load');
    const signalled = performance.now();
    first.child.kill('SIGTERM');
    expect(await firstExit).toEqual([0, null]);
    expect(first.stderr()).toContain('received SIGTERM while starting');
    expect(first.stderr()).not.toContain('Stoop is serving');
    // One loader transaction at most, not the rest of the load.
    expect(performance.now() - signalled).toBeLessThan(15_000);
    expect(await healthStatus(`http://127.0.0.1:${port}`)).toBeNull();

    // Left for the next start to load again (the reload itself: boot.stop.test.ts).
    const store = await openServerStore(loading);
    try {
      expect(await isDemoLoadInterrupted(store)).toBe(true);
    } finally {
      await store.close();
    }
  }, 90_000);
});
