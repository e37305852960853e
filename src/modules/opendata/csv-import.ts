/**
 * The streaming CSV importer every dataset shares.
 *
 * Memory stays bounded whatever the file size: the file is read as a stream
 * (gzip is inflated on the fly when the name ends in `.gz`), parsed record by
 * record by csv-parse, and rows are upserted in transactions of
 * `transactionRows`; the parser is not read again until a transaction has
 * committed, so back-pressure holds the file reader.
 *
 * Columns are found by name (normalized: lowercase letters and digits), in any
 * order; extra columns are ignored; a file lacking a required column is
 * refused before any row is written. A malformed record (wrong field count,
 * broken quoting, a value that does not parse) is reported with its line
 * number and reason and skipped; good rows around it are kept.
 */
import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { type Options, parse } from 'csv-parse';
import { CompiledQuery, type Kysely } from 'kysely';
import type { Store } from '../../platform/db/database.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { DatasetSpec } from './datasets.ts';
import { FieldError, type FieldReader, normalizeColumn } from './fields.ts';

/** An operator-facing failure (unreadable file, missing columns): printed without a stack. */
export class OpenDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OpenDataError';
  }
}

export interface RejectedRow {
  /** 1-based line of the file where the record starts. */
  line: number;
  reason: string;
}

export interface ImportProgress {
  bytesRead: number;
  totalBytes: number;
  records: number;
}

export interface CsvImportOptions {
  importedAt: string;
  onProgress?: (progress: ImportProgress) => void;
  onReject?: (rejected: RejectedRow) => void;
  /** Rows per transaction (default 25,000). */
  transactionRows?: number;
}

export interface CsvImportCounts {
  /** Data records read (the header excluded, malformed records included). */
  read: number;
  upserted: number;
  ignored: number;
  rejected: number;
  /** Why records were ignored, with counts. */
  ignoredReasons: Record<string, number>;
}

interface NumberedRecord {
  /** 1-based line the record starts on. */
  line: number;
  record: string[];
}

/** SQLite's compiled-in bind limit is 32,766; PostgreSQL's protocol allows 65,535. */
const MAX_PARAMS = { sqlite: 32_000, postgres: 65_000 } as const;
const DEFAULT_TRANSACTION_ROWS = 25_000;
const PROGRESS_EVERY = 4096;

export async function importCsv<R extends object>(
  store: Store,
  spec: DatasetSpec<R>,
  file: string,
  options: CsvImportOptions,
): Promise<CsvImportCounts> {
  let totalBytes: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw new Error('not a regular file');
    totalBytes = stat.size;
  } catch (error) {
    throw new OpenDataError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const input = createReadStream(file, { highWaterMark: 256 * 1024 });
  let bytesRead = 0;
  input.on('data', (chunk) => {
    bytesRead += chunk.length;
  });
  // Line numbers are counted where records are parsed (not where they are consumed: the
  // parser runs ahead of the loop below, and malformed-record events arrive in parse order).
  // The line the next record starts on is one past where the previous one ended.
  let nextLine = 1;
  const parserOptions: Options<NumberedRecord, string[]> = {
    bom: true,
    on_record: (record: string[]): NumberedRecord => {
      const line = nextLine;
      nextLine = line + 1 + lineBreaksIn(record);
      return { line, record };
    },
    // Field counts are checked here, per record, so a short row is reported rather than fatal.
    relax_column_count: true,
    // A quote inside an unquoted field (`12" PIPE`) is text, as the publishers mean it.
    relax_quotes: true,
    // Empty lines come through as [''] and are skipped below, so line numbers stay exact
    // without csv-parse's per-record `info` objects (a third of its parsing time).
    skip_empty_lines: false,
    skip_records_with_error: true,
  };
  // The typings tie a non-array record type to `columns`; records here are numbered arrays.
  const parser = parse(parserOptions as unknown as Options);
  let source: Readable = input;
  if (file.endsWith('.gz')) {
    const gunzip = createGunzip();
    input.on('error', (error) => gunzip.destroy(error));
    source = input.pipe(gunzip);
  }
  source.on('error', (error) => parser.destroy(error));
  source.pipe(parser);

  const counts: CsvImportCounts = { read: 0, upserted: 0, ignored: 0, rejected: 0, ignoredReasons: {} };
  const reject = (line: number, reason: string) => {
    counts.rejected++;
    options.onReject?.({ line, reason });
  };
  parser.on('skip', (error: Error & { lines?: number }) => {
    counts.read++;
    reject(nextLine, `malformed CSV: ${error.message}`);
    if (typeof error.lines === 'number') nextLine = error.lines + 1;
  });

  const writer = new UpsertWriter(spec, store);
  const pending = new Map<string, R>();
  const flush = async () => {
    if (pending.size === 0) return;
    const rows = [...pending.values()];
    pending.clear();
    await writer.write(rows);
  };
  const progress = () => options.onProgress?.({ bytesRead, totalBytes, records: counts.read });

  let header: Map<string, number> | null = null;
  /** Normalized column → the file's own spelling, for reports. */
  const headerNames = new Map<string, string>();
  let headerLength = 0;
  const current: { record: string[] } = { record: [] };
  const fields: FieldReader = {
    get: (column) => {
      const index = header!.get(column);
      return index === undefined ? '' : (current.record[index] ?? '').trim();
    },
  };
  const transactionRows = options.transactionRows ?? DEFAULT_TRANSACTION_ROWS;

  try {
    for await (const { line: start, record } of parser as AsyncIterable<NumberedRecord>) {
      if (record.length === 1 && record[0] === '') continue;
      if (header === null) {
        header = readHeader(spec, file, record);
        for (const [key, index] of header) headerNames.set(key, record[index]!.trim());
        headerLength = record.length;
        continue;
      }
      counts.read++;
      if (counts.read % PROGRESS_EVERY === 0) progress();
      if (record.length !== headerLength) {
        reject(start, `has ${record.length} fields; the header has ${headerLength}`);
        continue;
      }
      current.record = record;
      let outcome: ReturnType<DatasetSpec<R>['parse']>;
      try {
        outcome = spec.parse(fields, options.importedAt);
      } catch (error) {
        if (!(error instanceof FieldError)) throw error;
        reject(start, `${headerNames.get(error.column) ?? error.column}: ${error.detail}`);
        continue;
      }
      if ('ignore' in outcome) {
        counts.ignored++;
        counts.ignoredReasons[outcome.ignore] = (counts.ignoredReasons[outcome.ignore] ?? 0) + 1;
        continue;
      }
      counts.upserted++;
      // Later rows win: a key repeated in one batch would otherwise hit the same row twice in one statement.
      const key = spec.key(outcome.row);
      pending.delete(key);
      pending.set(key, outcome.row);
      if (pending.size >= transactionRows) {
        await flush();
        progress();
      }
    }
  } catch (error) {
    input.destroy();
    if (error instanceof OpenDataError) throw error;
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR' || code === 'Z_DATA_ERROR')
      throw new OpenDataError(`cannot read ${file}: ${(error as Error).message}`);
    throw error;
  }
  if (header === null) throw new OpenDataError(`${file} is empty: expected a CSV header line`);
  await flush();
  progress();
  return counts;
}

