/**
 * Fault suite of the store, against real processes: the real server
 * (`src/main.ts`) and CLI (`src/cli.ts`) as child processes, over a PostgreSQL
 * cluster of the test's own that it stops, restarts and freezes, and over
 * SQLite files on a directory it makes read-only or a disk it fills. The
 * machine's shared PostgreSQL and Redis are never touched.
 *
 * Cases that need what the machine may not allow (PostgreSQL binaries, mounts
 * as root) are skipped with the reason printed; CI runs them all.
 *
 * The first three blocks below share nothing (each has its own cluster,
 * directory, server and store), so they run at the same time: most of the
 * PostgreSQL block is waiting (for the server's refresh schedule, a frozen
 * cluster), which the SQLite blocks' work overlaps. Within a block, tests run
 * in order. The operator-error cases, five processes started one after the
 * other, run after them, on their own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../src/platform/db/errors.ts';
import { ROOT, runStoop } from './support/cli.ts';
import { makeReadOnly, mountTmpfs, readOnlyDirUnavailable, tmpfsUnavailable } from './support/mounts.ts';
import { freePort, type ServerProcess, startServerProcess } from './support/server-process.ts';
import {
  createThrowawayPostgres,
  type ThrowawayPostgres,
  throwawayPostgresUnavailable,
} from './support/throwaway-postgres.ts';

const postgresSkip = throwawayPostgresUnavailable();
const tmpfsSkip = await tmpfsUnavailable();
const readOnlySkip = await readOnlyDirUnavailable();
for (const [what, reason] of [
  ['PostgreSQL outage cases', postgresSkip],
  ['disk-full case', tmpfsSkip],
  ['read-only directory case', readOnlySkip],
] as const) {
  if (reason) console.warn(`faults.database: skipping the ${what}: ${reason}`);
}

/** Limits that never get in the way of a fault test (anonymous callers, no Redis). */
const QUIET_LIMITS = {
  REDIS_URL: '',
  RATE_LIMIT_FREE: '1000000',
  MONTHLY_QUOTA_FREE: '1000000000',
};

/** A read that always runs SQL (non-ACTIVE search is never served from the in-memory index). */
const DATABASE_READ = '/v1/search/rentals?status=OFF_MARKET&perPage=1';

interface Timed {
  status: number;
  ms: number;
  retryAfter: string | null;
  code: string | undefined;
}

async function timedGet(url: string, init: RequestInit = {}): Promise<Timed> {
  const started = performance.now();
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    code = undefined;
  }
  return {
    status: response.status,
    ms: performance.now() - started,
    retryAfter: response.headers.get('retry-after'),
    code,
  };
}

interface Health {
  status: string;
  database: { status: string };
  data: { searchRentals: string | null };
  pipeline: { lastFailure: { at: string } | null };
}

async function health(server: ServerProcess): Promise<Health> {
  return (await (
    await fetch(`${server.url}/v1/health`, { signal: AbortSignal.timeout(10_000) })
  ).json()) as Health;
}

