/**
 * The index worker's reads (ColumnsKeeper): after listings change (updated,
 * added, removed, moved to the other listing type), the columns it merges
 * from what it kept and the changes since build the same index as a read of
 * every row; and it reads every row again whenever what it kept may not stand.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoMarket } from '../src/demo/market/load.ts';
import type { ListingType } from '../src/domain/listing.ts';
import { buildPortableIndex, type PortablePartition, sortByKey } from '../src/modules/search/active-index.ts';
import { ColumnsKeeper, type ColumnsRead } from '../src/modules/search/index-columns.ts';
import type { Store } from '../src/platform/db/database.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { TEST_NOW, TEST_SEED } from './support/app.ts';
import { createTestStore, NEXT_LISTING_REVISION } from './support/store.ts';

let store: Store;

beforeAll(async () => {
  store = await createTestStore();
  await syncAreas(store);
  await loadDemoMarket(store, { seed: TEST_SEED, scale: 0.01, now: TEST_NOW });
}, 120_000);

afterAll(async () => {
  await store.close();
});

const BUILDINGS = 'buildings=2026-11-01T15:00:00.000Z';

/** A build through `keeper`, and how it read the listings. */
async function build(keeper: ColumnsKeeper, buildings: string | null = BUILDINGS) {
  const { index, read } = await buildPortableIndex(store.db, 0, { keeper, buildings });
  return { partitions: index.partitions, read };
}

/**
 * A partition with its building and sale types decoded: the codes are
 * assigned as types are first met, so two reads may number them apart.
 */
function comparable(partition: PortablePartition) {
  const decode = (codes: Map<string, number>, column: Uint8Array) => {
    const names = new Map([...codes].map(([name, code]) => [code, name]));
    return Array.from(column, (c) => names.get(c) ?? null);
  };
  const { buildingType, saleType, buildingTypeCodes, saleTypeCodes, ...rest } = partition;
  return {
    ...rest,
    buildingTypes: decode(buildingTypeCodes, buildingType),
    saleTypes: decode(saleTypeCodes, saleType),
  };
}

/** Expects the keeper's build to equal a build from a read of every row. */
async function expectSameAsFullRead(partitions: Record<ListingType, PortablePartition>): Promise<void> {
  const full = await build(new ColumnsKeeper());
  expect(full.read.kind).toBe('all');
  for (const type of ['rental', 'sale'] as const) {
    expect(comparable(partitions[type])).toEqual(comparable(full.partitions[type]));
  }
}

async function someIds(where: 'rental' | 'sale', count: number, offset = 0): Promise<string[]> {
  const rows = await store.db
    .selectFrom('listings')
    .select('id')
    .where('listing_type', '=', where)
    .orderBy('id')
    .limit(count)
    .offset(offset)
    .execute();
  return rows.map((r) => r.id);
}

