/**
 * SPEC "Data freshness rules" in one place. Every read service (search, areas,
 * market, trends, listing and building detail) is given this policy and asks it
 * for the freshness part of `meta`; routes never compute freshness.
 *
 * - `dataAge` is when the served data was last confirmed with upstream (a
 *   dataset's last whole refresh, a record's `refreshed_at`), or when derived
 *   figures were computed from the store (market snapshots and trends).
 * - `source` classifies it against the caller tier's threshold (`cached` or
 *   `stale`), or is `live` after a live fetch.
 * - A paid caller served stale data that can be refreshed starts a background
 *   refresh (single-flight in the pipeline) and `refreshTriggered` says whether
 *   one was started or is running; Free data is refreshed on the schedule only.
 * - Business and Internal reads of `GET /property/{id}` are fetched live first,
 *   never waiting much past the configured live timeout.
 */
import { describeFreshness, type Freshness } from '../../domain/freshness.ts';
import type { ListingType } from '../../domain/listing.ts';
import type { Tier } from '../../domain/tiers.ts';
import type { Clock } from '../../platform/clock.ts';
import type { ContentScope, DataVersion } from './data-version.ts';
import type { LiveOutcome, RefreshPort, RefreshTarget } from './refresh-port.ts';

/** Tiers whose `GET /property/{id}` reads are fetched live from upstream (SPEC "Data freshness rules" 4). */
const LIVE_TIERS: ReadonlySet<Tier> = new Set(['BUSINESS', 'INTERNAL']);

/** A stored record (a listing, a building) or a page of records as served. */
export interface ServedRecord {
  tier: Tier;
  /** Which freshness threshold of the tier applies. */
  kind: 'search' | 'detail';
  /** What a background refresh would renew. */
  target: RefreshTarget & { kind: 'listing' | 'building' };
  /** When the served rows were last refreshed from upstream; null when never. */
  refreshedAt: string | null;
  detailScraped: boolean;
  /** Outcome of the live fetch made for this request (`liveRead`), if one was made. */
  live?: LiveOutcome | null;
}

const SEARCH_SCOPE: Record<ListingType, ContentScope> = { rental: 'search:rental', sale: 'search:sale' };

export class FreshnessPolicy {
  constructor(
    private readonly refresher: RefreshPort,
    private readonly dataVersion: DataVersion,
    private readonly clock: Clock,
    private readonly liveTimeoutMs: number,
  ) {}

  /**
   * A search page: the age of the listing type's last whole refresh. A stale
   * page read by a paid caller starts a refresh of that listing type.
   */
  ofSearch(tier: Tier, listingType: ListingType, detailScraped: boolean): Freshness | Promise<Freshness> {
    const scope = SEARCH_SCOPE[listingType];
    // Every search asks: answered without a promise while the data version's snapshot is fresh.
    const refreshedAt = this.dataVersion.refreshedAtIfFresh(scope);
    if (refreshedAt === undefined) {
      return this.dataVersion
        .refreshedAt(scope)
        .then((at) => this.searchFreshness(tier, listingType, detailScraped, at));
    }
    return this.searchFreshness(tier, listingType, detailScraped, refreshedAt);
  }

  private searchFreshness(
    tier: Tier,
    listingType: ListingType,
    detailScraped: boolean,
    refreshedAt: string | null,
  ): Freshness {
    return this.withRefresh({
      tier,
      kind: 'search',
      refreshedAt,
      detailScraped,
      target: { kind: 'search', listingType },
    });
  }

  /** Reference data (the area tree): its age, with nothing upstream to refresh it from. */
  async ofReference(tier: Tier, scope: ContentScope): Promise<Freshness> {
    return describeFreshness({
      tier,
      kind: 'search',
      refreshedAt: await this.dataVersion.refreshedAt(scope),
      now: this.clock.now(),
    });
  }

  /**
   * Figures derived from the store (market snapshots, trends): their age is
   * when they were computed, null when never. Computing them again is the
   * store's job (cache expiry, the snapshot job), not the pipeline's.
   */
  ofDerived(tier: Tier, computedAt: string | null): Freshness {
    return describeFreshness({ tier, kind: 'search', refreshedAt: computedAt, now: this.clock.now() });
  }

  /**
   * A stored record or page of records: after a live fetch, `refreshed` →
   * `live`; `failed` (upstream error or timeout) and `not_found` (upstream no
   * longer has it) → the stored copy as `stale`. Otherwise classified against
   * the tier's threshold, refreshing the target when stale for a paid caller.
   */
  ofRecord(served: ServedRecord): Freshness {
    const base = {
      tier: served.tier,
      kind: served.kind,
      refreshedAt: served.refreshedAt,
      detailScraped: served.detailScraped,
    };
    if (served.live === 'refreshed') {
      return describeFreshness({ ...base, now: this.clock.now(), live: true });
    }
    if (served.live === 'failed' || served.live === 'not_found') {
      return { ...describeFreshness({ ...base, now: this.clock.now() }), source: 'stale' };
    }
    return this.withRefresh({ ...base, target: served.target });
  }

  readsLive(tier: Tier): boolean {
    return LIVE_TIERS.has(tier);
  }

  /**
   * Live-fetches a listing for a live tier; null (nothing done) for other tiers.
   * The port answers within the live timeout (RefreshPort contract): past it
   * the read is `failed` and the stored copy is served.
   */
  async liveRead(tier: Tier, listingId: string): Promise<LiveOutcome | null> {
    if (!this.readsLive(tier)) return null;
    return this.refresher.refreshListingNow(listingId, this.liveTimeoutMs);
  }

  /** The tier's classification decides (`describeFreshness`): stale data read by a paid caller starts a refresh. */
  private withRefresh(request: {
    tier: Tier;
    kind: 'search' | 'detail';
    refreshedAt: string | null;
    detailScraped: boolean;
    target: RefreshTarget;
  }): Freshness {
    const freshness = describeFreshness({
      tier: request.tier,
      kind: request.kind,
      refreshedAt: request.refreshedAt,
      now: this.clock.now(),
      detailScraped: request.detailScraped,
    });
    if (freshness.source === 'stale' && request.tier !== 'FREE') {
      freshness.refreshTriggered = this.refresher.requestRefresh(request.target);
    }
    return freshness;
  }
}
