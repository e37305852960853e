import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { daysOnMarket, daysOnMarketValidUntil, nyDayNumber, nyMidnight } from '../src/domain/listing.ts';
import { setScopeTimes } from '../src/modules/freshness/data-version.ts';
import type { SearchResponse } from '../src/modules/search/search.schema.ts';
import { createTestApp, getJson, TEST_NOW, type TestApp } from './support/app.ts';
import { NEXT_LISTING_REVISION } from './support/store.ts';

/**
 * Days on market count New York calendar days: a listing listed at 23:30 NY
 * time yesterday has one day on market at 00:30 today, although both instants
 * fall on the same UTC date (and less than 24 hours apart).
 */
describe('daysOnMarket on New York’s calendar', () => {
  it.each([
    // [case, listed_at, now, days]
    ['in standard time', '2026-11-24T04:30:00.000Z', '2026-11-24T05:30:00.000Z', 1],
    ['across the autumn change (EDT → EST)', '2026-11-01T03:30:00.000Z', '2026-11-01T04:30:00.000Z', 1],
    ['over the autumn change (25-hour day)', '2026-11-01T03:30:00.000Z', '2026-11-02T05:30:00.000Z', 2],
    ['over the spring change (23-hour day)', '2026-03-08T04:30:00.000Z', '2026-03-09T04:30:00.000Z', 2],
    ['the same NY day across UTC midnight', '2026-11-23T14:00:00.000Z', '2026-11-24T03:00:00.000Z', 0],
    ['a listing dated in the future', '2026-11-25T14:00:00.000Z', '2026-11-24T03:00:00.000Z', 0],
  ])('ACTIVE %s', (_, listedAt, now, days) => {
    expect(daysOnMarket({ status: 'ACTIVE', listed_at: listedAt }, new Date(now))).toBe(days);
  });

  it('a closed listing counts to the NY date it left the market, whatever now is', () => {
    const row = {
      status: 'OFF_MARKET',
      listed_at: '2026-11-24T04:30:00.000Z',
      off_market_at: '2026-11-24T05:30:00.000Z',
      contract_at: null,
    };
    expect(daysOnMarket(row, new Date('2027-01-01T00:00:00.000Z'))).toBe(1);
    expect(daysOnMarketValidUntil(row, new Date('2027-01-01T00:00:00.000Z'))).toBe(Number.POSITIVE_INFINITY);
    expect(daysOnMarket({ ...row, listed_at: null }, new Date())).toBeNull();
  });

  it('a running count is valid until the next New York midnight', () => {
    const at = (now: string) =>
      new Date(
        daysOnMarketValidUntil({ status: 'ACTIVE', listed_at: '2026-01-01T00:00:00.000Z' }, new Date(now)),
      );
    expect(at('2026-11-24T05:30:00.000Z').toISOString()).toBe('2026-11-25T05:00:00.000Z');
    expect(at('2026-11-24T04:59:59.999Z').toISOString()).toBe('2026-11-24T05:00:00.000Z');
    // The spring day starts in EST and ends in EDT; the autumn one the other way round.
    expect(at('2026-03-07T17:00:00.000Z').toISOString()).toBe('2026-03-08T05:00:00.000Z');
    expect(at('2026-03-08T17:00:00.000Z').toISOString()).toBe('2026-03-09T04:00:00.000Z');
    expect(at('2026-10-31T17:00:00.000Z').toISOString()).toBe('2026-11-01T04:00:00.000Z');
    expect(at('2026-11-01T17:00:00.000Z').toISOString()).toBe('2026-11-02T05:00:00.000Z');
  });

  it('nyMidnight is the first instant of its NY day number', () => {
    for (let day = nyDayNumber(Date.parse('2026-01-01T12:00:00Z')); day < 20_820; day++) {
      const midnight = nyMidnight(day);
      expect(nyDayNumber(midnight)).toBe(day);
      expect(nyDayNumber(midnight - 1)).toBe(day - 1);
    }
  });
});

/**
 * The same rule through the API, on both search paths (the in-memory index and
 * SQL): the listing's daysOnMarket and the min/maxDaysOnMarket filters agree.
 */