/** Polls `probe` every 200 ms until it returns a value, or fails after `timeoutMs`. */
async function eventually<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ''}`);
}

/** Collects a child's stderr from now on. */
function captureStderr(child: ChildProcess): () => string {
  let text = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return () => text;
}

/** Runs `npm start`'s entry point to its exit (it must fail to start here); kills it after `timeoutMs`. */
function runMainToExit(
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const stderr = captureStderr(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stderr: stderr() });
    });
  });
}

/** The one line an operator error must be: no stack, no second line. */
function expectOneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
  return lines[0]!;
}

function sqliteEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    DATABASE_URL: `sqlite:${join(dataDir, 'stoop.sqlite')}`,
    DATABASE_SCHEMA: '',
    ...QUIET_LIMITS,
    ...extra,
  };
}

/** `stoop keys create --tier internal --account ops` run on `env`'s store, which must succeed; the key. */
async function createInternalKey(env: Record<string, string>): Promise<string> {
  const created = await runStoop({ ...process.env, ...env, LOG_LEVEL: 'silent' }, [
    'keys',
    'create',
    '--tier',
    'internal',
    '--account',
    'ops',
    '--json',
  ]);
  expect(created.code, created.stderr).toBe(0);
  return (JSON.parse(created.stdout) as { key: string }).key;
}

describe.skipIf(postgresSkip !== null)(
  'PostgreSQL stopped, restarted and frozen under a running server',
  { concurrent: true },
  () => {
    /** Statement deadline of the server under test; connecting waits at most as long. */
    const DEADLINE_MS = 1500;
    /** Longest a request may take while the database is away: a connection wait plus one statement, and slack. */
    const ANSWER_BOUND_MS = 2 * DEADLINE_MS + 1500;
    let cluster: ThrowawayPostgres;
    let server: ServerProcess;
    let stderr: () => string;
    let dataDir: string;

    beforeAll(async () => {
      cluster = await createThrowawayPostgres();
      dataDir = mkdtempSync(join(tmpdir(), 'stoop-faults-pg-'));
      server = await startServerProcess({
        port: await freePort(),
        timeoutMs: 90_000,
        env: {
          DATA_DIR: dataDir,
          DATABASE_URL: cluster.url,
          DATABASE_SCHEMA: '',
          DATABASE_QUERY_TIMEOUT_MS: String(DEADLINE_MS),
          ...QUIET_LIMITS,
          DEMO_SCALE: '0.01',
          // The live demo: the simulator, and a clock at one hour per second, so the
          // 4–6 h refresh schedule comes round every few seconds.
          SIM_SPEED: '3600',
          SIM_LATENCY: 'false',
        },
      });
      stderr = captureStderr(server.child);
    }, 120_000);

    afterAll(async () => {
      await server?.stop();
      await cluster?.destroy();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    // In order, on one cluster: stopped and restarted, then frozen and thawed.
    it.sequential('stopped: 503 with Retry-After, the process stays up and health is degraded; restarted: it serves again by itself', async () => {
      expect((await timedGet(`${server.url}${DATABASE_READ}`)).status).toBe(200);
      const before = await health(server);
      expect(before.status).toBe('ok');

      // `pg_ctl stop -m fast` terminates every session with 57P01, idle pooled ones included.
      await cluster.stop();
      for (let i = 0; i < 5; i++) {
        const answer = await timedGet(`${server.url}${DATABASE_READ}`);
        expect(answer).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
        expect(Number(answer.retryAfter)).toBeGreaterThan(0);
        expect(answer.ms).toBeLessThan(ANSWER_BOUND_MS);
      }
      const down = await health(server);
      expect(down.status).toBe('degraded');
      expect(down.database.status).toBe('unreachable');
      // A scheduled refresh runs into the outage, is reported, and the schedule goes on.
      await eventually('a scheduled refresh fails during the outage', 20_000, async () => {
        const failure = (await health(server)).pipeline.lastFailure;
        return failure && failure.at !== before.pipeline.lastFailure?.at ? failure : undefined;
      });
      expect(server.child.exitCode).toBeNull();

      await cluster.start();
      await eventually('reads succeed after the restart', 15_000, async () =>
        (await timedGet(`${server.url}${DATABASE_READ}`)).status === 200 ? true : undefined,
      );
      expect((await health(server)).status).toBe('ok');
      // The next scheduled refresh succeeds: the search data is confirmed again.
      await eventually('a scheduled refresh succeeds after the restart', 30_000, async () => {
        const refreshed = (await health(server)).data.searchRentals;
        return refreshed !== null && refreshed !== before.data.searchRentals ? refreshed : undefined;
      });
      expect(server.child.exitCode).toBeNull();

      const log = stderr();
      expect(log).not.toMatch(/Unhandled 'error' event|BoundPool|\n\s+at /);
      expect(log).toMatch(/The database at postgres:\/\/127\.0\.0\.1:\d+\/postgres is unavailable: .*57P01/);
      expect(log).toMatch(/answers again/);
    }, 90_000);

    it.sequential('frozen: every request answers within the deadline, 503 for what needs the database, never 500; thawed: it serves again', async () => {
      expect((await timedGet(`${server.url}${DATABASE_READ}`)).status).toBe(200);
      cluster.freeze();
      const answers: Timed[] = [];
      try {
        const frozenAt = Date.now();
        // More concurrent requests than the pool has connections, for 8 s.
        while (Date.now() - frozenAt < 8_000) {
          answers.push(
            ...(await Promise.all(
              Array.from({ length: 12 }, () => timedGet(`${server.url}${DATABASE_READ}`)),
            )),
          );
        }
        const degraded = await timedGet(`${server.url}/v1/health`);
        expect(degraded.status).toBe(200);
        expect(degraded.ms).toBeLessThan(ANSWER_BOUND_MS);
        expect((await health(server)).status).toBe('degraded');
      } finally {
        cluster.thaw();
      }
      expect(answers.filter((a) => a.status !== 503)).toEqual([]);
      expect(answers.every((a) => a.code === 'SERVICE_UNAVAILABLE' && a.retryAfter !== null)).toBe(true);
      expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(ANSWER_BOUND_MS);

      await eventually('reads succeed after the thaw', 15_000, async () =>
        (await timedGet(`${server.url}${DATABASE_READ}`)).status === 200 ? true : undefined,
      );
      expect((await health(server)).status).toBe('ok');
      expect(server.child.exitCode).toBeNull();
    }, 60_000);
  },
);

describe.skipIf(tmpfsSkip !== null)('SQLite on a full disk', { concurrent: true }, () => {
  let root: string;
  let dataDir: string;
  let unmount: (() => Promise<void>) | undefined;
  let server: ServerProcess;
  let env: Record<string, string>;
  let internalKey: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'stoop-faults-full-'));
    dataDir = join(root, 'disk');
    mkdirSync(dataDir);
    unmount = await mountTmpfs(dataDir, 64);
    env = sqliteEnv(dataDir, {
      DEMO_SCALE: '0.01',
      DEMO_UPSTREAM: 'false',
      PHOTO_CACHE_DIR: join(root, 'photos'),
    });
    server = await startServerProcess({ port: await freePort(), env, timeoutMs: 90_000 });
    internalKey = await createInternalKey(env);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await unmount?.();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const createKey = (account: string) =>
    timedGet(`${server.url}/v1/admin/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${internalKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account, tier: 'PRO' }),
    });

  /**
   * Fills the disk so that the server's next write must fail. SQLite appends
   * to its write-ahead log and reuses the log file's space once checkpointed,
   * so the log is first checkpointed and truncated to nothing, with the server
   * stopped (SIGSTOP) so that none of its background writes (lease heartbeat,
   * quota flush, snapshots) can take space between the truncation and the fill.
   */
  async function fillDisk(): Promise<string> {
    const pid = server.child.pid!;
    const wal = join(dataDir, 'stoop.sqlite-wal');
    const filler = join(dataDir, 'filler');
    process.kill(pid, 'SIGSTOP');
    try {
      await eventually('the write-ahead log is truncated', 30_000, async () => {
        // No busy wait: a server stopped inside a statement holds its snapshot until it runs on.
        const checkpoint = new SqliteDatabase(join(dataDir, 'stoop.sqlite'), { timeout: 0 });
        try {
          const [result] = checkpoint.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
          if (result?.busy === 0 && statSync(wal).size === 0) return true;
        } catch (error) {
          if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
        } finally {
          checkpoint.close();
        }
        // Stopped inside a statement or transaction: let it run on, and try again.
        process.kill(pid, 'SIGCONT');
        await new Promise((resolve) => setTimeout(resolve, 100));
        process.kill(pid, 'SIGSTOP');
        return undefined;
      });
      const fd = openSync(filler, 'w');
      try {
        for (const size of [1024 * 1024, 4096]) {
          const block = Buffer.alloc(size, 1);
          try {
            for (;;) writeSync(fd, block);
          } catch (error) {
            expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
          }
        }
      } finally {
        closeSync(fd);
      }
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    return filler;
  }

  it('reads are served, writes fail cleanly with 503 and one CLI line, nothing is half-written, and it recovers', async () => {
    expect((await createKey('before')).status).toBe(201);
    const filler = await fillDisk();
    try {
      expect((await timedGet(`${server.url}${DATABASE_READ}`)).status).toBe(200);
      expect((await timedGet(`${server.url}/v1/areas?level=1`)).status).toBe(200);

      const write = await createKey('during');
      expect(write).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      expect(write.retryAfter).not.toBeNull();

      const cli = await runStoop({ ...process.env, ...env, LOG_LEVEL: 'silent' }, [
        'keys',
        'create',
        '--tier',
        'pro',
        '--account',
        'cli-during',
      ]);
      expect(cli.code).not.toBe(0);
      const line = expectOneLine(cli.stderr);
      expect(line).toContain(join(dataDir, 'stoop.sqlite'));
      expect(line).toMatch(/disk is full \(SQLITE_FULL\)/);
      expect(server.child.exitCode).toBeNull();
    } finally {
      rmSync(filler);
    }

    // Room again: the same server writes, without a restart.
    expect((await createKey('after')).status).toBe(201);
    const store = new SqliteDatabase(join(dataDir, 'stoop.sqlite'), { readonly: true });
    try {
      expect(store.pragma('integrity_check', { simple: true })).toBe('ok');
      const accounts = (store.prepare('select account_id from api_keys').all() as { account_id: string }[])
        .map((row) => row.account_id)
        .sort();
      expect(accounts).toEqual(['after', 'before', 'ops']);
    } finally {
      store.close();
    }
  }, 60_000);
});

