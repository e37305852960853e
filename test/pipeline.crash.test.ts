import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from '../src/modules/events/event-log.ts';
import { readScope, setScopeTimes } from '../src/modules/freshness/data-version.ts';
import { openStore, type Store } from '../src/platform/db/database.ts';
import { cliStore, ROOT, runStoop } from './support/cli.ts';
import { TEST_DIALECT } from './support/store.ts';

const cli = cliStore('crash', {
  DEMO: 'true',
  DEMO_SCALE: '0.03',
  SIM_SPEED: '1',
  SIM_LATENCY: 'false',
});
const { dataDir, databaseUrl, schema } = cli;
const childEnv = cli.env;
const stoop = (...args: string[]) => runStoop(childEnv, args, 120_000);

async function eventCount(store: Store): Promise<number> {
  const row = await store.db
    .selectFrom('listing_events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Starts `stoop refresh --listings` and kills it with SIGKILL as soon as it has
 * committed its first batch (the event count moved): the kill lands while the
 * refresh is still paging and writing. Resolves with the exit signal.
 */
function refreshKilledMidway(store: Store): Promise<NodeJS.Signals | null> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'refresh', '--listings'], {
      cwd: ROOT,
      env: childEnv,
      stdio: 'ignore',
    });
    let baseline: number | null = null;
    const poll = setInterval(() => {
      eventCount(store).then((n) => {
        baseline ??= n;
        if (n > baseline) child.kill('SIGKILL');
      }, fail);
    }, 25);
    child.on('exit', (_code, signal) => {
      clearInterval(poll);
      done(signal);
    });
  });
}

/**
 * Every listing whole: its row's price is the asking price its own history
 * ends on (row and history are written in one transaction), and every logged price
 * move matches a price history entry of that listing.
 */
async function expectNoHalfWrittenListing(store: Store): Promise<void> {
  const rows = await store.db.selectFrom('listings').select(['id', 'price']).execute();
  const history = await store.db
    .selectFrom('price_events')
    .select(['listing_id', 'price', 'event', 'id'])
    .orderBy('listing_id')
    .orderBy('date')
    .orderBy('id')
    .execute();
  const lastPrice = new Map<string, number>();
  // Closings record the closing price, which may differ from the last asking price.
  for (const h of history)
    if (h.event !== 'RENTED' && h.event !== 'SOLD') lastPrice.set(h.listing_id, h.price);
  for (const row of rows) {
    if (!lastPrice.has(row.id)) continue;
    expect(lastPrice.get(row.id), row.id).toBe(row.price);
  }
  const events = await readEvents(store.db, { after: 0, limit: 10_000_000 });
  const prices = new Map(rows.map((r) => [r.id, r]));
  for (const e of events) expect(prices.has(e.listingId), `${e.type} of ${e.listingId}`).toBe(true);
  for (let i = 1; i < events.length; i++)
    expect(events[i]!.sequence).toBeGreaterThan(events[i - 1]!.sequence);
  const keys = events.map((e) => `${e.type}|${e.listingId}|${JSON.stringify(e.newValue)}|${e.occurredAt}`);
  expect(new Set(keys).size).toBe(keys.length);
}

describe('a refresh killed with SIGKILL leaves no half-written listing', () => {
  let store: Store;

  beforeAll(async () => {
    const seeded = await stoop('seed');
    expect(seeded.code, seeded.stderr).toBe(0);
    store = await openStore({
      dialect: TEST_DIALECT,
      databaseUrl,
      ...(schema ? { schema } : {}),
    });
    // The simulated clock resumes from the latest instant the store knows: put it
    // 60 days after the load, so each refresh has two months of changes to apply.
    const loaded = await readScope(store.db, 'search:rental');
    if (!loaded) throw new Error('the seeded store has no search version');
    await setScopeTimes(store.db, ['refresh:buildings'], new Date(Date.parse(loaded.at) + 60 * 86_400_000));
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('kill -9 in the middle of refreshes, then a clean refresh: the store stays whole and the log consistent', async () => {
    for (let round = 0; round < 3; round++) {
      const before = await eventCount(store);
      expect(await refreshKilledMidway(store)).toBe('SIGKILL');
      expect(await eventCount(store)).toBeGreaterThan(before);
      await expectNoHalfWrittenListing(store);
    }
    const eventsBefore = (await readEvents(store.db, { after: 0, limit: 10_000_000 })).length;
    const finished = await stoop('refresh', '--listings');
    expect(finished.code, finished.stderr).toBe(0);
    await expectNoHalfWrittenListing(store);
    const eventsAfter = (await readEvents(store.db, { after: 0, limit: 10_000_000 })).length;
    expect(eventsAfter).toBeGreaterThan(eventsBefore);
  }, 240_000);
});
