import type { Kysely } from 'kysely';
import type { Served } from '../../domain/freshness.ts';
import type { ListingType } from '../../domain/listing.ts';
import type { Tier } from '../../domain/tiers.ts';
import { ApiError } from '../../http/errors.ts';
import { addDays, type Coverage, readCoverage } from '../../jobs/market-snapshots.ts';
import { type Clock, isoDate } from '../../platform/clock.ts';
import type { Database, MarketDailySnapshotsTable } from '../../platform/db/tables.ts';
import type { AreaTree } from '../../reference/areas.ts';
import { type ResolvedAreaInput, resolveAreaInput } from '../areas/area-input.ts';
import type { FreshnessPolicy } from '../freshness/freshness-policy.ts';

export const TREND_METRICS = [
  'median_price',
  'median_price_per_sqft',
  'median_days_on_market',
  'inventory',
  'new_listings',
] as const;
export type TrendMetric = (typeof TREND_METRICS)[number];
export const TREND_INTERVALS = ['day', 'week', 'month'] as const;
export type TrendInterval = (typeof TREND_INTERVALS)[number];

/** How far back `from` may reach: 365 days for day and week series, 24 months for monthly ones. */
export const MAX_DAYS_BACK = 365;
export const MAX_MONTHS_BACK = 24;

export interface TrendRequest {
  listingType: ListingType;
  areaId: number;
  bedrooms?: number | undefined;
  metric: TrendMetric;
  interval: TrendInterval;
  from?: string | undefined;
  to?: string | undefined;
}

export interface TrendPoint {
  periodStart: string;
  periodEnd: string;
  value: number | null;
  n: number;
  coveredDays: number;
}

export interface Trend {
  areaId: number;
  areaName: string;
  listingType: ListingType;
  bedrooms: number | null;
  metric: TrendMetric;
  interval: TrendInterval;
  from: string;
  to: string;
  aggregation: 'last_day' | 'sum';
  points: TrendPoint[];
}

/** new_listings is a flow (summed over a period); every other metric is a level (read on the period's last day). */
function aggregationOf(metric: TrendMetric): 'last_day' | 'sum' {
  return metric === 'new_listings' ? 'sum' : 'last_day';
}

