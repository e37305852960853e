import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoIfEmpty } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import { DEMO_LOADING_SCOPE, hasDemoMarket, loadDemoMarket } from '../src/demo/market/load.ts';
import { forgetScopes, readScope, writeMarker } from '../src/modules/freshness/data-version.ts';
import type { Store } from '../src/platform/db/database.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { createTestStore } from './support/store.ts';

let store: Store;
beforeAll(async () => {
  store = await createTestStore();
  await syncAreas(store);
});
afterAll(async () => {
  await store?.close();
});

const config = loadConfig({ DEMO_SCALE: '0.005', DEMO_SEED: '3' });
const quiet = () => {};

describe('area sync', () => {
  it('writes nothing when the stored tree already matches (the data version stays put)', async () => {
    const before = await readScope(store.db, 'areas');
    expect(before).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await syncAreas(store);
    const after = await readScope(store.db, 'areas');
    expect(after!.at).toBe(before!.at);
    const count = await store.db
      .selectFrom('areas')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(349);
  });
});

describe('first-start seeding', () => {
  it('reloads a demo market whose load was interrupted, instead of refusing to start', async () => {
    await loadDemoMarket(store, { seed: 3, scale: 0.005, now: new Date('2026-11-01T00:00:00Z') });
    // What a stop mid-load leaves: market rows, the loading marker, no completion marker.
    await forgetScopes(store.db, ['demo']);
    await writeMarker(store.db, DEMO_LOADING_SCOPE, new Date('2026-11-01T00:00:00.000Z'));
    expect(await hasDemoMarket(store)).toBe(false);

    expect(await seedDemoIfEmpty(store, config, quiet)).toBe(true);
    expect(await hasDemoMarket(store)).toBe(true);
    const loading = await readScope(store.db, DEMO_LOADING_SCOPE);
    expect(loading).toBeNull();
  });

  it('leaves a complete market, or other market data, alone', async () => {
    expect(await seedDemoIfEmpty(store, config, quiet)).toBe(false);
    await forgetScopes(store.db, ['demo']);
    // Market rows with no demo marker at all: an operator's own feed. Not touched.
    expect(await seedDemoIfEmpty(store, config, quiet)).toBe(false);
    const listings = await store.db
      .selectFrom('listings')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(listings.n)).toBeGreaterThan(0);
  });
});
