/**
 * Refresh cycles back to back (one a second at most), in their own process, for `npm run bench -- --during`:
 * the pressure of a refresh cycle on a serving node. Each cycle is the
 * scheduled one (`replicate()`: every change upstream since the last cycle)
 * from a `stoop origin` feed whose market moves (run.ts starts it), written
 * into the store the service under test serves; the service sees the data
 * version move within a second and rebuilds its read model, exactly as after
 * a refresh by its own jobs worker (which also has its own connection).
 *
 * Usage (by during.ts): `node --import tsx bench/refresh-loop.ts <origin url> <clock anchor ISO> <speed>`
 * with DATA_DIR / DATABASE_URL of the store. Prints one JSON line per cycle on
 * stdout; SIGTERM ends it after the current cycle.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config.ts';
import { Refresher } from '../src/jobs/refresh/refresher.ts';
import { DataVersion } from '../src/modules/freshness/data-version.ts';
import { ScaledClock } from '../src/platform/clock.ts';
import { lowerThisThreadPriority } from '../src/platform/worker/threads.ts';
import { openConfiguredStore, prepareStore } from '../src/prepared-store.ts';
import { ResoListingSource } from '../src/upstream/reso/source.ts';

/** Real ms from the start of one cycle to the start of the next, at least. */
const MIN_CYCLE_MS = 1000;

async function main(): Promise<void> {
  // It stands in for the service's jobs worker, which runs its cycles at this priority.
  lowerThisThreadPriority();
  const [url, anchor, speed] = process.argv.slice(2);
  if (!url || !anchor || !speed)
    throw new Error('usage: refresh-loop.ts <origin url> <clock anchor> <speed>');
  let stopping = false;
  process.once('SIGTERM', () => {
    stopping = true;
  });
  const store = await openConfiguredStore(loadConfig({ ...process.env, LOG_LEVEL: 'silent' }));
  try {
    await prepareStore(store);
    // The origin's clock: the cycle's writes carry the market time the feed is at.
    const clock = new ScaledClock({ anchor: new Date(anchor), speed: Number(speed) });
    const refresher = new Refresher({
      store,
      clock,
      source: new ResoListingSource({ url, timeoutMs: 60_000 }),
      dataVersion: new DataVersion(store.db, clock),
    });
    process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
    for (let cycle = 1; !stopping; cycle++) {
      const started = Date.now();
      const result = await refresher.replicate();
      process.stdout.write(
        `${JSON.stringify({
          cycle,
          received: result.received,
          created: result.created,
          updated: result.updated,
          events: result.events,
          ms: result.ms,
        })}\n`,
      );
      // At most one cycle a second: each then carries ten market minutes of changes, as a
      // real cycle carries hours; back-to-back empty cycles would measure only CPU contention.
      await sleep(Math.max(0, MIN_CYCLE_MS - (Date.now() - started)));
    }
  } finally {
    await store.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
