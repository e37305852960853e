/**
 * `Jobs` run on a worker thread (jobs-worker.ts): the serving thread keeps
 * only this supervisor, which starts the worker, mirrors its status, forwards
 * its data-version changes and logs, and restarts it when it dies.
 *
 * - start() resolves once the worker's jobs are armed (or it failed to start;
 *   then it is restarted in the background).
 * - stop() asks the worker to stop its jobs (a running run finishes its
 *   current unit, as in-process) and close its store, then ends the thread;
 *   past `stopTimeoutMs` the thread is terminated.
 * - A worker that exits unasked (a crash, a store that could not be opened)
 *   is logged and restarted after a delay that doubles up to a minute; a
 *   restart that stays up resets it. The process itself never fails with it.
 */
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { DataVersion } from '../../modules/freshness/data-version.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Store } from '../../platform/db/database.ts';
import type { PeriodicJobStatus } from '../../platform/jobs/periodic-job.ts';
import { clockSpecOf, type ErrorRecord } from '../../platform/worker/thread-data.ts';
import { endWorker, startModuleWorker } from '../../platform/worker/threads.ts';
import { UpstreamError, type UpstreamFailureKind } from '../../upstream/source.ts';
import type { Jobs } from '../jobs.ts';
import { SERVING_BATCH_SIZE } from '../refresh/listing-writer.ts';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.ts';

const WORKER_MODULE = new URL('./jobs-worker.ts', import.meta.url).href;
const FIRST_RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 60_000;
/** A worker up this long counts as healthy again: the next crash restarts it quickly. */
const STABLE_AFTER_MS = 60_000;

export interface WorkerJobsOptions {
  init: Omit<WorkerInit, 'entry' | 'clock' | 'statusEveryMs'> & { statusEveryMs?: number };
  /** The serving thread's market clock; the worker rebuilds it (see ClockSpec). */
  clock: Clock;
  /** Clock ms per real ms. */
  speed: number;
  /** The upstream's address, when the worker runs the refresh pipeline (may resolve late). */
  upstreamUrl?: () => Promise<string>;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** The worker moved the data version. */
  onDataChanged: () => void;
  /** The worker's refresher recorded an upstream failure. */
  onFailure?: (failure: { at: string; kind: string }) => void;
  /** Real ms stop() waits for the worker before terminating it (default 120 s). */
  stopTimeoutMs?: number;
}

interface Pending {
  resolve: () => void;
  reject: (error: Error) => void;
}

