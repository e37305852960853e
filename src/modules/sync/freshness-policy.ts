/**
 * SPEC "Data freshness rules" for search-kind reads in one place: classify the
 * served data against the caller's tier and, for paid tiers reading data older
 * than their threshold, start a background refresh (answering from the cache
 * meanwhile). Free data is refreshed on the schedule only.
 */
import { describeFreshness, type Freshness } from '../../domain/freshness.ts';
import { FRESHNESS_MS, type Tier } from '../../domain/tiers.ts';
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

export function isOlderThanThreshold(
  tier: Tier,
  kind: 'search' | 'detail',
  refreshedAt: string | null,
  now: Date,
): boolean {
  if (refreshedAt === null) return true;
  return now.getTime() - Date.parse(refreshedAt) > FRESHNESS_MS[tier][kind];
}

export function freshnessWithRefresh(refresher: RefreshPort, request: FreshnessRequest): Freshness {
  const stale = isOlderThanThreshold(request.tier, request.kind, request.refreshedAt, request.now);
  const refreshTriggered =
    stale && request.tier !== 'FREE' ? refresher.requestRefresh(request.target) : false;
  return describeFreshness({
    tier: request.tier,
    kind: request.kind,
    refreshedAt: request.refreshedAt,
    now: request.now,
    refreshTriggered,
    ...(request.detailScraped === undefined ? {} : { detailScraped: request.detailScraped }),
  });
}
