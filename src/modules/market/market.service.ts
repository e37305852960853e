import { performance } from 'node:perf_hooks';
import type { Served } from '../../domain/freshness.ts';
import type { ListingType } from '../../domain/listing.ts';
import type { Tier } from '../../domain/tiers.ts';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import { RebuildPacer } from '../../platform/rebuild-pacer.ts';
import type { AreaTree } from '../../reference/areas.ts';
import { type ResolvedAreaInput, resolveAreaInput, resolveAreaList } from '../areas/area-input.ts';
import type { DataVersion } from '../freshness/data-version.ts';
import type { FreshnessPolicy } from '../freshness/freshness-policy.ts';
import { MAX_COMPARE_AREAS, type RentalSnapshot, type SaleSnapshot } from './market.schema.ts';
import type { FiguresRequest, MarketEngine, VersionedFigures } from './market-engine.ts';
import type { SnapshotFigures } from './snapshot.ts';
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

/** A data version the engine has read (its rows live in the engine: see MarketEngine). */
interface Build {
  version: string;
}

interface CachedSnapshot {
  version: string;
  at: number;
  snapshot: MarketSnapshot;
}

/**
 * Market snapshots over ACTIVE listings. The rows (a few columns of each active
 * listing, ~32k rentals at full scale) are read per data version by the
 * engine (MarketEngine: on the market worker when the store allows, see
 * market-engine.ts), which computes figures from them; snapshots are cached
 * here per (parameters, data version) for SNAPSHOT_TTL_MS, so repeated calls
 * cost a map lookup and an all-NYC computation runs at most once a minute per
 * key — on the worker, never on the request thread, when there is one.
 *
 * A new data version is built beside the one served, off the request path:
 * the engine reads it and computes the common snapshots (NYC, boroughs), then
 * it replaces the old one at once. Until then requests are served from the
 * previous build (their `computedAt` says how old); only the very first build
 * is waited for. A rebuild starts when this process learns of a change
 * (`DataVersion` invalidation, e.g. from the background-jobs worker) or when
 * a request sees a version newer than the one served; rebuilds are paced
 * (RebuildPacer), so while the data changes every second the figures lag by a
 * few seconds instead of rebuilding without pause.
 */
export class MarketService {
  private current: Build | null = null;
  private building: { version: string; done: Promise<Build> } | null = null;
  private readonly cache = new Map<string, CachedSnapshot>();
  /** Snapshots being computed by the engine, by build version and parameters. */
  private readonly computing = new Map<string, Promise<MarketSnapshot>>();
  /** Spaces rebuilds: served figures may lag the store by a rebuild plus a gap (see RebuildPacer). */
  private readonly pacer = new RebuildPacer();

  constructor(
    private readonly engine: MarketEngine,
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
    const cached = this.cached(build.version, request);
    if (cached) return cached;
    // Callers missing the same snapshot at once share one computation (an expired all-NYC
    // snapshot under load would otherwise be computed once per waiting request).
    const key = `${build.version}|${MarketService.key(request)}`;
    let computing = this.computing.get(key);
    if (!computing) {
      computing = this.compute(build, version, request).finally(() => this.computing.delete(key));
      this.computing.set(key, computing);
    }
    return computing;
  }

  private async compute(build: Build, version: string, request: SnapshotRequest): Promise<MarketSnapshot> {
    const nowMs = this.clock.now().getTime();
    let answer: VersionedFigures;
    try {
      answer = await this.engine.figures(this.figuresRequest(request), nowMs);
    } catch {
      // The engine lost its rows (a replaced worker): build again, then ask once more.
      if (this.current === build) this.current = null;
      await this.servedBuild(version);
      answer = await this.engine.figures(this.figuresRequest(request), nowMs);
    }
    return this.remember(answer.version, request, answer.figures, nowMs);
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

  private static key(request: SnapshotRequest): string {
    return `${request.listingType}|${request.areaId}|${request.bedrooms ?? ''}|${request.buildingType ?? ''}`;
  }

  /** A snapshot computed at `version` less than SNAPSHOT_TTL_MS (market time) ago. */
  private cached(version: string, request: SnapshotRequest): MarketSnapshot | undefined {
    const hit = this.cache.get(MarketService.key(request));
    const nowMs = this.clock.now().getTime();
    if (hit && hit.version === version && nowMs - hit.at < SNAPSHOT_TTL_MS && nowMs >= hit.at) {
      return hit.snapshot;
    }
    return undefined;
  }

  private figuresRequest(request: SnapshotRequest): FiguresRequest {
    return {
      listingType: request.listingType,
      areaIds: this.areaTree.descendantsAndSelf(request.areaId),
      bedrooms: request.bedrooms,
      buildingType: request.buildingType,
    };
  }

  /** The snapshot of `figures` computed at `nowMs` from `version`, cached while that version is served. */
  private remember(
    version: string,
    request: SnapshotRequest,
    figures: SnapshotFigures,
    nowMs: number,
  ): MarketSnapshot {
    const common = {
      areaId: request.areaId,
      areaName: this.areaTree.get(request.areaId)?.name ?? '',
      bedrooms: request.bedrooms ?? null,
      buildingType: (request.buildingType ?? null) as RentalSnapshot['buildingType'],
      computedAt: new Date(nowMs).toISOString(),
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
    // Figures from rows newer than the build served (the engine installs before this thread learns) are not kept.
    if (version === this.current?.version || version === this.building?.version) {
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      this.cache.set(MarketService.key(request), { version, at: nowMs, snapshot });
    }
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

  /**
   * Has the engine read `version` and compute the level ≤ 1 snapshots (NYC,
   * boroughs) of both types beside the build served, then caches them.
   */
  private async build(version: string): Promise<Build> {
    const common: SnapshotRequest[] = [];
    for (const listingType of ['rental', 'sale'] as const) {
      for (const area of this.areaTree.records) {
        if (area.level > 1) continue;
        for (const bedrooms of [undefined, 0, 1, 2, 3, 4])
          common.push({ listingType, areaId: area.id, bedrooms });
      }
    }
    const nowMs = this.clock.now().getTime();
    const figures = await this.engine.build(
      version,
      common.map((request) => this.figuresRequest(request)),
      nowMs,
    );
    const build: Build = { version };
    // Cached before the build is installed: remember() keeps figures of the version being built.
    common.forEach((request, i) => {
      this.remember(version, request, figures[i]!, nowMs);
    });
    return build;
  }

  /** Frees the engine's rows (ends the market worker, if any). */
  close(): Promise<void> {
    return this.engine.close();
  }
}
