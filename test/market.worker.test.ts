/**
 * Market figures computed on the market worker (a store another thread can
 * open: file SQLite, PostgreSQL) equal those of the in-process engine over
 * the same rows, and MarketService recovers when its engine loses its rows (a
 * worker replaced after dying).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoMarket } from '../src/demo/market/load.ts';
import { BUILDING_TYPES } from '../src/domain/listing.ts';
import { listAreas } from '../src/modules/areas/areas.repository.ts';
import { DataVersion } from '../src/modules/freshness/data-version.ts';
import { FreshnessPolicy } from '../src/modules/freshness/freshness-policy.ts';
import { noUpstream } from '../src/modules/freshness/refresh-port.ts';
import { MarketService } from '../src/modules/market/market.service.ts';
import {
  type FiguresRequest,
  InProcessMarketEngine,
  type MarketEngine,
  type VersionedFigures,
} from '../src/modules/market/market-engine.ts';
import { failureOf, MarketWorkerClient } from '../src/modules/market/market-worker-client.ts';
import type { SnapshotFigures } from '../src/modules/market/snapshot.ts';
import { ManualClock } from '../src/platform/clock.ts';
import type { SharedStoreOptions, Store } from '../src/platform/db/database.ts';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../src/platform/db/errors.ts';
import { AreaTree } from '../src/reference/areas.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { TEST_NOW, TEST_SEED } from './support/app.ts';
import { createSharedTestStore } from './support/store.ts';

const warnings: unknown[] = [];
const log = { warn: (fields: unknown) => warnings.push(fields) };

let dispose: (() => Promise<void>) | null = null;
let store: Store;
let shared: SharedStoreOptions;
let areaTree: AreaTree;
let areaIds: number[];

beforeAll(async () => {
  ({ store, dispose } = await createSharedTestStore('stoop-market-worker-'));
  if (!store.shared) throw new Error('the test store cannot be opened by another thread');
  shared = store.shared;
  await syncAreas(store);
  await loadDemoMarket(store, { seed: TEST_SEED, scale: 0.02, now: TEST_NOW });
  areaTree = new AreaTree(await listAreas(store.db));
  areaIds = areaTree.records.map((a) => a.id);
}, 120_000);

afterAll(async () => {
  await dispose?.();
});

const NOW_MS = TEST_NOW.getTime();

function requestArb(): fc.Arbitrary<FiguresRequest> {
  return fc
    .record({
      listingType: fc.constantFrom('rental' as const, 'sale' as const),
      area: fc.constantFrom(...areaTree.records.map((a) => a.id)),
      bedrooms: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
      buildingType: fc.option(fc.constantFrom(...BUILDING_TYPES), { nil: undefined }),
    })
    .map(({ listingType, area, bedrooms, buildingType }) => ({
      listingType,
      areaIds: areaTree.descendantsAndSelf(area),
      bedrooms,
      buildingType,
    }));
}

describe('the market worker', () => {
  it('computes the figures the in-process engine computes, from the version it built', async () => {
    const worker = new MarketWorkerClient(shared, areaIds, log);
    const inProcess = new InProcessMarketEngine(store.db, areaIds);
    try {
      const nyc: FiguresRequest = { listingType: 'rental', areaIds: areaTree.descendantsAndSelf(1) };
      const [built] = await worker.build('v1', [nyc], NOW_MS);
      const [expected] = await inProcess.build('v1', [nyc], NOW_MS);
      expect(built).toEqual(expected);
      expect(built!.inventory).toBeGreaterThan(0);
      await fc.assert(
        fc.asyncProperty(requestArb(), async (request) => {
          const fromWorker = await worker.figures(request, NOW_MS);
          const fromThisThread = await inProcess.figures(request, NOW_MS);
          expect(fromWorker).toEqual(fromThisThread);
          expect(fromWorker.version).toBe('v1');
        }),
        { numRuns: 40 },
      );
    } finally {
      await worker.close();
      await inProcess.close();
    }
    expect(warnings).toEqual([]);
  });

  it('refuses figures before its first build, and every call after close', async () => {
    const worker = new MarketWorkerClient(shared, areaIds, log);
    const request: FiguresRequest = { listingType: 'sale', areaIds: [100] };
    await expect(worker.figures(request, NOW_MS)).rejects.toThrow(/before any build/);
    await worker.build('v1', [], NOW_MS);
    await expect(worker.figures(request, NOW_MS)).resolves.toMatchObject({ version: 'v1' });
    await worker.close();
    await expect(worker.figures(request, NOW_MS)).rejects.toThrow(/closed/);
  });
});

describe('market worker failures', () => {
  it('stay a DatabaseUnavailableError (a 503 to callers) when the database could not serve', () => {
    const unavailable = new DatabaseUnavailableError('the test store', 'disk full');
    const error = failureOf({
      name: unavailable.name,
      message: unavailable.message,
      kind: unavailable.kind,
      location: unavailable.location,
      reason: unavailable.reason,
    });
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(error.message).toBe(unavailable.message);
    const other = failureOf({ name: 'TypeError', message: 'boom' });
    expect(other).not.toBeInstanceOf(DatabaseUnavailableError);
    expect([other.name, other.message]).toEqual(['TypeError', 'boom']);
  });
});

/** The in-process engine, made to forget its rows once (as a replaced worker has none). */
class ForgetfulEngine implements MarketEngine {
  builds = 0;
  figuresAsked = 0;
  private forgotten = false;
  private readonly inner: InProcessMarketEngine;

