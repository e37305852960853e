/**
 * The messages between the serving thread and the background-jobs worker
 * (jobs-worker.ts), and what the worker is started with. Everything here is
 * structured-clone data: no functions, no class instances.
 */
import type { Config } from '../../config.ts';
import type { SharedStoreOptions } from '../../platform/db/database.ts';
import type { PeriodicJobStatus } from '../../platform/jobs/periodic-job.ts';
import type { ClockSpec, ErrorRecord } from '../../platform/worker/thread-data.ts';

export {
  type ClockSpec,
  clockFromSpec,
  clockSpecOf,
  type ErrorRecord,
  errorRecord,
} from '../../platform/worker/thread-data.ts';

export interface WorkerInit {
  /** The module the entry shim imports (jobs-worker.ts). */
  entry: string;
  store: SharedStoreOptions;
  clock: ClockSpec;
  /** Whether the refresh cycles run on their schedule (config `refresh`). */
  scheduledRefresh: boolean;
  /** The upstream's kind and call settings; null: no refresh pipeline. Its address comes by message. */
  upstream: { kind: 'reso' | 'simulator'; settings: Config['upstream'] } | null;
  /** Listings per write transaction. */
  writeBatchSize: number;
  /** Real ms between status reports. */
  statusEveryMs: number;
}

export type ToWorker =
  | { type: 'upstream'; url: string }
  | { type: 'replicate'; id: number }
  | { type: 'trigger'; id: number; job: string }
  | { type: 'stop' };

export type FromWorker =
  | { type: 'ready'; jobs: PeriodicJobStatus[] }
  | { type: 'status'; jobs: PeriodicJobStatus[] }
  /** The worker moved the data version: the serving thread's caches must follow. */
  | { type: 'changed' }
  /** An upstream failure the worker's refresher recorded (health shows the latest). */
  | { type: 'failure'; at: string; kind: string }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string; fields?: Record<string, unknown> }
  | { type: 'done'; id: number; error?: ErrorRecord }
  | { type: 'stopped' };
