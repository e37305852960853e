/**
 * A worker thread that answers numbered requests: the one implementation
 * behind the clients of the search-index and market workers.
 *
 * Contract:
 * - The worker is started on the first request (unref'd: it never keeps the
 *   process alive) and a worker that died is replaced on the next request.
 * - Every request gets its own `id`; each message the worker posts with that
 *   id goes to the request's receiver, which returns `MORE` while more are to
 *   come, returns the answer, or throws the request's error.
 * - A worker that fails or exits rejects every request in flight (with its
 *   error, or one naming the exit code); `end()` and `close()` do too, asking
 *   the worker to end (`closeMessage`) and terminating it after 5 s. After
 *   `close()` every request rejects.
 * - `onIdle` is called when the last request in flight is answered (not after
 *   `close()`), for a client that ends an idle worker to free its memory.
 */
import type { ResourceLimits, Worker } from 'node:worker_threads';
import { endWorker, startModuleWorker } from './threads.ts';

/** A receiver's "not the last message of this request". */
export const MORE: unique symbol = Symbol('more messages to come');

/** A request as the client writes it: the worker's message without the `id` this class adds. */
export type WithoutId<M> = M extends { id: number } ? Omit<M, 'id'> : never;

/** How long a worker asked to end may take before it is terminated. */
const END_TIMEOUT_MS = 5_000;

export interface RequestWorkerOptions {
  /** How errors name the worker: "the market worker". */
  name: string;
  /** The worker's `workerData.init`: the module to run (`entry`) and what it needs. */
  init: () => { readonly entry: string };
  /** The message that asks the worker to close its store and end. */
  closeMessage: unknown;
  resourceLimits?: ResourceLimits;
  /** Called with the error of a worker that failed (its requests reject with it). */
  onError?: (error: Error) => void;
  onIdle?: () => void;
}

interface Pending<From> {
  receive: (message: From) => void;
  reject: (error: Error) => void;
}

export class RequestWorker<To, From extends { id: number }> {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending<From>>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: RequestWorkerOptions) {}

  /** True once `close()` was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  request<T>(message: WithoutId<To>, receive: (message: From) => T | typeof MORE): Promise<T> {
    if (this.closed) return Promise.reject(new Error(`${this.options.name} is closed`));
    const worker = this.worker ?? this.spawn();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, {
        receive: (answer) => {
          let value: T | typeof MORE;
          try {
            value = receive(answer);
          } catch (error) {
            this.settled(id);
            reject(error instanceof Error ? error : new Error(String(error)));
            return;
          }
          if (value === MORE) return;
          this.settled(id);
          resolve(value);
        },
        reject,
      });
      worker.postMessage({ ...message, id });
    });
  }

  /** Ends the worker if one runs (requests in flight reject); the next request starts another. */
  async end(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = null;
    this.rejectAll(new Error(`${this.options.name} was closed`));
    await endWorker(worker, this.options.closeMessage, END_TIMEOUT_MS);
  }

  /** Ends the worker for good. */
  async close(): Promise<void> {
    this.closed = true;
    await this.end();
  }

  private settled(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0 && !this.closed) this.options.onIdle?.();
  }

  private spawn(): Worker {
    const worker = startModuleWorker(this.options.init(), {
      ...(this.options.resourceLimits ? { resourceLimits: this.options.resourceLimits } : {}),
    });
    worker.unref();
    this.worker = worker;
    worker.on('message', (message: From) => this.pending.get(message.id)?.receive(message));
    let failure: Error | null = null;
    worker.on('error', (error) => {
      failure = error;
      this.options.onError?.(error);
    });
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.rejectAll(failure ?? new Error(`${this.options.name} exited (code ${code})`));
    });
    return worker;
  }

  private rejectAll(error: Error): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const { reject } of pending) reject(error);
  }
}
