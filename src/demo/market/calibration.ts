/**
 * The demo market against published figures. `resources/market-calibration.csv`
 * holds, per region, a figure from a public 2025 market report with its source;
 * each row is measured on the demo market the way its publisher measured the
 * real one (`basis`):
 * - `new_leases`: median rent of the leases signed (RENTED) in the period, by
 *   bedroom count (3 stands for 3 or more);
 * - `closed_sales`: median price of the sales closed (SOLD) in the period;
 * - `active_listings`: sale listings on the market at the period's end.
 * The generator is calibrated so every row falls within CALIBRATION_BANDS at
 * scale 1. Measure it with
 *   npx tsx src/demo/market/calibration.cli.ts [scale] [seed]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DAY_MS } from '../../platform/clock.ts';
import type { ListingRow, NewPriceEvent } from '../../platform/db/tables.ts';
import { parseCsv } from '../../reference/csv.ts';
import { demoAreas } from './geography.ts';
import { arrivalsOn, firstMarketDay } from './lifecycle.ts';
import type { DemoMarketGenerator } from './market.ts';

export type CalibrationMetric = 'rent_median' | 'sale_median' | 'sale_inventory';
export type CalibrationBasis = 'new_leases' | 'closed_sales' | 'active_listings';

export interface CalibrationRow {
  metric: CalibrationMetric;
  basis: CalibrationBasis;
  region: string;
  /** Demo area ids (neighborhoods or boroughs); their descendants count too. */
  areaIds: readonly number[];
  /** Bedroom count for rents (0 studio … 3 for 3+), null otherwise. */
  bedrooms: number | null;
  value: number;
  /** `YYYY-MM` (a month), `YYYY-Qn` (a quarter) or `YYYY-MM-DD` (a day). */
  period: string;
  publisher: string;
  report: string;
  url: string;
}

/** Largest relative deviation allowed per metric at scale 1. */
export const CALIBRATION_BANDS: Readonly<Record<CalibrationMetric, number>> = {
  rent_median: 0.15,
  sale_median: 0.15,
  sale_inventory: 0.2,
};

/** The instant the calibration observes the market at: after every period in the file. */
export const CALIBRATION_OBSERVED_AT = new Date('2026-01-20T15:00:00.000Z');

const FILE = fileURLToPath(new URL('../../../resources/market-calibration.csv', import.meta.url));

const METRICS: Readonly<Record<CalibrationMetric, CalibrationBasis>> = {
  rent_median: 'new_leases',
  sale_median: 'closed_sales',
  sale_inventory: 'active_listings',
};

/** The calibration rows; throws naming the row when one is malformed. */
export function readCalibration(file = FILE): CalibrationRow[] {
  return parseCsv(readFileSync(file, 'utf8')).map((raw, i) => {
    const where = `market-calibration.csv row ${i + 2}`;
    const metric = raw.metric as CalibrationMetric;
    if (!(metric in METRICS)) throw new Error(`${where}: unknown metric ${raw.metric}`);
    if (raw.basis !== METRICS[metric])
      throw new Error(`${where}: ${metric} is measured on ${METRICS[metric]}`);
    const bedrooms = raw.bedrooms === '' ? null : Number(raw.bedrooms);
    if (
      (metric === 'rent_median') !== (bedrooms !== null) ||
      (bedrooms !== null && !(bedrooms >= 0 && bedrooms <= 3))
    ) {
      throw new Error(`${where}: bedrooms must be 0–3 for rents and empty otherwise`);
    }
    const value = Number(raw.value);
    if (!(value > 0)) throw new Error(`${where}: value must be a positive number`);
    periodBounds(raw.period!);
    if (!raw.url?.startsWith('https://') && !raw.url?.startsWith('http://')) throw new Error(`${where}: url`);
    return {
      metric,
      basis: METRICS[metric],
      region: raw.region!,
      areaIds: raw.area_ids!.split('|').map(Number),
      bedrooms,
      value,
      period: raw.period!,
      publisher: raw.publisher!,
      report: raw.report!,
      url: raw.url,
    };
  });
}

/** A period's [start, end) in UTC milliseconds. */
export function periodBounds(period: string): [number, number] {
  const quarter = /^(\d{4})-Q([1-4])$/.exec(period);
  if (quarter) {
    const [year, q] = [Number(quarter[1]), Number(quarter[2])];
    return [Date.UTC(year, 3 * (q - 1), 1), Date.UTC(year, 3 * q, 1)];
  }
  const month = /^(\d{4})-(\d{2})$/.exec(period);
  if (month) {
    const [year, m] = [Number(month[1]), Number(month[2])];
    return [Date.UTC(year, m - 1, 1), Date.UTC(year, m, 1)];
  }
  const day = /^\d{4}-\d{2}-\d{2}$/.test(period) ? Date.parse(`${period}T00:00:00.000Z`) : Number.NaN;
  if (Number.isNaN(day))
    throw new Error(`calibration period ${period} is not YYYY-MM, YYYY-Qn or YYYY-MM-DD`);
  return [day, day + DAY_MS];
}

/** What a market scan sees of one listing: its row (as observed) and its whole price history so far. */
export interface ScannedListing {
  listing: ListingRow;
  events: readonly NewPriceEvent[];
  boroughId: number;
}

/**
 * Visits every listing of the market at the generator's `now`, listing rows
 * only (no detail pages, photos or fees): about 7 s at scale 1 on one core.
 */
