import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { marketAt } from '../src/demo/market/market.ts';
import { Refresher } from '../src/jobs/refresh/refresher.ts';
import { HOUR_MS } from '../src/platform/clock.ts';
import {
  type ListingPage,
  type ListingPageQuery,
  type ListingSource,
  UpstreamError,
  type UpstreamListing,
} from '../src/upstream/source.ts';
import { createTestApp, TEST_NOW, TEST_SEED, type TestApp } from './support/app.ts';
import { demoUpstreamListings, ListingOnlySource } from './support/upstream.ts';

const SCALE = 0.01;

/**
 * An upstream at the edge of the test: the demo market as of a later instant,
 * answering each page after a delay, counting calls.
 */
class CountingSource extends ListingOnlySource {
  readonly name = 'counting';
  calls = 0;
  private readonly listings: UpstreamListing[];

  constructor(
    at: Date,
    private readonly delayMs: number,
  ) {
    super();
    this.listings = demoUpstreamListings(TEST_SEED, SCALE, at);
  }

  override async searchListings(query: ListingPageQuery): Promise<ListingPage> {
    this.calls++;
    await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    const since = query.modifiedSince;
    const matching = this.listings.filter((l) => since === undefined || l.modifiedAt >= since);
    return { listings: matching, next: null };
  }

  /** When set, listing fetches wait for it (a test holds upstream "busy"). */
  gate: Promise<unknown> | null = null;
  /** Listing fetches running now, and the most ever at once. */
  fetching = 0;
  peakFetching = 0;

  async fetchListing(id: string): Promise<UpstreamListing> {
    this.calls++;
    this.fetching++;
    this.peakFetching = Math.max(this.peakFetching, this.fetching);
    await (this.gate ?? new Promise((resolve) => setTimeout(resolve, 50)));
    this.fetching--;
    const found = this.listings.find((l) => l.listing.id === id);
    if (!found) throw new UpstreamError('not_found', `no listing ${id}`, 404);
    return found;
  }
}

describe('freshness: background refresh for paid tiers, single-flight', () => {
  let t: TestApp;
  let source: CountingSource;
  let refresher: Refresher;
  let businessKey: string;

  beforeAll(async () => {
    source = new CountingSource(new Date(TEST_NOW.getTime() + 3 * HOUR_MS), 3000);
    t = await createTestApp({
      scale: SCALE,
      env: { RATE_LIMIT_BUSINESS: '100000', RATE_LIMIT_FREE: '100000' },
      refresher: (parts) => {
        refresher = new Refresher({ ...parts, source });
        return refresher;
      },
    });
    businessKey = (await t.ctx.subscriptions.issue({ accountId: 'fresh', tier: 'BUSINESS' })).key;
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves fresh cached data without touching upstream', async () => {
    const response = await t.getAs(businessKey, '/v1/search/rentals?areas=100');
    const body = (await response.json()) as { meta: { source: string; refreshTriggered: boolean } };
    expect(body.meta.source).toBe('cached');
    expect(body.meta.refreshTriggered).toBe(false);
    expect(source.calls).toBe(0);
  });

  it('answers a burst of 100 stale reads at once and refreshes upstream exactly once', async () => {
    t.clock.advance(3 * HOUR_MS);
    const bodies = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const response = await t.getAs(businessKey, '/v1/search/rentals?areas=100,300');
        expect(response.status).toBe(200);
        return (await response.json()) as {
          meta: { source: string; refreshTriggered: boolean; dataAge: string };
        };
      }),
    );
    for (const body of bodies) {
      expect(body.meta.source).toBe('stale');
      expect(body.meta.refreshTriggered).toBe(true);
      expect(body.meta.dataAge).toBe(TEST_NOW.toISOString());
    }
    await refresher.idle();
    expect(source.calls).toBe(1);

    const after = await t.getAs(businessKey, '/v1/search/rentals?areas=100,300');
    const body = (await after.json()) as {
      meta: { source: string; refreshTriggered: boolean; dataAge: string };
    };
    expect(body.meta.source).toBe('cached');
    expect(body.meta.refreshTriggered).toBe(false);
    expect(body.meta.dataAge).toBe(t.clock.now().toISOString());
    expect(source.calls).toBe(1);
  });

  it('never refreshes on behalf of Free callers: their data follows the schedule', async () => {
    t.clock.advance(7 * HOUR_MS);
    const response = await t.getAs(null, '/v1/search/sales?areas=100');
    const body = (await response.json()) as { meta: { source: string; refreshTriggered: boolean } };
    expect(body.meta.source).toBe('stale');
    expect(body.meta.refreshTriggered).toBe(false);
    await refresher.idle();
    expect(source.calls).toBe(1);
  });
});

