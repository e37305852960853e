/**
 * Writes the demo market into a store: buildings first, then listings streamed
 * in id order with their details, history, fees, open houses and photos, in
 * multi-row INSERTs inside transactions. Rows are bound as raw parameter lists
 * (no query builder per row): at full scale that is millions of rows, and
 * building a Kysely node tree for each would dominate the load time.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { CompiledQuery, type Kysely, sql } from 'kysely';
import { startReplicationAt } from '../../jobs/refresh/pipeline-state.repository.ts';
import {
  forgetScopes,
  type MarkerScope,
  readScope,
  setScopeTimes,
  type TimedScope,
  writeMarker,
} from '../../modules/freshness/data-version.ts';
import type { Store } from '../../platform/db/database.ts';
import { LOCK_HANDOFF_MS } from '../../platform/db/sqlite-driver.ts';
import { BUILDING_COLUMNS, type Database, LISTING_COLUMNS } from '../../platform/db/tables.ts';
import { DemoMarketGenerator } from './market.ts';
import { DEMO_VIOLATION_ID_BASE } from './violations.ts';

export interface LoadDemoOptions {
  seed: number;
  scale: number;
  now: Date;
  /** Called after every flushed batch; `phase` is `buildings` or `listings`. */
  onProgress?: (done: number, total: number, phase: string) => void;
  /** Delete an existing market first instead of refusing to load over it. */
  replace?: boolean;
  /**
   * Stops the load between two transactions, rejecting with the signal's
   * reason: what was written stays, with the marker that makes the next start
   * load the market again (`isDemoLoadInterrupted`).
   */
  signal?: AbortSignal;
}

export interface LoadDemoResult {
  listings: number;
  activeRentals: number;
  activeSales: number;
  inContract: number;
  offMarket: number;
  buildings: number;
  listingDetails: number;
  priceEvents: number;
  fees: number;
  openHouses: number;
  photos: number;
  /** Wall time of generation and writing, milliseconds. */
  ms: number;
}

/** The marker of a store holding the demo market (data-version.ts). */
export const DEMO_SCOPE: MarkerScope = 'demo';

/** What the demo scope records: how the stored market was generated. */
export interface DemoRecord {
  seed: number;
  scale: number;
  /** The instant the market was observed at (the simulator's start). */
  generatedAt: string;
}

/** The stored demo market's generation record; null for a store without one. */
export async function readDemoRecord(store: Store): Promise<DemoRecord | null> {
  const row = await readScope(store.db, DEMO_SCOPE);
  if (!row?.detail) return null;
  const parsed = JSON.parse(row.detail) as Partial<DemoRecord>;
  if (
    typeof parsed.seed !== 'number' ||
    typeof parsed.scale !== 'number' ||
    typeof parsed.generatedAt !== 'string'
  ) {
    return null;
  }
  return { seed: parsed.seed, scale: parsed.scale, generatedAt: parsed.generatedAt };
}
/**
 * Scopes a load sets: the content scopes (the data version) and when each
 * dataset was confirmed with upstream (`refresh:`, what `meta.dataAge` reads).
 */
const REFRESH_SCOPES = [
  'search:rental',
  'search:sale',
  'buildings',
  'detail',
  'refresh:search:rental',
  'refresh:search:sale',
  'refresh:buildings',
] as const satisfies readonly TimedScope[];

const MARKET_TABLES = [
  'listings',
  'listing_details',
  'price_events',
  'fees',
  'open_houses',
  'photos',
  'building_scores',
  'buildings',
] as const;

/** SQLite's compiled-in bind limit is 32,766; PostgreSQL's protocol allows 65,535. */
const MAX_PARAMS = { sqlite: 32_000, postgres: 65_000 } as const;

/**
 * Listings per transaction: bounds the WAL / transaction size without many
 * commits, and how long one transaction holds SQLite's write lock (~1 s here),
 * well inside the 5 s busy timeout other processes (the CLI) wait for it. The
 * loading marker makes the whole load restartable, so smaller transactions
 * lose no atomicity a reader could observe.
 */
const LISTINGS_PER_TRANSACTION = 10_000;

type Row = Record<string, unknown>;

class BatchWriter {
  private readonly batchRows: number;
  private values: unknown[] = [];
  private rows = 0;
  private readonly sqlCache = new Map<number, string>();
  written = 0;

  /** `keepExisting`: rows whose key is already stored are skipped (`on conflict do nothing`). */
  constructor(
    private readonly table: string,
    private readonly columns: readonly string[],
    private readonly dialect: Store['dialect'],
    private readonly keepExisting = false,
  ) {
    this.batchRows = Math.floor(MAX_PARAMS[dialect] / columns.length);
  }

  /** Queues a row; returns true when a full batch is waiting to be flushed. */
  add(row: object): boolean {
    const record = row as Row;
    for (const column of this.columns) {
      const value = record[column];
      this.values.push(value === undefined ? null : value);
    }
    this.rows++;
    return this.rows >= this.batchRows;
  }