describe('SQLite: `stoop refresh --full` next to a running server on the same store', {
  concurrent: true,
}, () => {
  let dataDir: string;
  let server: ServerProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'stoop-faults-lock-'));
    env = sqliteEnv(dataDir, { DEMO_SCALE: '0.02', SIM_LATENCY: 'false' });
    server = await startServerProcess({ port: await freePort(), env, timeoutMs: 90_000 });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('waits for the lock instead of failing with "database is locked"', async () => {
    const key = await createInternalKey(env);
    // The server writes all along (a key per request), so the two processes' transactions interleave.
    // Paced at one write per 100 ms at most: the INTERNAL tier allows 1,000 requests a minute, and on a
    // slow, loaded machine two full refreshes outlast the 20 s that a faster pace stays within it for.
    // Statuses are collected and checked once the refreshes are done, so a failed write fails the test
    // instead of rejecting a promise nobody awaits yet.
    let writing = true;
    const statuses: number[] = [];
    const serverWrites = (async () => {
      let n = 0;
      while (writing) {
        const response = await fetch(`${server.url}/v1/admin/keys`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ account: `writer-${n++}`, tier: 'FREE' }),
        });
        await response.arrayBuffer();
        statuses.push(response.status);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      for (let i = 0; i < 2; i++) {
        const result = await runStoop({ ...process.env, ...env, LOG_LEVEL: 'silent' }, ['refresh', '--full']);
        expect(result.stderr).not.toMatch(/database is locked/);
        expect(result.code, result.stderr).toBe(0);
        expect(JSON.parse(result.stdout.split('\n')[0]!)).toMatchObject({ kind: 'full' });
      }
    } finally {
      writing = false;
      await serverWrites;
    }
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 201)).toEqual([]);
    expect(server.child.exitCode).toBeNull();
  }, 60_000);
});

