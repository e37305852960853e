import { HOUR_MS, MINUTE_MS } from './time.ts';

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

/** What a tier may consume (SPEC "Limits"). */
export interface TierLimits {
  /** Requests per one-minute window (fixed window from the first request). */
  ratePerMinute: number;
  /** Counted requests per calendar month (UTC). */
  monthlyQuota: number;
  /**
   * Requests allowed past the quota in the same month. They succeed and are
   * flagged (`X-Quota-Overage: true`); past quota + overage the answer is 429
   * `QUOTA_EXCEEDED` until the next month.
   */
  overageLimit: number;
  maxPerPage: number;
}

export const DEFAULT_TIER_LIMITS: Readonly<Record<Tier, TierLimits>> = {
  FREE: { ratePerMinute: 10, monthlyQuota: 100, overageLimit: 0, maxPerPage: 10 },
  STARTER: { ratePerMinute: 30, monthlyQuota: 5_000, overageLimit: 500, maxPerPage: 50 },
  PRO: { ratePerMinute: 60, monthlyQuota: 25_000, overageLimit: 2_500, maxPerPage: 500 },
  BUSINESS: { ratePerMinute: 120, monthlyQuota: 100_000, overageLimit: 10_000, maxPerPage: 500 },
  INTERNAL: { ratePerMinute: 1_000, monthlyQuota: 10_000_000, overageLimit: 0, maxPerPage: 500 },
};

export function isTier(value: string): value is Tier {
  return (TIERS as readonly string[]).includes(value);
}