  async flush(db: Kysely<Database>): Promise<void> {
    if (this.rows === 0) return;
    const query = CompiledQuery.raw(this.statement(this.rows), this.values);
    const count = this.rows;
    this.values = [];
    this.rows = 0;
    await db.executeQuery(query);
    this.written += count;
    // SQLite runs a statement synchronously: without a turn of the event loop
    // between batches, the server started beside the load (health, "starting"
    // answers) would not answer until it ends.
    await yieldToEventLoop();
  }

  private statement(rows: number): string {
    let text = this.sqlCache.get(rows);
    if (text) return text;
    const cols = this.columns.length;
    const tuples: string[] = [];
    for (let r = 0; r < rows; r++) {
      const marks: string[] = [];
      for (let c = 0; c < cols; c++) marks.push(this.dialect === 'postgres' ? `$${r * cols + c + 1}` : '?');
      tuples.push(`(${marks.join(',')})`);
    }
    text = `insert into "${this.table}" (${this.columns.map((c) => `"${c}"`).join(',')}) values ${tuples.join(',')}${this.keepExisting ? ' on conflict do nothing' : ''}`;
    // Only the full-batch statement recurs; caching the odd tail sizes would just hold memory.
    if (rows === this.batchRows) this.sqlCache.set(rows, text);
    return text;
  }
}

const COLUMNS = {
  buildings: BUILDING_COLUMNS,
  building_scores: [
    'building_id',
    'health_score',
    'noise_score',
    'safety_score',
    'transit_score',
    'violations_open',
    'updated_at',
  ],
  listings: LISTING_COLUMNS,
  listing_details: [
    'listing_id',
    'description',
    'amenities_json',
    'unit_features_json',
    'lease_terms_json',
    'concessions_json',
    'sale_details_json',
    'agents_json',
    'pets_policy_json',
    'photos_json',
    'floor_plan_key',
    'virtual_tour_url',
    'updated_at',
  ],
  price_events: ['listing_id', 'date', 'price', 'event', 'pct_change'],
  fees: [
    'listing_id',
    'type_label',
    'category',
    'requirement',
    'refundability',
    'calc_type',
    'amount',
    'timing',
    'occurrence',
  ],
  open_houses: ['id', 'listing_id', 'starts_at', 'ends_at', 'kind', 'by_appointment', 'note'],
  photos: ['key', 'listing_id', 'building_id', 'position', 'width', 'height', 'caption', 'render_seed'],
  hpd_violations: ['violation_id', 'bbl', 'class', 'status', 'description', 'inspection_date', 'is_open'],
} as const satisfies Record<string, readonly string[]>;

/**
 * The violations of the shipped real sample may already be stored (an earlier
 * load, or an HPD import holding the same records): the stored row stays.
 */
const KEEP_EXISTING: ReadonlySet<WriterName> = new Set(['hpd_violations']);

type WriterName = keyof typeof COLUMNS;

/** True when the store holds no buildings and no listings. */
export async function isStoreEmpty(store: Store): Promise<boolean> {
  const listing = await store.db.selectFrom('listings').select('id').limit(1).executeTakeFirst();
  if (listing) return false;
  const building = await store.db.selectFrom('buildings').select('id').limit(1).executeTakeFirst();
  return building === undefined;
}

/** Written when a demo load starts and removed by the transaction that completes it. */
export const DEMO_LOADING_SCOPE: MarkerScope = 'demo:loading';

/**
 * True when a demo load started and never finished (the process was stopped
 * mid-load): the store holds part of a market and must be reloaded.
 */
export async function isDemoLoadInterrupted(store: Store): Promise<boolean> {
  return (await readScope(store.db, DEMO_LOADING_SCOPE)) !== null;
}

/** True when a demo market was loaded (its `demo` marker exists) and listings are present. */
export async function hasDemoMarket(store: Store): Promise<boolean> {
  const marker = await readScope(store.db, DEMO_SCOPE);
  return marker !== null && !(await isStoreEmpty(store));
}

