import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BENCH_ACCOUNT } from '../bench/bench-key.ts';
import { loadConfig } from '../src/config.ts';
import { LocalSubscriptionProvider } from '../src/modules/keys/subscriptions.ts';
import { systemClock } from '../src/platform/clock.ts';
import { openConfiguredStore } from '../src/prepared-store.ts';
import { TEST_DIALECT } from './support/store.ts';

const ROOT = resolve(import.meta.dirname, '..');
const dataDir = mkdtempSync(join(tmpdir(), 'stoop-bench-run-'));
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * `npm run bench` in its own process over a tiny demo market of its own; the
 * bench's child service uses SQLite whatever the suite's dialect, so this runs
 * in the SQLite pass only.
 */
describe.skipIf(TEST_DIALECT === 'postgres')('npm run bench, interrupted', () => {
  it('revokes the keys it issued when stopped with Ctrl-C mid-run', { timeout: 180_000 }, async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      BENCH_DATA_DIR: dataDir,
      DEMO_SCALE: '0.005',
      BENCH_DURATION: '30',
      // Background work need not finish: the run only has to reach its scenarios.
      BENCH_SETTLE_TIMEOUT: '1',
    };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const exited = once(child, 'exit');
    // Interrupted once it measures: its INTERNAL and PRO keys are issued before the first scenario.
    await new Promise<void>((resolveStarted, reject) => {
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        if (stderr.includes('▶ baseline')) resolveStarted();
      });
      void exited.then(() => reject(new Error(`the bench exited before measuring:\n${stderr.slice(-2000)}`)));
    });
    child.kill('SIGINT');
    const [code] = await exited;
    expect(code).toBe(130);
    expect(stderr).toMatch(/Revoked the 2 API key\(s\) the bench issued/);

    const store = await openConfiguredStore(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
    try {
      const keys = await new LocalSubscriptionProvider(store.db, systemClock, 'STOOP').list(BENCH_ACCOUNT);
      expect(keys.map((k) => k.tier).sort()).toEqual(['INTERNAL', 'PRO']);
      expect(keys.every((k) => k.status === 'revoked')).toBe(true);
    } finally {
      await store.close();
    }
  });
});