describe('background refreshes of many stale listings are bounded', () => {
  let t: TestApp;
  let source: CountingSource;
  let refresher: Refresher;
  let proKey: string;

  beforeAll(async () => {
    source = new CountingSource(new Date(TEST_NOW.getTime() + HOUR_MS), 0);
    t = await createTestApp({
      scale: SCALE,
      env: { RATE_LIMIT_PRO: '100000' },
      refresher: (parts) => {
        refresher = new Refresher({ ...parts, source, maxConcurrentBackground: 2, maxPendingBackground: 10 });
        return refresher;
      },
    });
    proKey = (await t.ctx.subscriptions.issue({ accountId: 'bounded', tier: 'PRO' })).key;
  });
  afterAll(async () => {
    await t.close();
  });

  it('runs at most the configured number at once and declines past the queue, saying so in meta', async () => {
    t.clock.advance(HOUR_MS);
    let release: () => void = () => {};
    source.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ids = (
      await t.store.db.selectFrom('listings').select('id').where('status', '=', 'ACTIVE').limit(40).execute()
    ).map((r) => r.id);
    const metas = await Promise.all(
      ids.map(async (id) => {
        const response = await t.getAs(proKey, `/v1/property/${id}`);
        expect(response.status).toBe(200);
        return ((await response.json()) as { meta: { source: string; refreshTriggered: boolean } }).meta;
      }),
    );
    for (const meta of metas) expect(meta.source).toBe('stale');
    const triggered = metas.filter((m) => m.refreshTriggered).length;
    expect(triggered).toBeGreaterThan(0);
    // Upstream is still busy: 2 running + 10 queued is all that may have been accepted.
    expect(triggered).toBe(12);
    expect(source.peakFetching).toBeLessThanOrEqual(2);
    release();
    await refresher.idle();
    expect(source.peakFetching).toBeLessThanOrEqual(2);
    expect(source.calls).toBe(triggered);
  });
});

describe('a failing upstream is not retried by every stale read', () => {
  let t: TestApp;
  let refresher: Refresher;
  let attempts = 0;
  let businessKey: string;

  beforeAll(async () => {
    const down: ListingSource = {
      name: 'down',
      searchListings: async () => {
        attempts++;
        throw new UpstreamError('unavailable', 'feed is down', 503);
      },
      fetchListing: async () => {
        throw new UpstreamError('unavailable', 'feed is down', 503);
      },
      fetchBuilding: async () => {
        throw new UpstreamError('unavailable', 'feed is down', 503);
      },
      listBuildings: async () => {
        throw new UpstreamError('unavailable', 'feed is down', 503);
      },
    };
    t = await createTestApp({
      scale: SCALE,
      env: { RATE_LIMIT_BUSINESS: '100000' },
      refresher: (parts) => {
        refresher = new Refresher({ ...parts, source: down, minSearchIntervalMs: 60_000 });
        return refresher;
      },
    });
    businessKey = (await t.ctx.subscriptions.issue({ accountId: 'down', tier: 'BUSINESS' })).key;
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves stale data, tries once, waits the minimum interval before trying again', async () => {
    t.clock.advance(2 * HOUR_MS);
    const read = async () =>
      (
        (await (await t.getAs(businessKey, '/v1/search/rentals?areas=100')).json()) as {
          meta: { source: string };
        }
      ).meta;
    expect((await read()).source).toBe('stale');
    await refresher.idle();
    for (let i = 0; i < 5; i++) expect((await read()).source).toBe('stale');
    await refresher.idle();
    expect(attempts).toBe(1);
    const health = (await (await t.get('/v1/health')).json()) as {
      pipeline: { upstream: string; lastFailure: { kind: string; at: string } | null };
    };
    expect(health.pipeline.upstream).toBe('reso');
    expect(health.pipeline.lastFailure).toEqual({ kind: 'unavailable', at: t.clock.now().toISOString() });
    t.clock.advance(61_000);
    await read();
    await refresher.idle();
    expect(attempts).toBe(2);
  });
});

describe('dataAge of a dataset is its last whole refresh', () => {
  let t: TestApp;
  let refresher: Refresher;

  beforeAll(async () => {
    const source = new CountingSource(new Date(TEST_NOW.getTime() + 12 * HOUR_MS), 0);
    t = await createTestApp({
      scale: SCALE,
      refresher: (parts) => {
        refresher = new Refresher({ ...parts, source });
        return refresher;
      },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('a single listing refreshed live does not make the whole search dataset look fresh', async () => {
    t.clock.advance(12 * HOUR_MS);
    // A listing upstream changed in those hours (as the source will report it).
    const later = marketAt(TEST_SEED, SCALE, t.clock.now());
    const id = later.listings.find((l) => l.updated_at > TEST_NOW.toISOString())!.id;
    expect(await refresher.refreshListingNow(id)).toBe('refreshed');
    // The change itself moved the data version (caches see it) …
    expect(await t.ctx.dataVersion.version()).not.toContain(`search:rental=${TEST_NOW.toISOString()}`);
    // … but not the dataset's age.
    const body = (await (await t.get('/v1/search/rentals?areas=100')).json()) as {
      meta: { dataAge: string };
    };
    expect(body.meta.dataAge).toBe(TEST_NOW.toISOString());
  });
});
