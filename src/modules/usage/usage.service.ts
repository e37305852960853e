import type { Tier, TierLimits } from '../../domain/tiers.ts';
import { quotaPeriod } from '../../http/access.ts';
import type { Clock } from '../../platform/clock.ts';
import type { QuotaStore } from '../../platform/limits/limits.ts';
import type { Usage } from './usage.schema.ts';

/** A caller's monthly usage against its tier's quota, on the wall clock's calendar month (UTC). */
export class UsageService {
  constructor(
    private readonly quota: QuotaStore,
    private readonly tierLimits: Readonly<Record<Tier, TierLimits>>,
    private readonly wallClock: Clock,
  ) {}

  /**
   * `bucket` is what the quota is counted under (the caller's account, shared by
   * all of its keys, or its anonymous address); quota and overage are those of
   * the caller's own tier.
   */
  async usageOf(caller: { tier: Tier; bucket: string }): Promise<Usage> {
    const limits = this.tierLimits[caller.tier];
    const period = quotaPeriod(this.wallClock.now());
    const used = await this.quota.used(caller.bucket, period.id);
    return {
      tier: caller.tier,
      quota: limits.monthlyQuota,
      used,
      remaining: Math.max(0, limits.monthlyQuota - used),
      overageLimit: limits.overageLimit,
      percentUsed: limits.monthlyQuota === 0 ? 0 : Math.round((used / limits.monthlyQuota) * 10000) / 100,
      periodStart: period.start.toISOString(),
      periodEnd: period.end.toISOString(),
    };
  }
}
