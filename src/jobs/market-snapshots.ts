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
import { medianInPlace } from '../modules/market/statistics.ts';
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

/** The columns of a listing the history reads. */
interface HistoryRow {
  id: string;
  listing_type: 'rental' | 'sale';
  area_id: number;
  bedroom_count: number;
  sqft: number | null;
  price: number;
  listed_at: string | null;
  contract_at: string | null;
  off_market_at: string | null;
}

/** One (listing type, area, bedroom bucket) a snapshot row describes. */
interface GroupKey {
  type: 'rental' | 'sale';
  areaId: number;
  /** 0…4 bedrooms (4 = 4+), or ALL_BUCKET. */
  bucket: number;
}

/**
 * The listings a chunk reads, in columns (slot i is one listing), with the
 * snapshot groups each falls in worked out once: a backfill computes 731 days
 * over ~65,000 listings each, so a day's pass reads typed arrays only, with no
 * per-day objects, maps or copies.
 */
interface HistoryColumns {
  count: number;
  listedAt: Float64Array;
  /** When it left the market (contract or off market); Infinity while on it. */
  endAt: Float64Array;
  /** New York day number of listed_at (days on market count NY calendar days). */
  listedNyDay: Float64Array;
  price: Float64Array;
  /** NaN when unknown or not positive. */
  sqft: Float64Array;
  /** Listing i's price events, by date, are [eventStart[i], eventStart[i + 1]) of the next two. */
  eventStart: Int32Array;
  /** UTC day number of the event's date. */
  eventDay: Float64Array;
  eventPrice: Float64Array;
  /** Listing i's groups are [groupStart[i], groupStart[i + 1]) of groupOf: per area of its chain, its bucket and ALL_BUCKET. */
  groupStart: Int32Array;
  groupOf: Int32Array;
  groups: readonly GroupKey[];
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
    } else await this.deleteDays(listings, from, to);
    // Rows are written in the primary key's order (type, area, bedrooms, date),
    // each group's days together: written day by day, a statement of 400 rows
    // touched ~400 index pages spread over the whole index, and the write-ahead
    // log took a copy of every one at each commit.
    const scratch = new DayScratch(listings);
    const rowsByGroup = listings.groups.map((): MarketDailySnapshotsTable[] => []);
    for (let date = from; date <= to; date = addDays(date, 1)) {
      await computeDay(listings, scratch, date, rowsByGroup);
    }
    const rows = groupsInKeyOrder(listings.groups).flatMap(
      (g) => rowsByGroup[g] as MarketDailySnapshotsTable[],
    );
    for (let i = 0; i < rows.length; i += INSERT_BATCH) {
      // Idempotent: another node materializing the same days writes the same rows.
      await this.db
        .insertInto('market_daily_snapshots')
        .values(rows.slice(i, i + INSERT_BATCH))
        .onConflict((oc) => oc.columns(['listing_type', 'area_id', 'bedrooms', 'date']).doNothing())
        .execute();
      await yieldToEventLoop();
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
   * Deletes whatever an interrupted run left of days [from, to] (normally
   * nothing). Bounded by the primary key: every (type, area, bucket) a row
   * can have — the tree's areas and the chunk's, all buckets — with the days
   * as the key's last column, so the store seeks each group's range. A bare
   * range on `date`, which leads no index, scanned the whole table under the
   * write lock: at full coverage (2.9M rows) locating a month took 190–250 ms
   * that way on a quiet machine (0.6–1.5 s measured under load), 18–27 ms so.
   */
  private async deleteDays(listings: HistoryColumns, from: string, to: string): Promise<void> {
    const areaIds = new Set(this.areaTree.records.map((area) => area.id));
    for (const group of listings.groups) areaIds.add(group.areaId);
    await this.db
      .deleteFrom('market_daily_snapshots')
      .where('listing_type', 'in', ['rental', 'sale'])
      .where('area_id', 'in', [...areaIds])
      .where('bedrooms', 'in', [...BEDROOM_BUCKETS])
      .where('date', '>=', from)
      .where('date', '<=', to)
      .execute();
  }

  /**
   * Listings on the market at some point in [from, to], with their price events
   * up to `to`. Read in pages of HISTORY_PAGE listings (keyset on id), yielding
   * between pages, so no single read holds the connection or the event loop long.
   */
  private async loadHistory(from: string, to: string): Promise<HistoryColumns> {
    const startIso = `${from}T00:00:00.000Z`;
    const endIso = new Date(Date.parse(`${to}T00:00:00.000Z`) + DAY_MS).toISOString();
    const rows: HistoryRow[] = [];
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
    return historyColumns(rows, byListing, this.areaTree);
  }
}

