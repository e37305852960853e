/**
 * Builds search indexes on a worker thread (index-worker.ts) for a store
 * another thread can open (file SQLite, PostgreSQL).
 *
 * Contract:
 * - build(version) resolves with the index the worker read (its arrays moved,
 *   not copied, to this thread) or rejects when the worker failed or died;
 *   the caller falls back to the in-process build and asks again on the next
 *   version (a dead worker is replaced then).
 * - One long-lived worker, started on the first build. It keeps the
 *   listings' columns it read (ColumnsKeeper), so a rebuild reads only the
 *   listings written since the one before. It ends after IDLE_EXIT_MS without
 *   builds (its heap, the kept columns and its connection are freed) and is
 *   started again on the next, which reads every listing. At most one build
 *   runs at a time (SearchService is single-flight).
 * - The worker never keeps the process alive (unref'd); close() ends it.
 */
import type { Logger } from 'pino';
import type { ListingType } from '../../domain/listing.ts';
import type { SharedStoreOptions } from '../../platform/db/database.ts';
import { MORE, RequestWorker } from '../../platform/worker/request-worker.ts';
import { ListingIndex, type PortablePartition } from './active-index.ts';
import { buildingsPartOf } from './index-columns.ts';
import type { FromIndexWorker, IndexWorkerInit, ToIndexWorker } from './index-worker.ts';

const WORKER_MODULE = new URL('./index-worker.ts', import.meta.url).href;
/**
 * The worker's old-generation heap cap (MB). A full-scale build holds about
 * 150 MB of live JS objects (the columns as read), but left uncapped V8 lets
 * the heap grow to several times that before collecting; the cap keeps the
 * process's peak memory near the two indexes it must briefly hold.
 */
const WORKER_OLD_GENERATION_MB = 512;
/**
 * Real ms without a build after which the worker ends. Longer than the demo's
 * refresh schedule (a search cycle every 4–6 market hours: 4–6 minutes at
 * SIM_SPEED 60), so its rebuilds read only the changes: at the demo's full
 * scale (~560k listings) a rebuild reading every row took 9.5 s of CPU,
 * one reading the changes of a refresh cycle 1.5 s. What is kept meanwhile:
 * about 100 MB of typed arrays and 40 MB of ids.
 */
const IDLE_EXIT_MS = 15 * 60_000;

export class IndexWorkerClient {
  private readonly worker: RequestWorker<ToIndexWorker, FromIndexWorker>;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(
    store: SharedStoreOptions,
    private readonly log: Pick<Logger, 'warn'>,
  ) {
    this.worker = new RequestWorker({
      name: 'the search index worker',
      init: (): IndexWorkerInit => ({ entry: WORKER_MODULE, store }),
      closeMessage: { type: 'close' } satisfies ToIndexWorker,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB },
      onIdle: () => {
        this.idleTimer = setTimeout(() => void this.worker.end(), IDLE_EXIT_MS);
        this.idleTimer.unref();
      },
    });
  }

  build(version: string): Promise<ListingIndex> {
    this.clearIdleTimer();
    // Each partition comes in its own message (its memory transferred), then `built`.
    const partitions: Partial<Record<ListingType, PortablePartition>> = {};
    const request = { type: 'build', buildings: buildingsPartOf(version) } as const;
    const built = this.worker.request(request, (message): ListingIndex | typeof MORE => {
      if (message.type === 'partition') {
        partitions[message.listingType] = message.partition;
        return MORE;
      }
      if (message.type === 'failed') {
        const error = new Error(message.error.message);
        error.name = message.error.name;
        throw error;
      }
      const { rental, sale } = partitions;
      if (!rental || !sale) throw new Error('the search index worker sent an incomplete index');
      return ListingIndex.fromPortable(version, {
        partitions: { rental, sale },
        buildMs: message.buildMs,
        threadId: message.threadId,
        build: message.build,
        ...(message.carriedFrom ? { carriedFrom: message.carriedFrom } : {}),
      });
    });
    built.catch((error: unknown) => {
      if (!this.worker.isClosed)
        this.log.warn({ err: error }, 'search index build on the worker failed; building in-process');
    });
    return built;
  }

  /** Ends the worker (a build in flight rejects). */
  async close(): Promise<void> {
    this.clearIdleTimer();
    await this.worker.close();
  }

  private clearIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }
}
