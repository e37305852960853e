import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, MarketSnapshotJob } from '../src/jobs/market-snapshots.ts';
import { type TrendData, TrendResponse } from '../src/modules/market/market.schema.ts';
import { median } from '../src/modules/market/statistics.ts';
import { TREND_METRICS, type TrendMetric } from '../src/modules/market/trends.ts';
import { DAY_MS } from '../src/platform/clock.ts';
import { createTestApp, getJson, type TestApp } from './support/app.ts';
import { type FullRow, loadAllListings } from './support/brute-force.ts';
import { expectSchema } from './support/schema.ts';

interface TrendBody {
  data: TrendData;
  meta: { warnings: string[]; dataAge: string | null; source: string };
}
interface ErrorJson {
  error: { code: string; message: string; details?: { params?: { parameter: string }[] } };
}

let t: TestApp;
let job: MarketSnapshotJob;
let rows: FullRow[];
const events = new Map<string, { date: string; price: number }[]>();

beforeAll(async () => {
  t = await createTestApp({ scale: 0.02 });
  // A short backfill keeps the test fast; the definitions do not depend on its length.
  job = new MarketSnapshotJob(t.store.db, t.ctx.areaTree, t.clock, { backfillDays: 75 });
  rows = await loadAllListings(t.store);
  const all = await t.store.db
    .selectFrom('price_events')
    .select(['listing_id', 'date', 'price', 'event'])
    .orderBy('id')
    .execute();
  for (const e of all) {
    if (!['LISTED', 'PRICE_DECREASE', 'PRICE_INCREASE', 'RELISTED'].includes(e.event)) continue;
    const list = events.get(e.listing_id) ?? [];
    list.push({ date: e.date, price: Number(e.price) });
    events.set(e.listing_id, list);
  }
  for (const list of events.values()) list.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
});
afterAll(async () => {
  await t?.close();
});

/** The documented daily definitions, restated naively over listing rows and price events. */
function oracleDay(
  listingType: 'rental' | 'sale',
  areaId: number,
  bedrooms: number | undefined,
  metric: TrendMetric,
  date: string,
): { value: number | null; n: number } {
  const areas = new Set(t.ctx.areaTree.descendantsAndSelf(areaId));
  const start = Date.parse(`${date}T00:00:00.000Z`);
  const end = start + DAY_MS;
  const mine = rows.filter(
    (r) =>
      r.listing_type === listingType &&
      areas.has(r.area_id) &&
      r.listed_at !== null &&
      (bedrooms === undefined || Math.min(4, r.bedroom_count) === bedrooms),
  );
  if (metric === 'new_listings') {
    const n = mine.filter((r) => Date.parse(r.listed_at!) >= start && Date.parse(r.listed_at!) < end).length;
    return { value: n, n };
  }
  const active = mine.filter(
    (r) =>
      Date.parse(r.listed_at!) < end &&
      (r.contract_at === null || Date.parse(r.contract_at) >= end) &&
      (r.off_market_at === null || Date.parse(r.off_market_at) >= end),
  );
  if (metric === 'inventory') return { value: active.length, n: active.length };
  const priceOn = (r: FullRow) => {
    const before = (events.get(r.id) ?? []).filter((e) => e.date <= date);
    return before.length > 0 ? before[before.length - 1]!.price : r.price;
  };
  if (metric === 'median_price') return median(active.map(priceOn));
  if (metric === 'median_price_per_sqft') {
    return median(
      active
        .filter((r) => r.sqft !== null && r.sqft > 0)
        .map((r) => Math.round((priceOn(r) / r.sqft!) * 100) / 100),
    );
  }
  return median(active.map((r) => Math.floor((end - Date.parse(r.listed_at!)) / DAY_MS)));
}

const CASES: { type: 'rentals' | 'sales'; areaId: number; bedrooms?: number }[] = [
  { type: 'rentals', areaId: 1 },
  { type: 'rentals', areaId: 100, bedrooms: 1 },
  { type: 'rentals', areaId: 300, bedrooms: 4 },
  { type: 'sales', areaId: 100 },
  { type: 'sales', areaId: 300, bedrooms: 2 },
];

function trendPath(c: (typeof CASES)[number], params: Record<string, string>): string {
  const qs = new URLSearchParams({ areaId: String(c.areaId), ...params });
  if (c.bedrooms !== undefined) qs.set('bedrooms', String(c.bedrooms));
  return `/v1/market/${c.type}/trends?${qs}`;
}

