import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { serviceNodeFlags } from '../src/runtime-flags.ts';
import { BENCH_SERVICE_ENV } from './bench-key.ts';
import type { BenchConfig } from './config.ts';
import { REPO_ROOT } from './config.ts';
import { fetchHealth, waitForReady } from './health.ts';

export interface RunningService {
  readonly url: string;
  readonly child: ChildProcess;
  /** `GET /v1/health` once ready, kept in the results for context (version, dialect, background work). */
  readonly health: unknown;
}

export interface StartServiceOptions {
  /** First start loads the demo market (~60 s at full scale); default: the config's `readyTimeoutS`. */
  readonly readyTimeoutMs?: number;
  readonly log?: (line: string) => void;
}

/** Asks the OS for a free loopback port; the tiny race until the child binds it is acceptable for a bench. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('could not allocate a free port');
  return address.port;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Starts Stoop exactly as `npm start` would (own process, own event loop), so
 * the figures include real HTTP parsing, logging config and the configured
 * store, and resolves once `GET /v1/health/ready` answers 200 (schema, demo
 * market, search index and market caches prepared), printing what is still
 * missing meanwhile. Background work may still run: see `waitForSettled`.
 */
export async function startService(
  config: BenchConfig,
  options: StartServiceOptions = {},
): Promise<RunningService> {
  const readyTimeoutMs = options.readyTimeoutMs ?? config.readyTimeoutS * 1000;
  const log = options.log ?? (() => {});
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DATA_DIR: config.dataDir,
    ...BENCH_SERVICE_ENV,
  };
  if (config.databaseUrl !== undefined) env.DATABASE_URL = config.databaseUrl;
  // PUBLIC_URL from the caller's shell would point pagination links elsewhere; the bench owns the address.
  delete env.PUBLIC_URL;

  // The flags `npm start` gives the service (src/start.ts).
  const child = spawn(process.execPath, [...serviceNodeFlags(), '--import', 'tsx', 'src/main.ts'], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Kept so a failed start can say why without the user rerunning the service by hand.
  let tail = '';
  const capture = (chunk: Buffer) => {
    process.stderr.write(chunk);
    tail = (tail + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', capture);
  child.stderr?.on('data', capture);
  const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
  spawnError.catch(() => {});

  const service: RunningService = { url, child, health: null };
  log(`Starting Stoop on ${url} (DATA_DIR=${config.dataDir}); a first start loads the demo market…`);
  try {
    const elapsed = await Promise.race([
      waitForReady(url, {
        timeoutMs: readyTimeoutMs,
        log,
        check: () => {
          if (exited(child))
            throw new Error(
              `Stoop exited before becoming ready (code ${child.exitCode ?? child.signalCode}). Last output:\n${tail}`,
            );
        },
      }),
      spawnError,
    ]);
    log(`Stoop is ready after ${(elapsed / 1000).toFixed(1)} s.`);
    return { ...service, health: await fetchHealth(url) };
  } catch (error) {
    await stopService(service);
    if (error instanceof Error && !error.message.includes('Last output'))
      error.message += `. Last output:\n${tail}`;
    throw error;
  }
}

/** SIGTERM (the service closes its store cleanly), then SIGKILL if it has not exited after `graceMs`. */
export async function stopService(service: RunningService, graceMs = 10_000): Promise<void> {
  const { child } = service;
  if (exited(child)) return;
  const done = once(child, 'exit');
  child.kill('SIGTERM');
  const timedOut = await Promise.race([done.then(() => false), sleep(graceMs).then(() => true)]);
  if (timedOut && !exited(child)) {
    child.kill('SIGKILL');
    await done;
  }
}

/** Last-resort synchronous kill for `process.on('exit')`, where awaiting is impossible. */
export function killServiceNow(service: RunningService): void {
  if (!exited(service.child)) service.child.kill('SIGKILL');
}
