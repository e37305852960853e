/**
 * Worker threads running the service's TypeScript modules, and how they end.
 * Every worker starts on `entry.mjs`, which registers tsx and imports the
 * module named by `workerData.init.entry` (an absolute file URL).
 */
import { spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { type ResourceLimits, Worker, workerData } from 'node:worker_threads';
import { paceThisThread } from '../yield.ts';
import { BACKGROUND_PRIORITIES, type BackgroundPriority } from './background-priority.ts';
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
    workerData: {
      init,
      servingActivity: inheritedServingActivity() ?? servingActivityBuffer(),
      backgroundPriority: inheritedBackgroundPriority() ?? configuredPriority,
    },
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
 * What a background thread does, which decides how far it steps back:
 *
 * - `rebuild`: read-model rebuilds (the search index, market statistics).
 *   They only read the store and nothing waits on them but their next swap,
 *   so they run at the configured priority (BACKGROUND_PRIORITY: the idle
 *   class by default).
 * - `work`: writers and services other threads wait on (the jobs worker's
 *   refresh cycles, backfill, deliveries and scores; the demo origin feeding
 *   refresh cycles). They always run at nice 10: in the idle class a starved
 *   thread can hold what the request thread waits for (SQLite's write lock, a
 *   checkpoint). Tried on a 2-vCPU VM with the jobs worker idle: under 5-area
 *   search load during the history backfill the max rose (48–80 ms against
 *   36–58) and the backfill nearly stopped (4% in 16 s against 8%).
 */
export type BackgroundRole = 'rebuild' | 'work';

/**
 * Called first by a worker thread that does background work: runs it below
 * the request thread's CPU priority (`lowerThisThreadPriority`, as its role
 * says) and makes its slices of work rest while the request thread serves
 * (./serving-activity.ts).
 */
export function runBehindRequests(role: BackgroundRole): void {
  lowerThisThreadPriority(
    role === 'rebuild' ? (inheritedBackgroundPriority() ?? configuredPriority) : 'nice',
  );
  const activity = inheritedServingActivity();
  if (activity) paceThisThread(new BackgroundPacer(activity));
}

let configuredPriority: BackgroundPriority = 'idle';

/** Set at boot by the composition root: the priority of the rebuild workers started after it. */
export function configureBackgroundPriority(priority: BackgroundPriority): void {
  configuredPriority = priority;
}

function inheritedBackgroundPriority(): BackgroundPriority | undefined {
  const given = (workerData as { backgroundPriority?: unknown } | null)?.backgroundPriority;
  return BACKGROUND_PRIORITIES.find((priority) => priority === given);
}

/** The nice value of background threads that are not in the idle class. */
export const BACKGROUND_NICE = 10;

/** What the calling thread runs at after `lowerThisThreadPriority`. */
export type ThreadPriority = 'idle' | 'nice' | 'unchanged';

/**
 * On a machine with few cores a worker's rebuilds compete with the serving
 * thread for CPU: called on the worker, this lowers the calling thread's
 * priority so requests go first. Linux schedules each thread on its own (by
 * thread id); elsewhere this does nothing.
 *
 * `idle` puts the thread in Linux's `SCHED_IDLE` class (`chrt --idle`: Node
 * has no call for it). A nice value only weighs a thread's share: under the
 * EEVDF scheduler (Linux 6.6+) a thread at nice 10 or 19 that holds a CPU
 * keeps it for its slice while the request thread's wakeup waits. A request
 * thread sharing two vCPUs with a busy nice-10 thread and its load generator
 * served `/v1/areas` at 12,900 req/s, p50 0.69 ms (p99 2.9), against 21,200
 * (p50 0.36, p99 2.2) beside no background work; beside a busy `SCHED_IDLE`
 * thread, which gives the CPU up as soon as any other thread wakes, 17,300
 * req/s, p50 0.42 ms (p99 2.5). The price: while ordinary threads keep every
 * core busy, an idle-class thread gets almost nothing (weight 3 against a
 * nice-0 thread's 1024; a nice-10 one keeps about a tenth). Without `chrt`
 * (util-linux) it falls back to nice.
 */
export function lowerThisThreadPriority(priority: BackgroundPriority = 'nice'): ThreadPriority {
  let tid: number;
  try {
    tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    // No per-thread scheduling here: the thread runs at the process's.
    return 'unchanged';
  }
  if (!Number.isInteger(tid) || tid <= 0) return 'unchanged';
  if (priority === 'idle') {
    const chrt = spawnSync('chrt', ['--idle', '--pid', '0', String(tid)], { stdio: 'ignore', timeout: 5000 });
    if (chrt.status === 0) return 'idle';
  }
  try {
    setPriority(tid, BACKGROUND_NICE);
    return 'nice';
  } catch {
    return 'unchanged';
  }
}
