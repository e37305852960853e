/**
 * The background-jobs worker: runs every scheduled job of a serving process
 * (refresh cycles, market snapshots and their backfill, building scores) on
 * its own thread with its own store connection, so their queries, writes and
 * computation never hold the serving thread's event loop. Started and
 * supervised by WorkerJobs (worker-jobs.ts); see protocol.ts for the messages.
 *
 * SQLite: a second connection to the same file (WAL: the serving thread keeps
 * reading while a cycle writes; write transactions stay small so the serving
 * thread's own writes never wait long for the lock). PostgreSQL: a small pool
 * of its own.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { listAreas } from '../../modules/areas/areas.repository.ts';
import { DataVersion } from '../../modules/freshness/data-version.ts';
import { openStore } from '../../platform/db/database.ts';
import { isDatabaseUnavailable } from '../../platform/db/errors.ts';
import { startWalCheckpoints, WAL_CHECKPOINT_EVERY_MS } from '../../platform/db/wal-checkpoints.ts';
import { clockFromSpec, errorRecord } from '../../platform/worker/thread-data.ts';
import { runBehindRequests } from '../../platform/worker/threads.ts';
import { AreaTree } from '../../reference/areas.ts';
import { resoSourceFromConfig } from '../../upstream/reso/source.ts';
import type {
  CallOptions,
  ListingPage,
  ListingPageQuery,
  ListingSource,
  UpstreamBuilding,
  UpstreamListing,
} from '../../upstream/source.ts';
import { createJobs } from '../jobs.ts';
import { MarketSnapshotJob } from '../market-snapshots.ts';
import { Refresher } from '../refresh/refresher.ts';
import { ScoresJob } from '../scores.ts';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.ts';

const POOL_SIZE = 3;

/** The upstream, once the serving thread has sent its address (the demo's simulator starts late). */
class LateSource implements ListingSource {
  readonly name = 'reso:worker';

  constructor(private readonly ready: Promise<ListingSource>) {}

  async searchListings(query: ListingPageQuery, options?: CallOptions): Promise<ListingPage> {
    return (await this.ready).searchListings(query, options);
  }

  async fetchListing(id: string, options?: CallOptions): Promise<UpstreamListing> {
    return (await this.ready).fetchListing(id, options);
  }

  async fetchBuilding(id: string, options?: CallOptions): Promise<UpstreamBuilding> {
    return (await this.ready).fetchBuilding(id, options);
  }

  listBuildings(
    query: Parameters<ListingSource['listBuildings']>[0],
    options?: CallOptions,
  ): ReturnType<ListingSource['listBuildings']> {
    return this.ready.then((source) => source.listBuildings(query, options));
  }
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('jobs-worker runs only as a worker thread');
  // Refresh cycles, backfills, deliveries and scores yield the CPU to requests (see runBehindRequests).
  runBehindRequests('work');
  const init = (workerData as { init: WorkerInit }).init;
  const post = (message: FromWorker) => port.postMessage(message);
  const logAt =
    (level: 'info' | 'warn' | 'error') =>
    (fields: unknown, message?: string): void => {
      const entry: FromWorker =
        typeof fields === 'string'
          ? { type: 'log', level, message: fields }
          : { type: 'log', level, message: message ?? '', fields: loggable(fields) };
      post(entry);
    };
  const log = { info: logAt('info'), warn: logAt('warn'), error: logAt('error') };

  let resolveUrl: (url: string) => void = () => {};
  const url = new Promise<string>((resolve) => {
    resolveUrl = resolve;
  });
  const requests: ToWorker[] = [];
  let handle: ((message: ToWorker) => void) | null = null;
  // Messages that arrive while the store opens are handled once the jobs exist.
  port.on('message', (message: ToWorker) => {
    if (message.type === 'upstream') resolveUrl(message.url);
    else if (handle) handle(message);
    else requests.push(message);
  });

