import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalSubscriptionProvider } from '../../src/modules/keys/subscriptions.ts';
import { systemClock } from '../../src/platform/clock.ts';
import { openStore, type Store } from '../../src/platform/db/database.ts';
import { migrateToLatest } from '../../src/platform/db/migrate.ts';
import { syncAreas } from '../../src/reference/areas-store.ts';
import { TEST_DIALECT, testSchemaName } from './store.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Redis for tests that need one: REDIS_URL, else the CI default. */
export const TEST_REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/**
 * Whether a Redis server answers PING at `url` within `timeoutMs`. A plain
 * socket, so an absent Redis costs one refused connection, not a client's
 * reconnect loop.
 */
export function redisAnswers(url: string = TEST_REDIS_URL, timeoutMs = 1000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    socket.connect(Number(port || 6379), hostname.replace(/^\[|\]$/g, ''), () => {
      socket.write('PING\r\n');
    });
  });
}

/**
 * Environment that gives a test app (or a group of server processes) its own
 * limits: Redis when the run has REDIS_URL, and a key namespace no other app
 * shares. The namespace comes from DATABASE_SCHEMA (`stoop:<schema>`); the test
 * store ignores it, and on SQLite it has no other effect.
 */
export function isolatedLimitsEnv(): Record<string, string> {
  const schema = testSchemaName();
  const env: Record<string, string> = { DATABASE_SCHEMA: schema, REDIS_PREFIX: `stoop:${schema}` };
  if (process.env.REDIS_URL) env.REDIS_URL = process.env.REDIS_URL;
  return env;
}

/** A loopback port that was free a moment ago (the OS picks it; the listener is closed again). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The status of `GET <url>/v1/health`, or null when nothing accepts the connection. */
export async function healthStatus(url: string): Promise<number | null> {
  try {
    const response = await fetch(`${url}/v1/health`);
    await response.arrayBuffer();
    return response.status;
  } catch {
    return null;
  }
}

/**
 * A store that server processes (and the test) open by URL: on PostgreSQL the
 * run's database with a fresh `t_…` schema (dropped by the global teardown),
 * on SQLite a file in `dataDir`. The schema name is also what Redis
 * namespaces are made from, on either dialect.
 */
export interface ServerStore {
  /** A fresh temp dir, for DATA_DIR (and the SQLite file); the test removes it. */
  dataDir: string;
  databaseUrl: string;
  schema: string;
  /** The environment that points a server process at it (no demo data); add the limits settings. */
  env: Record<string, string>;
}

export function serverStore(prefix: string): ServerStore {
  const dataDir = mkdtempSync(join(tmpdir(), `stoop-${prefix}-`));
  const databaseUrl =
    TEST_DIALECT === 'postgres' ? process.env.DATABASE_URL! : `sqlite:${join(dataDir, 'stoop.sqlite')}`;
  const schema = testSchemaName();
  return {
    dataDir,
    databaseUrl,
    schema,
    env: { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema, DEMO: 'false' },
  };
}

/** Opens `place` from the test process (one connection; the caller closes it). */
export function openServerStore(place: ServerStore): Promise<Store> {
  return openStore({
    dialect: TEST_DIALECT,
    databaseUrl: place.databaseUrl,
    schema: place.schema,
    poolSize: 1,
  });
}

/**
 * Readies `place` as a deployment has it before any server starts: migrated,
 * with the area tree, and a STARTER key for `accountId`, which it returns.
 */
export async function prepareServerStore(place: ServerStore, accountId: string): Promise<string> {
  const store = await openServerStore(place);
  try {
    await migrateToLatest(store);
    await syncAreas(store);
    return (
      await new LocalSubscriptionProvider(store.db, systemClock, 'STOOP').issue({
        accountId,
        tier: 'STARTER',
      })
    ).key;
  } finally {
    await store.close();
  }
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** SIGTERM, then SIGKILL if the process has not exited within a few seconds. */
  stop(): Promise<void>;
  /** The last few kB the process wrote to stderr. */
  stderr(): string;
}

/**
 * Runs the real service (`node --import tsx src/main.ts`) as a child process
 * on a fixed loopback port, and resolves once the application serves (`/v1/health`
 * answers, and other routes no longer answer "starting" 503s). `env` is
 * added to this process's environment; HOST, PORT and LOG_LEVEL are set here.
 */
export async function startServerProcess(options: {
  port: number;
  env: Record<string, string>;
  timeoutMs?: number;
  /** `src/start.ts`: through the `npm start` launcher (the child is then the launcher). Default `src/main.ts`. */
  entry?: 'src/main.ts' | 'src/start.ts';
}): Promise<ServerProcess> {
  const url = `http://127.0.0.1:${options.port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', options.entry ?? 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...options.env,
      HOST: '127.0.0.1',
      PORT: String(options.port),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`Server process exited with code ${child.exitCode} before answering:\n${stderr}`);
    }
    try {
      const health = await fetch(`${url}/v1/health`);
      await health.arrayBuffer();
      // Health answers while the node starts; every other route is 503 until the application serves.
      const serving = health.ok && (await fetch(`${url}/openapi.json`, { method: 'HEAD' })).status !== 503;
      if (serving) return { url, child, stop, stderr: () => stderr };
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`Server process did not answer /v1/health on ${url} in time:\n${stderr}`);
}

/**
 * Deletes every Redis key under `namespace:` (quota counters outlive a test
 * run by 40 days otherwise). Returns how many were removed.
 */
export async function dropRedisNamespace(namespace: string, url: string = TEST_REDIS_URL): Promise<number> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let removed = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${namespace}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) removed += await redis.del(...keys);
    } while (cursor !== '0');
    return removed;
  } finally {
    redis.disconnect();
  }
}
