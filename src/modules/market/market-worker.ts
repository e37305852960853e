/**
 * The market worker: holds the ACTIVE rows of the data version market figures
 * are served from, with its own store connection, and computes figures on
 * this thread (see MarketWorkerClient in market-worker-client.ts).
 *
 * Messages:
 * - `{ type: 'build', id, version, precompute, nowMs }`: reads the rows of
 *   `version` beside the installed ones, computes `precompute` from them,
 *   installs them, then answers `built` with those figures (or `failed`).
 *   Reads and computations yield between steps, so `figures` messages that
 *   arrive meanwhile are answered from the rows still installed.
 * - `{ type: 'figures', id, request, nowMs }`: answers `figures` with the
 *   installed rows' version, or `failed` before any build.
 * - `{ type: 'close' }`: closes the store and ends the thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openStore, type SharedStoreOptions } from '../../platform/db/database.ts';
import { DatabaseUnavailableError } from '../../platform/db/errors.ts';
import { type ErrorRecord, errorRecord } from '../../platform/worker/thread-data.ts';
import { runBehindRequests } from '../../platform/worker/threads.ts';
import {
  type FiguresRequest,
  figuresFrom,
  type MarketRows,
  precomputeFigures,
  readMarketRows,
} from './market-engine.ts';
import type { SnapshotFigures } from './snapshot.ts';

export interface MarketWorkerInit {
  /** The module the entry shim imports (this file). */
  entry: string;
  store: SharedStoreOptions;
  /** Every area id (the tree's), for the ranged reads. */
  areaIds: readonly number[];
}

export type ToMarketWorker =
  | { type: 'build'; id: number; version: string; precompute: FiguresRequest[]; nowMs: number }
  | { type: 'figures'; id: number; request: FiguresRequest; nowMs: number }
  | { type: 'close' };

export type FromMarketWorker =
  | { type: 'built'; id: number; figures: SnapshotFigures[] }
  | { type: 'figures'; id: number; version: string; figures: SnapshotFigures }
  | { type: 'failed'; id: number; error: MarketWorkerFailure };

export type MarketWorkerFailure = ErrorRecord & { location?: string; reason?: string };

/** One connection: the worker reads one range at a time. */
const POOL_SIZE = 1;

/**
 * A failure as it crosses to the request thread: a database that cannot serve
 * keeps its location and reason, so the client raises the same
 * DatabaseUnavailableError (a 503 to callers) rather than a plain Error.
 */
function failureRecord(error: unknown): MarketWorkerFailure {
  const record = errorRecord(error);
  return error instanceof DatabaseUnavailableError
    ? { ...record, location: error.location, reason: error.reason }
    : record;
}

async function main(): Promise<void> {
  runBehindRequests('rebuild');
  const port = parentPort;
  if (!port) throw new Error('market-worker runs only as a worker thread');
  const init = (workerData as { init: MarketWorkerInit }).init;
  const store = await openStore({ ...init.store, poolSize: POOL_SIZE });
  let installed: MarketRows | null = null;
  const post = (message: FromMarketWorker) => port.postMessage(message);

  const build = async (message: Extract<ToMarketWorker, { type: 'build' }>) => {
    const rows = await readMarketRows(store.db, message.version, init.areaIds);
    const figures = await precomputeFigures(rows, message.precompute, message.nowMs);
    installed = rows;
    return figures;
  };

  port.on('message', (message: ToMarketWorker) => {
    if (message.type === 'close') {
      installed = null;
      void store.close().finally(() => port.close());
      return;
    }
    const { id } = message;
    if (message.type === 'figures') {
      try {
        if (!installed) throw new Error('market figures asked before any build');
        post({
          type: 'figures',
          id,
          version: installed.version,
          figures: figuresFrom(installed, message.request, message.nowMs),
        });
      } catch (error) {
        post({ type: 'failed', id, error: failureRecord(error) });
      }
      return;
    }
    build(message).then(
      (figures) => post({ type: 'built', id, figures }),
      (error: unknown) => post({ type: 'failed', id, error: failureRecord(error) }),
    );
  });
}

await main();