/** The columns of `rows` (see HistoryColumns), with their price events and groups. */
function historyColumns(
  rows: readonly HistoryRow[],
  events: ReadonlyMap<string, { dates: string[]; prices: number[] }>,
  areaTree: AreaTree,
): HistoryColumns {
  const count = rows.length;
  const columns = {
    listedAt: new Float64Array(count),
    endAt: new Float64Array(count),
    listedNyDay: new Float64Array(count),
    price: new Float64Array(count),
    sqft: new Float64Array(count),
    eventStart: new Int32Array(count + 1),
    groupStart: new Int32Array(count + 1),
  };
  const eventDay: number[] = [];
  const eventPrice: number[] = [];
  const groupOf: number[] = [];
  const groups: GroupKey[] = [];
  const groupIndex = new Map<number, number>();
  const groupFor = (type: 'rental' | 'sale', areaId: number, bucket: number) => {
    // Numeric key: (area, bucket 0–5, type).
    const key = (areaId * 8 + bucket) * 2 + (type === 'sale' ? 1 : 0);
    let index = groupIndex.get(key);
    if (index === undefined) {
      index = groups.length;
      groups.push({ type, areaId, bucket });
      groupIndex.set(key, index);
    }
    return index;
  };
  const chains = new Map<number, number[]>();
  const chainOf = (areaId: number) => {
    let chain = chains.get(areaId);
    if (!chain) {
      chain = [areaId, ...areaTree.ancestors(areaId).map((a) => a.id)];
      chains.set(areaId, chain);
    }
    return chain;
  };
  for (let i = 0; i < count; i++) {
    const r = rows[i] as HistoryRow;
    const listedAt = Date.parse(r.listed_at as string);
    columns.listedAt[i] = listedAt;
    columns.endAt[i] = Math.min(endOf(r.contract_at), endOf(r.off_market_at));
    columns.listedNyDay[i] = nyDayNumber(listedAt);
    columns.price[i] = Number(r.price);
    columns.sqft[i] = r.sqft === null || Number(r.sqft) <= 0 ? Number.NaN : Number(r.sqft);
    const history = events.get(r.id);
    for (let e = 0; e < (history?.dates.length ?? 0); e++) {
      eventDay.push(Date.parse(`${history?.dates[e]}T00:00:00.000Z`) / DAY_MS);
      eventPrice.push(history?.prices[e] as number);
    }
    columns.eventStart[i + 1] = eventDay.length;
    const bucket = Math.min(4, Number(r.bedroom_count));
    for (const areaId of chainOf(Number(r.area_id))) {
      groupOf.push(groupFor(r.listing_type, areaId, bucket), groupFor(r.listing_type, areaId, ALL_BUCKET));
    }
    columns.groupStart[i + 1] = groupOf.length;
  }
  return {
    count,
    ...columns,
    eventDay: Float64Array.from(eventDay),
    eventPrice: Float64Array.from(eventPrice),
    groupOf: Int32Array.from(groupOf),
    groups,
  };
}