  const store = await openStore({ ...init.store, poolSize: POOL_SIZE, log: (line) => log.warn(line) });
  // The request thread's SQLite connections leave checkpoints to this thread (boot.ts).
  const checkpoints = startWalCheckpoints(store, WAL_CHECKPOINT_EVERY_MS, (error) =>
    log.warn({ err: error }, 'checkpointing the SQLite write-ahead log failed'),
  );
  const clock = clockFromSpec(init.clock);
  const areaTree = new AreaTree(await listAreas(store.db));
  const dataVersion = new DataVersion(store.db, clock);
  dataVersion.onInvalidate(() => post({ type: 'changed' }));
  const upstream = init.upstream;
  const refresher = upstream
    ? new Refresher({
        store,
        source: new LateSource(
          url.then((u) => resoSourceFromConfig({ upstream: upstream.settings }, { url: u })),
        ),
        clock,
        dataVersion,
        log,
        upstreamKind: upstream.kind,
        writeBatchSize: init.writeBatchSize,
      })
    : undefined;
  const jobs = createJobs({
    refresher,
    scheduledRefresh: init.scheduledRefresh,
    dataVersion,
    clock,
    speed: init.clock.speed,
    log,
    marketSnapshots: new MarketSnapshotJob(store.db, areaTree, clock),
    scores: new ScoresJob(store.db, areaTree, clock),
  });

  let lastFailureAt: string | null = null;
  const report = () => {
    post({ type: 'status', jobs: jobs.status() });
    const failure = refresher?.status().lastFailure ?? null;
    if (failure && failure.at !== lastFailureAt) {
      lastFailureAt = failure.at;
      post({ type: 'failure', at: failure.at, kind: failure.kind });
    }
  };
  const reporting = setInterval(report, init.statusEveryMs);
  let stopping = false;

  handle = (message) => {
    switch (message.type) {
      case 'replicate':
        if (!refresher) {
          post({ type: 'done', id: message.id, error: errorRecord(new Error('no upstream')) });
          return;
        }
        refresher.replicate().then(
          () => post({ type: 'done', id: message.id }),
          (error: unknown) => post({ type: 'done', id: message.id, error: errorRecord(error) }),
        );
        return;
      case 'trigger':
        jobs.trigger(message.job).then(
          () => {
            report();
            post({ type: 'done', id: message.id });
          },
          (error: unknown) => post({ type: 'done', id: message.id, error: errorRecord(error) }),
        );
        return;
      case 'stop':
        if (stopping) return;
        stopping = true;
        void (async () => {
          clearInterval(reporting);
          checkpoints.stop();
          await jobs.stop();
          report();
          await store.close();
          post({ type: 'stopped' });
          port.close();
        })();
        return;
      case 'upstream':
        return;
    }
  };
  await jobs.start();
  post({ type: 'ready', jobs: jobs.status() });
  for (const message of requests.splice(0)) handle(message);
}

/** Log fields that survive structured cloning: errors become plain records. */
function loggable(fields: unknown): Record<string, unknown> {
  if (typeof fields !== 'object' || fields === null) return { value: String(fields) };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error ? errorRecord(value) : typeof value === 'function' ? undefined : value;
  }
  return out;
}

main().catch((error: unknown) => {
  parentPort?.postMessage({
    type: 'log',
    level: 'error',
    message: 'background jobs worker failed',
    fields: { err: errorRecord(error) },
  } satisfies FromWorker);
  // The scheduled refreshes cannot run while the worker cannot start (a store
  // away at its start): health reports that as the pipeline's failure, as it
  // would a cycle that failed on a worker already running.
  const init = (workerData as { init?: WorkerInit } | undefined)?.init;
  if (init?.upstream) {
    parentPort?.postMessage({
      type: 'failure',
      at: clockFromSpec(init.clock).now().toISOString(),
      kind: isDatabaseUnavailable(error) ? 'database_unavailable' : 'internal',
    } satisfies FromWorker);
  }
  // Ends this thread only; the serving thread restarts it.
  process.exit(1);
});