describe('SQLite store the operator got wrong: one line naming the path and the cause, non-zero exit', () => {
  let root: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'stoop-faults-sqlite-'));
  });

  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('a data directory whose parent cannot be created', async () => {
    const blocker = join(root, 'a-file');
    writeFileSync(blocker, 'not a directory');
    const dataDir = join(blocker, 'data');
    const env = sqliteEnv(dataDir);

    const main = await runMainToExit(env);
    expect(main.code).not.toBe(0);
    const line = expectOneLine(main.stderr);
    expect(line).toContain(dataDir);
    expect(line).toMatch(/not a directory \(ENOTDIR\)/);

    const cli = await runStoop({ ...process.env, ...env, LOG_LEVEL: 'silent' }, ['keys', 'list']);
    expect(cli.code).not.toBe(0);
    expect(expectOneLine(cli.stderr)).toBe(line);
  });

  it.skipIf(readOnlySkip !== null)('a read-only data directory, empty or holding a store', async () => {
    const empty = join(root, 'read-only-empty');
    const holding = join(root, 'read-only-store');
    mkdirSync(empty);
    const made = await runStoop({ ...process.env, ...sqliteEnv(holding), LOG_LEVEL: 'silent' }, ['migrate']);
    expect(made.code, made.stderr).toBe(0);
    const undo = [await makeReadOnly(empty), await makeReadOnly(holding)];
    try {
      for (const dataDir of [empty, holding]) {
        const env = sqliteEnv(dataDir);
        const main = await runMainToExit(env);
        expect(main.code).not.toBe(0);
        const line = expectOneLine(main.stderr);
        expect(line).toContain(join(dataDir, 'stoop.sqlite'));
        expect(line).toMatch(/not writable: (read-only file system \(EROFS\)|permission denied \(EACCES\))/);

        const cli = await runStoop({ ...process.env, ...env, LOG_LEVEL: 'silent' }, ['keys', 'list']);
        expect(cli.code).not.toBe(0);
        expect(expectOneLine(cli.stderr)).toBe(line);
      }
    } finally {
      for (const restore of undo) await restore();
    }
  });
});

