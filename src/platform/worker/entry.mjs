// Starts a worker thread on its TypeScript module (`workerData.init.entry`):
// the service runs under tsx, whose loader a worker thread does not inherit
// under every runner (vitest, a plain `node --import tsx`), so it is
// registered here explicitly. Used by the background-jobs worker and the
// in-process market simulator.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.init.entry);
