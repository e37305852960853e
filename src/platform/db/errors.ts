/**
 * The one place that decides what a database failure means.
 *
 * - **Unavailable** (`isDatabaseUnavailable`): the database cannot serve now for a
 *   reason outside this process — the PostgreSQL server is stopped, restarting,
 *   frozen or unreachable, a statement outlived its deadline, the SQLite file is
 *   locked past the busy timeout, the disk is full, the file is read-only or
 *   cannot be opened. The HTTP layer answers 503 with Retry-After; jobs report
 *   and try again on their schedule; the CLI prints one line.
 * - **Anything else** (a constraint violation, a syntax error) is a bug or a
 *   conflict the caller handles, and passes through unchanged.
 *
 * The store (database.ts) turns every unavailable failure of a query into a
 * `DatabaseUnavailableError` that names where the store is and why, in one line;
 * a failure to open or prepare the store is a `StoreOpenError`. Neither message
 * holds credentials, and neither carries the driver's client object.
 */

/** PostgreSQL SQLSTATEs meaning "the server cannot serve now" (not "your statement is wrong"). */
const UNAVAILABLE_SQLSTATES: Readonly<Record<string, string>> = {
  '57P01': 'the server was shut down by an administrator',
  '57P02': 'the server crashed',
  '57P03': 'the server is starting up or not accepting connections',
  '57014': 'a statement was cancelled (statement timeout)',
  '53000': 'the server ran out of resources',
  '53100': "the server's disk is full",
  '53200': 'the server is out of memory',
  '53300': 'the server has too many connections',
  '58000': 'the server had a system error',
  '58030': 'the server had an I/O error',
};

/** Node socket error codes meaning the server is not reachable. */
const UNREACHABLE_ERRNOS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ECONNABORTED: 'connection aborted',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENETDOWN: 'network down',
  EAI_AGAIN: 'host name lookup failed (temporary)',
  ENOTFOUND: 'host not found',
};

/** File-system error codes an operator fixes (opening the SQLite store, creating its directory). */
const FILE_ERRNOS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large for the file-size limit',
  ENOTDIR: 'a component of the path is not a directory',
  ENOENT: 'no such file or directory',
  EIO: 'I/O error',
};

/** better-sqlite3 primary result codes (extended codes start with them) meaning the store cannot serve now. */
const UNAVAILABLE_SQLITE: Readonly<Record<string, string>> = {
  SQLITE_BUSY: 'the database file is locked by another process (waited for the busy timeout)',
  SQLITE_FULL: 'the disk is full',
  SQLITE_READONLY: 'the database is read-only (no write permission on the file or its directory)',
  SQLITE_IOERR: 'disk I/O error',
  SQLITE_CANTOPEN: 'the database file cannot be opened (missing directory or no permission)',
  SQLITE_NOMEM: 'out of memory',
};

/** pg's own messages (no code) for a connection that died, never came, or a deadline that passed. */
const PG_CONNECTION_MESSAGES: readonly [RegExp, string][] = [
  [/^Connection terminated unexpectedly/, 'the connection was closed by the server'],
  [/^Connection terminated due to connection timeout/, 'connecting timed out'],
  [/^Connection terminated/, 'the connection was closed'],
  [/^timeout exceeded when trying to connect/, 'no connection became free in time'],
  [/^Query read timeout/, 'no answer within the query deadline'],
  [/^Client has encountered a connection error and is not queryable/, 'the connection was lost'],
  [/^Cannot use a pool after calling end on the pool/, 'the store is closing'],
  [/^The server does not support SSL connections/, 'the server does not support SSL'],
];

/** Codes an operator must fix before the store can be opened, but not "unavailable" at run time. */
const OPEN_ONLY_CAUSES: Readonly<Record<string, string>> = {
  SQLITE_NOTADB: 'the file is not a SQLite database',
  SQLITE_CORRUPT: 'the database file is corrupt',
  SQLITE_PERM: 'access denied',
  '28P01': 'password authentication failed',
  '28000': 'the server rejected the connection (pg_hba.conf or role)',
  '3D000': 'the database does not exist',
  '42501': 'permission denied',
};

/**
 * The database could not serve: where (a SQLite path, or a PostgreSQL URL
 * without credentials) and why, in one line. Transient: the same call may
 * succeed once the cause is gone (the server is back, the disk has room).
 */
