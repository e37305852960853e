/**
 * Materializes daily market snapshots into `market_daily_snapshots`, the only
 * source trend requests read (a request never scans listing history).
 *
 * Definitions (the contract trend figures follow):
 * - Day d (UTC) is observed at its end, E(d) = the first instant of d + 1.
 * - A listing is ACTIVE on day d when listed_at < E(d) and it had not left the
 *   market by then: contract_at ≥ E(d) (or null) and off_market_at ≥ E(d) (or
 *   null). A listing entering contract therefore stops counting that day; one
 *   with an unknown listing date never counts. A delisted-then-relisted listing
 *   counts through its pause (the row keeps only its latest status).
 * - Price on day d: the price of its latest LISTED / PRICE_DECREASE /
 *   PRICE_INCREASE / RELISTED price event dated ≤ d (the listing's price when
 *   it has none); price per sqft is that price / sqft, rounded to cents.
 * - Days on market on day d: New York calendar days from listed_at's NY date
 *   to the NY date of the day's last instant (domain/listing.ts, the rule the
 *   listing's own `daysOnMarket` follows).
 * - new_listings: listings (any current status) with listed_at on day d.
 * - Rows per (day, listing type, area incl. descendants, bedroom bucket 'all' or
 *   '0'…'4' with 4 = 4+); a bucket with no inventory and no new listing has no
 *   row. Medians follow src/modules/market/statistics.ts (null below MIN_SAMPLE).
 *
 * Runs: the first run materializes the most recent BACKFILL_CHUNK_DAYS complete
 * days, then walks backwards a chunk at a time until `backfillDays` are
 * covered; later runs append each newly completed day. Coverage is recorded
 * after each chunk, so the API serves what exists while a backfill runs.
 */
import type { Kysely } from 'kysely';
import { nyDayNumber } from '../domain/listing.ts';
import { median } from '../modules/market/statistics.ts';
import { type Clock, DAY_MS, HOUR_MS, isoDate } from '../platform/clock.ts';
import type { Database, MarketDailySnapshotsTable } from '../platform/db/tables.ts';
import { type JobEnvironment, type JobProgress, PeriodicJob } from '../platform/jobs/periodic-job.ts';
import { yieldToEventLoop } from '../platform/yield.ts';
import type { AreaTree } from '../reference/areas.ts';

/** Days of history the backfill covers: trends reach back 24 months. */
export const DEFAULT_BACKFILL_DAYS = 731;
const BACKFILL_CHUNK_DAYS = 30;
const INSERT_BATCH = 400;
/** Listings read per history query (also the size of its `IN` list of ids for price events). */
const HISTORY_PAGE = 2000;
const COVERAGE_ID = 'daily';
/** Bucket index of "every bedroom count"; 0…4 are the bedroom buckets. */
const ALL_BUCKET = 5;
export const BEDROOM_BUCKETS = ['0', '1', '2', '3', '4', 'all'] as const;
const PRICE_EVENTS = ['LISTED', 'PRICE_DECREASE', 'PRICE_INCREASE', 'RELISTED'] as const;

export interface Coverage {
  firstDate: string;
  lastDate: string;
  targetFirstDate: string;
  /** When the job last wrote snapshots. */
  updatedAt?: string;
}

export interface RunResult {
  /** Days materialized by this run. */
  days: number;
  coverage: Coverage | null;
}

interface HistoryListing {
  type: 'rental' | 'sale';
  /** The listing's area and every ancestor. */
  areas: readonly number[];
  bucket: number;
  sqft: number | null;
  listedAt: number;
  /** When it left the market (contract or off market); Infinity while on it. */
  endAt: number;
  price: number;
  eventDates: string[];
  eventPrices: number[];
}

interface Group {
  type: 'rental' | 'sale';
  areaId: number;
  bucket: number;
  prices: number[];
  ppsf: number[];
  dom: number[];
  newListings: number;
}

export function addDays(date: string, days: number): string {
  return isoDate(Date.parse(`${date}T00:00:00.000Z`) + days * DAY_MS);
}

export async function readCoverage(db: Kysely<Database>): Promise<Coverage | null> {
  const row = await db
    .selectFrom('market_snapshot_coverage')
    .selectAll()
    .where('id', '=', COVERAGE_ID)
    .executeTakeFirst();
  return row
    ? {
        firstDate: row.first_date,
        lastDate: row.last_date,
        targetFirstDate: row.target_first_date,
        updatedAt: row.updated_at,
      }
    : null;
}