function validDate(value: string, parameter: string): string {
  const parsed = Date.parse(`${value}T00:00:00.000Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(parsed) || isoDate(parsed) !== value) {
    throw ApiError.invalidParam({
      parameter,
      rule: 'format',
      message: `must be a date (YYYY-MM-DD), got "${value}"`,
    });
  }
  return value;
}

/** The later / earlier of two `YYYY-MM-DD` dates (they order as text). */
function laterDate(a: string, b: string): string {
  return a >= b ? a : b;
}
function earlierDate(a: string, b: string): string {
  return a <= b ? a : b;
}

function monthStart(date: string): string {
  return `${date.slice(0, 7)}-01`;
}

function addMonths(date: string, months: number): string {
  const d = new Date(`${date}T00:00:00.000Z`);
  const day = d.getUTCDate();
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, lastDay));
  return isoDate(target);
}

/** Start of the period containing `date`: the day, its ISO week's Monday, or the first of its month. */
function periodStartOf(date: string, interval: TrendInterval): string {
  if (interval === 'day') return date;
  if (interval === 'month') return monthStart(date);
  const weekday = (new Date(`${date}T00:00:00.000Z`).getUTCDay() + 6) % 7;
  return addDays(date, -weekday);
}

function nextPeriod(start: string, interval: TrendInterval): string {
  if (interval === 'day') return addDays(start, 1);
  if (interval === 'week') return addDays(start, 7);
  return addMonths(start, 1);
}

function metricValue(
  row: MarketDailySnapshotsTable,
  metric: TrendMetric,
): { value: number | null; n: number } {
  switch (metric) {
    case 'median_price':
      return { value: row.median_price, n: row.price_n };
    case 'median_price_per_sqft':
      return { value: row.median_price_per_sqft, n: row.price_per_sqft_n };
    case 'median_days_on_market':
      return { value: row.median_days_on_market, n: row.days_on_market_n };
    case 'inventory':
      return { value: row.inventory, n: row.inventory };
    case 'new_listings':
      return { value: row.new_listings, n: row.new_listings };
  }
}

/**
 * Trend series read from the materialized daily snapshots (one primary-key
 * range per request). Day points are the day's snapshot; week (ISO, Monday
 * start) and month points take the level metrics from the last covered day of
 * the period within [from, to] and sum new_listings over the period's covered
 * days. Periods are clipped to [from, to]. A covered day without a row had no
 * inventory (levels 0, medians null); uncovered days give null points and a warning.
 */
export class MarketTrends {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly areaTree: AreaTree,
    private readonly clock: Clock,
    private readonly freshness: FreshnessPolicy,
  ) {}

  /** Resolves defaults and checks bounds; every violation is a 400 naming its parameter. */
  resolveRange(request: TrendRequest): { from: string; to: string } {
    const today = isoDate(this.clock.now());
    const lastComplete = addDays(today, -1);
    const to = request.to === undefined ? lastComplete : validDate(request.to, 'to');
    if (to > today) {
      throw ApiError.invalidParam({
        parameter: 'to',
        rule: 'range',
        message: `must not be after today (${today})`,
      });
    }
    const defaultFrom =
      request.interval === 'day'
        ? addDays(to, -29)
        : request.interval === 'week'
          ? addDays(to, -83)
          : addMonths(monthStart(to), -11);
    const from = request.from === undefined ? defaultFrom : validDate(request.from, 'from');
    if (from > to) {
      throw ApiError.invalidParam({
        parameter: 'from',
        rule: 'range',
        message: `must not be after to (${from} > ${to})`,
      });
    }
    const earliest =
      request.interval === 'month' ? addMonths(today, -MAX_MONTHS_BACK) : addDays(today, -MAX_DAYS_BACK);
    if (from < earliest) {
      const limit =
        request.interval === 'month'
          ? `${MAX_MONTHS_BACK} months`
          : `${MAX_DAYS_BACK} days for interval=${request.interval}`;
      throw ApiError.invalidParam({
        parameter: 'from',
        rule: 'range',
        message: `must be on or after ${earliest}: series reach back at most ${limit}`,
      });
    }
    return { from, to };
  }

  /**
   * A series and its warnings; `meta.dataAge` is when the snapshot job last
   * materialized snapshots (null before its first run).
   */
  async trend(
    input: Omit<TrendRequest, 'areaId'> & { areaId: string | number },
    tier: Tier,
  ): Promise<Served<Trend> & { warnings: string[]; meta: { areas: ResolvedAreaInput[] } }> {
    // The area by id, slug, name or alias; echoed in `meta.areas`.
    const area = resolveAreaInput(this.areaTree, 'areaId', input.areaId);
    const request: TrendRequest = { ...input, areaId: area.id };
    const { from, to } = this.resolveRange(request);
    const bucket = request.bedrooms === undefined ? 'all' : String(request.bedrooms);
    const [coverage, rows] = await Promise.all([
      readCoverage(this.db),
      this.db
        .selectFrom('market_daily_snapshots')
        .selectAll()
        .where('listing_type', '=', request.listingType)
        .where('area_id', '=', request.areaId)
        .where('bedrooms', '=', bucket)
        .where('date', '>=', from)
        .where('date', '<=', to)
        .orderBy('date')
        .execute(),
    ]);
    const byDate = new Map(rows.map((r) => [r.date, r]));
    const covered = (date: string) =>
      coverage !== null && date >= coverage.firstDate && date <= coverage.lastDate;
    const aggregation = aggregationOf(request.metric);
    const points: TrendPoint[] = [];
    for (
      let start = periodStartOf(from, request.interval);
      start <= to;
      start = nextPeriod(start, request.interval)
    ) {
      const periodStart = laterDate(start, from);
      const lastOfPeriod = addDays(nextPeriod(start, request.interval), -1);
      const periodEnd = earlierDate(lastOfPeriod, to);
      let coveredDays = 0;
      let sum = 0;
      let last: { value: number | null; n: number } | null = null;
      for (let day = periodStart; day <= periodEnd; day = addDays(day, 1)) {
        if (!covered(day)) continue;
        coveredDays++;
        const row = byDate.get(day);
        const figure = row
          ? metricValue(row, request.metric)
          : { value: aggregation === 'sum' || request.metric === 'inventory' ? 0 : null, n: 0 };
        sum += figure.value ?? 0;
        last = figure;
      }
      const point =
        coveredDays === 0 || last === null
          ? { value: null, n: 0 }
          : aggregation === 'sum'
            ? { value: sum, n: sum }
            : last;
      points.push({ periodStart, periodEnd, value: point.value, n: point.n, coveredDays });
    }
    return {
      data: {
        areaId: request.areaId,
        areaName: this.areaTree.get(request.areaId)?.name ?? '',
        listingType: request.listingType,
        bedrooms: request.bedrooms ?? null,
        metric: request.metric,
        interval: request.interval,
        from,
        to,
        aggregation,
        points,
      },
      warnings: coverageWarnings(coverage, from, to),
      meta: { ...this.freshness.ofDerived(tier, coverage?.updatedAt ?? null), areas: [area] },
    };
  }
}

function coverageWarnings(coverage: Coverage | null, from: string, to: string): string[] {
  if (coverage === null) {
    return [
      'Daily market snapshots have not been materialized yet; every point is null until the snapshot job has run.',
    ];
  }
  const warnings: string[] = [];
  if (from < coverage.firstDate || to > coverage.lastDate) {
    warnings.push(
      `Daily market snapshots cover ${coverage.firstDate} to ${coverage.lastDate}; points outside that range are null.`,
    );
  }
  if (coverage.firstDate > coverage.targetFirstDate) {
    warnings.push(`The history backfill is in progress (it will reach back to ${coverage.targetFirstDate}).`);
  }
  return warnings;
}
