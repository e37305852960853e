/**
 * The search index built on the index worker (a store another thread can
 * open: file SQLite, PostgreSQL) answers exactly as the in-process build, and
 * a worker that cannot build leaves the in-process build to answer.
 */
import { threadId } from 'node:worker_threads';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoMarket } from '../src/demo/market/load.ts';
import { AMENITIES } from '../src/domain/amenities.ts';
import { BUILDING_TYPES, LISTING_STATUSES, SALE_TYPES } from '../src/domain/listing.ts';
import { listAreas } from '../src/modules/areas/areas.repository.ts';
import { DataVersion, markChanged } from '../src/modules/freshness/data-version.ts';
import { FreshnessPolicy } from '../src/modules/freshness/freshness-policy.ts';
import { noUpstream } from '../src/modules/freshness/refresh-port.ts';
import { ListingIndex } from '../src/modules/search/active-index.ts';
import { IndexWorkerClient } from '../src/modules/search/index-worker-client.ts';
import type { SearchCriteria } from '../src/modules/search/search.repository.ts';
import { SearchService } from '../src/modules/search/search.service.ts';
import { ManualClock } from '../src/platform/clock.ts';
import type { Store } from '../src/platform/db/database.ts';
import { AreaTree } from '../src/reference/areas.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { TEST_NOW, TEST_SEED } from './support/app.ts';
import { createSharedTestStore, NEXT_LISTING_REVISION } from './support/store.ts';

const warnings: unknown[] = [];
const log = { warn: (fields: unknown) => warnings.push(fields) };

let dispose: (() => Promise<void>) | null = null;
let store: Store;

beforeAll(async () => {
  ({ store, dispose } = await createSharedTestStore('stoop-index-worker-'));
  await syncAreas(store);
  await loadDemoMarket(store, { seed: TEST_SEED, scale: 0.02, now: TEST_NOW });
}, 120_000);

afterAll(async () => {
  await dispose?.();
});

const SORTS = ['RECOMMENDED', 'PRICE', 'PRICE_PER_SQFT', 'LISTED_AT', 'DAYS_ON_MARKET', 'DISTANCE'] as const;

/** A point in New York: geo criteria exercise the index's spatial grid. */
const nycPoint = fc.record({
  latitude: fc.double({ min: 40.55, max: 40.9, noNaN: true }),
  longitude: fc.double({ min: -74.1, max: -73.75, noNaN: true }),
});
const geoArb = fc.record({
  box: fc.option(
    fc.tuple(nycPoint, fc.double({ min: 0.001, max: 0.1, noNaN: true })).map(([p, half]) => ({
      minLat: p.latitude - half,
      maxLat: p.latitude + half,
      minLng: p.longitude - half,
      maxLng: p.longitude + half,
    })),
    { nil: null },
  ),
  near: fc.option(
    fc.tuple(nycPoint, fc.integer({ min: 1, max: 50_000 })).map(([p, radiusM]) => ({ ...p, radiusM })),
    { nil: null },
  ),
});

const criteriaArb = (areaIds: number[]): fc.Arbitrary<SearchCriteria> =>
  fc
    .record(
      {
        listingType: fc.constantFrom('rental' as const, 'sale' as const),
        statuses: fc.subarray([...LISTING_STATUSES], { minLength: 1 }),
        areaIds: fc.option(fc.subarray(areaIds, { minLength: 1, maxLength: 6 }), { nil: null }),
        minPrice: fc.option(fc.integer({ min: 0, max: 3_000_000 }), { nil: undefined }),
        maxBeds: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
        minBaths: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
        buildingTypes: fc.option(fc.subarray([...BUILDING_TYPES], { minLength: 1 }), { nil: undefined }),
        saleTypes: fc.option(fc.subarray([...SALE_TYPES], { minLength: 1 }), { nil: undefined }),
        petsAllowed: fc.option(fc.boolean(), { nil: undefined }),
        amenityMask: fc.option(fc.integer({ min: 1, max: (1 << Math.min(AMENITIES.length, 4)) - 1 }), {
          nil: undefined,
        }),
        maxDaysOnMarket: fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }),
        minSqft: fc.option(fc.integer({ min: 300, max: 1500 }), { nil: undefined }),
        geo: fc.option(geoArb, { nil: undefined }),
        sort: fc.constantFrom(...SORTS),
        sortDir: fc.constantFrom('ASC' as const, 'DESC' as const),
      },
      { requiredKeys: ['listingType', 'statuses', 'areaIds', 'sort', 'sortDir'] },
    )
    // The service admits DISTANCE only with `near`.
    .map((c) => ({ ...c, sort: c.sort === 'DISTANCE' && !c.geo?.near ? 'PRICE' : c.sort, now: TEST_NOW }));

