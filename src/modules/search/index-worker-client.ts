/**
 * Builds search indexes on a worker thread (index-worker.ts) for a store
 * another thread can open (file SQLite, PostgreSQL).
 *
 * Contract:
 * - build(version) resolves with the index the worker read (its arrays moved,
 *   not copied, to this thread) or rejects when the worker failed or died;
 *   the caller falls back to the in-process build and asks again on the next
 *   version (a dead worker is replaced then).
 * - One long-lived worker, started on the first build; it ends after
 *   IDLE_EXIT_MS without builds (its heap and connection are freed between
 *   bursts of data changes) and is started again on the next. At most one
 *   build runs at a time (SearchService is single-flight).
 * - The worker never keeps the process alive (unref'd); close() ends it.
 */
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { ListingType } from '../../domain/listing.ts';
import type { SharedStoreOptions } from '../../platform/db/database.ts';
import { endWorker, startModuleWorker } from '../../platform/worker/threads.ts';
import { ListingIndex, type PortablePartition } from './active-index.ts';
import type { FromIndexWorker, IndexWorkerInit, ToIndexWorker } from './index-worker.ts';

const WORKER_MODULE = new URL('./index-worker.ts', import.meta.url).href;
/**
 * The worker's old-generation heap cap (MB). A full-scale build holds about
 * 150 MB of live JS objects (the columns as read), but left uncapped V8 lets
 * the heap grow to several times that before collecting; the cap keeps the
 * process's peak memory near the two indexes it must briefly hold.
 */
const WORKER_OLD_GENERATION_MB = 512;
/** Real ms without a build after which the worker ends. */
const IDLE_EXIT_MS = 60_000;

interface Pending {
  version: string;
  /** Partitions received so far (each comes in its own message). */
  partitions: Partial<Record<ListingType, PortablePartition>>;
  resolve: (index: ListingIndex) => void;
  reject: (error: Error) => void;
}

export class IndexWorkerClient {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly store: SharedStoreOptions,
    private readonly log: Pick<Logger, 'warn'>,
  ) {}

  build(version: string): Promise<ListingIndex> {
    if (this.closed) return Promise.reject(new Error('the search index worker is closed'));
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const worker = this.worker ?? this.spawn();
    const id = this.nextId++;
    const built = new Promise<ListingIndex>((resolve, reject) => {
      this.pending.set(id, { version, partitions: {}, resolve, reject });
      worker.postMessage({ type: 'build', id } satisfies ToIndexWorker);
    });
    built.catch((error: unknown) => {
      if (!this.closed)
        this.log.warn({ err: error }, 'search index build on the worker failed; building in-process');
    });
    return built;
  }

  /** Ends the worker (a build in flight rejects). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    await this.endWorker();
  }

  private spawn(): Worker {
    const init: IndexWorkerInit = { entry: WORKER_MODULE, store: this.store };
    const worker = startModuleWorker(init, {
      resourceLimits: { maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB },
    });
    worker.unref();
    this.worker = worker;
    worker.on('message', (message: FromIndexWorker) => this.onMessage(message));
    let failure: Error | null = null;
    worker.on('error', (error) => {
      failure = error;
    });
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.rejectAll(failure ?? new Error(`the search index worker exited (code ${code})`));
    });
    return worker;
  }

  private onMessage(message: FromIndexWorker): void {
    const pending = this.pending.get(message.id);
    if (message.type === 'partition') {
      if (pending) pending.partitions[message.listingType] = message.partition;
      return;
    }
    this.pending.delete(message.id);
    if (this.pending.size === 0 && !this.closed) {
      this.idleTimer = setTimeout(() => void this.endWorker(), IDLE_EXIT_MS);
      this.idleTimer.unref();
    }
    if (!pending) return;
    const { rental, sale } = pending.partitions;
    if (message.type === 'built' && rental && sale) {
      pending.resolve(
        ListingIndex.fromPortable(pending.version, {
          partitions: { rental, sale },
          buildMs: message.buildMs,
          threadId: message.threadId,
        }),
      );
    } else if (message.type === 'built') {
      pending.reject(new Error('the search index worker sent an incomplete index'));
    } else {
      const error = new Error(message.error.message);
      error.name = message.error.name;
      pending.reject(error);
    }
  }

  private rejectAll(error: Error): void {
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }

  /** Asks the worker to close its store and end; terminates it if it has not within a few seconds. */
  private async endWorker(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = null;
    this.rejectAll(new Error('the search index worker was closed'));
    await endWorker(worker, { type: 'close' } satisfies ToIndexWorker, 5_000);
  }
}
