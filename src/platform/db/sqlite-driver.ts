/**
 * The Kysely driver of the SQLite store.
 *
 * better-sqlite3 runs every statement synchronously on the calling thread, and
 * SQLite's own busy handler waits for a lock by sleeping that thread. On the
 * request thread a write that met the write lock of another connection (the
 * jobs worker's backfill, a refresh process, the CLI next to the server) held
 * the event loop until the lock came free: every request stalled behind the
 * quota flush for as long as the other transaction ran. So here SQLite never
 * waits: connections are opened with a busy timeout of 0, and a statement
 * refused with SQLITE_BUSY is tried again after a timer, until
 * `SQLITE_BUSY_TIMEOUT_MS` has passed. Then the BUSY error stands, which the
 * store reports as unavailable (503), as before.
 *
 * A file store has two connections:
 * - the **writer** runs transactions, one at a time (a mutex), each begun
 *   IMMEDIATE: it takes the write lock at BEGIN, where waiting is safe. A
 *   deferred transaction that reads, then writes, fails at once with "database
 *   is locked" when another connection wrote in between — SQLite cannot wait
 *   there. Every transaction here writes, so nothing is lost.
 * - the **reader** runs every statement outside a transaction. In WAL mode
 *   readers never wait for writers, so reads go on while a transaction waits
 *   for the lock or awaits between its statements (one connection would queue
 *   them all behind it). A single write outside a transaction runs on the
 *   writer instead, as its own atomic transaction, in turn with this process's
 *   transactions (the mutex is first come, first served): polling for the lock
 *   against them, it would starve behind back-to-back ones (the demo load).
 *
 * An in-memory store exists only on its one connection, so reader and writer
 * are the same, and every use of it takes the mutex, as Kysely's own SQLite
 * driver does: a statement must never run inside another caller's transaction.
 */
import type SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SelectQueryNode,
} from 'kysely';

/** How long a statement waits for a lock another connection holds before failing as unavailable. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/** Pauses between attempts at a lock, ms: short at first (most holders are quick), then steady. */
const LOCK_RETRY_DELAYS_MS = [1, 2, 4, 8] as const;
const LOCK_RETRY_STEADY_MS = 10;

/**
 * How long a bulk writer that runs transactions back to back (the demo load)
 * pauses between them so that writers waiting for the lock on another
 * connection get a turn: longer than any pause between their attempts. With no
 * pause, the next BEGIN follows the COMMIT at once and they starve.
 */
export const LOCK_HANDOFF_MS = 2 * Math.max(LOCK_RETRY_STEADY_MS, ...LOCK_RETRY_DELAYS_MS);

export interface SqliteConnections {
  readonly writer: SqliteDatabase.Database;
  /** The writer itself for an in-memory store. */
  readonly reader: SqliteDatabase.Database;
}

export interface SqliteDriverOptions {
  /** Longest wait for a lock, ms (tests shorten it). */
  readonly busyTimeoutMs?: number;
  /** How a wait between attempts is made (tests count them). */
  readonly sleep?: (ms: number) => Promise<void>;
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One caller at a time; the others wait in order. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();

  async lock(): Promise<() => void> {
    let release!: () => void;
    const previous = this.tail;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    return release;
  }
}

/**
 * Kysely prepares every query it runs; preparing is a large share of a short
 * query's cost in better-sqlite3. Statements are reusable (execution is
 * synchronous), so keep the most recently used ones by SQL text.
 */
class StatementCache {
  private readonly statements = new Map<string, SqliteDatabase.Statement>();

  constructor(
    readonly database: SqliteDatabase.Database,
    private readonly capacity = 500,
  ) {}