describe('ColumnsKeeper', () => {
  it('merges the listings written since its last read into what it kept: the same index as reading every row', async () => {
    const keeper = new ColumnsKeeper();
    const first = await build(keeper);
    expect(first.read).toEqual({ kind: 'all', rowsRead: expect.any(Number) } satisfies ColumnsRead);
    const listings = first.read.rowsRead;

    // Updated: a new price, a listing that closed, one whose size became unknown.
    const [priced, closed, unsized, moved, removed, copied] = await someIds('rental', 6, 3);
    await store.db
      .updateTable('listings')
      .set({ price: sql`price + 1234`, revision: NEXT_LISTING_REVISION })
      .where('id', '=', priced!)
      .execute();
    await store.db
      .updateTable('listings')
      .set({ status: 'OFF_MARKET', off_market_at: TEST_NOW.toISOString(), revision: NEXT_LISTING_REVISION })
      .where('id', '=', closed!)
      .execute();
    await store.db
      .updateTable('listings')
      .set({ sqft: null, price_per_sqft: null, revision: NEXT_LISTING_REVISION })
      .where('id', '=', unsized!)
      .execute();
    // Moved to the other listing type (now with a sale type).
    await store.db
      .updateTable('listings')
      .set({ listing_type: 'sale', sale_type: 'FORECLOSURE', revision: NEXT_LISTING_REVISION })
      .where('id', '=', moved!)
      .execute();
    await store.db.deleteFrom('listings').where('id', '=', removed!).execute();
    // Added: a copy under new ids, one sorting first and one last.
    const source = await store.db
      .selectFrom('listings')
      .selectAll()
      .where('id', '=', copied!)
      .executeTakeFirstOrThrow();
    for (const id of ['0000-new-first', 'zzzz-new-last']) {
      await store.db
        .insertInto('listings')
        .values({ ...source, id, url_path: `${source.url_path}-${id}`, revision: NEXT_LISTING_REVISION })
        .execute();
    }

    const second = await build(keeper);
    // Six rows written since the first read (the removed one is simply not met again).
    expect(second.read).toEqual({ kind: 'changes', rowsRead: 6 });
    expect(second.partitions.rental.size + second.partitions.sale.size).toBe(listings + 1);
    await expectSameAsFullRead(second.partitions);

    // Nothing written since: nothing read, the same index again.
    const third = await build(keeper);
    expect(third.read).toEqual({ kind: 'changes', rowsRead: 0 });
    await expectSameAsFullRead(third.partitions);
  }, 60_000);

  it('reads every row again when the buildings moved, revisions went back, an id came without a revision, or much changed', async () => {
    const keeper = new ColumnsKeeper();
    expect((await build(keeper)).read.kind).toBe('all');
    expect((await build(keeper)).read.kind).toBe('changes');

    // A building's columns (fiber, transit score) change without a listing revision.
    expect((await build(keeper, 'buildings=later')).read.kind).toBe('all');

    // The market was cleared and loaded again: revisions restart below the last read's.
    const highest = await store.db
      .selectFrom('listings')
      .select((eb) => eb.fn.max('revision').as('top'))
      .executeTakeFirstOrThrow();
    await store.db
      .updateTable('listings')
      .set({ revision: 0 })
      .where('revision', '=', Number(highest.top))
      .execute();
    const afterReset = await build(keeper, 'buildings=later');
    expect(afterReset.read.kind).toBe('all');
    await expectSameAsFullRead(afterReset.partitions);

    // A listing written without a new revision: an id the keeper neither kept nor read.
    const [copied] = await someIds('sale', 1);
    const source = await store.db
      .selectFrom('listings')
      .selectAll()
      .where('id', '=', copied!)
      .executeTakeFirstOrThrow();
    await store.db
      .insertInto('listings')
      .values({
        ...source,
        id: `${source.id}-unrevised`,
        url_path: `${source.url_path}-unrevised`,
        revision: 0,
      })
      .execute();
    const afterUnrevised = await build(keeper, 'buildings=later');
    expect(afterUnrevised.read.kind).toBe('all');
    await expectSameAsFullRead(afterUnrevised.partitions);

    // More than a quarter of the listings changed: one read of every row costs less than the merge.
    await store.db.updateTable('listings').set({ revision: NEXT_LISTING_REVISION }).execute();
    expect((await build(keeper, 'buildings=later')).read.kind).toBe('all');
  }, 60_000);
});

/** The order `sortByKey` promises: ascending, NaN last, -0 equal to 0, ties by index. */
function referenceOrder(key: Float64Array): number[] {
  return Array.from({ length: key.length }, (_, i) => i).sort((x, y) => {
    const kx = key[x]!;
    const ky = key[y]!;
    if (kx < ky) return -1;
    if (kx > ky) return 1;
    if (kx === ky || (Number.isNaN(kx) && Number.isNaN(ky))) return x - y;
    return Number.isNaN(kx) ? 1 : -1;
  });
}

describe('sortByKey (the index sorts)', () => {
  it('orders indices as a stable comparison sort would, for any doubles', async () => {
    const special = fc.constantFrom(
      0,
      -0,
      Number.NaN,
      Infinity,
      -Infinity,
      Number.MIN_VALUE,
      -Number.MIN_VALUE,
      1e12,
    );
    const key = fc.oneof(
      special,
      fc.double(),
      fc.integer({ min: -5, max: 5 }),
      fc.integer({ min: 0, max: 3 }).map((status) => status * 1e12 + 2500),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(key, { maxLength: 400 }), async (values) => {
        const keys = Float64Array.from(values);
        expect(Array.from(await sortByKey(keys))).toEqual(referenceOrder(keys));
      }),
      { numRuns: 400, seed: 20261129 },
    );
  });
});
