/**
 * A worker module for the RequestWorker tests: `count` answers `n` `part`
 * messages then `done` (with its thread id); `exit` ends the thread with code
 * 3 at once; `close` ends it as the service's workers do.
 */
import { parentPort, threadId } from 'node:worker_threads';

export type ToCountingWorker =
  | { type: 'count'; id: number; n: number }
  | { type: 'exit'; id: number }
  | { type: 'close' };

export type FromCountingWorker =
  | { type: 'part'; id: number; value: number }
  | { type: 'done'; id: number; threadId: number };

const port = parentPort;
if (!port) throw new Error('counting-worker runs only as a worker thread');
port.on('message', (message: ToCountingWorker) => {
  if (message.type === 'close') port.close();
  else if (message.type === 'exit') process.exit(3);
  else {
    for (let value = 1; value <= message.n; value++)
      port.postMessage({ type: 'part', id: message.id, value });
    port.postMessage({ type: 'done', id: message.id, threadId });
  }
});
