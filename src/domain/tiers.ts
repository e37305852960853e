import { HOUR_MS, MINUTE_MS } from '../platform/clock.ts';

export const TIERS = ['FREE', 'STARTER', 'PRO', 'BUSINESS', 'INTERNAL'] as const;
export type Tier = (typeof TIERS)[number];

export function tierRank(tier: Tier): number {
  return TIERS.indexOf(tier);
}

/**
 * How old cached data may be before a caller of this tier sees it as stale
 * (SPEC "Data freshness rules"). Free data is refreshed on a schedule only; its
 * threshold is the top of the schedule (search 6 h, detail 12 h).
 */
export const FRESHNESS_MS: Readonly<Record<Tier, { search: number; detail: number }>> = {
  FREE: { search: 6 * HOUR_MS, detail: 12 * HOUR_MS },
  STARTER: { search: 2 * HOUR_MS, detail: 30 * MINUTE_MS },
  PRO: { search: HOUR_MS, detail: 15 * MINUTE_MS },
  BUSINESS: { search: 30 * MINUTE_MS, detail: 10 * MINUTE_MS },
  INTERNAL: { search: 30 * MINUTE_MS, detail: 10 * MINUTE_MS },
};
