import type { Tier } from '../domain/tiers.ts';

/**
 * Who is calling, and with which tier. Every route reads the caller from here,
 * never from headers directly: the access-control layer is the one place that
 * decides it (API key, OAuth token, or anonymous by IP).
 */
export interface Caller {
  kind: 'anonymous' | 'api_key' | 'oauth';
  tier: Tier;
  /** Account that owns the credential; null for anonymous callers. */
  accountId: string | null;
  /**
   * What rate windows and monthly quotas are counted under: `acct:<accountId>`
   * for a credential (every key of an account shares one budget), `ip:<address>`
   * for an anonymous caller. Limits are those of `tier`, applied to the bucket's
   * shared counters.
   */
  bucket: string;
  /** Largest page size the tier may request. */
  maxPerPage: number;
  /** The API key behind the call, when there is one. */
  keyId?: string;
  /** The OAuth grant behind the call (`kind: 'oauth'`): one consent and its token family. */
  grantId?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
}
