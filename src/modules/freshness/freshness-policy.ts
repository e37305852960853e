/**
 * SPEC "Data freshness rules" for search-kind reads in one place: classify the
 * served data against the caller's tier and, for paid tiers reading data older
 * than their threshold, start a background refresh (answering from the cache
 * meanwhile). Free data is refreshed on the schedule only.
 */
import { describeFreshness, type Freshness } from '../../domain/freshness.ts';
import type { Tier } from '../../domain/tiers.ts';
import type { RefreshPort, RefreshTarget } from './refresh-port.ts';

export interface FreshnessRequest {
  tier: Tier;
  kind: 'search' | 'detail';
  refreshedAt: string | null;
  now: Date;
  /** What to refresh when the data is too old for this caller. */
  target: RefreshTarget;
  detailScraped?: boolean;
}

/** The tier's classification decides (`describeFreshness`): stale data read by a paid caller starts a refresh. */
export function freshnessWithRefresh(refresher: RefreshPort, request: FreshnessRequest): Freshness {
  const freshness = describeFreshness({
    tier: request.tier,
    kind: request.kind,
    refreshedAt: request.refreshedAt,
    now: request.now,
    ...(request.detailScraped === undefined ? {} : { detailScraped: request.detailScraped }),
  });
  if (freshness.source === 'stale' && request.tier !== 'FREE') {
    freshness.refreshTriggered = refresher.requestRefresh(request.target);
  }
  return freshness;
}
