import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Config } from '../../config.ts';
import type { Database } from './tables.ts';

export type Dialect = Config['dialect'];

/** The store handle passed to repositories: a Kysely instance plus what it runs on. */
export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** PostgreSQL schema the store lives in, when not the default search path. */
  readonly schema?: string | undefined;
  close(): Promise<void>;
}

// COUNT(*) and BIGINT come back from pg as strings; every count we read fits a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

export interface StoreOptions {
  databaseUrl: string;
  dialect: Dialect;
  /** PostgreSQL only: schema to create (if missing) and put first on the search path. */
  schema?: string | undefined;
  poolSize?: number;
}

export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.dialect === 'sqlite') return openSqlite(options.databaseUrl);
  return openPostgres(options);
}

function openSqlite(databaseUrl: string): Store {
  const file = databaseUrl.slice('sqlite:'.length) || ':memory:';
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const connection = new SqliteDatabase(file);
  // WAL lets readers proceed while a refresh writes; NORMAL sync is durable across
  // process crashes (only an OS crash can lose the last transactions).
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('busy_timeout = 5000');
  connection.pragma('cache_size = -65536');
  connection.pragma('temp_store = MEMORY');
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: withStatementCache(connection) }),
  });
  return {
    db,
    dialect: 'sqlite',
    close: () => db.destroy(),
  };
}

/**
 * Kysely prepares every query it runs; preparing is a large share of a short
 * query's cost in better-sqlite3. Statements are reusable (execution is
 * synchronous), so keep the most recently used ones by SQL text.
 */
function withStatementCache(connection: SqliteDatabase.Database, capacity = 500): SqliteDatabaseLike {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => connection.close(),
    prepare: (text: string) => {
      let statement = cache.get(text);
      if (statement) {
        cache.delete(text);
      } else {
        statement = connection.prepare(text);
        if (cache.size >= capacity) cache.delete(cache.keys().next().value!);
      }
      cache.set(text, statement);
      return statement;
    },
  };
}

type SqliteDatabaseLike = ConstructorParameters<typeof SqliteDialect>[0]['database'] & object;

async function openPostgres(options: StoreOptions): Promise<Store> {
  const schema = options.schema;
  if (schema) {
    const setup = new pg.Client({ connectionString: options.databaseUrl });
    await setup.connect();
    try {
      await setup.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    } finally {
      await setup.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: options.poolSize ?? 10,
    // A server that drops packets must not hang requests: connecting and each
    // statement are bounded, and the failure surfaces as an error.
    connectionTimeoutMillis: 5_000,
    // Every pooled connection starts on the configured schema.
    options: [schema ? `-c search_path=${schema}` : '', '-c statement_timeout=30000']
      .filter(Boolean)
      .join(' '),
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  // Fail at boot, with the driver's message, when the server is unreachable.
  await sql`select 1`.execute(db);
  return {
    db,
    dialect: 'postgres',
    schema,
    close: () => db.destroy(),
  };
}