async function expectMatchesOracle(from: string, to: string): Promise<number> {
  let points = 0;
  for (const c of CASES) {
    for (const metric of TREND_METRICS) {
      const { status, body } = await getJson<TrendBody>(t, trendPath(c, { metric, from, to }));
      expect(status, JSON.stringify(body)).toBe(200);
      expectSchema(TrendResponse, body);
      for (const point of body.data.points) {
        const want = oracleDay(
          c.type === 'rentals' ? 'rental' : 'sale',
          c.areaId,
          c.bedrooms,
          metric,
          point.periodStart,
        );
        expect(
          { value: point.value, n: point.n },
          `${c.type} ${c.areaId} ${metric} ${point.periodStart}`,
        ).toEqual(want);
        expect(point.coveredDays).toBe(1);
        points++;
      }
    }
  }
  return points;
}

describe('market trends', () => {
  it('answers with null points and a warning before the job has run', async () => {
    const { status, body } = await getJson<TrendBody>(t, '/v1/market/rentals/trends?areaId=100');
    expect(status).toBe(200);
    expectSchema(TrendResponse, body);
    expect(body.data.points.length).toBe(30);
    expect(body.data.points.every((p) => p.value === null && p.coveredDays === 0)).toBe(true);
    expect(body.meta.warnings.join(' ')).toMatch(/not been materialized/);
    expect(body.meta.dataAge).toBeNull();
    expect(body.meta.source).toBe('stale');
  });

  it('backfills daily snapshots that match a recomputation from listing history', async () => {
    const result = await job.run();
    expect(result.days).toBe(75);
    expect(result.coverage?.lastDate).toBe('2026-10-31');
    expect(result.coverage?.firstDate).toBe(addDays('2026-10-31', -74));
    const points = await expectMatchesOracle('2026-10-18', '2026-10-31');
    expect(points).toBe(CASES.length * TREND_METRICS.length * 14);
    const { body } = await getJson<TrendBody>(t, '/v1/market/rentals/trends?areaId=1&metric=inventory');
    expect(body.meta.warnings).toEqual([]);
    // dataAge: when the job last materialized snapshots (the run above, at the test clock's now).
    expect(body.meta.dataAge).toBe(t.clock.now().toISOString());
    expect(body.meta.source).toBe('cached');
    expect(body.data.points.at(-1)!.value).toBeGreaterThan(0);
  });

  it('adds one point per day when the clock advances and the job runs again', async () => {
    t.clock.advance(3 * DAY_MS);
    const result = await job.run();
    expect(result.days).toBe(3);
    expect(result.coverage?.lastDate).toBe('2026-11-03');
    const before = await getJson<TrendBody>(
      t,
      '/v1/market/rentals/trends?areaId=100&from=2026-10-25&to=2026-11-03',
    );
    expect(before.body.data.points.map((p) => p.coveredDays)).toEqual(new Array(10).fill(1));
    await expectMatchesOracle('2026-11-01', '2026-11-03');
    // Running again with nothing new to do changes nothing.
    expect((await job.run()).days).toBe(0);
  });

  it('aggregates weeks and months: levels from the last day, new listings summed', async () => {
    const from = '2026-09-01';
    const to = '2026-11-03';
    const day = async (metric: string) =>
      (
        await getJson<TrendBody>(
          t,
          `/v1/market/rentals/trends?areaId=100&metric=${metric}&from=${from}&to=${to}`,
        )
      ).body.data.points;
    for (const interval of ['week', 'month'] as const) {
      for (const metric of ['inventory', 'median_price', 'new_listings'] as const) {
        const { status, body } = await getJson<TrendBody>(
          t,
          `/v1/market/rentals/trends?areaId=100&metric=${metric}&interval=${interval}&from=${from}&to=${to}`,
        );
        expect(status).toBe(200);
        expectSchema(TrendResponse, body);
        expect(body.data.aggregation).toBe(metric === 'new_listings' ? 'sum' : 'last_day');
        const daily = await day(metric);
        for (const point of body.data.points) {
          const inPeriod = daily.filter(
            (d) => d.periodStart >= point.periodStart && d.periodStart <= point.periodEnd,
          );
          expect(point.coveredDays).toBe(inPeriod.length);
          if (metric === 'new_listings')
            expect(point.value).toBe(inPeriod.reduce((s, d) => s + (d.value ?? 0), 0));
          else expect(point.value).toBe(inPeriod.at(-1)!.value);
        }
        if (interval === 'week') {
          // ISO weeks start on Monday (2026-09-01 is a Tuesday, so the first period is clipped).
          expect(body.data.points[0]!.periodStart).toBe('2026-09-01');
          expect(body.data.points[1]!.periodStart).toBe('2026-09-07');
        } else {
          expect(body.data.points.map((p) => p.periodStart)).toEqual([
            '2026-09-01',
            '2026-10-01',
            '2026-11-01',
          ]);
        }
      }
    }
  });

  it.each([
    ['/v1/market/rentals/trends', 'areaId'],
    ['/v1/market/rentals/trends?areaId=424242', 'areaId'],
    ['/v1/market/rentals/trends?areaId=100&metric=mean_vibes', 'metric'],
    ['/v1/market/rentals/trends?areaId=100&interval=year', 'interval'],
    ['/v1/market/rentals/trends?areaId=100&from=2026-02-30', 'from'],
    ['/v1/market/rentals/trends?areaId=100&from=11/01/2026', 'from'],
    ['/v1/market/rentals/trends?areaId=100&to=2027-01-01', 'to'],
    ['/v1/market/rentals/trends?areaId=100&from=2026-10-10&to=2026-10-01', 'from'],
    ['/v1/market/sales/trends?areaId=100&interval=day&from=2025-10-01', 'from'],
    ['/v1/market/sales/trends?areaId=100&interval=week&from=2025-10-01', 'from'],
    ['/v1/market/sales/trends?areaId=100&interval=month&from=2024-09-01', 'from'],
    ['/v1/market/sales/trends?areaId=100&bedrooms=9', 'bedrooms'],
  ])('%s is a 400 naming %s', async (path, parameter) => {
    const { status, body } = await getJson<ErrorJson>(t, path);
    expect(status).toBe(400);
    expect(body.error.details?.params?.[0]?.parameter).toBe(parameter);
    expect(body.error.message).toContain(parameter);
  });

  it('allows 24 months back for monthly series and warns about days not materialized', async () => {
    const { status, body } = await getJson<TrendBody>(
      t,
      '/v1/market/sales/trends?areaId=100&interval=month&from=2024-12-01&to=2026-11-03',
    );
    expect(status).toBe(200);
    expect(body.data.points.length).toBe(24);
    expect(body.data.points[0]!.value).toBeNull();
    expect(body.meta.warnings.join(' ')).toMatch(/cover/);
  });

  it('replaces what an interrupted run left of days it had not recorded as covered', async () => {
    // What a run stopped mid-chunk leaves: rows for the next day, which coverage does not include yet —
    // one for a group that day has (area 100's rentals), and one for a group it has none for.
    const day = '2026-11-04';
    const stale = {
      date: day,
      inventory: 999_999,
      new_listings: 0,
      median_price: 1,
      price_n: 1,
      median_price_per_sqft: null,
      price_per_sqft_n: 0,
      median_days_on_market: null,
      days_on_market_n: 0,
    };
    const written = new Set(
      (
        await t.store.db
          .selectFrom('market_daily_snapshots')
          .select('area_id')
          .distinct()
          .where('listing_type', '=', 'sale')
          .where('bedrooms', '=', '4')
          .execute()
      ).map((row) => row.area_id),
    );
    const quiet = t.ctx.areaTree.records.find((area) => !written.has(area.id));
    expect(quiet).toBeDefined();
    const emptyGroup = { listing_type: 'sale', area_id: quiet!.id, bedrooms: '4' } as const;
    await t.store.db
      .insertInto('market_daily_snapshots')
      .values([
        { listing_type: 'rental', area_id: 100, bedrooms: 'all', ...stale },
        { ...emptyGroup, ...stale },
      ])
      .execute();
    t.clock.advance(DAY_MS);
    expect((await job.run()).days).toBe(1);
    await expectMatchesOracle(day, day);
    const left = await t.store.db
      .selectFrom('market_daily_snapshots')
      .select(['area_id', 'inventory'])
      .where('date', '=', day)
      .where('inventory', '=', 999_999)
      .execute();
    expect(left).toEqual([]);
  });
});