export interface MarketSnapshotJobOptions {
  backfillDays?: number;
}

export class MarketSnapshotJob {
  private running: Promise<RunResult> | null = null;
  private readonly backfillDays: number;
  /** Coverage as last read or written by a run; null before the first run reads it. */
  private coverage: Coverage | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly areaTree: AreaTree,
    private readonly clock: Clock,
    options: MarketSnapshotJobOptions = {},
  ) {
    this.backfillDays = options.backfillDays ?? DEFAULT_BACKFILL_DAYS;
  }

  /**
   * Materializes every missing complete day; concurrent calls share one run.
   * `signal` (of the call that starts the run) ends a backfill after its
   * current chunk, as `stop()` does.
   */
  run(options: { signal?: AbortSignal } = {}): Promise<RunResult> {
    if (!this.running) {
      this.running = this.runOnce(options.signal).finally(() => {
        this.running = null;
      });
    }
    return this.running;
  }

  /**
   * The backfill's coverage as of the latest run (first, last and target first
   * date; `complete` once the target is reached); null before a run has read it.
   */
  progress(): JobProgress | null {
    const c = this.coverage;
    if (c === null) return null;
    return {
      firstDate: c.firstDate,
      lastDate: c.lastDate,
      targetFirstDate: c.targetFirstDate,
      complete: c.firstDate <= c.targetFirstDate,
    };
  }

  private async runOnce(signal: AbortSignal | undefined): Promise<RunResult> {
    // The last complete day: snapshots observe the end of a day.
    const lastDay = addDays(isoDate(this.clock.now()), -1);
    const target = addDays(lastDay, -(this.backfillDays - 1));
    let coverage = await readCoverage(this.db);
    this.coverage = coverage;
    let days = 0;
    if (coverage === null || coverage.lastDate < addDays(target, -1)) {
      // Nothing yet (or too old to extend): start over from the most recent chunk.
      const first = maxDate(target, addDays(lastDay, -(BACKFILL_CHUNK_DAYS - 1)));
      coverage = { firstDate: first, lastDate: lastDay, targetFirstDate: target };
      await this.materialize(first, lastDay, coverage, true);
      days += dayCount(first, lastDay);
    } else if (coverage.lastDate < lastDay) {
      const first = addDays(coverage.lastDate, 1);
      coverage = { ...coverage, lastDate: lastDay };
      await this.materialize(first, lastDay, coverage, false);
      days += dayCount(first, lastDay);
    }
    // Backfill, newest first, a chunk at a time.
    while (!signal?.aborted && coverage.firstDate > coverage.targetFirstDate) {
      const end = addDays(coverage.firstDate, -1);
      const start = maxDate(coverage.targetFirstDate, addDays(end, -(BACKFILL_CHUNK_DAYS - 1)));
      coverage = { ...coverage, firstDate: start };
      await this.materialize(start, end, coverage, false);
      days += dayCount(start, end);
    }
    return { days, coverage };
  }

  /**
   * Computes and writes days [from, to], then records the new coverage. Rows
   * are written in small statements with yields between them, never one long
   * transaction: on SQLite a long write would hold the single connection (and
   * the event loop) that every request's key check needs. Readers see a day
   * only once coverage includes it, and a rerun deletes the range first, so an
   * interrupted chunk is simply redone.
   */
  private async materialize(from: string, to: string, coverage: Coverage, reset: boolean): Promise<void> {
    const listings = await this.loadHistory(from, to);
    if (reset) {
      // Nothing old stays visible as covered while the fresh range is written.
      await this.db.deleteFrom('market_snapshot_coverage').execute();
      await this.db.deleteFrom('market_daily_snapshots').execute();
    } else
      await this.db
        .deleteFrom('market_daily_snapshots')
        .where('date', '>=', from)
        .where('date', '<=', to)
        .execute();
    for (let date = from; date <= to; date = addDays(date, 1)) {
      const rows = await computeDay(listings, date);
      for (let i = 0; i < rows.length; i += INSERT_BATCH) {
        // Idempotent: another node materializing the same days writes the same rows.
        await this.db
          .insertInto('market_daily_snapshots')
          .values(rows.slice(i, i + INSERT_BATCH))
          .onConflict((oc) => oc.columns(['listing_type', 'area_id', 'bedrooms', 'date']).doNothing())
          .execute();
        await yieldToEventLoop();
      }
    }
    const values = {
      first_date: coverage.firstDate,
      last_date: coverage.lastDate,
      target_first_date: coverage.targetFirstDate,
      updated_at: this.clock.now().toISOString(),
    };
    await this.db
      .insertInto('market_snapshot_coverage')
      .values({ id: COVERAGE_ID, ...values })
      .onConflict((oc) => oc.column('id').doUpdateSet(values))
      .execute();
    this.coverage = coverage;
  }

  /**
   * Listings on the market at some point in [from, to], with their price events
   * up to `to`. Read in pages of HISTORY_PAGE listings (keyset on id), yielding
   * between pages, so no single read holds the connection or the event loop long.
   */
  private async loadHistory(from: string, to: string): Promise<HistoryListing[]> {
    const startIso = `${from}T00:00:00.000Z`;
    const endIso = new Date(Date.parse(`${to}T00:00:00.000Z`) + DAY_MS).toISOString();
    const rows: {
      id: string;
      listing_type: 'rental' | 'sale';
      area_id: number;
      bedroom_count: number;
      sqft: number | null;
      price: number;
      listed_at: string | null;
      contract_at: string | null;
      off_market_at: string | null;
    }[] = [];
    const byListing = new Map<string, { dates: string[]; prices: number[] }>();
    let after: string | null = null;
    for (;;) {
      let page = this.db
        .selectFrom('listings')
        .select([
          'id',
          'listing_type',
          'area_id',
          'bedroom_count',
          'sqft',
          'price',
          'listed_at',
          'contract_at',
          'off_market_at',
        ])
        .where('listed_at', 'is not', null)
        .where('listed_at', '<', endIso)
        .where((eb) => eb.or([eb('contract_at', 'is', null), eb('contract_at', '>=', startIso)]))
        .where((eb) => eb.or([eb('off_market_at', 'is', null), eb('off_market_at', '>=', startIso)]))
        .orderBy('id')
        .limit(HISTORY_PAGE);
      if (after !== null) page = page.where('id', '>', after);
      const listings = await page.execute();
      if (listings.length === 0) break;
      rows.push(...listings);
      after = listings[listings.length - 1]!.id;
      const events = await this.db
        .selectFrom('price_events')
        .select(['listing_id', 'date', 'price'])
        .where('event', 'in', PRICE_EVENTS)
        .where('date', '<=', to)
        .where(
          'listing_id',
          'in',
          listings.map((l) => l.id),
        )
        .orderBy('listing_id')
        .orderBy('date')
        .orderBy('id')
        .execute();
      for (const e of events) {
        let entry = byListing.get(e.listing_id);
        if (!entry) {
          entry = { dates: [], prices: [] };
          byListing.set(e.listing_id, entry);
        }
        entry.dates.push(e.date);
        entry.prices.push(Number(e.price));
      }
      await yieldToEventLoop();
      if (listings.length < HISTORY_PAGE) break;
    }
    const chains = new Map<number, number[]>();
    const chainOf = (areaId: number) => {
      let chain = chains.get(areaId);
      if (!chain) {
        chain = [areaId, ...this.areaTree.ancestors(areaId).map((a) => a.id)];
        chains.set(areaId, chain);
      }
      return chain;
    };
    return rows.map((r) => {
      const ends = [r.contract_at, r.off_market_at].filter((v): v is string => v !== null).map(Date.parse);
      const history = byListing.get(r.id);
      return {
        type: r.listing_type,
        areas: chainOf(Number(r.area_id)),
        bucket: Math.min(4, Number(r.bedroom_count)),
        sqft: r.sqft === null || Number(r.sqft) <= 0 ? null : Number(r.sqft),
        listedAt: Date.parse(r.listed_at!),
        endAt: ends.length > 0 ? Math.min(...ends) : Number.POSITIVE_INFINITY,
        price: Number(r.price),
        eventDates: history?.dates ?? [],
        eventPrices: history?.prices ?? [],
      };
    });
  }
}

