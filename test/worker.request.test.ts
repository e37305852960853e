/**
 * RequestWorker (src/platform/worker/request-worker.ts), the client side of
 * the search-index and market workers, on a real worker thread.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MORE, RequestWorker } from '../src/platform/worker/request-worker.ts';
import type { FromCountingWorker, ToCountingWorker } from './support/counting-worker.ts';

const ENTRY = new URL('./support/counting-worker.ts', import.meta.url).href;
const workers: RequestWorker<ToCountingWorker, FromCountingWorker>[] = [];

afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.close()));
});

function countingWorker(onIdle?: () => void) {
  const worker = new RequestWorker<ToCountingWorker, FromCountingWorker>({
    name: 'the counting worker',
    init: () => ({ entry: ENTRY }),
    closeMessage: { type: 'close' },
    ...(onIdle ? { onIdle } : {}),
  });
  workers.push(worker);
  return worker;
}

/** Sums the parts of one `count` request; resolves with the sum and the answering thread. */
function count(worker: RequestWorker<ToCountingWorker, FromCountingWorker>, n: number) {
  let sum = 0;
  return worker.request({ type: 'count', n }, (message) => {
    if (message.type === 'part') {
      sum += message.value;
      return MORE;
    }
    return { sum, threadId: message.threadId };
  });
}

describe('RequestWorker', () => {
  it('gives each request the messages posted with its id, answers concurrent requests apart, and reports idle once all are answered', async () => {
    let idle = 0;
    const worker = countingWorker(() => {
      idle += 1;
    });
    const [a, b] = await Promise.all([count(worker, 4), count(worker, 10)]);
    expect(a.sum).toBe(10);
    expect(b.sum).toBe(55);
    expect(a.threadId).toBe(b.threadId);
    expect(idle).toBe(1);
  });

  it('rejects the request whose receiver throws, and only that one', async () => {
    const worker = countingWorker();
    const failing = worker.request({ type: 'count', n: 2 }, () => {
      throw new Error('bad answer');
    });
    await expect(failing).rejects.toThrow('bad answer');
    expect((await count(worker, 3)).sum).toBe(6);
  });

  it('rejects what is in flight when the worker exits, and starts a new worker on the next request', async () => {
    const worker = countingWorker();
    const before = await count(worker, 1);
    const inFlight = worker.request({ type: 'exit' }, () => 'unreachable');
    await expect(inFlight).rejects.toThrow('the counting worker exited (code 3)');
    const after = await count(worker, 2);
    expect(after.sum).toBe(3);
    expect(after.threadId).not.toBe(before.threadId);
  });

  it('after close, rejects what was in flight and every later request', async () => {
    const worker = countingWorker();
    await count(worker, 1);
    const inFlight = worker.request({ type: 'count', n: 1000 }, () => MORE).catch((error: unknown) => error);
    await worker.close();
    expect(await inFlight).toEqual(new Error('the counting worker was closed'));
    await expect(count(worker, 1)).rejects.toThrow('the counting worker is closed');
    expect(worker.isClosed).toBe(true);
  });
});
