/**
 * The in-process market simulator's thread: builds the simulator (seconds of
 * work at full scale) and serves it over loopback HTTP (server.ts) on its own
 * event loop, so building its index, advancing it through a refresh cycle and
 * encoding pages never hold the serving thread. Started and supervised by
 * OriginThread (origin-thread.ts).
 *
 * Messages: the worker posts `listening` with its URL once it serves, or
 * `failed` if it cannot start (then ends); on `close` it closes its server
 * and posts `closed`.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import {
  type ClockSpec,
  clockFromSpec,
  type ErrorRecord,
  errorRecord,
} from '../../platform/worker/thread-data.ts';
import { runBehindRequests } from '../../platform/worker/threads.ts';
import { startOrigin } from './server.ts';

/** What the simulator thread is started with (structured-clone data only). */
export interface OriginWorkerInit {
  /** The module the entry shim imports (this one). */
  entry: string;
  seed: number;
  scale: number;
  /** Simulated start instant (the demo load's `now`), ms. */
  startMs: number;
  /** The serving thread's market clock, rebuilt here: both threads read the same market time. */
  clock: ClockSpec;
  host: string;
  port: number;
  latency: boolean;
  faultRate: number;
  token?: string;
}

export type ToOriginWorker = { type: 'close' };

export type FromOriginWorker =
  /** Serving at `url`; `threadId` is this worker's (it is not the serving thread's). */
  | { type: 'listening'; url: string; threadId: number }
  | { type: 'failed'; error: ErrorRecord }
  | { type: 'closed' };

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('origin-worker runs only as a worker thread');
  // The simulated upstream yields the CPU to requests, as a real one on another machine takes none of it.
  runBehindRequests('work');
  const init = (workerData as { init: OriginWorkerInit }).init;
  const post = (message: FromOriginWorker) => port.postMessage(message);
  let origin: Awaited<ReturnType<typeof startOrigin>>;
  try {
    origin = await startOrigin({
      seed: init.seed,
      scale: init.scale,
      start: new Date(init.startMs),
      clock: clockFromSpec(init.clock),
      host: init.host,
      port: init.port,
      latency: init.latency,
      faultRate: init.faultRate,
      ...(init.token ? { token: init.token } : {}),
    });
  } catch (error) {
    // Nothing else holds this thread open: it ends once the message is out.
    post({ type: 'failed', error: errorRecord(error) });
    return;
  }
  port.on('message', (message: ToOriginWorker) => {
    if (message.type !== 'close') return;
    origin.close().then(
      () => post({ type: 'closed' }),
      () => post({ type: 'closed' }),
    );
  });
  post({ type: 'listening', url: origin.url, threadId });
}

await main();
