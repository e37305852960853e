import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CALIBRATION_BANDS,
  CALIBRATION_OBSERVED_AT,
  type CalibrationMeasure,
  calibrationCollector,
  calibrationTable,
  readCalibration,
  scanMarket,
  statusBefore,
} from '../src/demo/market/calibration.ts';
import { HISTORY_DAYS, MAX_LIFE_DAYS } from '../src/demo/market/lifecycle.ts';
import { DemoMarketGenerator } from '../src/demo/market/market.ts';
import { DAY_MS } from '../src/platform/clock.ts';

/**
 * The full-scale demo market against published figures
 * (resources/market-calibration.csv), its 24-month history's first months and
 * its rental days-on-market tail. One scan of the market at scale 1 (listing
 * rows only) serves every test: about 8–10 s of CPU.
 */
const SEED = 20261121;
const T = CALIBRATION_OBSERVED_AT;
const BOROUGHS = [100, 200, 300, 400, 500] as const;

/** Month starts (`YYYY-MM-DD`) inside the 24-month window, oldest first. */
function monthStarts(): string[] {
  const windowStart = T.getTime() - HISTORY_DAYS * DAY_MS;
  const first = new Date(windowStart);
  const out: string[] = [];
  for (let m = 1; ; m++) {
    const start = Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + m, 1);
    if (start > T.getTime()) break;
    out.push(new Date(start).toISOString().slice(0, 10));
  }
  return out;
}

const MONTHS = monthStarts();

let measures: CalibrationMeasure[];
/** Active listings at each month start, by `${kind}:${borough}`. */
const active = new Map<string, number[]>();
const rentedDays: number[] = [];
/** Longest finished life (first to last event) seen per kind, days. */
const longestLife = { rental: 0, sale: 0 };
let longestRentalRun = 0;

beforeAll(() => {
  const generator = new DemoMarketGenerator({ seed: SEED, scale: 1, now: T });
  const collector = calibrationCollector(readCalibration());
  for (const kind of ['rental', 'sale']) {
    for (const borough of BOROUGHS) active.set(`${kind}:${borough}`, new Array(MONTHS.length).fill(0));
  }
  scanMarket(generator, (scanned) => {
    collector.visit(scanned);
    const { listing, events, boroughId } = scanned;
    const counts = active.get(`${listing.listing_type}:${boroughId}`);
    if (counts) {
      for (let m = 0; m < MONTHS.length; m++) if (statusBefore(events, MONTHS[m]!) === 'ACTIVE') counts[m]!++;
    }
    if (listing.status === 'OFF_MARKET' && events.length > 0) {
      const life = (Date.parse(events.at(-1)!.date) - Date.parse(events[0]!.date)) / DAY_MS;
      longestLife[listing.listing_type] = Math.max(longestLife[listing.listing_type], life);
    }
    if (listing.listing_type !== 'rental') return;
    if (listing.closed_reason === 'RENTED' && listing.listed_at && listing.off_market_at) {
      rentedDays.push((Date.parse(listing.off_market_at) - Date.parse(listing.listed_at)) / DAY_MS);
    }
    // Longest stretch on the market since a listing or relisting, up to its end or T.
    let since: string | null = null;
    for (const e of events) {
      if (e.event === 'LISTED' || e.event === 'RELISTED') since = e.date;
      else if (since && (e.event === 'RENTED' || e.event === 'DELISTED')) {
        longestRentalRun = Math.max(longestRentalRun, (Date.parse(e.date) - Date.parse(since)) / DAY_MS);
        since = null;
      }
    }
    if (since) longestRentalRun = Math.max(longestRentalRun, (T.getTime() - Date.parse(since)) / DAY_MS);
  });
  measures = collector.result();
}, 120_000);

describe('demo market calibration (scale 1)', () => {
  it('reads a calibration file covering rents, sale prices and sale inventory', () => {
    const rows = readCalibration();
    for (const metric of ['rent_median', 'sale_median', 'sale_inventory'] as const) {
      expect(rows.filter((r) => r.metric === metric).length).toBeGreaterThan(0);
    }
    for (const row of rows) expect(row.url).toMatch(/^https?:\/\//);
  });

  it('the resources README carries the sources table generated from the file', () => {
    const readme = readFileSync(new URL('../resources/README.md', import.meta.url), 'utf8');
    const table = calibrationTable();
    expect(table.split('\n').length).toBe(readCalibration().length + 3);
    expect(readme).toContain(table);
  });

  it.each(
    readCalibration().map((row, i) => ({
      i,
      label: `${row.metric} ${row.region}${row.bedrooms === null ? '' : ` ${row.bedrooms}br`} ${row.period}`,
    })),
  )('row $i ($label) is within its band', ({ i }) => {
    const m = measures[i]!;
    // Enough demo listings behind the figure for a median or count to mean something.
    expect(m.sample).toBeGreaterThanOrEqual(50);
    expect(m.demo).not.toBeNull();
    expect(Math.abs(m.deviation!)).toBeLessThanOrEqual(CALIBRATION_BANDS[m.row.metric]);
  });
});

describe('demo market history (scale 1)', () => {
  it('has no ramp: month-over-month inventory change in the first three months is within the rest of the window', () => {
    expect(MONTHS.length).toBeGreaterThanOrEqual(23);
    for (const [key, counts] of active) {
      const changes = counts.slice(1).map((n, m) => n / counts[m]! - 1);
      const first = changes.slice(0, 3);
      const rest = changes.slice(3);
      // Seasonal swings repeat a year apart; monthly counts of 1,500–9,000 listings add
      // sampling noise of 1–3 points to each change, hence the 3-point margin (the ramp
      // this guards against grew Manhattan's rental inventory by over 200% a month).
      const low = Math.min(...rest) - 0.03;
      const high = Math.max(...rest) + 0.03;
      for (const change of first) {
        expect(
          change,
          `${key}: ${first.map((c) => c.toFixed(3)).join(', ')} vs [${low.toFixed(3)}, ${high.toFixed(3)}]`,
        ).toBeGreaterThanOrEqual(low);
        expect(change, key).toBeLessThanOrEqual(high);
      }
      // The window opens on a full market, not an empty one.
      expect(counts[0]!, key).toBeGreaterThan(0.7 * Math.max(...counts));
    }
  });

  it('burns in far enough: no finished life is longer than MAX_LIFE_DAYS', () => {
    // The generator and the simulator look back HISTORY_DAYS + MAX_LIFE_DAYS for lives
    // still running at the window's start: a longer life would be missing there.
    expect(longestLife.rental).toBeGreaterThan(200);
    expect(longestLife.rental).toBeLessThanOrEqual(MAX_LIFE_DAYS.rental);
    expect(longestLife.sale).toBeGreaterThan(300);
    expect(longestLife.sale).toBeLessThanOrEqual(MAX_LIFE_DAYS.sale);
  });

  it('keeps a realistic rental days-on-market tail', () => {
    const sorted = [...rentedDays].sort((a, b) => a - b);
    const p90 = sorted[Math.floor(sorted.length * 0.9)]!;
    expect(p90).toBeGreaterThanOrEqual(60);
    expect(p90).toBeLessThanOrEqual(90);
    // Nothing on the market past a year without a relisting.
    expect(longestRentalRun).toBeLessThanOrEqual(365);
    expect(longestRentalRun).toBeGreaterThan(120);
  });
});
