/**
 * `npm start` (src/start.ts) runs the service in a Node process started with
 * the flags it needs (src/runtime-flags.ts), passes signals on, and exits as
 * the service did.
 */
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { serviceNodeFlags } from '../src/runtime-flags.ts';
import { freePort, isolatedLimitsEnv, serverStore, startServerProcess } from './support/server-process.ts';

const place = serverStore('launcher');

afterAll(() => {
  rmSync(place.dataDir, { recursive: true, force: true });
});

describe('serviceNodeFlags', () => {
  it('leaves the request thread a core of its own: one V8 helper per further core, at least one, at most four', () => {
    expect([1, 2, 3, 4, 5, 16].map((cores) => serviceNodeFlags(cores, undefined))).toEqual([
      ['--v8-pool-size=1'],
      ['--v8-pool-size=1'],
      ['--v8-pool-size=2'],
      ['--v8-pool-size=3'],
      ['--v8-pool-size=4'],
      ['--v8-pool-size=4'],
    ]);
  });

  it('leaves a pool size the operator set in NODE_OPTIONS alone', () => {
    expect(serviceNodeFlags(2, '--max-old-space-size=2048 --v8-pool-size=3')).toEqual([]);
    expect(serviceNodeFlags(2, '--max-old-space-size=2048')).toEqual(['--v8-pool-size=1']);
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
    // main.ts handles signals once booted (before, SIGTERM ends it as the default action does).
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
});
