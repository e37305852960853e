import type { Tier, TierLimits } from '../../domain/tiers.ts';
import type { CredentialResolver } from '../../http/access.ts';
import type { Caller } from '../../http/caller.ts';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SubscriptionProvider } from './subscriptions.ts';

/**
 * Resolves `Authorization: Bearer <API key>` against the subscription provider,
 * on every request. A key's caller is metered by its account: every key of an
 * account shares one rate window and one monthly quota (`acct:<accountId>`),
 * each request judged by its own key's tier.
 */
export class ApiKeyResolver implements CredentialResolver {
  constructor(
    private readonly provider: SubscriptionProvider,
    private readonly tierLimits: Readonly<Record<Tier, TierLimits>>,
    /** The wall clock: subscription ends are real instants, never market time. */
    private readonly wallClock: Clock,
  ) {}

  async resolve(token: string): Promise<Caller | ApiError> {
    const check = await this.provider.check(token, this.wallClock.now());
    if (!check.ok) {
      return check.reason === 'EXPIRED_API_KEY'
        ? new ApiError('EXPIRED_API_KEY', 'The subscription of this API key has ended')
        : new ApiError('INVALID_API_KEY', 'The API key is not valid (unknown, disabled or revoked)');
    }
    const { record } = check;
    return {
      kind: 'api_key',
      tier: record.tier,
      accountId: record.accountId,
      bucket: accountBucket(record.accountId),
      maxPerPage: this.tierLimits[record.tier].maxPerPage,
      keyId: record.id,
    };
  }
}

/** The limits bucket of an account: shared by all of its keys (and, later, its OAuth tokens). */
export function accountBucket(accountId: string): string {
  return `acct:${accountId}`;
}
