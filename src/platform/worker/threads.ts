/**
 * Worker threads running the service's TypeScript modules, and how they end.
 * Every worker starts on `entry.mjs`, which registers tsx and imports the
 * module named by `workerData.init.entry` (an absolute file URL).
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { type ResourceLimits, Worker } from 'node:worker_threads';

const ENTRY = new URL('./entry.mjs', import.meta.url);

/** A worker thread on the TypeScript module `init.entry`; `init` is its `workerData.init`. */
export function startModuleWorker(
  init: { readonly entry: string },
  options: { resourceLimits?: ResourceLimits } = {},
): Worker {
  return new Worker(ENTRY, {
    workerData: { init },
    ...(options.resourceLimits ? { resourceLimits: options.resourceLimits } : {}),
  });
}

/**
 * Asks a worker to end (`message`, which its module answers by finishing its
 * unit of work, closing its store and exiting) and waits for it to exit; past
 * `timeoutMs` it is terminated. Resolves true when it ended by itself.
 */
export async function endWorker(worker: Worker, message: unknown, timeoutMs: number): Promise<boolean> {
  const exited = new Promise<true>((resolve) => worker.once('exit', () => resolve(true)));
  worker.postMessage(message);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const endedByItself = await Promise.race([exited, timedOut]);
  clearTimeout(timer);
  if (!endedByItself) await worker.terminate();
  return endedByItself;
}

/** The OS scheduling priority (nice) of worker threads that rebuild read models: below the serving thread. */
export const BACKGROUND_NICE = 10;

/**
 * On a machine with few cores a worker's rebuilds compete with the serving
 * thread for CPU: called on the worker, this lowers the calling thread's
 * priority so requests go first. Linux gives each thread its own nice value
 * (set by thread id); elsewhere this does nothing.
 */
export function lowerThisThreadPriority(nice = BACKGROUND_NICE): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // No per-thread priority here: the thread runs at the process's.
  }
}
