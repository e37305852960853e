/**
 * Bulk load of RESO Property records from a file (`stoop ingest listings FILE`),
 * through the same decoder as the RESO Web API source and the same writer
 * (change detection, events) as the refresh pipeline.
 *
 * Formats: JSON Lines (one record per line; streamed, so any size loads in
 * bounded memory), or one JSON document, either an array of records or an
 * OData response `{ "value": [...] }` (read whole: use JSON Lines for big files).
 * A record that does not decode is reported with its line (JSON Lines) or its
 * position (documents) and skipped; every good record is kept.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { knownBuildingIds } from '../../modules/building/building.repository.ts';
import { markChanged, markRecordsRefreshed, searchScopeOf } from '../../modules/freshness/data-version.ts';
import type { Clock } from '../../platform/clock.ts';
import { chunks } from '../../platform/db/batches.ts';
import type { Store } from '../../platform/db/database.ts';
import { decodeListing } from '../../upstream/reso/mapping.ts';
import type { UpstreamListing } from '../../upstream/source.ts';
import { type ApplySummary, addSummary, emptySummary, ListingWriter } from './listing-writer.ts';

export interface RejectedRecord {
  /** 1-based line of the record (JSON Lines) or 1-based position in the document's array. */
  line: number;
  reason: string;
}

export interface IngestReport {
  accepted: number;
  /**
   * Accepted listings whose building the store does not have: they are stored,
   * but search and building pages only show listings of known buildings.
   */
  withoutBuilding: number;
  rejected: RejectedRecord[];
  summary: ApplySummary;
  ms: number;
}

const BATCH = 1000;

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export async function ingestListingsFile(
  store: Store,
  file: string,
  clock: Clock,
  onProgress: (doneBytes: number, totalBytes: number) => void = () => {},
): Promise<IngestReport> {
  const started = performance.now();
  const totalBytes = (await stat(file)).size;
  const writer = new ListingWriter(store);
  const report: IngestReport = {
    accepted: 0,
    withoutBuilding: 0,
    rejected: [],
    summary: emptySummary(),
    ms: 0,
  };
  const buildingIds = new Set<string>();
  let batch: UpstreamListing[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    addSummary(report.summary, await writer.apply(batch, clock.now()));
    report.accepted += batch.length;
    for (const l of batch) buildingIds.add(l.listing.building_id);
    batch = [];
  };
  const take = async (record: unknown, line: number) => {
    try {
      batch.push(decodeListing(record));
    } catch (error) {
      report.rejected.push({ line, reason: reasonOf(error) });
      return;
    }
    if (batch.length >= BATCH) await flush();
  };

  const stream = createReadStream(file, { encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let lineNumber = 0;
  let bytes = 0;
  let documentText: string[] | null = null;
  let sawRecordLine = false;
  for await (const line of lines) {
    lineNumber++;
    bytes += Buffer.byteLength(line) + 1;
    if (documentText) {
      documentText.push(line);
      continue;
    }
    const trimmed = line.trim();
    if (trimmed === '') continue;
    if (!sawRecordLine) {
      sawRecordLine = true;
      // An array, a pretty-printed document (`{` alone) or a one-line OData response is one document.
      if (trimmed.startsWith('[') || trimmed === '{' || hasValueArray(trimmed)) {
        documentText = [line];
        continue;
      }
    }
    let record: unknown;
    try {
      record = JSON.parse(trimmed);
    } catch (error) {
      report.rejected.push({ line: lineNumber, reason: `not valid JSON: ${reasonOf(error)}` });
      continue;
    }
    await take(record, lineNumber);
    if (lineNumber % 1000 === 0) onProgress(Math.min(bytes, totalBytes), totalBytes);
  }

  if (documentText) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(documentText.join('\n'));
    } catch (error) {
      report.rejected.push({
        line: 1,
        reason: `the file is neither JSON Lines nor a JSON document: ${reasonOf(error)}`,
      });
      parsed = [];
    }
    let records: unknown[] = [];
    if (Array.isArray(parsed)) records = parsed;
    else if (hasValue(parsed)) records = parsed.value;
    else
      report.rejected.push({ line: 1, reason: 'a JSON document must be an array or have a `value` array' });
    for (let i = 0; i < records.length; i++) await take(records[i], i + 1);
  }
  await flush();
  // Like every writer of listing data: move the data version of what changed, so
  // a server on the same store drops its caches. An ingest confirms nothing with
  // upstream, so `meta.dataAge` stays.
  const changedAt = clock.now();
  for (const type of report.summary.changedTypes) await markChanged(store.db, searchScopeOf(type), changedAt);
  if (report.summary.detailsWritten > 0) await markChanged(store.db, 'detail', changedAt);
  // Unchanged listings' refreshed_at moved too: readers keeping record headers read them again.
  if (report.summary.unchanged > 0) await markRecordsRefreshed(store.db, changedAt);
  report.withoutBuilding = await countListingsWithoutBuilding(store, buildingIds);
  onProgress(totalBytes, totalBytes);
  report.ms = Math.round(performance.now() - started);
  return report;
}

function hasValue(parsed: unknown): parsed is { value: unknown[] } {
  return (
    typeof parsed === 'object' && parsed !== null && Array.isArray((parsed as { value?: unknown }).value)
  );
}

function hasValueArray(text: string): boolean {
  try {
    return hasValue(JSON.parse(text));
  } catch {
    return false;
  }
}

async function countListingsWithoutBuilding(store: Store, buildingIds: ReadonlySet<string>): Promise<number> {
  const known = await knownBuildingIds(store.db, buildingIds);
  let count = 0;
  for (const part of chunks([...buildingIds].filter((id) => !known.has(id)))) {
    const row = await store.db
      .selectFrom('listings')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('building_id', 'in', part)
      .executeTakeFirstOrThrow();
    count += Number(row.n);
  }
  return count;
}
