import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Refresher } from '../src/jobs/refresh/refresher.ts';
import { DataVersion, readScope } from '../src/modules/freshness/data-version.ts';
import { HOUR_MS, ManualClock } from '../src/platform/clock.ts';
import { type ListingPage, UpstreamError, type UpstreamListing } from '../src/upstream/source.ts';
import { createTestApp, TEST_NOW, TEST_SEED, type TestApp } from './support/app.ts';
import { demoUpstreamListings, ListingOnlySource } from './support/upstream.ts';

const SCALE = 0.01;

/**
 * An upstream at the edge of the test: the demo market as loaded (a listing
 * fetched is unchanged), and a search feed that answers one page of listings
 * changed since then and fails on the next request.
 */
class FailingFeed extends ListingOnlySource {
  readonly name = 'failing-feed';
  searches = 0;

  constructor(
    private readonly unchanged: readonly UpstreamListing[],
    private readonly changedPage: readonly UpstreamListing[],
  ) {
    super();
  }

  override async searchListings(): Promise<ListingPage> {
    this.searches++;
    if (this.searches > 1) throw new UpstreamError('unavailable', 'the feed went away mid-cycle', 503);
    return { listings: [...this.changedPage], next: 'more' };
  }

  async fetchListing(id: string): Promise<UpstreamListing> {
    const found = this.unchanged.find((l) => l.listing.id === id);
    if (!found) throw new UpstreamError('not_found', `no listing ${id}`, 404);
    return found;
  }
}

/**
 * Readers keep record headers for a data-version epoch, which lives on while
 * no scope is written (DataVersion.epoch): so every write of a record header
 * must record a scope, including a refresh that changed nothing and a cycle
 * that failed part way. "Another process" is a DataVersion of its own over
 * the same store, as a second node or a standalone refresh would see it.
 */
describe('the refresher records every write of record headers', () => {
  let t: TestApp;
  let refresher: Refresher;
  let feed: FailingFeed;
  const elsewhereClock = new ManualClock(TEST_NOW);
  let elsewhere: DataVersion;

  beforeAll(async () => {
    const later = new Date(TEST_NOW.getTime() + 6 * HOUR_MS);
    const changed = demoUpstreamListings(TEST_SEED, SCALE, later).filter(
      (l) => l.modifiedAt > TEST_NOW.toISOString(),
    );
    feed = new FailingFeed(demoUpstreamListings(TEST_SEED, SCALE, TEST_NOW), changed.slice(0, 20));
    t = await createTestApp({
      scale: SCALE,
      refresher: (parts) => {
        refresher = new Refresher({ ...parts, source: feed });
        return refresher;
      },
    });
    elsewhere = new DataVersion(t.store.db, elsewhereClock);
  });
  afterAll(async () => {
    await t.close();
  });

  it('a single listing refreshed unchanged moves no version, but ends the epoch elsewhere', async () => {
    const row = await t.store.db
      .selectFrom('listings')
      .select(['id', 'refreshed_at'])
      .where('status', '=', 'ACTIVE')
      .orderBy('id')
      .executeTakeFirstOrThrow();
    const version = await elsewhere.version();
    const epoch = await elsewhere.epoch();
    t.clock.advance(60_000);
    const summary = await refresher.refreshListing(row.id);
    expect(summary).toMatchObject({ created: 0, updated: 0, unchanged: 1 });
    const after = await t.store.db
      .selectFrom('listings')
      .select('refreshed_at')
      .where('id', '=', row.id)
      .executeTakeFirstOrThrow();
    expect(after.refreshed_at).not.toBe(row.refreshed_at);
    expect(await readScope(t.store.db, 'records')).not.toBeNull();

    elsewhereClock.advance(1000);
    expect(await elsewhere.epoch()).not.toBe(epoch);
    expect(await elsewhere.version()).toBe(version);
  });

  it('a cycle that fails part way records what it wrote: the version moves for its changes', async () => {
    const version = await elsewhere.version();
    const epoch = await elsewhere.epoch();
    await expect(refresher.replicate()).rejects.toThrow(/went away mid-cycle/);
    expect(feed.searches).toBe(2);

    elsewhereClock.advance(1000);
    expect(await elsewhere.version()).not.toBe(version);
    expect(await elsewhere.epoch()).not.toBe(epoch);
    // This process too: its caches rebuild for the data the store now holds.
    expect(await t.ctx.dataVersion.version()).toBe(await elsewhere.version());
  });
});
