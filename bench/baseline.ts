import { Worker } from 'node:worker_threads';

export interface RunningBaseline {
  readonly url: string;
  readonly bodyBytes: number;
  readonly worker: Worker;
}

/*
 * The server runs in a worker thread of the bench process rather than on the
 * main thread: autocannon lives on the main thread, and sharing one event loop
 * with the load generator would roughly halve the baseline and flatter every
 * ratio. The real service has its own process, so this keeps the comparison fair.
 * Plain CommonJS source because an eval'd worker does not go through tsx.
 */
const WORKER_SOURCE = `
const { createServer } = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const body = Buffer.from(workerData.body);
const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };
const server = createServer((req, res) => {
  res.writeHead(200, headers);
  res.end(body);
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

/** Serves exactly `body` with `content-type: application/json` on every path. */
export async function startBaseline(body: Uint8Array): Promise<RunningBaseline> {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { body } });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', (value: number) => resolve(value));
    worker.once('error', reject);
  });
  // After start-up a crash shows up as connection errors in the baseline row; say why too.
  worker.on('error', (error: Error) => process.stderr.write(`baseline server failed: ${error.message}\n`));
  return { url: `http://127.0.0.1:${port}`, bodyBytes: body.byteLength, worker };
}

export async function stopBaseline(baseline: RunningBaseline): Promise<void> {
  await baseline.worker.terminate();
}
