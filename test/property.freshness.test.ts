import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TIERS, type Tier } from '../src/domain/tiers.ts';
import { Refresher } from '../src/jobs/refresh/refresher.ts';
import { setScopeTimes } from '../src/modules/freshness/data-version.ts';
import type { LiveOutcome, RefreshPort, RefreshTarget } from '../src/modules/freshness/refresh-port.ts';
import { ListingDetailResponse } from '../src/modules/property/property.schema.ts';
import { MINUTE_MS } from '../src/platform/clock.ts';
import type { ListingRow } from '../src/platform/db/tables.ts';
import { type ListingSource, UpstreamError } from '../src/upstream/source.ts';
import { createTestApp, TEST_NOW, type TestApp, UNLIMITED } from './support/app.ts';
import { expectSchema } from './support/schema.ts';
import { NEXT_LISTING_REVISION } from './support/store.ts';

/** A refresh pipeline stand-in: records calls, answers as told, and can act on the store during a live read. */
class FakeRefresher implements RefreshPort {
  requests: RefreshTarget[] = [];
  liveCalls: { id: string; timeoutMs: number | undefined }[] = [];
  started = true;
  outcome: LiveOutcome = 'failed';
  /** Runs during a live read, before it answers (e.g. writes what upstream returned). */
  onLive: ((id: string) => Promise<void>) | null = null;

  status() {
    return { upstream: 'reso' as const, lastFailure: null, backgroundPending: 0 };
  }

  requestRefresh(target: RefreshTarget): boolean {
    this.requests.push(target);
    return this.started;
  }

  async refreshListingNow(id: string, timeoutMs?: number): Promise<LiveOutcome> {
    this.liveCalls.push({ id, timeoutMs });
    if (this.onLive) await this.onLive(id);
    return this.outcome;
  }

  reset(): void {
    this.requests = [];
    this.liveCalls = [];
    this.started = true;
    this.outcome = 'failed';
    this.onLive = null;
  }
}

const HIGH_LIMITS: Record<string, string> = { ...UNLIMITED, UPSTREAM_LIVE_TIMEOUT_MS: '1234' };

let versionTick = 0;
/** What the pipeline does after writing a change: move a content scope (the data version). */
async function dataChanged(): Promise<void> {
  versionTick += 1;
  await setScopeTimes(t.store.db, ['detail'], new Date(TEST_NOW.getTime() + versionTick));
  t.ctx.dataVersion.invalidate();
}

const refresher = new FakeRefresher();
let t: TestApp;
const keys = {} as Record<Tier, string>;
let row: ListingRow;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005, env: HIGH_LIMITS, refresher });
  for (const tier of TIERS) {
    keys[tier] = (await t.ctx.subscriptions.issue({ accountId: `fresh-${tier}`, tier })).key;
  }
  row = await t.store.db
    .selectFrom('listings')
    .selectAll()
    .where('detail_scraped', '=', 1)
    .where('status', '=', 'ACTIVE')
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  refresher.reset();
  t.clock.set(TEST_NOW);
  await t.store.db
    .updateTable('listings')
    .set({ price: row.price, refreshed_at: row.refreshed_at, revision: NEXT_LISTING_REVISION })
    .where('id', '=', row.id)
    .execute();
  await dataChanged();
});

type Meta = ListingDetailResponse['meta'];

async function get<T = ListingDetailResponse>(
  tier: Tier,
  path: string,
): Promise<{ status: number; body: T }> {
  const response = await t.getAs(keys[tier], path);
  return { status: response.status, body: (await response.json()) as T };
}