/** How often the snapshot job runs (clock time): each run adds any day completed since. */
export const MARKET_SNAPSHOT_INTERVAL_MS = HOUR_MS;

/**
 * The job's schedule, not started: a run at once on start (it backfills
 * whatever is missing, without delaying start), then hourly. Stopping it ends a
 * backfill after its current chunk.
 */
export function createMarketSnapshotSchedule(
  job: Pick<MarketSnapshotJob, 'run'> & Partial<Pick<MarketSnapshotJob, 'progress'>>,
  environment: JobEnvironment & { intervalMs?: number } = {},
): PeriodicJob {
  const { intervalMs = MARKET_SNAPSHOT_INTERVAL_MS, ...rest } = environment;
  return new PeriodicJob({
    ...rest,
    name: 'market-snapshots',
    run: (signal) => job.run({ signal }),
    interval: intervalMs,
    ...(job.progress ? { progress: () => job.progress?.() ?? null } : {}),
  });
}

function maxDate(a: string, b: string): string {
  return a > b ? a : b;
}

function dayCount(from: string, to: string): number {
  return Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS) + 1;
}

/** The listing's price as of day `date` (see the module comment). */
export function priceOn(
  listing: Pick<HistoryListing, 'eventDates' | 'eventPrices' | 'price'>,
  date: string,
): number {
  let price: number | null = null;
  for (let i = 0; i < listing.eventDates.length && (listing.eventDates[i] as string) <= date; i++) {
    price = listing.eventPrices[i] as number;
  }
  return price ?? listing.price;
}

