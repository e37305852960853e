import { availableParallelism } from 'node:os';

/** Node's own V8 platform pool size: its most helper threads, whatever the machine. */
const NODE_DEFAULT_POOL = 4;

/**
 * Node flags the service process is started with (`npm start`: src/start.ts;
 * `npm run bench` starts it the same way). They can only be given on a
 * process's command line or in NODE_OPTIONS, so a launcher sets them.
 *
 * `--v8-pool-size`: V8's helper threads do the concurrent and parallel garbage
 * collection of every thread's heap in the process — the request thread's and
 * the workers' (search index, market, jobs). The workers run below the request
 * thread's CPU priority; their helpers do not. Node starts four helpers
 * whatever the machine, so on two cores a worker rebuilding the search index
 * kept four helpers marking its heap beside the request thread, whose event
 * loop then stalled 10–17 ms at a time with nothing to do (measured: 17–35
 * stalls over 5 ms per 9 s build, the longest 11–17 ms; with one helper 0–3,
 * the longest 5–9 ms; with two, 18–29 and 8–9 ms). One helper per core beyond
 * the request thread's, at least one and at most Node's four, keeps that work
 * off its core. A `--v8-pool-size` already in NODE_OPTIONS is left to win.
 *
 * `--no-allocation-site-pretenuring`: V8 learns which allocation sites make
 * objects that survive a young-generation collection and then allocates
 * theirs in the old generation directly. Under load, objects of requests in
 * flight survive the collection that lands mid-request, so V8 tenured the
 * sites of a request's short-lived graph, which then filled the old
 * generation (the heap grew 2.6 MB per scavenge during MCP calls) and drove
 * mark-compact pauses into the tail. Measured on two VMs: MCP p99 8.9–11.4 →
 * 6.6–6.9 ms, and 16.0–16.5 → 13.0–13.3 ms (alternating 8 s runs), 5-area
 * search within noise. Once held back because under month-end refresh cycles
 * the longest search request reached 126–130 ms with it against 60–74 ms
 * without; both arms of that comparison had the request thread's commits
 * checkpointing the SQLite log (100–160 ms each, since removed: see
 * `walCheckpoints` in platform/db/database.ts). Repeated without them
 * (`npm run bench -- --during`, 90 refresh cycles changing 25,100 listings):
 * every `--during` cell met, the longest 5-area request 20.5 ms under refresh.
 */
export function serviceNodeFlags(
  cores: number = availableParallelism(),
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): string[] {
  const pool = nodeOptions?.includes('--v8-pool-size')
    ? []
    : [`--v8-pool-size=${Math.min(NODE_DEFAULT_POOL, Math.max(1, cores - 1))}`];
  return [...pool, '--no-allocation-site-pretenuring'];
}
