/**
 * A bounded work queue with single-flight per key: background work requested
 * by reads (refresh this listing, that building) without letting a burst of
 * requests turn into a storm.
 *
 * - A key that is running or waiting is never added twice: the request is
 *   served by the task already there.
 * - At most `concurrency` tasks run at once; the rest wait in arrival order.
 * - At most `maxPending` tasks wait; past that `add` declines.
 * - A task's failure goes to `onError`; the queue goes on.
 */

export interface TaskQueueOptions<K> {
  /** Tasks running at once (≥ 1). */
  concurrency: number;
  /** Tasks waiting at most (≥ 0); past it `add` returns false. */
  maxPending: number;
  /** Called with every error a task throws, and its key; must not throw. */
  onError?: (error: unknown, key: K) => void;
}

/** Where a key's task is: running, or waiting for a slot. */
export type TaskState = 'running' | 'pending';

export class TaskQueue<K> {
  private readonly concurrency: number;
  private readonly maxPending: number;
  private readonly onError: ((error: unknown, key: K) => void) | undefined;
  /** Waiting tasks, in arrival order (Map keeps insertion order). */
  private readonly waiting = new Map<K, () => Promise<unknown>>();
  private readonly active = new Set<K>();
  private idleWaiters: (() => void)[] = [];

  constructor(options: TaskQueueOptions<K>) {
    if (!(Number.isInteger(options.concurrency) && options.concurrency >= 1))
      throw new RangeError('TaskQueue: concurrency must be an integer ≥ 1');
    if (!(Number.isInteger(options.maxPending) && options.maxPending >= 0))
      throw new RangeError('TaskQueue: maxPending must be an integer ≥ 0');
    this.concurrency = options.concurrency;
    this.maxPending = options.maxPending;
    this.onError = options.onError;
  }

  /**
   * Adds `task` under `key` unless a task for the key is already running or
   * waiting (then this one is dropped: the one there serves the request).
   * Returns whether a task for the key is running or waiting after the call:
   * false only when the key was new and the waiting list is full.
   */
  add(key: K, task: () => Promise<unknown>): boolean {
    if (this.active.has(key) || this.waiting.has(key)) return true;
    if (this.waiting.size >= this.maxPending) return false;
    this.waiting.set(key, task);
    this.drain();
    return true;
  }

  /** Where the key's task is; null when there is none. */
  stateOf(key: K): TaskState | null {
    if (this.active.has(key)) return 'running';
    return this.waiting.has(key) ? 'pending' : null;
  }

  /** Tasks running now. */
  get running(): number {
    return this.active.size;
  }

  /** Tasks waiting for a slot. */
  get pending(): number {
    return this.waiting.size;
  }

  /** Tasks running or waiting. */
  get size(): number {
    return this.active.size + this.waiting.size;
  }

  /** Resolves once nothing runs or waits, including tasks added meanwhile. */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.idleWaiters.push(resolve);
    });
  }

  private drain(): void {
    while (this.active.size < this.concurrency && this.waiting.size > 0) {
      const [key, task] = this.waiting.entries().next().value as [K, () => Promise<unknown>];
      this.waiting.delete(key);
      this.active.add(key);
      void this.runTask(key, task);
    }
  }

  private async runTask(key: K, task: () => Promise<unknown>): Promise<void> {
    try {
      await task();
    } catch (error) {
      try {
        this.onError?.(error, key);
      } catch {
        // A failing error reporter must not stall the queue.
      }
    }
    this.active.delete(key);
    this.drain();
    if (this.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