/** Listings (and groups) handled between yields to the event loop while computing a day. */
const YIELD_EVERY = 4096;

/**
 * One day's rows for every (type, area, bucket) with inventory or new listings.
 * Asynchronous only to yield regularly: a backfill in a serving process must
 * not hold the event loop for long.
 */
async function computeDay(
  listings: readonly HistoryListing[],
  date: string,
): Promise<MarketDailySnapshotsTable[]> {
  const dayStart = Date.parse(`${date}T00:00:00.000Z`);
  const dayEnd = dayStart + DAY_MS;
  const groups = new Map<number, Group>();
  const groupFor = (type: 'rental' | 'sale', areaId: number, bucket: number) => {
    // Numeric key: (area, bucket 0–5, type); far cheaper than string keys at full scale.
    const key = (areaId * 8 + bucket) * 2 + (type === 'sale' ? 1 : 0);
    let group = groups.get(key);
    if (!group) {
      group = { type, areaId, bucket, prices: [], ppsf: [], dom: [], newListings: 0 };
      groups.set(key, group);
    }
    return group;
  };
  for (let i = 0; i < listings.length; i++) {
    if (i % YIELD_EVERY === YIELD_EVERY - 1) await yieldToEventLoop();
    const l = listings[i] as HistoryListing;
    const active = l.listedAt < dayEnd && l.endAt >= dayEnd;
    const isNew = l.listedAt >= dayStart && l.listedAt < dayEnd;
    if (!active && !isNew) continue;
    const price = active ? priceOn(l, date) : 0;
    const ppsf = active && l.sqft !== null ? Math.round((price / l.sqft) * 100) / 100 : null;
    // New York calendar days (domain rule), observed at the end of day d.
    const dom = Math.max(0, nyDayNumber(dayEnd - 1) - nyDayNumber(l.listedAt));
    for (const areaId of l.areas) {
      for (const bucket of [l.bucket, ALL_BUCKET]) {
        const group = groupFor(l.type, areaId, bucket);
        if (isNew) group.newListings++;
        if (!active) continue;
        group.prices.push(price);
        if (ppsf !== null) group.ppsf.push(ppsf);
        group.dom.push(dom);
      }
    }
  }
  const rows: MarketDailySnapshotsTable[] = [];
  let handled = 0;
  for (const g of groups.values()) {
    if (++handled % 256 === 0) await yieldToEventLoop();
    const medianPrice = median(g.prices);
    const medianPpsf = median(g.ppsf);
    const medianDom = median(g.dom);
    rows.push({
      listing_type: g.type,
      area_id: g.areaId,
      bedrooms: BEDROOM_BUCKETS[g.bucket] as string,
      date,
      inventory: g.prices.length,
      new_listings: g.newListings,
      median_price: medianPrice.value,
      price_n: medianPrice.n,
      median_price_per_sqft: medianPpsf.value,
      price_per_sqft_n: medianPpsf.n,
      median_days_on_market: medianDom.value,
      days_on_market_n: medianDom.n,
    });
  }
  return rows;
}
