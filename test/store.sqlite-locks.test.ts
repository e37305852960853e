/**
 * The SQLite store waits for another connection's write lock without holding
 * the event loop, and reads go on meanwhile (src/platform/db/sqlite-driver.ts).
 * SQLite only: PostgreSQL's driver is asynchronous by nature.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../src/platform/db/database.ts';
import { DatabaseUnavailableError } from '../src/platform/db/errors.ts';
import { SQLITE_BUSY_TIMEOUT_MS } from '../src/platform/db/sqlite-driver.ts';
import { startWalCheckpoints } from '../src/platform/db/wal-checkpoints.ts';

const HOLD_MS = 400;

let root: string;
let file: string;
let store: Store;
/** Another process's connection to the same file (the jobs worker, a refresh, the CLI). */
let other: SqliteDatabase.Database;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'stoop-locks-'));
  file = join(root, 'stoop.sqlite');
  store = await openStore({ databaseUrl: `sqlite:${file}`, dialect: 'sqlite' });
  await sql`create table notes (id integer primary key, body text not null)`.execute(store.db);
  other = new SqliteDatabase(file, { timeout: 0 });
});

afterEach(async () => {
  other.close();
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

const notes = async (db = store.db) =>
  (await sql<{ body: string }>`select body from notes order by id`.execute(db)).rows.map((row) => row.body);

/** Holds the write lock on `other` for `ms`, then commits what it wrote. */
function holdWriteLock(ms: number): Promise<void> {
  other.exec('begin immediate');
  other.prepare('insert into notes (body) values (?)').run('other');
  return new Promise((resolve) =>
    setTimeout(() => {
      other.exec('commit');
      resolve();
    }, ms),
  );
}

/** The longest the event loop was held while `work` ran, ms. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  try {
    const result = await work();
    return { result, stallMs: histogram.max / 1e6 };
  } finally {
    histogram.disable();
  }
}

describe('SQLite store: waiting for another connection’s write lock', () => {
  it('a transaction waits on a timer: the event loop keeps turning, reads go on, and the write lands after the lock', async () => {
    const released = holdWriteLock(HOLD_MS);
    const { result, stallMs } = await longestStall(async () => {
      const started = Date.now();
      const write = store.db.transaction().execute(async (trx) => {
        await sql`insert into notes (body) values ('mine')`.execute(trx);
        return Date.now() - started;
      });
      // A read while the transaction waits for the lock is answered at once, from committed data.
      const readAt = Date.now();
      expect(await notes()).toEqual([]);
      const readMs = Date.now() - readAt;
      const [waitedMs] = await Promise.all([write, released]);
      return { readMs, waitedMs };
    });
    expect(result.readMs).toBeLessThan(50);
    expect(result.waitedMs).toBeGreaterThanOrEqual(HOLD_MS - 20);
    // Before: the whole hold, on the thread.
    expect(stallMs).toBeLessThan(HOLD_MS / 4);
    expect(await notes()).toEqual(['other', 'mine']);
  });

  it('a single write outside a transaction waits the same way', async () => {
    const released = holdWriteLock(HOLD_MS);
    const { stallMs } = await longestStall(async () => {
      await sql`insert into notes (body) values ('mine')`.execute(store.db);
      await released;
    });
    expect(stallMs).toBeLessThan(HOLD_MS / 4);
    expect(await notes()).toEqual(['other', 'mine']);
  });

  it('a lock held past the busy timeout fails the write as unavailable, writes nothing, and the store writes again after', async () => {
    const released = holdWriteLock(SQLITE_BUSY_TIMEOUT_MS + 500);
    const { result, stallMs } = await longestStall(async () => {
      const started = Date.now();
      const outcome = await store.db
        .transaction()
        .execute((trx) => sql`insert into notes (body) values ('lost')`.execute(trx))
        .then(
          () => 'written',
          (error: unknown) => error,
        );
      return { outcome, waitedMs: Date.now() - started };
    });
    expect(result.outcome).toBeInstanceOf(DatabaseUnavailableError);
    expect((result.outcome as DatabaseUnavailableError).reason).toMatch(/locked/);
    expect(result.waitedMs).toBeGreaterThanOrEqual(SQLITE_BUSY_TIMEOUT_MS - 50);
    expect(stallMs).toBeLessThan(200);
    await released;
    await store.db
      .transaction()
      .execute((trx) => sql`insert into notes (body) values ('after')`.execute(trx));
    expect(await notes()).toEqual(['other', 'after']);
  }, 15_000);

  it('reads outside a transaction do not wait for one this process has open, and see it once committed', async () => {
    let commit!: () => void;
    const gate = new Promise<void>((resolve) => {
      commit = resolve;
    });
    const write = store.db.transaction().execute(async (trx) => {
      await sql`insert into notes (body) values ('mine')`.execute(trx);
      await gate;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await notes()).toEqual([]);
    commit();
    await write;
    expect(await notes()).toEqual(['mine']);
  });

  it('transactions of this process run one at a time, in order', async () => {
    const order: string[] = [];
    const slow = store.db.transaction().execute(async (trx) => {
      order.push('first begins');
      await sql`insert into notes (body) values ('first')`.execute(trx);
      await new Promise((resolve) => setTimeout(resolve, 50));
      order.push('first ends');
    });
    const next = store.db.transaction().execute(async (trx) => {
      order.push('second begins');
      await sql`insert into notes (body) values ('second')`.execute(trx);
    });
    await Promise.all([slow, next]);
    expect(order).toEqual(['first begins', 'first ends', 'second begins']);
    expect(await notes()).toEqual(['first', 'second']);
  });
});

describe('SQLite in-memory store: one connection', () => {
  it('a statement outside a transaction waits for it instead of running inside it', async () => {
    const memory = await openStore({ databaseUrl: 'sqlite::memory:', dialect: 'sqlite' });
    try {
      await sql`create table notes (id integer primary key, body text not null)`.execute(memory.db);
      let rollBack!: () => void;
      const gate = new Promise<void>((resolve) => {
        rollBack = resolve;
      });
      const failing = memory.db
        .transaction()
        .execute(async (trx) => {
          await sql`insert into notes (body) values ('undone')`.execute(trx);
          await gate;
          throw new Error('rolled back');
        })
        .catch((error: unknown) => error);
      const outside = sql`insert into notes (body) values ('kept')`.execute(memory.db);
      await new Promise((resolve) => setTimeout(resolve, 20));
      rollBack();
      expect(await failing).toMatchObject({ message: 'rolled back' });
      await outside;
      expect(await notes(memory.db)).toEqual(['kept']);
    } finally {
      await memory.close();
    }
  });
});

describe('SQLite store: write-ahead log checkpoints', () => {
  const PAGE_BLOB = 'x'.repeat(3500);

  /** Writes `pages` ~one-page rows in transactions of 100 through `db`. */
  async function writePages(db: Store['db'], pages: number): Promise<void> {
    for (let done = 0; done < pages; done += 100) {
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 100; i++) await sql`insert into notes (body) values (${PAGE_BLOB})`.execute(trx);
      });
    }
  }

  const walBytes = () => statSync(`${file}-wal`).size;

  it('by default a commit checkpoints once the log passes 1,000 pages, so the log file stays near that size', async () => {
    await writePages(store.db, 3000);
    expect(walBytes()).toBeLessThan(1500 * 4096);
  });

  it('with walCheckpoints: background, no commit copies the log, however long (a backstop at 10,000 pages stalled the request thread); the background checkpointer copies it so writers restart it', async () => {
    const background = await openStore({
      databaseUrl: `sqlite:${file}`,
      dialect: 'sqlite',
      walCheckpoints: 'background',
    });
    const checkpoints = startWalCheckpoints(store, 60_000);
    try {
      await writePages(background.db, 12_000);
      // No commit copied the log: it holds every page written.
      expect(walBytes()).toBeGreaterThan(12_000 * 4096);
      const result = await checkpoints.runOnce();
      expect(result.busy).toBe(0);
      expect(result.log).toBeGreaterThan(12_000);
      expect(result.checkpointed).toBe(result.log);
      // The next writer starts the log over instead of growing it.
      const before = walBytes();
      await writePages(background.db, 500);
      expect(walBytes()).toBe(before);
      expect((await sql<{ n: number }>`select count(*) as n from notes`.execute(store.db)).rows[0]!.n).toBe(
        12_500,
      );
    } finally {
      checkpoints.stop();
      await background.close();
    }
  }, 60_000);
});

describe('SQLite store: a single write among this process’s transactions', () => {
  it('takes its turn after the transaction under way, never starved by back-to-back ones (the demo load)', async () => {
    let stop = false;
    let transactions = 0;
    // Back-to-back transactions that yield to the event loop inside, as a sliced bulk load does.
    const bulk = (async () => {
      while (!stop) {
        await store.db.transaction().execute(async (trx) => {
          await sql`insert into notes (body) values ('bulk')`.execute(trx);
          await new Promise((resolve) => setImmediate(resolve));
        });
        transactions++;
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = transactions;
    const started = Date.now();
    await sql`insert into notes (body) values ('lease')`.execute(store.db);
    const waitedMs = Date.now() - started;
    const after = transactions;
    stop = true;
    await bulk;
    // Before: it polled for the lock against the bulk writer and failed after the 5 s busy timeout.
    expect(after - before).toBeLessThanOrEqual(2);
    expect(waitedMs).toBeLessThan(500);
    expect(await notes()).toContain('lease');
  });
});
