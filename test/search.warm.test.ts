import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setScopeTimes } from '../src/modules/freshness/data-version.ts';
import type { SearchService } from '../src/modules/search/search.service.ts';
import { createTestApp, getJson, TEST_NOW, type TestApp } from './support/app.ts';

/**
 * The summary warm-up: once an index serves, every ACTIVE listing's
 * serialized summary is rendered in the background, so searches read none
 * on the request thread; a move of the buildings data (which drops every
 * summary the next index could take over) warms the next index again.
 */
let t: TestApp;
beforeAll(async () => {
  // On PostgreSQL the index swaps arrive from the index worker, as in a deployment.
  t = await createTestApp({ scale: 0.02, workerThreads: true });
});
afterAll(async () => {
  await t?.close();
});

/** Reads and renders of summaries the search service makes (searches and warm-up alike). */
function spyOnRenders(search: SearchService) {
  return vi.spyOn(
    search as unknown as { renderSummaries: (ids: string[], now: Date) => unknown },
    'renderSummaries',
  );
}

async function activeListings(): Promise<number> {
  const row = await t.store.db
    .selectFrom('listings')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'ACTIVE')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function warmed(): Promise<void> {
  await vi.waitUntil(
    () => {
      const status = t.ctx.search.summaryWarmStatus();
      return (
        t.ctx.search.indexStatus().ready &&
        !t.ctx.search.indexStatus().building &&
        !status.running &&
        status.lastWarmedAt !== null
      );
    },
    { timeout: 20_000 },
  );
}

const search = (query: string) => getJson<{ data: { id: string }[] }>(t, `/v1/search/${query}`);

describe('summary warm-up', () => {
  it('renders every active listing once the index serves, so searches read none', async () => {
    // The first search starts the first build (its answer may come from SQL meanwhile).
    await search('rentals?perPage=1');
    await warmed();
    const active = await activeListings();
    expect(active).toBeGreaterThan(500);
    expect(t.ctx.search.summaryWarmStatus()).toMatchObject({ running: false, warmed: active, of: active });

    const renders = spyOnRenders(t.ctx.search);
    try {
      for (const query of [
        'rentals?perPage=50&sort=PRICE',
        'rentals?perPage=50&sort=PRICE&sortDir=DESC',
        'sales?perPage=50&sort=LISTED_AT',
        'rentals?areas=100&perPage=50&page=2',
        'rentals?near=40.7536,-73.9832&radius=3000&sort=DISTANCE&perPage=50',
      ]) {
        const { status, body } = await search(query);
        expect(status).toBe(200);
        expect(body.data.length).toBeGreaterThan(0);
      }
      expect(renders).not.toHaveBeenCalled();
      // Listings that are not ACTIVE are left to the searches that ask for them.
      expect((await search('rentals?status=OFF_MARKET&perPage=5')).status).toBe(200);
      expect(renders).toHaveBeenCalled();
    } finally {
      renders.mockRestore();
    }
  });

  it('shows in health as background work, with its progress', async () => {
    await warmed();
    const health = await getJson<{
      background: { jobs: { name: string; running: boolean; progress: unknown }[] };
    }>(t, '/v1/health');
    const job = health.body.background.jobs.find((j) => j.name === 'search-summaries');
    const active = await activeListings();
    expect(job).toMatchObject({ running: false, progress: { warmed: active, of: active } });
  });

  it('warms the next index after a move of the buildings data, which carries no summary over', async () => {
    await warmed();
    const renders = spyOnRenders(t.ctx.search);
    try {
      await setScopeTimes(t.store.db, ['buildings'], new Date(TEST_NOW.getTime() + 60_000));
      t.ctx.dataVersion.invalidate();
      // A search notices the new version and starts the build; the warm-up follows it.
      await search('rentals?perPage=1');
      await vi.waitUntil(() => renders.mock.calls.length > 0, { timeout: 20_000 });
      await warmed();
      const rendered = renders.mock.calls.reduce((n, [ids]) => n + ids.length, 0);
      expect(rendered).toBe(await activeListings());
      // Each step renders about a search's worth, never all at once.
      expect(Math.max(...renders.mock.calls.map(([ids]) => ids.length))).toBeLessThanOrEqual(16);

      renders.mockClear();
      await search('rentals?perPage=50&sort=PRICE');
      expect(renders).not.toHaveBeenCalled();
    } finally {
      renders.mockRestore();
      await setScopeTimes(t.store.db, ['buildings'], TEST_NOW);
      t.ctx.dataVersion.invalidate();
      await search('rentals?perPage=1');
      await warmed();
    }
  });
});