describe.each(['index', 'sql'] as const)('search days on market (%s path)', (path) => {
  let t: TestApp;
  // 00:30 EDT on 1 November 2026, hours before the clocks go back; TEST_NOW is the same NY day.
  const NOW = '2026-11-01T04:30:00.000Z';
  const LISTED = '2026-11-01T03:30:00.000Z'; // 23:30 EDT on 31 October
  const LEFT = '2026-11-02T05:30:00.000Z'; // 00:30 EST on 2 November
  let active: { id: string; price: number };
  let closed: { id: string; price: number };

  beforeAll(async () => {
    t = await createTestApp({ scale: 0.01, env: path === 'sql' ? { SEARCH_INDEX: 'false' } : {} });
    const pick = (status: string) =>
      t.store.db
        .selectFrom('listings')
        .select(['id', 'price'])
        .where('listing_type', '=', 'rental')
        .where('status', '=', status as 'ACTIVE')
        .orderBy('id')
        .executeTakeFirstOrThrow();
    active = await pick('ACTIVE');
    closed = await pick('OFF_MARKET');
    // As every writer does, each change moves the listing's revision (summaries rendered before it are not reused).
    await t.store.db
      .updateTable('listings')
      .set({ listed_at: LISTED, revision: NEXT_LISTING_REVISION })
      .where('id', '=', active.id)
      .execute();
    await t.store.db
      .updateTable('listings')
      .set({
        listed_at: LISTED,
        off_market_at: LEFT,
        contract_at: null,
        revision: NEXT_LISTING_REVISION,
      })
      .where('id', '=', closed.id)
      .execute();
    await setScopeTimes(t.store.db, ['search:rental'], new Date(TEST_NOW.getTime() + 1000));
    t.clock.set(TEST_NOW.getTime() + 5000);
    // Let the read model catch up with the change (it serves the previous version while it builds).
    await getJson(t, '/v1/search/rentals?perPage=1');
    // A rebuild at background priority on a slow, loaded CI machine (the PostgreSQL pass) outlasted 10 s.
    await vi.waitUntil(() => !t.ctx.search.indexStatus().building, { timeout: 60_000 });
    t.clock.set(NOW);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function ids(listing: { price: number }, query: string): Promise<Map<string, number | null>> {
    const url = `/v1/search/rentals?minPrice=${listing.price}&maxPrice=${listing.price}&perPage=500&${query}`;
    const { status, body } = await getJson<SearchResponse>(t, url);
    expect(status, JSON.stringify(body)).toBe(200);
    return new Map(body.data.map((l) => [l.id, l.daysOnMarket]));
  }

  it('an ACTIVE listing listed at 23:30 NY time yesterday has 1 day on market at 00:30', async () => {
    expect((await ids(active, 'status=ACTIVE')).get(active.id)).toBe(1);
    // listedAt is the NY date too (31 October, although the UTC date is 1 November).
    const listing = await getJson<{ data: { listedAt: string } }>(t, `/v1/property/${active.id}`);
    expect(listing.body.data.listedAt).toBe('2026-10-31');
    expect((await ids(active, 'minDaysOnMarket=1&maxDaysOnMarket=1')).has(active.id)).toBe(true);
    expect((await ids(active, 'maxDaysOnMarket=0')).has(active.id)).toBe(false);
    expect((await ids(active, 'minDaysOnMarket=2')).has(active.id)).toBe(false);
  });

  it('listedAfter / listedBefore dates are New York days, the calendar listedAt is given in', async () => {
    // Listed 23:30 EDT on 31 October (1 November in UTC).
    expect((await ids(active, 'listedAfter=2026-10-31&listedBefore=2026-10-31')).has(active.id)).toBe(true);
    expect((await ids(active, 'listedAfter=2026-11-01')).has(active.id)).toBe(false);
    expect((await ids(active, 'listedBefore=2026-10-30')).has(active.id)).toBe(false);
  });

  it('offMarketAt is the New York date too', async () => {
    const left = await t.store.db
      .selectFrom('listings')
      .select('id')
      .where('listing_type', '=', 'rental')
      .where('status', '=', 'OFF_MARKET')
      .where('id', '!=', closed.id)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    // 23:30 EDT on 30 October: 31 October in UTC.
    await t.store.db
      .updateTable('listings')
      .set({ off_market_at: '2026-10-31T03:30:00.000Z' })
      .where('id', '=', left.id)
      .execute();
    const detail = await getJson<{ data: { offMarketAt: string } }>(t, `/v1/property/${left.id}`);
    expect(detail.body.data.offMarketAt).toBe('2026-10-30');
  });

  it('a closed listing counts NY days to the day it left the market (2, over the 25-hour day)', async () => {
    const all = 'status=ACTIVE,IN_CONTRACT,OFF_MARKET&sort=DAYS_ON_MARKET';
    expect((await ids(closed, all)).get(closed.id)).toBe(2);
    expect((await ids(closed, `${all}&minDaysOnMarket=2&maxDaysOnMarket=2`)).has(closed.id)).toBe(true);
    expect((await ids(closed, `${all}&maxDaysOnMarket=1`)).has(closed.id)).toBe(false);
    expect((await ids(closed, 'status=OFF_MARKET&minDaysOnMarket=3')).has(closed.id)).toBe(false);
  });
});