describe('which failures mean "the database is unavailable"', () => {
  const coded = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

  it.each([
    [
      'SQLite busy past the busy timeout',
      new SqliteDatabase.SqliteError('database is locked', 'SQLITE_BUSY'),
    ],
    ['SQLite disk full', new SqliteDatabase.SqliteError('database or disk is full', 'SQLITE_FULL')],
    ['SQLite read-only', new SqliteDatabase.SqliteError('attempt to write', 'SQLITE_READONLY_DBMOVED')],
    ['SQLite I/O error', new SqliteDatabase.SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE')],
    ['SQLite cannot open', new SqliteDatabase.SqliteError('unable to open database file', 'SQLITE_CANTOPEN')],
    ['PostgreSQL admin shutdown', coded('57P01', 'terminating connection due to administrator command')],
    ['PostgreSQL starting up', coded('57P03', 'the database system is starting up')],
    ['PostgreSQL connection failure', coded('08006')],
    ['PostgreSQL statement timeout', coded('57014', 'canceling statement due to statement timeout')],
    ['connection refused', coded('ECONNREFUSED')],
    ['connection reset', coded('ECONNRESET')],
    ['both loopback addresses refused', new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')])],
    ['connection lost mid-query', new Error('Connection terminated unexpectedly')],
    ['client-side query deadline', new Error('Query read timeout')],
    ['pool connect timeout', new Error('timeout exceeded when trying to connect')],
    ['a wrapped cause', new Error('Migration 0001_initial failed', { cause: coded('57P01') })],
    ['already translated', new DatabaseUnavailableError('/data/stoop.sqlite', 'the disk is full')],
  ])('%s: unavailable', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', coded('23505', 'duplicate key value violates unique constraint')],
    [
      'a SQLite constraint',
      new SqliteDatabase.SqliteError('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_UNIQUE'),
    ],
    ['a syntax error', coded('42601', 'syntax error')],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error', 'a string'],
  ])('%s: not unavailable (a bug or a conflict, passed through)', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
