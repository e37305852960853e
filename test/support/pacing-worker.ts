/**
 * A background worker module for the pacing tests: runs `slices` slices of
 * `workMs` of busy work, each followed by `yieldToEventLoop`, and answers how
 * long that took in all (work and rests).
 */
import { readlinkSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { type BackgroundRole, runBehindRequests } from '../../src/platform/worker/threads.ts';
import { yieldToEventLoop } from '../../src/platform/yield.ts';

export type ToPacingWorker =
  | { type: 'run'; slices: number; workMs: number }
  | { type: 'thread-id' }
  | { type: 'close' };
export type FromPacingWorker =
  | { type: 'ran'; elapsedMs: number; workedMs: number }
  | { type: 'thread-id'; threadId: number };

// The role comes with the start (`startModuleWorker({ entry, role })`); a rebuild unless told.
runBehindRequests((workerData as { init: { role?: BackgroundRole } }).init.role ?? 'rebuild');
const port = parentPort;
if (!port) throw new Error('pacing-worker runs only as a worker thread');
port.on('message', async (message: ToPacingWorker) => {
  if (message.type === 'close') {
    port.close();
    return;
  }
  if (message.type === 'thread-id') {
    // The OS thread id (Linux), whose scheduling the test reads from /proc.
    port.postMessage({
      type: 'thread-id',
      threadId: Number(readlinkSync('/proc/thread-self').split('/').pop()),
    });
    return;
  }
  const started = performance.now();
  let workedMs = 0;
  for (let i = 0; i < message.slices; i++) {
    const sliceStart = performance.now();
    while (performance.now() - sliceStart < message.workMs) {
      // Busy: a slice of background work.
    }
    workedMs += performance.now() - sliceStart;
    await yieldToEventLoop();
  }
  port.postMessage({ type: 'ran', elapsedMs: performance.now() - started, workedMs });
});