export class DatabaseUnavailableError extends Error {
  /** How background jobs report it (`PeriodicJobStatus.lastError.kind`). */
  readonly kind = 'database_unavailable';
  readonly location: string;
  readonly reason: string;

  constructor(location: string, reason: string, options?: { cause?: unknown }) {
    super(`The database at ${location} is unavailable: ${reason}`, options);
    this.name = 'DatabaseUnavailableError';
    this.location = location;
    this.reason = reason;
  }
}

/**
 * The store could not be opened or prepared (path, permissions, disk, server
 * address, credentials): an operator error, printed as its one-line message.
 */
export class StoreOpenError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreOpenError';
  }
}

interface CodedError {
  code?: unknown;
  message?: unknown;
  errors?: unknown;
  cause?: unknown;
}

function codeOf(error: CodedError): string | undefined {
  return typeof error.code === 'string' ? error.code : undefined;
}

function sqliteReason(code: string): string | undefined {
  if (!code.startsWith('SQLITE_')) return undefined;
  const primary = /^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code;
  return UNAVAILABLE_SQLITE[primary];
}

/** Why the error means "unavailable", for this error alone (not its causes); undefined when it does not. */
function ownUnavailableReason(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  if (error instanceof DatabaseUnavailableError) return error.reason;
  const coded = error as CodedError;
  const code = codeOf(coded);
  if (code !== undefined) {
    const reason =
      sqliteReason(code) ??
      UNAVAILABLE_SQLSTATES[code] ??
      UNREACHABLE_ERRNOS[code] ??
      (/^08[0-9A-Z]{3}$/.test(code) ? 'the connection to the server failed' : undefined);
    if (reason !== undefined) return `${reason} (${code})`;
  }
  const message = typeof coded.message === 'string' ? coded.message : '';
  for (const [pattern, reason] of PG_CONNECTION_MESSAGES) if (pattern.test(message)) return reason;
  // Node's connect with several addresses (localhost: ::1 and 127.0.0.1) fails with an AggregateError.
  if (Array.isArray(coded.errors)) {
    for (const inner of coded.errors) {
      const reason = ownUnavailableReason(inner);
      if (reason !== undefined) return reason;
    }
  }
  return undefined;
}

/** The error and its causes, outermost first (bounded: cause chains can loop). */
function chain(error: unknown): unknown[] {
  const out: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && out.length < 8 && !out.includes(current)) {
    out.push(current);
    current = typeof current === 'object' ? (current as CodedError).cause : undefined;
  }
  return out;
}

/**
 * Why the database is unavailable, in words (with the driver's code), when the
 * error — or one of its causes — means it is; undefined otherwise.
 */
export function unavailableReason(error: unknown): string | undefined {
  for (const link of chain(error)) {
    const reason = ownUnavailableReason(link);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/** Whether the error means the database cannot serve now (see the module comment). */
export function isDatabaseUnavailable(error: unknown): boolean {
  return unavailableReason(error) !== undefined;
}

/**
 * The cause of a failure to open or prepare the store, in words: an
 * unavailable reason, a file-system or credential problem, or the driver's
 * first message line as a last resort.
 */
export function describeStoreFailure(error: unknown): string {
  const unavailable = unavailableReason(error);
  if (unavailable !== undefined) return unavailable;
  for (const link of chain(error)) {
    if (typeof link !== 'object' || link === null) continue;
    const code = codeOf(link as CodedError);
    if (code === undefined) continue;
    const reason = FILE_ERRNOS[code] ?? OPEN_ONLY_CAUSES[code];
    if (reason !== undefined) return `${reason} (${code})`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}

/**
 * The one-line message of a store failure an operator must act on (the store
 * could not be opened, or the database became unavailable): the error's or
 * its cause's message; null when the error is not one (then it is a bug and
 * deserves its stack).
 */
export function storeFailureMessage(error: unknown): string | null {
  for (const link of chain(error)) {
    if (link instanceof StoreOpenError || link instanceof DatabaseUnavailableError) return link.message;
  }
  return null;
}

/** Where a store is, safe to print: the SQLite path, or the PostgreSQL URL without user and password. */
export function printableLocation(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) return databaseUrl.slice('sqlite:'.length) || ':memory:';
  try {
    const url = new URL(databaseUrl);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return 'the configured PostgreSQL server';
  }
}
