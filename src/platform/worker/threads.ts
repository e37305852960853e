/**
 * Worker threads running the service's TypeScript modules, and how they end.
 * Every worker starts on `entry.mjs`, which registers tsx and imports the
 * module named by `workerData.init.entry` (an absolute file URL).
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { type ResourceLimits, Worker, workerData } from 'node:worker_threads';
import { paceThisThread } from '../yield.ts';
import { BackgroundPacer, servingActivityBuffer } from './serving-activity.ts';

const ENTRY = new URL('./entry.mjs', import.meta.url);

/**
 * A worker thread on the TypeScript module `init.entry`; `init` is its
 * `workerData.init`, beside the request thread's activity count
 * (`servingActivity`, ./serving-activity.ts; a worker's own workers get the same one).
 */
export function startModuleWorker(
  init: { readonly entry: string },
  options: { resourceLimits?: ResourceLimits } = {},
): Worker {
  return new Worker(ENTRY, {
    workerData: { init, servingActivity: inheritedServingActivity() ?? servingActivityBuffer() },
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

/** The request thread's activity count, when this thread is a worker given one. */
function inheritedServingActivity(): SharedArrayBuffer | undefined {
  const given = (workerData as { servingActivity?: unknown } | null)?.servingActivity;
  return given instanceof SharedArrayBuffer ? given : undefined;
}

/**
 * Called first by a worker thread that does background work (read-model
 * rebuilds, backfills, jobs): runs it below the request thread's CPU priority
 * (`lowerThisThreadPriority`) and makes its slices of work rest while the
 * request thread serves (./serving-activity.ts).
 */
export function runBehindRequests(): void {
  lowerThisThreadPriority();
  const activity = inheritedServingActivity();
  if (activity) paceThisThread(new BackgroundPacer(activity));
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
