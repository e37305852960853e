import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { Served } from '../../domain/freshness.ts';
import type { ListingType } from '../../domain/listing.ts';
import type { Tier } from '../../domain/tiers.ts';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/tables.ts';
import { RebuildPacer } from '../../platform/rebuild-pacer.ts';
import type { AreaTree } from '../../reference/areas.ts';
import { type ResolvedAreaInput, resolveAreaInput, resolveAreaList } from '../areas/area-input.ts';
import type { DataVersion } from '../freshness/data-version.ts';
import type { FreshnessPolicy } from '../freshness/freshness-policy.ts';
import { MAX_COMPARE_AREAS, type RentalSnapshot, type SaleSnapshot } from './market.schema.ts';
import { computeSnapshot, type MarketRow } from './snapshot.ts';
import { MIN_SAMPLE } from './statistics.ts';

export type MarketSnapshot = RentalSnapshot | SaleSnapshot;

export interface SnapshotRequest {
  listingType: ListingType;
  areaId: number;
  bedrooms?: number | undefined;
  buildingType?: string | undefined;
}

/** How long a computed snapshot is served before time-dependent figures (new listings, days on market) are recomputed. */
const SNAPSHOT_TTL_MS = 60_000;
/** Bound on cached snapshots; the cache is cleared when it fills (areas × bedrooms × types is ~25k at most). */
const MAX_CACHED = 5000;

/**
 * Areas per query while building: ~100 active listings per area. Ten per query
 * measured 8–18 ms on the request thread while a refresh wrote (each commit of
 * another connection empties this connection's page cache); four keep a query
 * to a few ms.
 */
const AREAS_PER_QUERY = 4;

/** The ACTIVE rows of both listing types at one data version: what snapshots are computed from. */
interface Build {
  version: string;
  rows: Record<ListingType, MarketRow[]>;
}

interface CachedSnapshot {
  version: string;
  at: number;
  snapshot: MarketSnapshot;
}

/**
 * Market snapshots over ACTIVE listings. The rows (a few columns of each active
 * listing, ~32k rentals at full scale) are read per data version; snapshots are
 * computed from them in memory and cached per (parameters, data version) for
 * SNAPSHOT_TTL_MS, so repeated calls cost a map lookup and an all-NYC
 * computation runs at most once a minute per key.
 *
 * A new data version is built beside the one served, off the request path:
 * rows read in pages and the common snapshots (NYC, boroughs) computed one at
 * a time, yielding to the event loop between steps; then it replaces the old
 * one at once. Until then requests are served from the previous build (their
 * `computedAt` says how old); only the very first build is waited for. A
 * rebuild starts when this process learns of a change (`DataVersion`
 * invalidation, e.g. from the background-jobs worker) or when a request sees
 * a version newer than the one served; rebuilds are paced (RebuildPacer), so
 * while the data changes every second the figures lag by a few seconds
 * instead of the request thread rebuilding without pause.
 */
