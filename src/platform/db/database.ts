import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  type DatabaseIntrospector,
  type Driver,
  Kysely,
  type PostgresCursor,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
  SqliteDialect,
  sql,
} from 'kysely';
import pg from 'pg';
import type { Config } from '../../config.ts';
import { CurrentSchemaIntrospector } from './current-schema-introspector.ts';
import {
  DatabaseUnavailableError,
  describeStoreFailure,
  printableLocation,
  StoreOpenError,
  unavailableReason,
} from './errors.ts';
import { Availability, guardedDialect } from './guarded-dialect.ts';
import { type SqliteConnections, SqliteStoreDriver } from './sqlite-driver.ts';
import type { Database } from './tables.ts';

export type Dialect = Config['dialect'];

/** The store handle passed to repositories: a Kysely instance plus what it runs on. */
export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** PostgreSQL schema the store lives in, when not the default search path. */
  readonly schema?: string | undefined;
  /** Where the store is, safe to print: the SQLite path, or the PostgreSQL URL without credentials. */
  readonly location: string;
  /**
   * How another thread opens its own connection to this same store (a worker
   * running background jobs); null when it cannot: an in-memory SQLite store
   * exists only on its own connection.
   */
  readonly shared: SharedStoreOptions | null;
  close(): Promise<void>;
}

/** The serializable part of `StoreOptions`: enough to open the same store again elsewhere. */
export type SharedStoreOptions = Pick<StoreOptions, 'databaseUrl' | 'dialect' | 'schema' | 'queryTimeoutMs'>;

// COUNT(*) and BIGINT come back from pg as strings; every count we read fits a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

/** Default deadline of one PostgreSQL statement (client and server side), ms. */
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;
/** Longest wait for a PostgreSQL connection (a new one, or a free one from the pool), ms. */
const MAX_CONNECT_TIMEOUT_MS = 5_000;

export interface StoreOptions {
  databaseUrl: string;
  dialect: Dialect;
  /** PostgreSQL only: schema to create (if missing) and put first on the search path. */
  schema?: string | undefined;
  poolSize?: number;
  /**
   * PostgreSQL only: the deadline of every statement, ms. The client abandons
   * the statement (and its connection) when it passes, and the server cancels
   * it (`statement_timeout`); connecting waits at most min(this, 5 s).
   */
  queryTimeoutMs?: number;
  /**
   * Receives one line when the store becomes unavailable (with the cause) and
   * one when it answers again. Default: nothing.
   */
  log?: (line: string) => void;
  /**
   * SQLite only. `on-commit` (default): a commit that leaves the write-ahead
   * log over 1,000 pages copies it into the database, as SQLite does by
   * default. `background`: no commit ever does; another thread (the jobs
   * worker's `startWalCheckpoints`, restarted when it dies) copies the log.
   * For the request thread: a checkpoint is a copy and an fsync, and after a
   * refresh cycle that changed tens of thousands of listings the log holds
   * hundreds of thousands of pages, so one on a commit there (a quota flush)
   * held every request for 100–160 ms. While no checkpointer runs the log
   * grows with the writes (the worker is back within a minute).
   */
  walCheckpoints?: 'on-commit' | 'background';
}

/**
 * Opens the store. Failures an operator must fix — a directory that cannot be
 * created, a read-only or full disk, an unreachable server — are a
 * `StoreOpenError` whose message names the store and the cause in one line.
 */
export async function openStore(options: StoreOptions): Promise<Store> {
  const location = printableLocation(options.databaseUrl);
  const availability = new Availability(location, options.log ?? (() => {}));
  const shared: SharedStoreOptions = {
    databaseUrl: options.databaseUrl,
    dialect: options.dialect,
    ...(options.schema === undefined ? {} : { schema: options.schema }),
    ...(options.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: options.queryTimeoutMs }),
  };
  if (options.dialect === 'sqlite') {
    const store = openSqlite(
      options.databaseUrl,
      location,
      availability,
      options.walCheckpoints ?? 'on-commit',
    );
    return { ...store, shared: store.location === ':memory:' ? null : shared };
  }
  return { ...(await openPostgres(options, location, availability)), shared };
}

