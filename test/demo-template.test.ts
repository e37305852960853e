import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { loadDemoMarket } from '../src/demo/market/load.ts';
import type { Store } from '../src/platform/db/database.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { TEST_NOW, TEST_SEED } from './support/app.ts';
import { loadDemoMarketFromTemplate } from './support/demo-template.ts';
import { createTestStore, TEST_DIALECT } from './support/store.ts';

/** Tables a demo load writes, each with a column order that makes its rows comparable. */
const TABLES = [
  ['areas', 'id'],
  ['buildings', 'id'],
  ['building_scores', 'building_id'],
  ['listings', 'id'],
  ['listing_details', 'listing_id'],
  ['price_events', 'id'],
  ['fees', 'id'],
  ['open_houses', 'id'],
  ['photos', 'key'],
  ['hpd_violations', 'violation_id'],
  ['sync_state', 'scope'],
] as const;

/**
 * A table's rows, in order. The `areas` scope's time is when the store's area
 * tree was written (`syncAreas`, on the wall clock): the template's, a few
 * seconds before the copy.
 */
async function tableRows(store: Store, table: string, orderBy: string): Promise<unknown[]> {
  const { rows } = await sql<
    Record<string, unknown>
  >`SELECT * FROM ${sql.raw(table)} ORDER BY ${sql.raw(orderBy)}`.execute(store.db);
  return rows.map((row) =>
    table === 'sync_state' && row.scope === 'areas' ? { ...row, refreshed_at: '' } : row,
  );
}

/**
 * The harness's stores get the demo market by copy (./support/demo-template.ts):
 * what a test app serves must be what the loader writes, on either dialect.
 */
describe(`demo market template (${TEST_DIALECT})`, () => {
  const stores: Store[] = [];
  afterAll(async () => {
    for (const store of stores) await store.close();
  });

  it('gives a fresh store exactly the rows the loader writes, with identity counters above them', async () => {
    const loaded = await createTestStore();
    const copied = await createTestStore();
    stores.push(loaded, copied);
    const key = { seed: TEST_SEED, scale: 0.01, now: TEST_NOW };
    await syncAreas(loaded);
    await loadDemoMarket(loaded, key);
    await loadDemoMarketFromTemplate(copied, key);

    for (const [table, orderBy] of TABLES) {
      const expected = await tableRows(loaded, table, orderBy);
      const actual = await tableRows(copied, table, orderBy);
      expect(actual.length, table).toBe(expected.length);
      expect(actual, table).toEqual(expected);
    }
    expect((await tableRows(copied, 'listings', 'id')).length).toBeGreaterThan(1000);

    // A row written after the copy gets the next id, as after the loader's own inserts.
    const next = async (store: Store) =>
      (
        await store.db
          .insertInto('price_events')
          .values({
            listing_id: 'after-copy',
            date: '2026-11-02',
            price: 1,
            event: 'LISTED',
            pct_change: null,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    expect(await next(copied)).toBe(await next(loaded));
  });

  it('copies into a second store from the same template, and another key gets its own market', async () => {
    const again = await createTestStore();
    const other = await createTestStore();
    stores.push(again, other);
    await loadDemoMarketFromTemplate(again, { seed: TEST_SEED, scale: 0.01, now: TEST_NOW });
    await loadDemoMarketFromTemplate(other, { seed: TEST_SEED + 1, scale: 0.01, now: TEST_NOW });
    const ids = async (store: Store) =>
      (await store.db.selectFrom('listings').select('id').orderBy('id').execute()).map((r) => r.id);
    expect((await ids(again)).length).toBeGreaterThan(1000);
    expect(await ids(other)).not.toEqual(await ids(again));
  });
});