  prepare(text: string): SqliteDatabase.Statement {
    let statement = this.statements.get(text);
    if (statement) {
      this.statements.delete(text);
    } else {
      statement = this.database.prepare(text);
      if (this.statements.size >= this.capacity) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(text, statement);
    return statement;
  }
}

function run(cache: StatementCache, query: CompiledQuery): QueryResult<never> {
  const statement = cache.prepare(query.sql);
  const parameters = query.parameters as unknown[];
  if (statement.reader) return { rows: statement.all(parameters) as never[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/** A Kysely connection: the reader until its transaction begins, then the writer until released. */
class StoreConnection implements DatabaseConnection {
  /** Set while this connection owns the writer (its transaction, or any use of a shared connection). */
  release: (() => void) | undefined;

  constructor(private readonly driver: SqliteStoreDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.release) return Promise.resolve(run(this.driver.writer, query) as QueryResult<R>);
    if (!this.driver.reader.prepare(query.sql).reader) return this.driver.writeAlone(query);
    return this.driver.untilUnlocked(() => run(this.driver.reader, query) as QueryResult<R>);
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(query.query)) throw new Error('the SQLite store streams only select queries');
    // Read whole: an open iterator would make its connection refuse every other statement until done.
    const { rows } = await this.executeQuery<R>(query);
    for (const row of rows) yield { rows: [row] };
  }
}

export class SqliteStoreDriver implements Driver {
  readonly writer: StatementCache;
  readonly reader: StatementCache;
  private readonly shared: boolean;
  private readonly mutex = new Mutex();
  private readonly busyTimeoutMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(connections: SqliteConnections, options: SqliteDriverOptions = {}) {
    this.writer = new StatementCache(connections.writer);
    this.shared = connections.reader === connections.writer;
    this.reader = this.shared ? this.writer : new StatementCache(connections.reader);
    this.busyTimeoutMs = options.busyTimeoutMs ?? SQLITE_BUSY_TIMEOUT_MS;
    this.sleep = options.sleep ?? defaultSleep;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = new StoreConnection(this);
    if (this.shared) connection.release = await this.mutex.lock();
    return connection;
  }

  /** Runs `attempt` until SQLite stops answering BUSY or the wait passes its deadline; never sleeps the thread. */
  async untilUnlocked<T>(attempt: () => T): Promise<T> {
    const deadline = Date.now() + this.busyTimeoutMs;
    for (let tries = 0; ; tries++) {
      try {
        return attempt();
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error;
      }
      await this.sleep(LOCK_RETRY_DELAYS_MS[tries] ?? LOCK_RETRY_STEADY_MS);
    }
  }

  /** A write outside any transaction: on the writer, when this process's transactions before it are done. */
  async writeAlone<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const release = await this.mutex.lock();
    try {
      return await this.untilUnlocked(() => run(this.writer, query) as QueryResult<R>);
    } finally {
      release();
    }
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const store = connection as StoreConnection;
    const ownedBefore = store.release !== undefined;
    if (!ownedBefore) store.release = await this.mutex.lock();
    try {
      await this.untilUnlocked(() => run(this.writer, CompiledQuery.raw('begin immediate')));
    } catch (error) {
      if (!ownedBefore) this.releaseWriter(store);
      throw error;
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await this.untilUnlocked(() => run(this.writer, CompiledQuery.raw('commit')));
    this.endTransaction(connection as StoreConnection);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    // SQLite rolls back by itself on some failures (a full disk at COMMIT); a
    // second ROLLBACK would replace the real cause with "no transaction is active".
    const store = connection as StoreConnection;
    try {
      // Only a connection that holds the writer can have its transaction open there.
      if (store.release && this.writer.database.inTransaction)
        run(this.writer, CompiledQuery.raw('rollback'));
    } finally {
      this.endTransaction(store);
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.releaseWriter(connection as StoreConnection);
  }

  async destroy(): Promise<void> {
    this.writer.database.close();
    if (!this.shared) this.reader.database.close();
  }

  /** A shared connection keeps the mutex until released; a split one gives the writer back with its transaction. */
  private endTransaction(connection: StoreConnection): void {
    if (!this.shared) this.releaseWriter(connection);
  }

  private releaseWriter(connection: StoreConnection): void {
    const release = connection.release;
    connection.release = undefined;
    release?.();
  }
}
