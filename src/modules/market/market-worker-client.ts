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
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { SharedStoreOptions } from '../../platform/db/database.ts';
import { DatabaseUnavailableError } from '../../platform/db/errors.ts';
import { endWorker, startModuleWorker } from '../../platform/worker/threads.ts';
import type { FiguresRequest, MarketEngine, VersionedFigures } from './market-engine.ts';
import type {
  FromMarketWorker,
  MarketWorkerFailure,
  MarketWorkerInit,
  ToMarketWorker,
} from './market-worker.ts';
import type { SnapshotFigures } from './snapshot.ts';

const WORKER_MODULE = new URL('./market-worker.ts', import.meta.url).href;

type Settle = (message: FromMarketWorker) => void;

/** Distributes `ToMarketWorker` without `id` over the union's members. */
type Request = ToMarketWorker extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never;

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
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { settle: Settle; reject: (error: Error) => void }>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly store: SharedStoreOptions,
    private readonly areaIds: readonly number[],
    private readonly log: Pick<Logger, 'warn'>,
  ) {}

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
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    this.worker = null;
    this.rejectAll(new Error('the market worker was closed'));
    await endWorker(worker, { type: 'close' } satisfies ToMarketWorker, 5_000);
  }

  private ask(request: Request): Promise<FromMarketWorker> {
    if (this.closed) return Promise.reject(new Error('the market worker is closed'));
    const worker = this.worker ?? this.spawn();
    const id = this.nextId++;
    return new Promise<FromMarketWorker>((resolve, reject) => {
      this.pending.set(id, {
        settle: (message) => {
          if (message.type !== 'failed') return resolve(message);
          reject(failureOf(message.error));
        },
        reject,
      });
      worker.postMessage({ ...request, id } as ToMarketWorker);
    });
  }

  private spawn(): Worker {
    const init: MarketWorkerInit = { entry: WORKER_MODULE, store: this.store, areaIds: this.areaIds };
    const worker = startModuleWorker(init);
    worker.unref();
    this.worker = worker;
    worker.on('message', (message: FromMarketWorker) => {
      const pending = this.pending.get(message.id);
      this.pending.delete(message.id);
      pending?.settle(message);
    });
    let failure: Error | null = null;
    worker.on('error', (error) => {
      failure = error;
      this.log.warn({ err: error }, 'market worker failed; it is replaced on the next call');
    });
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.rejectAll(failure ?? new Error(`the market worker exited (code ${code})`));
    });
    return worker;
  }

  private rejectAll(error: Error): void {
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
  }
}
