/**
 * One import, end to end: stream the file into its dataset table, record the
 * import, derive what the dataset feeds (PLUTO → building facts, FCC →
 * internet providers), recompute scores, and bump the buildings data version.
 */
import type { Clock } from '../../platform/clock.ts';
import type { Store } from '../../platform/db/database.ts';
import type { AreaTree } from '../../reference/areas.ts';
import { applyBroadband, type BroadbandSummary } from './broadband.ts';
import { type CsvImportCounts, type ImportProgress, importCsv, type RejectedRow } from './csv-import.ts';
import {
  type DatasetName,
  type DatasetSpec,
  fccBdc,
  hpdViolations,
  mtaStops,
  nyc311,
  nypdComplaints,
  pluto,
} from './datasets.ts';
import { bumpBuildingsVersion, recordImport } from './opendata.repository.ts';
import { applyPlutoLots, type PlutoMatchSummary } from './pluto-match.ts';
import { computeScores, type ScoresRunSummary } from './scores.ts';

export interface ImportRequest {
  dataset: DatasetName;
  file: string;
  /** Recompute building scores afterwards (default true). */
  scores?: boolean;
  onProgress?: (progress: ImportProgress) => void;
  onReject?: (rejected: RejectedRow) => void;
  transactionRows?: number;
}

export interface ImportSummary {
  dataset: DatasetName;
  file: string;
  importedAt: string;
  counts: CsvImportCounts;
  /** Seconds spent reading and writing the file (derivation and scores excluded). */
  seconds: number;
  recordsPerSecond: number;
  pluto?: PlutoMatchSummary;
  broadband?: BroadbandSummary;
  scores?: ScoresRunSummary;
}

async function importFile(
  store: Store,
  request: ImportRequest,
  importedAt: string,
): Promise<CsvImportCounts> {
  const options = {
    importedAt,
    ...(request.onProgress ? { onProgress: request.onProgress } : {}),
    ...(request.onReject ? { onReject: request.onReject } : {}),
    ...(request.transactionRows ? { transactionRows: request.transactionRows } : {}),
  };
  const run = <R extends object>(spec: DatasetSpec<R>) => importCsv(store, spec, request.file, options);
  switch (request.dataset) {
    case 'hpd-violations':
      return run(hpdViolations);
    case 'pluto':
      return run(pluto);
    case 'fcc-bdc':
      return run(fccBdc);
    case '311':
      return run(nyc311);
    case 'nypd-complaints':
      return run(nypdComplaints);
    case 'mta-stops':
      return run(mtaStops);
  }
}

export async function runImport(
  store: Store,
  areaTree: AreaTree,
  clock: Clock,
  request: ImportRequest,
): Promise<ImportSummary> {
  const importedAt = clock.now().toISOString();
  const started = performance.now();
  const counts = await importFile(store, request, importedAt);
  const seconds = (performance.now() - started) / 1000;
  await recordImport(store.db, {
    dataset: request.dataset,
    imported_at: importedAt,
    source_file: request.file,
    rows_read: counts.read,
    rows_upserted: counts.upserted,
    rows_ignored: counts.ignored,
    rows_rejected: counts.rejected,
  });
  const summary: ImportSummary = {
    dataset: request.dataset,
    file: request.file,
    importedAt,
    counts,
    seconds: Math.round(seconds * 100) / 100,
    recordsPerSecond: seconds > 0 ? Math.round(counts.read / seconds) : counts.read,
  };
  if (request.dataset === 'pluto') summary.pluto = await applyPlutoLots(store.db, importedAt);
  if (request.dataset === 'fcc-bdc') summary.broadband = await applyBroadband(store.db, importedAt);
  if (request.scores !== false) summary.scores = await computeScores(store.db, areaTree, clock);
  // Violations (read by the building endpoints) and building facts changed even without scores.
  await bumpBuildingsVersion(store.db, clock, `open-data import ${request.dataset}`);
  return summary;
}