export class MarketService {
  private current: Build | null = null;
  private building: { version: string; done: Promise<Build> } | null = null;
  private readonly cache = new Map<string, CachedSnapshot>();
  /** Spaces rebuilds: served figures may lag the store by a rebuild plus a gap (see RebuildPacer). */
  private readonly pacer = new RebuildPacer();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly areaTree: AreaTree,
    private readonly clock: Clock,
    private readonly dataVersion: DataVersion,
    private readonly freshness: FreshnessPolicy,
  ) {
    dataVersion.onInvalidate(() => {
      // After the writer's own bookkeeping: the next version read sees the change.
      setImmediate(() => {
        this.dataVersion.version().then(
          (version) => this.ensureBuilt(version).catch(() => {}),
          () => {},
        );
      });
    });
  }

  /** Whether a complete build is being served (health readiness: snapshot caches warm). */
  isWarm(): boolean {
    return this.current !== null;
  }

  /**
   * `GET /market/{type}/snapshot`: one area's figures (the area by id, slug,
   * name or alias); their age is when they were computed.
   */
  async snapshotOf(
    request: Omit<SnapshotRequest, 'areaId'> & { areaId: string | number },
    tier: Tier,
  ): Promise<Served<MarketSnapshot> & { meta: { areas: ResolvedAreaInput[] } }> {
    const area = resolveAreaInput(this.areaTree, 'areaId', request.areaId);
    const data = await this.snapshot({ ...request, areaId: area.id }, await this.dataVersion.version());
    return { data, meta: { ...this.freshness.ofDerived(tier, data.computedAt), areas: [area] } };
  }

  /**
   * `GET /market/compare`: the figures of each area (`areas`: ids, slugs,
   * names or aliases, comma-separated) in request order, all resolved first,
   * so an unknown one is a 400 naming `areas` before any work; their age is
   * that of the oldest.
   */
  async compare(
    listingType: ListingType,
    areas: string,
    filters: { bedrooms?: number | undefined; buildingType?: string | undefined },
    tier: Tier,
  ): Promise<Served<MarketSnapshot[]> & { meta: { areas: ResolvedAreaInput[] } }> {
    const resolved = resolveAreaList(this.areaTree, 'areas', areas, MAX_COMPARE_AREAS);
    const version = await this.dataVersion.version();
    const data: MarketSnapshot[] = [];
    for (const { id } of resolved) {
      data.push(await this.snapshot({ listingType, areaId: id, ...filters }, version, 'areas'));
    }
    const computedAt = data.map((s) => s.computedAt).sort()[0] ?? null;
    return { data, meta: { ...this.freshness.ofDerived(tier, computedAt), areas: resolved } };
  }

  /** Validates an area id or throws a 400 naming `parameter`. */
  assertArea(areaId: number, parameter: string): void {
    if (!this.areaTree.has(areaId)) {
      throw ApiError.invalidParam({ parameter, rule: 'unknown_area', message: `no area has id ${areaId}` });
    }
  }

  private async snapshot(
    request: SnapshotRequest,
    version: string,
    parameter = 'areaId',
  ): Promise<MarketSnapshot> {
    this.assertArea(request.areaId, parameter);
    const build = await this.servedBuild(version);
    return this.snapshotFrom(build, request);
  }

  /**
   * The build to serve at `version`: the current one (starting a rebuild beside
   * it when the version moved), or the first build, waited for.
   */
  private async servedBuild(version: string): Promise<Build> {
    const current = this.current;
    if (current !== null) {
      if (current.version !== version) this.ensureBuilt(version).catch(() => {});
      return current;
    }
    return this.ensureBuilt(version);
  }

  private snapshotFrom(build: Build, request: SnapshotRequest): MarketSnapshot {
    const { version } = build;
    const key = `${request.listingType}|${request.areaId}|${request.bedrooms ?? ''}|${request.buildingType ?? ''}`;
    const now = this.clock.now();
    const hit = this.cache.get(key);
    if (
      hit &&
      hit.version === version &&
      now.getTime() - hit.at < SNAPSHOT_TTL_MS &&
      now.getTime() >= hit.at
    ) {
      return hit.snapshot;
    }
    const rows = build.rows[request.listingType];
    const figures = computeSnapshot(
      rows,
      {
        listingType: request.listingType,
        areaIds: new Set(this.areaTree.descendantsAndSelf(request.areaId)),
        bedrooms: request.bedrooms,
        buildingType: request.buildingType,
      },
      now,
    );
    const common = {
      areaId: request.areaId,
      areaName: this.areaTree.get(request.areaId)?.name ?? '',
      bedrooms: request.bedrooms ?? null,
      buildingType: (request.buildingType ?? null) as RentalSnapshot['buildingType'],
      computedAt: now.toISOString(),
      minSample: MIN_SAMPLE,
      inventory: figures.inventory,
      newListings7d: figures.newListings7d,
      newListings30d: figures.newListings30d,
      price: figures.price,
      pricePerSqft: figures.pricePerSqft,
      daysOnMarket: figures.daysOnMarket,
      priceCutShare: figures.priceCutShare,
      medianPriceCutPct: figures.medianPriceCutPct,
    };
    const snapshot: MarketSnapshot =
      request.listingType === 'rental'
        ? {
            ...common,
            listingType: 'rental',
            netEffectiveRent: figures.netEffectiveRent!,
            concessionShare: figures.concessionShare!,
            noFeeShare: figures.noFeeShare!,
          }
        : { ...common, listingType: 'sale', saleTypeMix: figures.saleTypeMix! };
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(key, { version, at: now.getTime(), snapshot });
    return snapshot;
  }

  /** Builds the current data version (rows and the common snapshots) so the first callers find it ready. */
  async warm(): Promise<void> {
    await this.ensureBuilt(await this.dataVersion.version());
  }

  /**
   * The build of `version`, built once: a build under way for it is shared; one
   * under way for another version is let finish first (builds never overlap).
   * A failed build is not kept: the next request or change retries.
   */
  private ensureBuilt(version: string): Promise<Build> {
    if (this.current?.version === version) return Promise.resolve(this.current);
    const building = this.building;
    if (building?.version === version) return building.done;
    const done = (async () => {
      await building?.done.catch(() => {});
      // Rebuilds are paced (the first build is not): refresh cycles every
      // second must not keep the request thread computing snapshots.
      if (this.current !== null) await this.pacer.wait();
      const started = performance.now();
      try {
        return await this.build(version);
      } finally {
        this.pacer.finished(started);
      }
    })();
    const entry = { version, done };
    this.building = entry;
    done.then(
      (build) => {
        if (this.building === entry) this.building = null;
        // Builds run one after another in the order asked, so this one is the newest finished.
        this.current = build;
      },
      () => {
        if (this.building === entry) this.building = null;
      },
    );
    return done;
  }

  /** Reads the rows and computes the level ≤ 1 snapshots (NYC, boroughs) of both types, yielding between steps. */
  private async build(version: string): Promise<Build> {
    const areaIds = this.areaTree.records.map((a) => a.id);
    const build: Build = {
      version,
      rows: {
        rental: await loadActiveMarketRows(this.db, 'rental', { areaIds }),
        sale: await loadActiveMarketRows(this.db, 'sale', { areaIds }),
      },
    };
    for (const listingType of ['rental', 'sale'] as const) {
      for (const area of this.areaTree.records) {
        if (area.level > 1) continue;
        for (const bedrooms of [undefined, 0, 1, 2, 3, 4]) {
          await yieldToEventLoop();
          this.snapshotFrom(build, { listingType, areaId: area.id, bedrooms });
        }
      }
    }
    return build;
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
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