export function scanMarket(generator: DemoMarketGenerator, visit: (scanned: ScannedListing) => void): void {
  const tree = demoAreas().tree;
  const boroughs = new Map<number, number>();
  const now = generator.now.getTime();
  const last = Math.floor((now - Date.UTC(2015, 0, 1)) / DAY_MS);
  for (const kind of ['rental', 'sale'] as const) {
    for (let day = firstMarketDay(kind, now); day <= last; day++) {
      const n = arrivalsOn(generator.seed, generator.scale, kind, day);
      for (let index = 0; index < n; index++) {
        const bundle = generator.listingAt(kind, day, index, now, 'listing');
        if (!bundle) continue;
        const areaId = bundle.listing.area_id;
        let boroughId = boroughs.get(areaId);
        if (boroughId === undefined) {
          boroughId = tree.borough(areaId)?.id ?? 0;
          boroughs.set(areaId, boroughId);
        }
        visit({ listing: bundle.listing, events: bundle.events, boroughId });
      }
    }
  }
}

/** Status after the last event dated before `day` (`YYYY-MM-DD`): null when not yet listed. */
export function statusBefore(
  events: readonly NewPriceEvent[],
  day: string,
): 'ACTIVE' | 'IN_CONTRACT' | 'OFF_MARKET' | null {
  let status: 'ACTIVE' | 'IN_CONTRACT' | 'OFF_MARKET' | null = null;
  for (const e of events) {
    if (e.date >= day) break;
    if (e.event === 'IN_CONTRACT') status = 'IN_CONTRACT';
    else if (e.event === 'RENTED' || e.event === 'SOLD' || e.event === 'DELISTED') status = 'OFF_MARKET';
    else if (e.event === 'LISTED' || e.event === 'RELISTED') status = 'ACTIVE';
  }
  return status;
}

export interface CalibrationMeasure {
  row: CalibrationRow;
  /** The demo's figure (median or count), null when no demo listing qualifies. */
  demo: number | null;
  /** Listings behind the demo figure. */
  sample: number;
  /** demo / published − 1. */
  deviation: number | null;
  withinBand: boolean;
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * A visitor collecting every row's demo figure; `result()` after the scan.
 * Rows are matched by area (the row's areas and their descendants); counts are
 * divided by `scale`, so they read as at scale 1.
 */
export function calibrationCollector(
  rows: readonly CalibrationRow[],
  scale = 1,
): {
  visit: (scanned: ScannedListing) => void;
  result: () => CalibrationMeasure[];
} {
  const tree = demoAreas().tree;
  const compiled = rows.map((row) => {
    const [start, end] = periodBounds(row.period);
    return {
      row,
      areas: new Set(row.areaIds.flatMap((id) => tree.descendantsAndSelf(id))),
      startDay: isoDay(start),
      endDay: isoDay(end),
      values: [] as number[],
      count: 0,
    };
  });
  const visit = ({ listing, events }: ScannedListing) => {
    for (const c of compiled) {
      if (!c.areas.has(listing.area_id)) continue;
      const { row } = c;
      if (row.metric === 'rent_median') {
        if (listing.listing_type !== 'rental' || Math.min(3, listing.bedroom_count ?? 0) !== row.bedrooms)
          continue;
        for (const e of events) {
          if (e.event === 'RENTED' && e.date >= c.startDay && e.date < c.endDay) c.values.push(e.price);
        }
      } else if (listing.listing_type === 'sale') {
        if (row.metric === 'sale_median') {
          for (const e of events) {
            if (e.event === 'SOLD' && e.date >= c.startDay && e.date < c.endDay) c.values.push(e.price);
          }
        } else if (statusBefore(events, c.endDay) === 'ACTIVE') c.count++;
      }
    }
  };
  const result = () =>
    compiled.map((c): CalibrationMeasure => {
      const demo = c.row.metric === 'sale_inventory' ? Math.round(c.count / scale) : median(c.values);
      const sample = c.row.metric === 'sale_inventory' ? c.count : c.values.length;
      const deviation = demo === null ? null : demo / c.row.value - 1;
      return {
        row: c.row,
        demo,
        sample,
        deviation,
        withinBand: deviation !== null && Math.abs(deviation) <= CALIBRATION_BANDS[c.row.metric],
      };
    });
  return { visit, result };
}

/** Scans a market once and measures every calibration row on it. */
export function measureCalibration(
  generator: DemoMarketGenerator,
  rows: readonly CalibrationRow[] = readCalibration(),
): CalibrationMeasure[] {
  const collector = calibrationCollector(rows, generator.scale);
  scanMarket(generator, collector.visit);
  return collector.result();
}

/**
 * The sources table of resources/README.md, one line per row in file order
 * (a test keeps the README's copy equal to this).
 */
export function calibrationTable(rows: readonly CalibrationRow[] = readCalibration()): string {
  const lines = [
    '| Metric | Basis | Region | Bedrooms | Published | Period | Source |',
    '| --- | --- | --- | --- | ---: | --- | --- |',
  ];
  for (const row of rows) {
    const bedrooms =
      row.bedrooms === null
        ? ''
        : row.bedrooms === 0
          ? 'studio'
          : row.bedrooms === 3
            ? '3+'
            : String(row.bedrooms);
    const value = `${row.metric === 'sale_inventory' ? '' : '$'}${row.value.toLocaleString('en-US')}`;
    lines.push(
      `| ${row.metric} | ${row.basis} | ${row.region} | ${bedrooms} | ${value} | ${row.period} | ${row.publisher}, [${row.report}](${row.url}) |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
