/**
 * The demo's in-process market simulator on a worker thread (origin-worker.ts):
 * the serving thread keeps only this supervisor. Building the simulator and
 * serving its RESO pages (a full refresh cycle costs seconds of CPU at full
 * scale) then never hold the request thread's event loop.
 *
 * - `origin` resolves with the simulator's URL once it first listens, and
 *   rejects when that first start fails (a port in use, a bad seed): the
 *   failure is the caller's to report, and no restart is attempted.
 * - A thread that dies after it served is logged and restarted on the same
 *   port, so the URL the service and its jobs worker hold stays valid; the
 *   delay doubles from 1 s up to a minute and resets once a thread stays up.
 *   Meanwhile `serving` is false. The process never fails with it.
 * - The restarted simulator is rebuilt from the same seed, scale, start and
 *   market clock: it serves the same market at the same market time.
 * - close() asks the thread to close its server and waits, terminating it
 *   after `closeTimeoutMs`.
 */
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock.ts';
import { clockSpecOf, type ErrorRecord } from '../../platform/worker/thread-data.ts';
import { endWorker, startModuleWorker } from '../../platform/worker/threads.ts';
import type { FromOriginWorker, OriginWorkerInit, ToOriginWorker } from './origin-worker.ts';

const WORKER_MODULE = new URL('./origin-worker.ts', import.meta.url).href;
const FIRST_RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 60_000;
/** A thread up this long counts as healthy again: the next crash restarts it quickly. */
const STABLE_AFTER_MS = 60_000;

export interface OriginThreadOptions {
  seed: number;
  scale: number;
  /** Simulated start instant (the demo load's `now`). */
  start: Date;
  /** The serving thread's market clock; the thread rebuilds it (see ClockSpec). */
  clock: Clock;
  /** Clock ms per real ms. */
  speed: number;
  host: string;
  /** 0: any free port (a restart then reuses the port first bound). */
  port: number;
  latency: boolean;
  faultRate: number;
  token?: string | undefined;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Real ms close() waits for the thread before terminating it (default 10 s). */
  closeTimeoutMs?: number;
}

/** The simulator as the serving thread sees it: an address, served by another thread. */
export interface ThreadOrigin {
  /** The service root, e.g. `http://127.0.0.1:40123/odata`. */
  url: string;
  /** The serving worker's thread id, as it reported it. */
  threadId: number;
}

export class OriginThread {
  /** The first start: the simulator's address, or why it could not start. */
  readonly origin: Promise<ThreadOrigin>;
  /** Times the thread was restarted after dying unasked (tests, logs). */
  restarts = 0;
  private worker: Worker | null = null;
  private current: ThreadOrigin | null = null;
  private readonly init: OriginWorkerInit;
  private closing: Promise<void> | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private restartDelayMs = FIRST_RESTART_DELAY_MS;
  private startedAt = 0;

  constructor(private readonly options: OriginThreadOptions) {
    this.init = {
      entry: WORKER_MODULE,
      seed: options.seed,
      scale: options.scale,
      startMs: options.start.getTime(),
      clock: clockSpecOf(options.clock, options.speed),
      host: options.host,
      port: options.port,
      latency: options.latency,
      faultRate: options.faultRate,
      ...(options.token ? { token: options.token } : {}),
    };
    this.origin = this.spawn();
    this.origin.then(
      (origin) => {
        // Restarts bind the same port: the address handed out stays the simulator's.
        this.init.port = Number(new URL(origin.url).port);
      },
      () => {},
    );
  }

  /** Whether a thread is serving now (false while one restarts). */
  get serving(): boolean {
    return this.current !== null;
  }

  /** The serving thread's id, null while none serves. */
  get threadId(): number | null {
    return this.current?.threadId ?? null;
  }

  /** Tests: the worker thread, to crash it. */
  get thread(): Worker | null {
    return this.worker;
  }

  close(): Promise<void> {
    this.closing ??= this.closeWorker();
    return this.closing;
  }

  // ---- internals -----------------------------------------------------------

  private spawn(): Promise<ThreadOrigin> {
    const worker = startModuleWorker(this.init);
    this.worker = worker;
    return new Promise<ThreadOrigin>((resolve, reject) => {
      let settled = false;
      worker.on('message', (message: FromOriginWorker) => {
        switch (message.type) {
          case 'listening':
            settled = true;
            this.startedAt = Date.now();
            if (this.worker === worker) this.current = { url: message.url, threadId: message.threadId };
            resolve({ url: message.url, threadId: message.threadId });
            return;
          case 'failed':
            settled = true;
            reject(revive(message.error));
            return;
          case 'closed':
            // Its server is closed: nothing is left to wait for.
            void worker.terminate();
            return;
        }
      });
      worker.on('error', (error) => {
        this.options.log.error({ err: error }, 'market simulator thread failed');
        if (!settled) {
          settled = true;
          reject(error);
        }
      });
      worker.on('exit', (code) => {
        if (!settled) {
          settled = true;
          reject(new Error(`the market simulator thread exited (code ${code}) before it served`));
        }
        this.onExit(worker, code);
      });
    });
  }

  private onExit(worker: Worker, code: number): void {
    if (this.worker !== worker) return;
    const served = this.current !== null;
    this.worker = null;
    this.current = null;
    // A first start that failed is reported through `origin`; only a simulator that served comes back.
    if (this.closing || (!served && this.restarts === 0)) return;
    if (served && Date.now() - this.startedAt >= STABLE_AFTER_MS)
      this.restartDelayMs = FIRST_RESTART_DELAY_MS;
    const delay = this.restartDelayMs;
    this.restartDelayMs = Math.min(MAX_RESTART_DELAY_MS, this.restartDelayMs * 2);
    this.options.log.error(
      { code, restartInMs: delay },
      'market simulator thread exited; restarting it (upstream calls fail as unavailable meanwhile)',
    );
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.closing) return;
      this.restarts++;
      this.spawn().then(
        () => this.options.log.info({ restarts: this.restarts }, 'market simulator thread restarted'),
        // Its exit schedules the next attempt.
        (error: unknown) => this.options.log.error({ err: error }, 'market simulator thread did not restart'),
      );
    }, delay);
    this.restartTimer.unref();
  }

  private async closeWorker(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const worker = this.worker;
    if (!worker) return;
    const ended = await endWorker(
      worker,
      { type: 'close' } satisfies ToOriginWorker,
      this.options.closeTimeoutMs ?? 10_000,
    );
    if (!ended) this.options.log.warn({}, 'market simulator thread did not close in time; it was terminated');
  }
}

/** A start failure on this side: same name and message. */
function revive(record: ErrorRecord): Error {
  const error = new Error(record.message);
  error.name = record.name;
  return error;
}
