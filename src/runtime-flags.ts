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
 * Not set: `--no-allocation-site-pretenuring`. It took the MCP tail away (V8
 * had tenured the allocation sites of an MCP call's short-lived graph: MCP p99
 * 8.9–11.4 → 6.6–6.9 ms), but under refresh cycles that change thousands of
 * listings the longest request of a 5-area search reached 126–130 ms in two
 * of two runs with it, against 60–74 ms in two runs with V8's default
 * (alternating runs from one copy of a store; a third run with the default,
 * under the CPU profiler, reached 118 ms). Not conclusive either way, so the
 * default stays. Those runs still had the request thread's commits
 * checkpointing the SQLite log (100–160 ms each, since removed: see
 * `walCheckpoints` in platform/db/database.ts), so the comparison is worth
 * repeating without them.
 */
export function serviceNodeFlags(
  cores: number = availableParallelism(),
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): string[] {
  if (nodeOptions?.includes('--v8-pool-size')) return [];
  return [`--v8-pool-size=${Math.min(NODE_DEFAULT_POOL, Math.max(1, cores - 1))}`];
}