function openSqlite(
  databaseUrl: string,
  location: string,
  availability: Availability,
  walCheckpoints: 'on-commit' | 'background',
): Omit<Store, 'shared'> {
  const file = databaseUrl.slice('sqlite:'.length) || ':memory:';
  if (file !== ':memory:') {
    try {
      mkdirSync(dirname(file), { recursive: true });
    } catch (error) {
      throw new StoreOpenError(
        `Cannot create the directory ${dirname(file)} for the SQLite store ${file}: ${describeStoreFailure(error)}`,
        { cause: error },
      );
    }
  }
  const opened: SqliteDatabase.Database[] = [];
  let connections: SqliteConnections;
  try {
    const writer = openSqliteConnection(file, opened, walCheckpoints);
    // WAL lets readers proceed while a refresh writes; NORMAL sync is durable across
    // process crashes (only an OS crash can lose the last transactions).
    writer.pragma('journal_mode = WAL');
    // SQLite silently opens a file it may not write read-only: such a store
    // fails here, with its cause, instead of at its first write.
    if (file !== ':memory:') for (const path of [file, dirname(file)]) accessSync(path, constants.W_OK);
    connections = {
      writer,
      reader: file === ':memory:' ? writer : openSqliteConnection(file, opened, walCheckpoints),
    };
  } catch (error) {
    for (const connection of opened) connection.close();
    throw new StoreOpenError(`Cannot open the SQLite store ${file}: ${sqliteOpenCause(file, error)}`, {
      cause: error,
    });
  }
  const dialect = new SqliteStoreDialect(connections);
  const db = new Kysely<Database>({ dialect: guardedDialect(dialect, availability) });
  return {
    db,
    dialect: 'sqlite',
    location,
    close: () => db.destroy(),
  };
}

/**
 * SQLite's own message for a store it cannot open or write is "unable to open
 * database file": find the reason in the file system.
 */
function sqliteOpenCause(file: string, error: unknown): string {
  const directory = dirname(file);
  if (!existsSync(directory)) return `the directory ${directory} does not exist`;
  for (const [what, path] of [
    ['directory', directory],
    ['file', file],
  ] as const) {
    if (what === 'file' && !existsSync(path)) continue;
    try {
      accessSync(path, constants.W_OK);
    } catch (accessError) {
      return `the ${what} ${path} is not writable: ${describeStoreFailure(accessError)}`;
    }
  }
  return describeStoreFailure(error);
}

/**
 * One connection of the store. Its busy timeout is 0: SQLite must never sleep
 * the thread for a lock (the driver waits on a timer instead, sqlite-driver.ts).
 */
function openSqliteConnection(
  file: string,
  opened: SqliteDatabase.Database[],
  walCheckpoints: 'on-commit' | 'background',
): SqliteDatabase.Database {
  const connection = new SqliteDatabase(file, { timeout: 0 });
  opened.push(connection);
  connection.pragma('synchronous = NORMAL');
  connection.pragma('cache_size = -65536');
  connection.pragma('temp_store = MEMORY');
  if (walCheckpoints === 'background') connection.pragma('wal_autocheckpoint = 0');
  return connection;
}

/** Kysely's PostgreSQL dialect, its introspection limited to the connection's own schema (./current-schema-introspector.ts). */
class PostgresStoreDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db, super.createIntrospector(db));
  }
}

/** Kysely's SQLite dialect (compiler, adapter, introspector) over the store's own driver. */
class SqliteStoreDialect extends SqliteDialect {
  constructor(private readonly connections: SqliteConnections) {
    super({ database: connections.writer });
  }

  override createDriver(): Driver {
    return new SqliteStoreDriver(this.connections);
  }
}