describe('paid tiers below Business: cached reads, background refresh when too old', () => {
  it('serves fresh data as cached and asks for nothing', async () => {
    for (const tier of ['STARTER', 'PRO'] as const) {
      const { body } = await get(tier, `/v1/property/${row.id}`);
      expect(body.meta).toMatchObject({
        source: 'cached',
        refreshTriggered: false,
        dataAge: row.refreshed_at,
      });
    }
    expect(refresher.requests).toEqual([]);
    expect(refresher.liveCalls).toEqual([]);
  });

  it('past the tier detail threshold: stale, and a listing refresh is requested', async () => {
    // Starter's detail threshold is 30 min, Pro's 15 min.
    t.clock.advance(20 * MINUTE_MS);
    const starter = await get('STARTER', `/v1/property/${row.id}`);
    expect(starter.body.meta).toMatchObject({ source: 'cached', refreshTriggered: false });
    expect(refresher.requests).toEqual([]);

    const pro = await get('PRO', `/v1/property/${row.id}`);
    expect(pro.body.meta).toEqual<Meta>({
      dataAge: row.refreshed_at,
      source: 'stale',
      freshnessThreshold: 900,
      refreshTriggered: true,
      detailScraped: true,
    });
    expect(refresher.requests).toEqual([{ kind: 'listing', id: row.id }]);
    expect(refresher.liveCalls).toEqual([]);
  });

  it('refreshTriggered is what the pipeline answered (false: already fresh enough or not started)', async () => {
    t.clock.advance(31 * MINUTE_MS);
    refresher.started = false;
    const { body } = await get('STARTER', `/v1/property/${row.id}`);
    expect(body.meta).toMatchObject({ source: 'stale', refreshTriggered: false });
    expect(refresher.requests).toEqual([{ kind: 'listing', id: row.id }]);
  });

  it('sub-resources are refreshed with their listing and never read live', async () => {
    t.clock.advance(31 * MINUTE_MS);
    for (const suffix of ['/history', '/fees', '/open-houses']) {
      for (const tier of ['PRO', 'BUSINESS', 'INTERNAL'] as const) {
        const { status, body } = await get<{ meta: Meta }>(tier, `/v1/property/${row.id}${suffix}`);
        expect(status).toBe(200);
        expect(body.meta).toMatchObject({
          source: 'stale',
          refreshTriggered: true,
          dataAge: row.refreshed_at,
        });
      }
    }
    expect(refresher.liveCalls).toEqual([]);
    expect(refresher.requests).toHaveLength(9);
    expect(new Set(refresher.requests.map((r) => JSON.stringify(r)))).toEqual(
      new Set([JSON.stringify({ kind: 'listing', id: row.id })]),
    );
  });
});

describe('Business and Internal: live reads of GET /property/{id}', () => {
  it('fetches the listing live before reading the store: source live, the refreshed row served', async () => {
    const liveAt = new Date(TEST_NOW.getTime() + 5 * MINUTE_MS).toISOString();
    t.clock.set(liveAt);
    refresher.outcome = 'refreshed';
    refresher.onLive = async (id) => {
      // What the pipeline does on success: store upstream's current copy.
      await t.store.db
        .updateTable('listings')
        .set({ price: row.price + 100, refreshed_at: liveAt, revision: NEXT_LISTING_REVISION })
        .where('id', '=', id)
        .execute();
      await dataChanged();
    };
    for (const tier of ['BUSINESS', 'INTERNAL'] as const) {
      refresher.liveCalls = [];
      const { status, body } = await get(tier, `/v1/property/${row.id}`);
      expect(status).toBe(200);
      expect(body.data.price).toBe(row.price + 100);
      expect(body.meta).toEqual<Meta>({
        dataAge: liveAt,
        source: 'live',
        freshnessThreshold: 600,
        refreshTriggered: false,
        detailScraped: true,
      });
      expect(refresher.liveCalls).toEqual([{ id: row.id, timeoutMs: 1234 }]);
    }
    expect(refresher.requests).toEqual([]);
  });

  it.each(['failed', 'not_found'] as const)(
    '%s upstream: the stored copy, stale, never an error',
    async (outcome) => {
      refresher.outcome = outcome;
      const { status, body } = await get('BUSINESS', `/v1/property/${row.id}`);
      expect(status).toBe(200);
      expect(body.data.id).toBe(row.id);
      expect(body.data.price).toBe(row.price);
      expect(body.meta).toMatchObject({
        source: 'stale',
        dataAge: row.refreshed_at,
        refreshTriggered: false,
      });
      expect(refresher.liveCalls).toHaveLength(1);
    },
  );

  it('nothing stored and upstream failed: 404', async () => {
    const { status, body } = await get<{ error: { code: string } }>('INTERNAL', '/v1/property/424242424242');
    expect(status).toBe(404);
    expect(body.error.code).toBe('NOT_FOUND');
    expect(refresher.liveCalls).toEqual([{ id: '424242424242', timeoutMs: 1234 }]);
  });

  it('a listing only upstream has: served once the live read stored it (by id and by URL)', async () => {
    const stored = await t.store.db
      .selectFrom('listings')
      .selectAll()
      .where('id', '=', row.id)
      .executeTakeFirstOrThrow();
    const details = await t.store.db
      .selectFrom('listing_details')
      .selectAll()
      .where('listing_id', '=', row.id)
      .executeTakeFirstOrThrow();
    const remove = async () => {
      await t.store.db.deleteFrom('listing_details').where('listing_id', '=', row.id).execute();
      await t.store.db.deleteFrom('listings').where('id', '=', row.id).execute();
    };
    const restore = async () => {
      await t.store.db.insertInto('listings').values(stored).execute();
      await t.store.db.insertInto('listing_details').values(details).execute();
    };
    try {
      await remove();
      refresher.outcome = 'refreshed';
      refresher.onLive = restore;
      for (const path of [
        `/v1/property/${row.id}`,
        `/v1/property/by-url?url=${encodeURIComponent(row.url_path)}`,
      ]) {
        const { status, body } = await get('BUSINESS', path);
        expect(status, path).toBe(200);
        expectSchema(ListingDetailResponse, body);
        expect(body.data.id).toBe(row.id);
        expect(body.meta.source).toBe('live');
        await remove();
      }
      expect(refresher.liveCalls.map((c) => c.id)).toEqual([row.id, row.id]);
      // Without a live read, the same request is a 404.
      const { status } = await get('PRO', `/v1/property/by-url?url=${encodeURIComponent(row.url_path)}`);
      expect(status).toBe(404);
    } finally {
      refresher.onLive = null;
      const present = await t.store.db
        .selectFrom('listings')
        .select('id')
        .where('id', '=', row.id)
        .executeTakeFirst();
      if (!present) await restore();
    }
  });
});