export class WorkerJobs implements Jobs {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private statuses: PeriodicJobStatus[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private active = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private restartDelayMs = FIRST_RESTART_DELAY_MS;
  private startedAt = 0;
  private stopping: Promise<void> | null = null;
  /** Times the worker was restarted after dying unasked (health, tests). */
  restarts = 0;
  /** Whether the worker runs the refresh cycles (then reads' search refreshes go to it). */
  readonly runsRefresh: boolean;

  constructor(private readonly options: WorkerJobsOptions) {
    this.runsRefresh = options.init.upstream !== null;
    // What status shows until the worker first reports: its jobs, none run yet.
    const names = [
      ...(this.runsRefresh && options.init.scheduledRefresh ? ['refresh:search', 'refresh:buildings'] : []),
      'market-snapshots',
      'scores',
    ];
    this.statuses = names.map((name) => ({
      name,
      running: false,
      lastRunAt: null,
      lastError: null,
      nextRunAt: null,
      progress: null,
    }));
  }

  start(): Promise<void> {
    if (this.active) return this.ready ?? Promise.resolve();
    this.active = true;
    this.stopping = null;
    return this.spawn();
  }

  stop(): Promise<void> {
    this.active = false;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.stopping ??= this.stopWorker();
    return this.stopping;
  }

  status(): PeriodicJobStatus[] {
    return this.statuses;
  }

  trigger(job: string): Promise<void> {
    return this.request((id) => ({ type: 'trigger', id, job }));
  }

  /** Runs the search cycle in the worker (single-flight there); rejects with its failure. */
  replicate(): Promise<void> {
    return this.request((id) => ({ type: 'replicate', id }));
  }

  /** Tests: the worker thread, to crash it. */
  get thread(): Worker | null {
    return this.worker;
  }

  // ---- internals -----------------------------------------------------------

  private async request(message: (id: number) => ToWorker): Promise<void> {
    await this.ready;
    const worker = this.worker;
    if (!worker || !this.active) throw new Error('background jobs are not running');
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage(message(id));
    });
  }

  private spawn(): Promise<void> {
    const init: WorkerInit = {
      statusEveryMs: 250,
      ...this.options.init,
      entry: WORKER_MODULE,
      clock: clockSpecOf(this.options.clock, this.options.speed),
    };
    const worker = startModuleWorker(init);
    this.worker = worker;
    this.startedAt = Date.now();
    let markReady: () => void = () => {};
    this.ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'ready') markReady();
      // Its jobs are stopped and its store closed: nothing is left to wait for.
      if (message.type === 'stopped') void worker.terminate();
      this.onMessage(message);
    });
    worker.on('error', (error) => {
      this.options.log.error({ err: error }, 'background jobs worker failed');
    });
    worker.on('exit', (code) => {
      markReady();
      this.onExit(worker, code);
    });
    if (this.options.upstreamUrl) {
      this.options.upstreamUrl().then(
        (url) => {
          if (this.worker === worker) worker.postMessage({ type: 'upstream', url } satisfies ToWorker);
        },
        (error: unknown) =>
          this.options.log.error({ err: error }, 'the upstream did not start; refresh cycles cannot run'),
      );
    }
    return this.ready;
  }

  private onMessage(message: FromWorker): void {
    switch (message.type) {
      case 'ready':
      case 'status':
        this.statuses = message.jobs;
        return;
      case 'changed':
        this.options.onDataChanged();
        return;
      case 'failure':
        this.options.onFailure?.({ at: message.at, kind: message.kind });
        return;
      case 'log':
        this.options.log[message.level](message.fields ?? {}, message.message);
        return;
      case 'done': {
        const pending = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.error) pending?.reject(revive(message.error));
        else pending?.resolve();
        return;
      }
      case 'stopped':
        return;
    }
  }

  private onExit(worker: Worker, code: number): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.statuses = this.statuses.map((s) => ({ ...s, running: false, nextRunAt: null }));
    for (const pending of this.pending.values())
      pending.reject(new Error('the background jobs worker exited'));
    this.pending.clear();
    // Any change it made before dying must show here.
    this.options.onDataChanged();
    if (!this.active) return;
    if (Date.now() - this.startedAt >= STABLE_AFTER_MS) this.restartDelayMs = FIRST_RESTART_DELAY_MS;
    const delay = this.restartDelayMs;
    this.restartDelayMs = Math.min(MAX_RESTART_DELAY_MS, this.restartDelayMs * 2);
    this.options.log.error({ code, restartInMs: delay }, 'background jobs worker exited; restarting it');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (!this.active) return;
      this.restarts++;
      void this.spawn();
    }, delay);
    this.restartTimer.unref();
  }

  private async stopWorker(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await this.ready;
    if (this.worker !== worker) return;
    const ended = await endWorker(
      worker,
      { type: 'stop' } satisfies ToWorker,
      this.options.stopTimeoutMs ?? 120_000,
    );
    if (!ended) this.options.log.warn({}, 'background jobs worker did not stop in time; it was terminated');
  }
}

/** A worker's error on this side: same name, message and kind (health reads `kind`). */
function revive(record: ErrorRecord): Error {
  if (record.name === 'UpstreamError' && record.kind !== undefined)
    return new UpstreamError(record.kind as UpstreamFailureKind, record.message);
  const error = new Error(record.message);
  error.name = record.name;
  return error;
}

export interface ServerJobsOptions {
  /** The upstream's address for the worker's refresh pipeline; absent: the worker runs no refresh cycles. */
  upstreamUrl?: () => Promise<string>;
  store: Store;
  config: Pick<Config, 'refresh' | 'upstream'>;
  upstream?: { kind: 'reso' | 'simulator'; speed: number } | undefined;
  marketClock: Clock;
  dataVersion: Pick<DataVersion, 'invalidate'>;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  onFailure: (failure: { at: string; kind: string }) => void;
}

/**
 * The serving process's jobs on a worker thread, or null when they must run
 * in-process: a store no other thread can open (in-memory SQLite). The worker
 * runs the refresh cycles only when it can reach the upstream by address.
 */
export function createWorkerJobs(options: ServerJobsOptions): WorkerJobs | null {
  const shared = options.store.shared;
  if (shared === null) return null;
  const refresh = options.upstream !== undefined && options.upstreamUrl !== undefined;
  return new WorkerJobs({
    init: {
      store: shared,
      scheduledRefresh: options.config.refresh,
      upstream:
        refresh && options.upstream
          ? { kind: options.upstream.kind, settings: options.config.upstream }
          : null,
      writeBatchSize: SERVING_BATCH_SIZE,
    },
    clock: options.marketClock,
    speed: options.upstream?.speed ?? 1,
    ...(refresh && options.upstreamUrl ? { upstreamUrl: options.upstreamUrl } : {}),
    log: options.log,
    onDataChanged: () => options.dataVersion.invalidate(),
    onFailure: options.onFailure,
  });
}
