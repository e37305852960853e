import { describeFreshness, type Freshness } from '../../domain/freshness.ts';
import type { Tier } from '../../domain/tiers.ts';
import { freshnessWithRefresh } from '../freshness/freshness-policy.ts';
import type { LiveOutcome, RefreshPort, RefreshTarget } from '../freshness/refresh-port.ts';

/** Tiers whose `GET /property/{id}` reads are fetched live from upstream (SPEC "Data freshness rules" 4). */
const LIVE_TIERS: ReadonlySet<Tier> = new Set(['BUSINESS', 'INTERNAL']);

export interface ServedData {
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

/**
 * The freshness rules of listing and building reads, in one place: the only
 * code that talks to the refresh pipeline (`RefreshPort`) on their behalf.
 *
 * 1. `liveRead` — before the store is read — fetches a listing from upstream
 *    for Business and Internal callers of `GET /property/{id}`, and never
 *    makes them wait much past the configured live timeout.
 * 2. `meta` classifies what was served:
 *    - after a live fetch: `refreshed` → `source: live`; `failed` (upstream
 *      error or timeout) and `not_found` (upstream no longer has it) → the
 *      stored copy, `source: stale`;
 *    - otherwise the rule search reads follow too (`freshnessWithRefresh`):
 *      `cached` or `stale` against the tier's threshold; a paid caller served
 *      stale data starts a background refresh of the target (single-flight in
 *      the pipeline) and `refreshTriggered` says whether one was started or is
 *      running. Free data is refreshed on a schedule only.
 */
export class DetailFreshness {
  constructor(
    private readonly refresher: RefreshPort,
    private readonly liveTimeoutMs: number,
  ) {}

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

  meta(served: ServedData, now: Date): Freshness {
    const base = {
      tier: served.tier,
      kind: served.kind,
      refreshedAt: served.refreshedAt,
      now,
      detailScraped: served.detailScraped,
    };
    if (served.live === 'refreshed') return describeFreshness({ ...base, live: true });
    if (served.live === 'failed' || served.live === 'not_found') {
      return { ...describeFreshness(base), source: 'stale' };
    }
    return freshnessWithRefresh(this.refresher, { ...base, target: served.target });
  }
}