/** A search service over the shared store whose index is built by `builder` (the index worker unless given). */
async function workerSearchService(
  clock: ManualClock,
  {
    builder = new IndexWorkerClient(store.shared!, log),
    dataVersion = new DataVersion(store.db, clock),
  }: { builder?: IndexWorkerClient; dataVersion?: DataVersion } = {},
): Promise<SearchService> {
  return new SearchService(
    store.db,
    store.dialect,
    new AreaTree(await listAreas(store.db)),
    clock,
    dataVersion,
    new FreshnessPolicy(noUpstream, dataVersion, clock, 1_000),
    true,
    builder,
  );
}

describe('search index built on the worker', () => {
  it('is built on another thread and answers every search exactly as the in-process build', async () => {
    expect(store.shared).not.toBeNull();
    const client = new IndexWorkerClient(store.shared!, log);
    try {
      const viaWorker = await client.build('v1');
      const inProcess = await ListingIndex.build(store.db, 'v1');
      expect(inProcess.builtOnThread).toBe(threadId);
      expect(viaWorker.builtOnThread).not.toBe(threadId);
      expect(viaWorker.size).toBe(inProcess.size);
      expect(viaWorker.size).toBeGreaterThan(100);
      expect(viaWorker.typedBytes).toBe(inProcess.typedBytes);
      const areaIds = (await listAreas(store.db)).map((a) => a.id);
      fc.assert(
        fc.property(criteriaArb(areaIds), fc.integer({ min: 0, max: 60 }), (c, offset) => {
          const a = viaWorker.search(c, 20, offset);
          const b = inProcess.search(c, 20, offset);
          expect({ total: a.total, ids: a.ids, distances: a.distances }).toEqual({
            total: b.total,
            ids: b.ids,
            distances: b.distances,
          });
        }),
        { numRuns: 300, seed: 12 },
      );
      // A second build reuses the same worker.
      const again = await client.build('v2');
      expect(again.builtOnThread).toBe(viaWorker.builtOnThread);
      expect(again.version).toBe('v2');
    } finally {
      await client.close();
    }
    expect(warnings).toEqual([]);
  }, 120_000);

  it("maps a rebuild's rows to the previous build's (same listing, same revision) for the summaries to be taken over", async () => {
    const client = new IndexWorkerClient(store.shared!, log);
    try {
      const first = await client.build('v1');
      expect(first.build).not.toBeNull();
      expect(first.carriedFrom).toBeNull();
      // One rental changes (price and revision): its row moves and it must not be taken over.
      const changed = await store.db
        .selectFrom('listings')
        .select(['id', 'revision'])
        .where('listing_type', '=', 'rental')
        .where('status', '=', 'ACTIVE')
        .orderBy('id')
        .executeTakeFirstOrThrow();
      await store.db
        .updateTable('listings')
        .set({ price: sql`price + 1000`, revision: NEXT_LISTING_REVISION })
        .where('id', '=', changed.id)
        .execute();
      const second = await client.build('v2');
      expect(second.carriedFrom?.build).toBe(first.build);
      const rows = second.carriedFrom!.rows.rental;
      let unmapped = 0;
      for (let row = 0; row < rows.length; row++) {
        const previous = rows[row]!;
        const id = second.idAt('rental', row);
        if (previous < 0) {
          unmapped++;
          expect(id).toBe(changed.id);
          continue;
        }
        expect(first.idAt('rental', previous)).toBe(id);
        expect(first.revisionAt('rental', previous)).toBe(second.revisionAt('rental', row));
      }
      expect(unmapped).toBe(1);
      expect(second.carriedFrom!.rows.sale.every((previous) => previous >= 0)).toBe(true);
    } finally {
      await client.close();
    }
  }, 120_000);

  it('after a rebuild on the worker, serves the summaries it kept for unchanged listings and renders a changed one again', async () => {
    const clock = new ManualClock(TEST_NOW);
    const dataVersion = new DataVersion(store.db, clock);
    const service = await workerSearchService(clock, { dataVersion });
    const byId = (items: readonly Buffer[]) =>
      new Map(items.map((item) => [(JSON.parse(String(item)) as { id: string }).id, item]));
    try {
      await service.warm();
      const criteria = service.toCriteria('rental', { sort: 'PRICE' });
      const versionBefore = service.indexStatus().version;
      const before = byId((await service.search(criteria, 1, 20, 'd1')).items);
      expect(before.size).toBe(20);
      const changedId = [...before.keys()][5]!;
      const changed = await store.db
        .selectFrom('listings')
        .select(['price', 'revision'])
        .where('id', '=', changedId)
        .executeTakeFirstOrThrow();
      await store.db
        .updateTable('listings')
        .set({ price: changed.price + 1, revision: NEXT_LISTING_REVISION })
        .where('id', '=', changedId)
        .execute();
      await markChanged(store.db, 'search:rental', clock.now());
      dataVersion.invalidate();
      await service.warm();
      expect(service.indexStatus().version).not.toBe(versionBefore);
      const after = byId((await service.search(criteria, 1, 20, 'd2')).items);
      expect(after.has(changedId)).toBe(true);
      let carried = 0;
      for (const [id, item] of after) {
        if (id === changedId) {
          expect(item).not.toBe(before.get(id));
          expect((JSON.parse(String(item)) as { price: number }).price).toBe(changed.price + 1);
        } else if (before.has(id)) {
          // The very buffer rendered before the swap: taken over, not rendered again.
          expect(item).toBe(before.get(id));
          carried++;
        }
      }
      expect(carried).toBeGreaterThanOrEqual(18);
    } finally {
      await service.close();
    }
  }, 120_000);

  it('answers searches that render the same summaries at once with one summary each, the one kept for the index', async () => {
    const clock = new ManualClock(TEST_NOW);
    const service = await workerSearchService(clock);
    try {
      await service.warm();
      // Sales, most expensive first: the warm-up starts from the cheapest rentals, so these are rendered here.
      const criteria = service.toCriteria('sale', { sort: 'PRICE', sortDir: 'DESC' });
      const [a, b] = await Promise.all([
        service.search(criteria, 1, 20, 'd1'),
        service.search(criteria, 1, 20, 'd1'),
      ]);
      expect(a.items.length).toBe(20);
      for (const [i, item] of a.items.entries()) expect(item).toBe(b.items[i]);
      const again = await service.search(criteria, 1, 20, 'd1');
      for (const [i, item] of again.items.entries()) expect(item).toBe(a.items[i]);
    } finally {
      await service.close();
    }
  }, 120_000);

  it('serves from the worker-built index, and from an in-process build when the worker cannot build', async () => {
    const clock = new ManualClock(TEST_NOW);
    // The worker opens a store that is not there (a path under a file): every build fails.
    const broken = new IndexWorkerClient(
      { ...store.shared!, dialect: 'sqlite', databaseUrl: 'sqlite:/dev/null/stoop.sqlite' },
      log,
    );
    const working = await workerSearchService(clock);
    const fallback = await workerSearchService(clock, { builder: broken });
    try {
      await working.warm();
      await fallback.warm();
      expect(working.indexBuiltOnThread()).not.toBeNull();
      expect(working.indexBuiltOnThread()).not.toBe(threadId);
      expect(fallback.indexBuiltOnThread()).toBe(threadId);
      expect(fallback.indexStatus().ready).toBe(true);
      expect(warnings.length).toBe(1);
      const criteria = working.toCriteria('rental', { status: 'ACTIVE,OFF_MARKET', sort: 'PRICE' });
      const a = await working.search(criteria, 2, 10, 'd1');
      const b = await fallback.search(criteria, 2, 10, 'd1');
      expect(a.total).toBeGreaterThan(10);
      expect(a.items.map(String)).toEqual(b.items.map(String));
    } finally {
      await working.close();
      await fallback.close();
    }
  }, 120_000);
});
