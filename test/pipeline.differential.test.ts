import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoMarket } from '../src/demo/market/load.ts';
import { type Origin, startOrigin } from '../src/demo/simulator/server.ts';
import type { SimulatorEvent } from '../src/demo/simulator/simulator.ts';
import { Refresher } from '../src/jobs/refresh/refresher.ts';
import { readEvents } from '../src/modules/events/event-log.ts';
import { DataVersion } from '../src/modules/freshness/data-version.ts';
import { HOUR_MS, ManualClock, MINUTE_MS } from '../src/platform/clock.ts';
import type { Store } from '../src/platform/db/database.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { ResoListingSource } from '../src/upstream/reso/source.ts';
import { createTestStore } from './support/store.ts';

const SEED = 5;
const SCALE = 0.01;
const T0 = new Date('2026-10-20T09:30:00.000Z');
const SIMULATED_HOURS = 36;
const STEP_MS = 30 * MINUTE_MS;

/** An event as both sides can state it: no sequence, no detection time. */
function key(e: { type: string; listingId: string; oldValue: unknown; newValue: unknown }): string {
  return `${e.type}|${e.listingId}|${JSON.stringify(e.oldValue)}|${JSON.stringify(e.newValue)}`;
}

/** Columns the pipeline takes from upstream: after replication they must equal the simulator's. */
const COMPARED = [
  'status',
  'closed_reason',
  'price',
  'net_effective',
  'months_free',
  'no_fee',
  'bedroom_count',
  'sqft',
  'listed_at',
  'off_market_at',
  'contract_at',
  'lead_photo_key',
  'amenity_mask',
  'detail_scraped',
] as const;

interface World {
  store: Store;
  clock: ManualClock;
  origin: Origin;
  refresher: Refresher;
}

async function world(options: { faultRate: number; retries: number }): Promise<World> {
  const store = await createTestStore();
  await syncAreas(store);
  await loadDemoMarket(store, { seed: SEED, scale: SCALE, now: T0 });
  const clock = new ManualClock(T0);
  const origin = await startOrigin({
    seed: SEED,
    scale: SCALE,
    start: T0,
    clock,
    latency: false,
    faultRate: options.faultRate,
    faultSeed: 99,
    maxHangMs: 200,
  });
  const source = new ResoListingSource({
    url: origin.url,
    timeoutMs: 150,
    retries: options.retries,
    backoff: { baseMs: 1, capMs: 5 },
  });
  const refresher = new Refresher({
    store,
    clock,
    source,
    dataVersion: new DataVersion(store.db, clock),
    pageSize: 200,
  });
  return { store, clock, origin, refresher };
}

async function close(w: World | undefined): Promise<void> {
  if (!w) return;
  await w.origin.close();
  await w.store.close();
}

/** The simulator's listing state now vs the stored rows, column by column. */
async function expectStoreEqualsSimulator(w: World): Promise<number> {
  const upstream = w.origin.simulator.snapshot();
  const rows = new Map((await w.store.db.selectFrom('listings').selectAll().execute()).map((r) => [r.id, r]));
  let compared = 0;
  for (const l of upstream) {
    const row = rows.get(l.listing.id);
    expect(row, `${l.listing.id} is stored`).toBeDefined();
    for (const column of COMPARED)
      expect(row![column], `${l.listing.id}.${column}`).toEqual(l.listing[column]);
    compared++;
  }
  return compared;
}

describe('pipeline differential: simulator over HTTP → RESO source → store', () => {
  let w: World;

  beforeAll(async () => {
    w = await world({ faultRate: 0, retries: 0 });
  });
  afterAll(async () => {
    await close(w);
  });

  it(`logs every change of ${SIMULATED_HOURS} simulated hours exactly once and ends equal to the simulator`, async () => {
    const end = T0.getTime() + SIMULATED_HOURS * HOUR_MS;
    while (w.clock.now().getTime() < end) {
      w.clock.advance(STEP_MS);
      await w.refresher.replicate();
    }
    const expected: SimulatorEvent[] = w.origin.simulator.changesBetween(T0.getTime(), end);
    const logged = await readEvents(w.store.db, { after: 0, limit: 1_000_000 });
    expect(expected.length).toBeGreaterThan(20);
    expect(logged.map(key).sort()).toEqual(expected.map(key).sort());
    expect(await expectStoreEqualsSimulator(w)).toBeGreaterThan(100);
  });

  it('a replication with nothing new upstream writes nothing', async () => {
    const before = (await readEvents(w.store.db, { after: 0, limit: 1_000_000 })).length;
    const result = await w.refresher.replicate();
    expect(result.events).toBe(0);
    expect(result.created + result.updated).toBe(0);
    expect((await readEvents(w.store.db, { after: 0, limit: 1_000_000 })).length).toBe(before);
  });
});

describe('pipeline under faults: 30% of upstream requests time out or fail', () => {
  let w: World;

  beforeAll(async () => {
    w = await world({ faultRate: 0.3, retries: 2 });
  });
  afterAll(async () => {
    await close(w);
  });

  it('converges without losing or duplicating an event', async () => {
    const end = T0.getTime() + 12 * HOUR_MS;
    let failures = 0;
    while (w.clock.now().getTime() < end) {
      w.clock.advance(STEP_MS);
      // A cycle that fails part-way is simply run again at the next step (as the schedule would).
      try {
        await w.refresher.replicate();
      } catch {
        failures++;
      }
    }
    // Catch up after the last step until a cycle succeeds.
    for (let attempt = 0; ; attempt++) {
      try {
        await w.refresher.replicate();
        break;
      } catch (error) {
        failures++;
        if (attempt > 50) throw error;
      }
    }
    expect(w.origin.stats.errors + w.origin.stats.hung).toBeGreaterThan(0);
    const expected = w.origin.simulator.changesBetween(T0.getTime(), end);
    const logged = await readEvents(w.store.db, { after: 0, limit: 1_000_000 });
    expect(logged.map(key).sort()).toEqual(expected.map(key).sort());
    await expectStoreEqualsSimulator(w);
    expect(failures).toBeGreaterThanOrEqual(0);
  });
});