describe('buildings: background refresh of the building', () => {
  it('asks for a building refresh past the threshold and never reads a building live', async () => {
    const building = row.building_id;
    const fresh = await get<{ meta: Meta }>('PRO', `/v1/building/${building}`);
    expect(fresh.body.meta).toMatchObject({ source: 'cached', refreshTriggered: false });
    expect(refresher.requests).toEqual([]);

    t.clock.advance(16 * MINUTE_MS);
    for (const suffix of ['', '/scores', '/violations']) {
      const { status, body } = await get<{ meta: Meta }>('PRO', `/v1/building/${building}${suffix}`);
      expect(status).toBe(200);
      expect(body.meta).toMatchObject({ source: 'stale', refreshTriggered: true, freshnessThreshold: 900 });
    }
    // Listings of a building are judged against the search threshold (1 h for Pro).
    const listings = await get<{ meta: Meta }>('PRO', `/v1/building/${building}/listings`);
    expect(listings.body.meta).toMatchObject({
      source: 'cached',
      refreshTriggered: false,
      freshnessThreshold: 3600,
    });
    t.clock.advance(60 * MINUTE_MS);
    const later = await get<{ meta: Meta }>('PRO', `/v1/building/${building}/listings`);
    expect(later.body.meta).toMatchObject({ source: 'stale', refreshTriggered: true });

    expect(refresher.requests).toEqual(Array(4).fill({ kind: 'building', id: building }));
    expect(refresher.liveCalls).toEqual([]);
  });
});

describe('the live read deadline', () => {
  it('serves the stored copy as stale when upstream outlasts the live timeout', async () => {
    let release: () => void = () => {};
    // An upstream that answers nothing and ignores timeouts: only the pipeline's deadline ends the wait.
    const hangingSource: ListingSource = {
      name: 'hanging',
      searchListings: () => new Promise<never>(() => {}),
      fetchListing: () =>
        new Promise<never>((_, reject) => {
          release = () => reject(new UpstreamError('unavailable', 'released'));
        }),
      fetchBuilding: () => new Promise<never>(() => {}),
      listBuildings: () => new Promise<never>(() => {}),
    };
    const slow = await createTestApp({
      scale: 0.005,
      env: { ...HIGH_LIMITS, UPSTREAM_LIVE_TIMEOUT_MS: '100' },
      refresher: (parts) => new Refresher({ ...parts, source: hangingSource }),
    });
    try {
      const { key } = await slow.ctx.subscriptions.issue({ accountId: 'fresh-slow', tier: 'BUSINESS' });
      const started = performance.now();
      const response = await slow.getAs(key, `/v1/property/${row.id}`);
      const elapsed = performance.now() - started;
      const body = (await response.json()) as ListingDetailResponse;
      expect(response.status).toBe(200);
      expect(body.data.id).toBe(row.id);
      expect(body.meta.source).toBe('stale');
      // The 100 ms timeout, with room for a loaded machine; far below the hang.
      expect(elapsed).toBeGreaterThanOrEqual(100);
      expect(elapsed).toBeLessThan(3000);
    } finally {
      release();
      await slow.close();
    }
  });
});
