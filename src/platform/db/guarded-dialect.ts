/**
 * A Kysely dialect decorator that makes every database failure that means
 * "unavailable" (errors.ts) a `DatabaseUnavailableError` naming the store, and
 * reports when the store becomes unavailable and when it answers again — one
 * line each, however many queries fail in between.
 *
 * It wraps the driver, so every path is covered the same way: queries,
 * transactions (begin, commit, rollback), savepoints and acquiring a
 * connection. Other errors pass through unchanged.
 */
import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';
import { DatabaseUnavailableError, unavailableReason } from './errors.ts';

/**
 * Tracks whether the store is reachable and says so when that changes: the
 * first failure of an outage and the first success after it, nothing between.
 * Failures before the store first answered are not an outage but a store that
 * cannot be opened; opening reports those itself.
 */
export class Availability {
  private state: 'opening' | 'up' | 'down' = 'opening';

  constructor(
    private readonly location: string,
    private readonly log: (line: string) => void,
  ) {}

  /** A query succeeded. */
  ok(): void {
    if (this.state === 'up') return;
    if (this.state === 'down') this.log(`The database at ${this.location} answers again.`);
    this.state = 'up';
  }

  /** Something failed because the store is unavailable (a query, or a pooled connection dying while idle). */
  lost(reason: string): void {
    if (this.state !== 'up') return;
    this.state = 'down';
    this.log(
      `The database at ${this.location} is unavailable: ${reason}. Requests get 503 until it answers again.`,
    );
  }

  /**
   * The error a caller should see: an unavailable failure as a
   * `DatabaseUnavailableError` (recorded as an outage), anything else unchanged.
   */
  translate(error: unknown): unknown {
    if (error instanceof DatabaseUnavailableError) {
      this.lost(error.reason);
      return error;
    }
    const reason = unavailableReason(error);
    if (reason === undefined) return error;
    this.lost(reason);
    return new DatabaseUnavailableError(this.location, reason, { cause: error });
  }

  async run<T>(operation: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await operation();
    } catch (error) {
      throw this.translate(error);
    }
    this.ok();
    return result;
  }
}

class GuardedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly availability: Availability,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.availability.run(() => this.inner.executeQuery<R>(query));
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (error) {
      throw this.availability.translate(error);
    }
  }
}

/** The inner driver's connection behind one of ours (the inner driver must get back its own). */
function innerOf(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof GuardedConnection ? connection.inner : connection;
}

class GuardedDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly availability: Availability,
  ) {}

  async init(): Promise<void> {
    // Creating a pool (or a SQLite handle) does not show the database answers: no ok() here.
    try {
      await this.inner.init();
    } catch (error) {
      throw this.availability.translate(error);
    }
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.availability.run(() => this.inner.acquireConnection());
    return new GuardedConnection(connection, this.availability);
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.availability.run(() => this.inner.beginTransaction(innerOf(connection), settings));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.availability.run(() => this.inner.commitTransaction(innerOf(connection)));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.availability.run(() => this.inner.rollbackTransaction(innerOf(connection)));
  }

  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    const inner = this.inner;
    if (!inner.savepoint) throw new Error('the driver does not support savepoints');
    return this.availability.run(() => inner.savepoint!(innerOf(connection), name, compile));
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    const inner = this.inner;
    if (!inner.rollbackToSavepoint) throw new Error('the driver does not support savepoints');
    return this.availability.run(() => inner.rollbackToSavepoint!(innerOf(connection), name, compile));
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    const inner = this.inner;
    if (!inner.releaseSavepoint) throw new Error('the driver does not support savepoints');
    return this.availability.run(() => inner.releaseSavepoint!(innerOf(connection), name, compile));
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(innerOf(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** `dialect` with every driver failure that means "unavailable" translated and reported by `availability`. */
export function guardedDialect(dialect: Dialect, availability: Availability): Dialect {
  const guarded: Dialect = {
    createDriver: () => new GuardedDriver(dialect.createDriver(), availability),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
  return guarded;
}
