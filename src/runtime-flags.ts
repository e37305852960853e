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
 * off its core.
 *
 * `--no-allocation-site-pretenuring`: by default V8 allocates straight into
 * the old generation at the allocation sites whose objects it saw survive
 * young-generation collections. Under MCP load (a new SDK server, transport
 * and schema parse per call, ~200 KB a call, a scavenge every ~30 ms) sites of
 * the per-call graph were tenured, so short-lived objects went to the old
 * generation: the heap grew 2.6 MB per scavenge, scavenges took 3.2–3.6 ms and
 * a mark-compact followed every few seconds — the MCP tail. Without it, 0.9 MB
 * per scavenge taking 1.7–2.1 ms, and MCP calls 2.5–3.1k/s with p99 8.9–11.4 ms
 * became 3.4–3.6k/s with p99 6.6–6.9 ms; a 5-area REST search 9.0–9.4k/s became
 * 9.6–10.8k/s, a geo search was unchanged, and the demo load and history
 * backfill took as long (measured alternately, same build, this 2-core VM).
 *
 * A `--v8-pool-size` already in NODE_OPTIONS is left to win. Node refuses V8's
 * own flags in NODE_OPTIONS, so the pretenuring flag can only come from here
 * (or from the command line of a service started some other way).
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
