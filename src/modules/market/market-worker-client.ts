/**
 * The market engine on a worker thread (market-worker.ts), for a store
 * another thread can open (file SQLite, PostgreSQL).
 *
 * Contract (MarketEngine):
 * - build() resolves once the worker has installed the rows of that version,
 *   with the figures asked for; figures() resolves with figures and the
 *   version they came from. Both reject when the worker failed or died.
 * - One long-lived worker, started on the first call: it holds the rows
 *   figures are computed from. A worker that died is replaced on the next
 *   call; the new one has no rows until the next build, so figures() rejects
 *   until then (MarketService rebuilds and asks again).
 * - The worker never keeps the process alive (unref'd); close() ends it.
 */
import type { Logger } from 'pino';
import type { SharedStoreOptions } from '../../platform/db/database.ts';
import { DatabaseUnavailableError } from '../../platform/db/errors.ts';
import { RequestWorker, type WithoutId } from '../../platform/worker/request-worker.ts';
import type { FiguresRequest, MarketEngine, VersionedFigures } from './market-engine.ts';
import type {
  FromMarketWorker,
  MarketWorkerFailure,
  MarketWorkerInit,
  ToMarketWorker,
} from './market-worker.ts';
import type { SnapshotFigures } from './snapshot.ts';

const WORKER_MODULE = new URL('./market-worker.ts', import.meta.url).href;

/** The worker's failure as an error of this thread: a database that cannot serve stays a DatabaseUnavailableError. */
export function failureOf(record: MarketWorkerFailure): Error {
  if (record.location !== undefined && record.reason !== undefined) {
    return new DatabaseUnavailableError(record.location, record.reason);
  }
  const error = new Error(record.message);
  error.name = record.name;
  return error;
}

export class MarketWorkerClient implements MarketEngine {
  private readonly worker: RequestWorker<ToMarketWorker, FromMarketWorker>;

  constructor(store: SharedStoreOptions, areaIds: readonly number[], log: Pick<Logger, 'warn'>) {
    this.worker = new RequestWorker({
      name: 'the market worker',
      init: (): MarketWorkerInit => ({ entry: WORKER_MODULE, store, areaIds }),
      closeMessage: { type: 'close' } satisfies ToMarketWorker,
      onError: (error) => log.warn({ err: error }, 'market worker failed; it is replaced on the next call'),
    });
  }

  async build(
    version: string,
    precompute: readonly FiguresRequest[],
    nowMs: number,
  ): Promise<SnapshotFigures[]> {
    const answer = await this.ask({ type: 'build', version, precompute: [...precompute], nowMs });
    if (answer.type !== 'built') throw new Error(`market worker answered ${answer.type} to build`);
    return answer.figures;
  }

  async figures(request: FiguresRequest, nowMs: number): Promise<VersionedFigures> {
    const answer = await this.ask({ type: 'figures', request, nowMs });
    if (answer.type !== 'figures') throw new Error(`market worker answered ${answer.type} to figures`);
    return { version: answer.version, figures: answer.figures };
  }

  /** Ends the worker (calls in flight reject). */
  close(): Promise<void> {
    return this.worker.close();
  }

  private ask(request: WithoutId<ToMarketWorker>): Promise<FromMarketWorker> {
    return this.worker.request(request, (message) => {
      if (message.type === 'failed') throw failureOf(message.error);
      return message;
    });
  }
}