  constructor() {
    this.inner = new InProcessMarketEngine(store.db, areaIds);
  }

  forget(): void {
    this.forgotten = true;
  }

  async build(
    version: string,
    precompute: readonly FiguresRequest[],
    nowMs: number,
  ): Promise<SnapshotFigures[]> {
    this.builds++;
    this.forgotten = false;
    return this.inner.build(version, precompute, nowMs);
  }

  async figures(request: FiguresRequest, nowMs: number): Promise<VersionedFigures> {
    this.figuresAsked++;
    if (this.forgotten) throw new Error('market figures asked before any build');
    return this.inner.figures(request, nowMs);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A MarketService (market clock at TEST_NOW) over a fresh ForgetfulEngine, after its first build. */
async function warmServiceOverForgetfulEngine(): Promise<{ engine: ForgetfulEngine; market: MarketService }> {
  const clock = new ManualClock(NOW_MS);
  const dataVersion = new DataVersion(store.db, clock);
  const engine = new ForgetfulEngine();
  const market = new MarketService(
    engine,
    areaTree,
    clock,
    dataVersion,
    new FreshnessPolicy(noUpstream, dataVersion, clock, 1_000),
  );
  await market.warm();
  return { engine, market };
}

describe('MarketService over its engine', () => {
  it('builds again and answers when the engine lost its rows', async () => {
    const { engine, market } = await warmServiceOverForgetfulEngine();
    expect(engine.builds).toBe(1);
    // A neighborhood: not among the snapshots a build computes, so this call asks the engine.
    const neighborhood = areaTree.records.find((a) => a.level === 2)!.id;
    const first = await market.snapshotOf({ listingType: 'rental', areaId: neighborhood }, 'INTERNAL');
    engine.forget();
    const again = await market.snapshotOf(
      { listingType: 'rental', areaId: neighborhood, bedrooms: 1 },
      'INTERNAL',
    );
    expect(engine.builds).toBe(2);
    expect(again.data.areaId).toBe(neighborhood);
    expect(again.data.inventory).toBeLessThanOrEqual(first.data.inventory);
    await market.close();
  });

  it('computes a snapshot that several callers miss at once only once', async () => {
    const { engine, market } = await warmServiceOverForgetfulEngine();
    const neighborhood = areaTree.records.find((a) => a.level === 2)!.id;
    const request = { listingType: 'sale' as const, areaId: neighborhood, bedrooms: 2 };
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => market.snapshotOf(request, 'INTERNAL')),
    );
    expect(engine.figuresAsked).toBe(1);
    expect(new Set(answers.map((a) => JSON.stringify(a.data))).size).toBe(1);
    // Kept: the next caller is answered from the cache.
    await market.snapshotOf(request, 'INTERNAL');
    expect(engine.figuresAsked).toBe(1);
    await market.close();
  });
});
