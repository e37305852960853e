import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_SERVICE_ENV } from './bench-key.ts';
import type { BenchConfig } from './config.ts';
import { REPO_ROOT } from './config.ts';

export interface RunningService {
  readonly url: string;
  readonly child: ChildProcess;
  /** Body of the first 200 from /v1/health, kept in the results for context (version, dialect). */
  readonly health: unknown;
}

export interface StartServiceOptions {
  /** First start loads the demo market (~60 s at full scale); allow well beyond that before giving up. */
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
 * the figures include real HTTP parsing, logging config and the configured store.
 */
export async function startService(
  config: BenchConfig,
  options: StartServiceOptions = {},
): Promise<RunningService> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 180_000;
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

  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
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
  const started = Date.now();
  let lastNotice = started;
  log(`Starting Stoop on ${url} (DATA_DIR=${config.dataDir}); the first start loads the demo market…`);
  try {
    while (true) {
      if (exited(child)) {
        throw new Error(
          `Stoop exited before becoming healthy (code ${child.exitCode ?? child.signalCode}). Last output:\n${tail}`,
        );
      }
      const elapsed = Date.now() - started;
      if (elapsed > readyTimeoutMs) {
        throw new Error(
          `Stoop did not answer 200 on GET /v1/health within ${readyTimeoutMs / 1000} s. Last output:\n${tail}`,
        );
      }
      const health = await probeHealth(url);
      if (health.ok) {
        log(`Stoop is healthy after ${(elapsed / 1000).toFixed(1)} s.`);
        return { ...service, health: health.body };
      }
      if (Date.now() - lastNotice >= 10_000) {
        lastNotice = Date.now();
        log(`  still waiting for /v1/health (${Math.round(elapsed / 1000)} s, ${health.detail})…`);
      }
      await Promise.race([sleep(250), spawnError]);
    }
  } catch (error) {
    await stopService(service);
    throw error;
  }
}

async function probeHealth(
  url: string,
): Promise<{ ok: true; body: unknown } | { ok: false; detail: string }> {
  try {
    const res = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(2000) });
    const text = await res.text();
    if (res.status !== 200) return { ok: false, detail: `HTTP ${res.status}` };
    try {
      return { ok: true, body: JSON.parse(text) as unknown };
    } catch {
      return { ok: true, body: text };
    }
  } catch (error) {
    // Connection refused is the normal state while the demo market loads.
    return {
      ok: false,
      detail: (error as Error).cause instanceof Error ? 'not listening yet' : String(error),
    };
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