async function openPostgres(
  options: StoreOptions,
  location: string,
  availability: Availability,
): Promise<Omit<Store, 'shared'>> {
  const schema = options.schema;
  const queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  const connectionTimeoutMillis = Math.min(MAX_CONNECT_TIMEOUT_MS, queryTimeoutMs);
  const unreachable = (error: unknown) =>
    new StoreOpenError(`Cannot use the PostgreSQL store at ${location}: ${describeStoreFailure(error)}`, {
      cause: error,
    });
  if (schema) {
    const setup = new pg.Client({
      connectionString: options.databaseUrl,
      connectionTimeoutMillis,
      query_timeout: queryTimeoutMs,
    });
    // A connection that dies between our calls must not become an unhandled 'error' event.
    setup.on('error', () => {});
    try {
      await setup.connect();
      await setup.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    } catch (error) {
      throw unreachable(error);
    } finally {
      await setup.end().catch(() => {});
    }
  }
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: options.poolSize ?? 10,
    // A server that is down, frozen or drops packets must not hang requests:
    // connecting and each statement are bounded, and the failure is an error.
    connectionTimeoutMillis,
    query_timeout: queryTimeoutMs,
    // Every pooled connection starts on the configured schema.
    options: [schema ? `-c search_path=${schema}` : '', `-c statement_timeout=${queryTimeoutMs}`]
      .filter(Boolean)
      .join(' '),
  });
  // A pooled connection that dies — idle in the pool (the pool's 'error') or
  // checked out between two statements (the client's) — is an outage to
  // report, never an unhandled 'error' event that ends the process. The pool
  // drops it and connects anew on the next use. Only the reason is kept: the
  // error carries the client, and with it the connection string.
  const reportLost = (error: unknown) => availability.lost(unavailableReason(error) ?? connectionLost(error));
  pool.on('error', reportLost);
  pool.on('connect', (client) => client.on('error', reportLost));
  const db = new Kysely<Database>({
    dialect: guardedDialect(
      new PostgresStoreDialect({ pool: abandoningTimedOutConnections(pool, location, queryTimeoutMs) }),
      availability,
    ),
  });
  // Fail at boot, with the cause, when the server is unreachable.
  try {
    await sql`select 1`.execute(db);
  } catch (error) {
    await db.destroy().catch(() => {});
    throw unreachable(error);
  }
  return {
    db,
    dialect: 'postgres',
    schema,
    location,
    close: () => db.destroy(),
  };
}

function connectionLost(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `a connection failed: ${message.split('\n')[0]}`;
}

/**
 * The pool as Kysely sees it, with one rule added: a connection whose
 * statement passed its deadline is abandoned. pg reports the timeout but keeps
 * the statement running on that connection, so the next statement sent on it
 * (the transaction's ROLLBACK, the next request's query) would queue behind it
 * and wait out another deadline. Instead, every later statement on it fails at
 * once and the pool closes it when it is released.
 */
function abandoningTimedOutConnections(pool: pg.Pool, location: string, timeoutMs: number): PostgresPool {
  return {
    connect: async () => new DeadlineClient(await pool.connect(), location, timeoutMs),
    end: () => pool.end(),
  };
}

class DeadlineClient implements PostgresPoolClient {
  private abandoned: DatabaseUnavailableError | undefined;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly location: string,
    private readonly timeoutMs: number,
  ) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    sqlOrCursor: string | PostgresCursor<R>,
    parameters: ReadonlyArray<unknown> = [],
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Kysely passes a cursor only when the dialect is given a cursor class; this store gives none.
    if (typeof sqlOrCursor !== 'string') throw new Error('cursors are not configured for this store');
    return this.run<R>(sqlOrCursor, parameters);
  }

  private async run<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    if (this.abandoned) throw this.abandoned;
    try {
      return (await this.client.query(text, [...parameters])) as unknown as PostgresQueryResult<R>;
    } catch (error) {
      if (error instanceof Error && /^Query read timeout/.test(error.message)) {
        this.abandoned = new DatabaseUnavailableError(
          this.location,
          `no answer within the ${this.timeoutMs} ms query deadline`,
          { cause: error },
        );
        throw this.abandoned;
      }
      throw error;
    }
  }

  release(): void {
    // An error tells the pool to close the connection instead of reusing it.
    this.client.release(this.abandoned);
  }
}