/** When a listing left the market by one of its exits; Infinity while it has not. */
function endOf(at: string | null): number {
  return at === null ? Number.POSITIVE_INFINITY : Date.parse(at);
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

/** Listing i's price on UTC day `day` (see the module comment): its latest price event by then, else its price. */
function priceOnDay(h: HistoryColumns, i: number, day: number): number {
  let price = h.price[i] as number;
  for (
    let e = h.eventStart[i] as number;
    e < (h.eventStart[i + 1] as number) && (h.eventDay[e] as number) <= day;
    e++
  ) {
    price = h.eventPrice[e] as number;
  }
  return price;
}

/** Listings (and groups) handled between yields to the event loop while computing a day. */
const YIELD_EVERY = 4096;

/**
 * A day's working space for one chunk's listings, reused day after day: per
 * group counts and fill positions, per listing the day's price, and the
 * groups' samples laid end to end (each group's run is its own subarray).
 */
class DayScratch {
  readonly inventory: Int32Array;
  readonly withPpsf: Int32Array;
  readonly newListings: Int32Array;
  readonly priceAt: Int32Array;
  readonly ppsfAt: Int32Array;
  /** The listing's price on the day; NaN when it was not on the market. */
  readonly dayPrice: Float64Array;
  readonly prices: Float64Array;
  readonly ppsf: Float64Array;
  readonly dom: Float64Array;

  constructor(h: HistoryColumns) {
    const groups = h.groups.length;
    this.inventory = new Int32Array(groups);
    this.withPpsf = new Int32Array(groups);
    this.newListings = new Int32Array(groups);
    this.priceAt = new Int32Array(groups);
    this.ppsfAt = new Int32Array(groups);
    this.dayPrice = new Float64Array(h.count);
    const memberships = h.groupStart[h.count] as number;
    this.prices = new Float64Array(memberships);
    this.ppsf = new Float64Array(memberships);
    this.dom = new Float64Array(memberships);
  }
}

/** Indexes of `groups` in the order of the snapshot table's key: listing type, area id, bedroom bucket. */
function groupsInKeyOrder(groups: readonly GroupKey[]): number[] {
  const bedrooms = (g: GroupKey) => BEDROOM_BUCKETS[g.bucket] as string;
  return groups
    .map((_, index) => index)
    .sort((a, b) => {
      const x = groups[a] as GroupKey;
      const y = groups[b] as GroupKey;
      if (x.type !== y.type) return x.type < y.type ? -1 : 1;
      if (x.areaId !== y.areaId) return x.areaId - y.areaId;
      return bedrooms(x) < bedrooms(y) ? -1 : bedrooms(x) > bedrooms(y) ? 1 : 0;
    });
}

/**
 * One day's rows, appended to `rowsByGroup` by group, for every (type, area,
 * bucket) with inventory or new listings.
 * Asynchronous only to yield regularly: a backfill in a serving process must
 * not hold the event loop for long. Two passes over the listings: the first
 * counts each group's samples (so each group gets a run of the scratch
 * arrays), the second writes them; medians are selections within each run.
 */
async function computeDay(
  h: HistoryColumns,
  scratch: DayScratch,
  date: string,
  rowsByGroup: MarketDailySnapshotsTable[][],
): Promise<void> {
  const dayStart = Date.parse(`${date}T00:00:00.000Z`);
  const dayEnd = dayStart + DAY_MS;
  const day = dayStart / DAY_MS;
  // New York calendar days (domain rule), observed at the end of day d.
  const nyDayObserved = nyDayNumber(dayEnd - 1);
  const { inventory, withPpsf, newListings, priceAt, ppsfAt, dayPrice } = scratch;
  inventory.fill(0);
  withPpsf.fill(0);
  newListings.fill(0);
  for (let i = 0; i < h.count; i++) {
    if (i % YIELD_EVERY === YIELD_EVERY - 1) await yieldToEventLoop();
    const listedAt = h.listedAt[i] as number;
    const active = listedAt < dayEnd && (h.endAt[i] as number) >= dayEnd;
    const isNew = listedAt >= dayStart && listedAt < dayEnd;
    dayPrice[i] = active ? priceOnDay(h, i, day) : Number.NaN;
    if (!active && !isNew) continue;
    const hasPpsf = active && !Number.isNaN(h.sqft[i] as number);
    for (let k = h.groupStart[i] as number; k < (h.groupStart[i + 1] as number); k++) {
      const g = h.groupOf[k] as number;
      if (isNew) newListings[g] = (newListings[g] as number) + 1;
      if (!active) continue;
      inventory[g] = (inventory[g] as number) + 1;
      if (hasPpsf) withPpsf[g] = (withPpsf[g] as number) + 1;
    }
  }
  let priceEnd = 0;
  let ppsfEnd = 0;
  for (let g = 0; g < h.groups.length; g++) {
    priceAt[g] = priceEnd;
    ppsfAt[g] = ppsfEnd;
    priceEnd += inventory[g] as number;
    ppsfEnd += withPpsf[g] as number;
  }
  const { prices, ppsf, dom } = scratch;
  for (let i = 0; i < h.count; i++) {
    if (i % YIELD_EVERY === YIELD_EVERY - 1) await yieldToEventLoop();
    const price = dayPrice[i] as number;
    if (Number.isNaN(price)) continue;
    const sqft = h.sqft[i] as number;
    const pricePerSqft = Number.isNaN(sqft) ? Number.NaN : Math.round((price / sqft) * 100) / 100;
    const days = Math.max(0, nyDayObserved - (h.listedNyDay[i] as number));
    for (let k = h.groupStart[i] as number; k < (h.groupStart[i + 1] as number); k++) {
      const g = h.groupOf[k] as number;
      const at = priceAt[g] as number;
      prices[at] = price;
      dom[at] = days;
      priceAt[g] = at + 1;
      if (!Number.isNaN(pricePerSqft)) {
        ppsf[ppsfAt[g] as number] = pricePerSqft;
        ppsfAt[g] = (ppsfAt[g] as number) + 1;
      }
    }
  }
  // Each fill position now stands at the end of its group's run.
  for (let g = 0; g < h.groups.length; g++) {
    if (g % 256 === 255) await yieldToEventLoop();
    const n = inventory[g] as number;
    if (n === 0 && newListings[g] === 0) continue;
    const priceEndOfRun = priceAt[g] as number;
    const ppsfEndOfRun = ppsfAt[g] as number;
    const medianPrice = medianInPlace(prices.subarray(priceEndOfRun - n, priceEndOfRun));
    const medianPpsf = medianInPlace(ppsf.subarray(ppsfEndOfRun - (withPpsf[g] as number), ppsfEndOfRun));
    const medianDom = medianInPlace(dom.subarray(priceEndOfRun - n, priceEndOfRun));
    const group = h.groups[g] as GroupKey;
    rowsByGroup[g]?.push({
      listing_type: group.type,
      area_id: group.areaId,
      bedrooms: BEDROOM_BUCKETS[group.bucket] as string,
      date,
      inventory: n,
      new_listings: newListings[g] as number,
      median_price: medianPrice.value,
      price_n: medianPrice.n,
      median_price_per_sqft: medianPpsf.value,
      price_per_sqft_n: medianPpsf.n,
      median_days_on_market: medianDom.value,
      days_on_market_n: medianDom.n,
    });
  }
}