/** Generates the demo market for (seed, scale, now) and writes it; see LoadDemoResult for the figures. */
export async function loadDemoMarket(store: Store, options: LoadDemoOptions): Promise<LoadDemoResult> {
  const started = performance.now();
  if (!(await isStoreEmpty(store))) {
    if (!options.replace)
      throw new Error('The store already holds market data; pass replace: true to reload it.');
    await clearMarket(store);
  }
  // Committed before any market row, so an interrupted load is recognisable at the next start.
  await writeMarker(store.db, DEMO_LOADING_SCOPE, options.now);
  const generator = new DemoMarketGenerator({ seed: options.seed, scale: options.scale, now: options.now });
  const writers = Object.fromEntries(
    Object.entries(COLUMNS).map(([table, columns]) => [
      table,
      new BatchWriter(table, columns, store.dialect, KEEP_EXISTING.has(table as WriterName)),
    ]),
  ) as Record<WriterName, BatchWriter>;
  const plannedListings = generator.plannedListings();
  const total = generator.buildings.length + plannedListings;
  const progress = options.onProgress ?? (() => {});
  progress(0, total, 'buildings');

  await store.db.transaction().execute(async (trx) => {
    for (const building of generator.buildings) {
      if (writers.buildings.add(building.row)) await writers.buildings.flush(trx);
      if (writers.building_scores.add(building.scores)) await writers.building_scores.flush(trx);
      for (const photo of building.photos) if (writers.photos.add(photo)) await writers.photos.flush(trx);
      for (const row of building.violations)
        if (writers.hpd_violations.add(row)) await writers.hpd_violations.flush(trx);
    }
    await flushAll(writers, trx);
  });
  progress(generator.buildings.length, total, 'listings');

  const counts = { listings: 0, activeRentals: 0, activeSales: 0, inContract: 0, offMarket: 0 };
  const stream = generator.listings();
  let exhausted = false;
  while (!exhausted) {
    options.signal?.throwIfAborted();
    await store.db.transaction().execute(async (trx) => {
      let inTransaction = 0;
      while (inTransaction < LISTINGS_PER_TRANSACTION) {
        const next = stream.next();
        if (next.done) {
          exhausted = true;
          break;
        }
        const { listing, details, events, fees, openHouses, photos } = next.value;
        inTransaction++;
        counts.listings++;
        if (listing.status === 'ACTIVE') {
          if (listing.listing_type === 'rental') counts.activeRentals++;
          else counts.activeSales++;
        } else if (listing.status === 'IN_CONTRACT') counts.inContract++;
        else counts.offMarket++;
        if (writers.listings.add(listing)) {
          await writers.listings.flush(trx);
          progress(generator.buildings.length + generator.arrivalsDrawn, total, 'listings');
        }
        if (details && writers.listing_details.add(details)) await writers.listing_details.flush(trx);
        for (const row of events) if (writers.price_events.add(row)) await writers.price_events.flush(trx);
        for (const row of fees) if (writers.fees.add(row)) await writers.fees.flush(trx);
        for (const row of openHouses) if (writers.open_houses.add(row)) await writers.open_houses.flush(trx);
        for (const row of photos) if (writers.photos.add(row)) await writers.photos.flush(trx);
      }
      await flushAll(writers, trx);
    });
    // Writers on other connections (the server's lease and quota flush, the CLI) get the lock between transactions.
    if (store.dialect === 'sqlite' && !exhausted)
      await new Promise((resolve) => setTimeout(resolve, LOCK_HANDOFF_MS));
  }

  const nowIso = options.now.toISOString();
  await store.db.transaction().execute(async (trx) => {
    await forgetScopes(trx, [DEMO_LOADING_SCOPE]);
    // The market is what upstream had at `now`: its data version and dataAge, and
    // where replication resumes.
    await setScopeTimes(trx, REFRESH_SCOPES, options.now);
    await startReplicationAt(trx, options.now, options.now);
    const record: DemoRecord = { seed: options.seed, scale: options.scale, generatedAt: nowIso };
    await writeMarker(trx, DEMO_SCOPE, options.now, JSON.stringify(record));
  });
  if (store.dialect === 'postgres') {
    // Fresh bulk-loaded tables have no statistics; the planner needs them for the search indexes.
    for (const table of MARKET_TABLES) await sql.raw(`analyze "${table}"`).execute(store.db);
  } else {
    // A full ANALYZE (about a second at full scale): `pragma optimize` may skip
    // tables, and without sqlite_stat1 the planner picks the price index over
    // the area index for area searches (measured 1.8 ms vs 0.3 ms).
    await sql`analyze`.execute(store.db);
  }
  progress(total, total, 'done');

  return {
    ...counts,
    buildings: writers.buildings.written,
    listingDetails: writers.listing_details.written,
    priceEvents: writers.price_events.written,
    fees: writers.fees.written,
    openHouses: writers.open_houses.written,
    photos: writers.photos.written,
    ms: Math.round(performance.now() - started),
  };
}

async function flushAll(writers: Record<WriterName, BatchWriter>, db: Kysely<Database>): Promise<void> {
  for (const writer of Object.values(writers)) await writer.flush(db);
}

/**
 * Removes every market row and the demo's synthetic violations (areas, other
 * scopes' times and violation rows of HPD's own numbering stay).
 */
async function clearMarket(store: Store): Promise<void> {
  await store.db.transaction().execute(async (trx) => {
    for (const table of MARKET_TABLES) await trx.deleteFrom(table).execute();
    await trx
      .deleteFrom('hpd_violations')
      .where('violation_id', '>=', String(DEMO_VIOLATION_ID_BASE))
      .where(sql<number>`length(violation_id)`, '=', String(DEMO_VIOLATION_ID_BASE).length)
      .execute();
    await forgetScopes(trx, [DEMO_SCOPE, ...REFRESH_SCOPES]);
  });
}