/** Line breaks inside quoted fields: a record spans 1 + this many lines. */
function lineBreaksIn(record: readonly string[]): number {
  let breaks = 0;
  for (const field of record) {
    if (field.indexOf('\n') === -1 && field.indexOf('\r') === -1) continue;
    // CRLF, LF and lone CR each end one line.
    breaks += field.match(/\r\n|\n|\r/g)?.length ?? 0;
  }
  return breaks;
}

function readHeader<R extends object>(
  spec: DatasetSpec<R>,
  file: string,
  record: string[],
): Map<string, number> {
  const header = new Map<string, number>();
  record.forEach((name, index) => {
    const key = normalizeColumn(name);
    if (key !== '' && !header.has(key)) header.set(key, index);
  });
  const missing = spec.requiredColumns
    .filter((need) => (typeof need === 'string' ? !header.has(need) : !need.some((c) => header.has(c))))
    .map((need) => (typeof need === 'string' ? need : need.join(' or ')));
  if (missing.length > 0) {
    const found = record.slice(0, 30).join(', ');
    throw new OpenDataError(
      `${file} is not a ${spec.name} file (${spec.source}): missing required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}; found: ${found}${record.length > 30 ? ', …' : ''}`,
    );
  }
  return header;
}

/**
 * Multi-row `INSERT … ON CONFLICT (natural key) DO UPDATE` statements, bound
 * as raw parameter lists (no query builder per row: a million rows would spend
 * most of their time building node trees). One transaction per call.
 */
class UpsertWriter<R extends object> {
  private readonly statementRows: number;
  private readonly sqlCache = new Map<number, string>();

  constructor(
    private readonly spec: DatasetSpec<R>,
    private readonly store: Store,
  ) {
    this.statementRows = Math.floor(MAX_PARAMS[store.dialect] / spec.columns.length);
  }

  async write(rows: readonly R[]): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += this.statementRows) {
        await this.statement(trx, rows.slice(i, i + this.statementRows));
      }
    });
  }

  private async statement(db: Kysely<Database>, rows: readonly R[]): Promise<void> {
    const values: unknown[] = [];
    for (const row of rows) {
      const record = row as Record<string, unknown>;
      for (const column of this.spec.columns) values.push(record[column] ?? null);
    }
    await db.executeQuery(CompiledQuery.raw(this.sql(rows.length), values));
  }

  private sql(rows: number): string {
    const cached = this.sqlCache.get(rows);
    if (cached) return cached;
    const { columns, keyColumns, table } = this.spec;
    const postgres = this.store.dialect === 'postgres';
    const tuples: string[] = [];
    for (let r = 0; r < rows; r++) {
      const marks = columns.map((_, c) => (postgres ? `$${r * columns.length + c + 1}` : '?'));
      tuples.push(`(${marks.join(',')})`);
    }
    const updates = columns
      .filter((c) => !(keyColumns as readonly string[]).includes(c))
      .map((c) => `"${c}" = excluded."${c}"`);
    const text =
      `insert into "${table}" (${columns.map((c) => `"${c}"`).join(',')}) values ${tuples.join(',')} ` +
      `on conflict (${keyColumns.map((c) => `"${c}"`).join(',')}) do update set ${updates.join(', ')}`;
    // Only the full-size statement recurs; the tail sizes would just hold memory.
    if (rows === this.statementRows) this.sqlCache.set(rows, text);
    return text;
  }
}
