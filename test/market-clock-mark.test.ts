import { afterEach, describe, expect, it } from 'vitest';
import { keepMarketClockMark } from '../src/jobs/market-clock-mark.ts';
import {
  LISTINGS_HIGH_WATER_MARK,
  writeHighWaterMark,
  writeMarketClockMark,
} from '../src/jobs/refresh/pipeline-state.repository.ts';
import { DAY_MS, HOUR_MS, ManualClock, ScaledClock } from '../src/platform/clock.ts';
import type { Store } from '../src/platform/db/database.ts';
import { openMarketClock } from '../src/upstream/configured-upstream.ts';
import { createTestStore } from './support/store.ts';

/**
 * Market time never goes backwards across restarts, even when a run writes no
 * data: the market clock's reading is kept in the store and the next start
 * resumes from it.
 */
describe('the market clock across restarts', () => {
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('resumes from the reading a run that wrote no data left behind', async () => {
    store = await createTestStore();
    const wall = new ManualClock(Date.now());
    const dataAt = wall.now().getTime() + 10 * DAY_MS;
    await writeHighWaterMark(store.db, LISTINGS_HIGH_WATER_MARK, new Date(dataAt).toISOString(), wall.now());

    // A static run (1×) over a store 10 days ahead: it starts at the data and runs 3 hours, writing nothing.
    const first = await openMarketClock(store, { wall });
    expect(first.now().getTime()).toBe(dataAt);
    const mark = keepMarketClockMark(store, first, wall);
    wall.advance(3 * HOUR_MS);
    const lastReading = first.now().getTime();
    await mark.stop();

    // The restart resumes where the first run's clock stood, not at the data's instant.
    const second = await openMarketClock(store, { wall });
    expect(second.now().getTime()).toBeGreaterThanOrEqual(lastReading);
    expect(second.now().getTime()).toBe(dataAt + 3 * HOUR_MS);
  });

  it('never records a reading earlier than the one stored', async () => {
    store = await createTestStore();
    const wall = new ManualClock(Date.now());
    const ahead = new ScaledClock({ anchor: wall.now().getTime() + DAY_MS, speed: 1, real: wall });
    await writeMarketClockMark(store.db, ahead.now(), wall.now());
    await writeMarketClockMark(store.db, wall.now(), wall.now());
    const resumed = await openMarketClock(store, { wall });
    expect(resumed.now().getTime()).toBe(wall.now().getTime() + DAY_MS);
  });
});
