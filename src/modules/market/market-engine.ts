/**
 * Where market figures are computed: the ACTIVE rows of one data version and
 * `computeSnapshot` over them. MarketService keeps the snapshots it serves and
 * asks an engine for figures it has not cached.
 *
 * Two placements, one contract:
 * - MarketWorkerClient (market-worker-client.ts): the rows live on a worker
 *   thread with its own store connection (file SQLite, PostgreSQL), so neither
 *   a rebuild nor a costly snapshot (all NYC sorts every price) runs on the
 *   request thread.
 * - InProcessMarketEngine (below): for a store no other thread can open
 *   (in-memory SQLite); reads and precomputed figures are cut into steps that
 *   yield to the event loop.
 */
import type { Kysely } from 'kysely';
import type { ListingType } from '../../domain/listing.ts';
import type { Database } from '../../platform/db/tables.ts';
import { yieldToEventLoop } from '../../platform/yield.ts';
import { computeSnapshot, type MarketRow, type SnapshotFigures } from './snapshot.ts';

/** One snapshot's parameters, with the area already expanded to itself and its descendants. */
export interface FiguresRequest {
  listingType: ListingType;
  areaIds: readonly number[];
  bedrooms?: number | undefined;
  buildingType?: string | undefined;
}

/** Figures and the data version of the rows they were computed from. */
export interface VersionedFigures {
  version: string;
  figures: SnapshotFigures;
}

export interface MarketEngine {
  /**
   * Reads the rows of `version` beside the ones in use (figures keep being
   * answered from those meanwhile), then computes `precompute` from the new
   * rows and installs them: from then on `figures` answers from `version`.
   * Builds are asked for one at a time. Resolves with the precomputed figures,
   * in the order asked.
   */
  build(version: string, precompute: readonly FiguresRequest[], nowMs: number): Promise<SnapshotFigures[]>;
  /** Figures from the installed rows; rejects when there are none (no build yet, or the worker was replaced). */
  figures(request: FiguresRequest, nowMs: number): Promise<VersionedFigures>;
  /** Frees the rows (and ends the worker, if any). */
  close(): Promise<void>;
}

/**
 * Areas per query while reading: ~100 active listings per area. Ten per query
 * measured 8–18 ms on the request thread while a refresh wrote (each commit of
 * another connection empties this connection's page cache); four keep a query
 * to a few ms.
 */
const AREAS_PER_QUERY = 4;

/** Rows of both listing types at one data version. */
export interface MarketRows {
  version: string;
  rows: Record<ListingType, MarketRow[]>;
}

/** Reads the ACTIVE rows of both types for `version` (see loadActiveMarketRows). */
export async function readMarketRows(
  db: Kysely<Database>,
  version: string,
  areaIds: readonly number[],
): Promise<MarketRows> {
  return {
    version,
    rows: {
      rental: await loadActiveMarketRows(db, 'rental', { areaIds }),
      sale: await loadActiveMarketRows(db, 'sale', { areaIds }),
    },
  };
}

export function figuresFrom(rows: MarketRows, request: FiguresRequest, nowMs: number): SnapshotFigures {
  return computeSnapshot(
    rows.rows[request.listingType],
    {
      listingType: request.listingType,
      areaIds: new Set(request.areaIds),
      bedrooms: request.bedrooms,
      buildingType: request.buildingType,
    },
    new Date(nowMs),
  );
}

/** Computes `requests` one at a time, yielding to the event loop before each. */
export async function precomputeFigures(
  rows: MarketRows,
  requests: readonly FiguresRequest[],
  nowMs: number,
): Promise<SnapshotFigures[]> {
  const out: SnapshotFigures[] = [];
  for (const request of requests) {
    await yieldToEventLoop();
    out.push(figuresFrom(rows, request, nowMs));
  }
  return out;
}

/** The engine on the request thread, for stores only this thread can open (in-memory SQLite). */
export class InProcessMarketEngine implements MarketEngine {
  private installed: MarketRows | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly areaIds: readonly number[],
  ) {}

  async build(
    version: string,
    precompute: readonly FiguresRequest[],
    nowMs: number,
  ): Promise<SnapshotFigures[]> {
    const rows = await readMarketRows(this.db, version, this.areaIds);
    const figures = await precomputeFigures(rows, precompute, nowMs);
    this.installed = rows;
    return figures;
  }

  async figures(request: FiguresRequest, nowMs: number): Promise<VersionedFigures> {
    const rows = this.installed;
    if (!rows) throw new Error('market figures asked before any build');
    return { version: rows.version, figures: figuresFrom(rows, request, nowMs) };
  }

  async close(): Promise<void> {
    this.installed = null;
  }
}

/**
 * The columns market figures read, for every ACTIVE listing of a type. With
 * `areaIds` (the area tree's ids) it is read in ranges of AREAS_PER_QUERY
 * consecutive area ids — each an index range scan of a few hundred to a few
 * thousand rows, no sort — yielding to the event loop between them, so no
 * single read holds it long; the first and last ranges are open-ended, so
 * every row is read whatever its area.
 */
export async function loadActiveMarketRows(
  db: Kysely<Database>,
  listingType: ListingType,
  options: { areaIds?: readonly number[] } = {},
): Promise<MarketRow[]> {
  const ids = [...new Set(options.areaIds ?? [])].sort((a, b) => a - b);
  const starts: number[] = [];
  for (let i = AREAS_PER_QUERY; i < ids.length; i += AREAS_PER_QUERY) starts.push(ids[i] as number);
  const out: MarketRow[] = [];
  for (let i = 0; i <= starts.length; i++) {
    if (i > 0) await yieldToEventLoop();
    const from = i === 0 ? null : (starts[i - 1] as number);
    const below = i === starts.length ? null : (starts[i] as number);
    for (const row of await loadActiveMarketRange(db, listingType, from, below)) out.push(row);
  }
  return out;
}

/** ACTIVE rows of a type with from ≤ area_id < below (null: unbounded). */
async function loadActiveMarketRange(
  db: Kysely<Database>,
  listingType: ListingType,
  from: number | null,
  below: number | null,
): Promise<MarketRow[]> {
  let query = db
    .selectFrom('listings')
    .select([
      'area_id',
      'bedroom_count',
      'building_type',
      'price',
      'price_per_sqft',
      'net_effective',
      'months_free',
      'listed_at',
      'price_delta',
      'no_fee',
      'sale_type',
    ])
    .where('listing_type', '=', listingType)
    .where('status', '=', 'ACTIVE');
  if (from !== null) query = query.where('area_id', '>=', from);
  if (below !== null) query = query.where('area_id', '<', below);
  const rows = await query.execute();
  return rows.map((r) => ({
    areaId: Number(r.area_id),
    bedrooms: Number(r.bedroom_count),
    buildingType: r.building_type,
    price: Number(r.price),
    pricePerSqft: r.price_per_sqft === null ? null : Number(r.price_per_sqft),
    netEffective: r.net_effective === null ? null : Number(r.net_effective),
    monthsFree: r.months_free === null ? null : Number(r.months_free),
    listedAt: r.listed_at === null ? null : Date.parse(r.listed_at),
    priceDelta: Number(r.price_delta),
    noFee: Number(r.no_fee) === 1,
    saleType: r.sale_type,
  }));
}
