import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Tier, type TierLimits, tierRank } from '../domain/tiers.ts';
import type { Clock } from '../platform/clock.ts';
import type { Limits, QuotaDecision } from '../platform/limits/limits.ts';
import type { Caller } from './caller.ts';
import { ApiError } from './errors.ts';

/**
 * How a route is guarded and metered. Declared once per route (its `config.access`);
 * the access hook is the only place that enforces it.
 */
export interface AccessPolicy {
  /** Lowest tier that may call the route. */
  minTier: Tier;
  /** False for public routes: anonymous callers get Free limits by client IP. */
  requiresKey: boolean;
  /** `count`: rate-limited and counted against the quota; `rate`: rate-limited only; `none`: neither. */
  metering: 'count' | 'rate' | 'none';
  /**
   * Path (under the public URL) of the RFC 9728 protected-resource metadata a
   * 401 points at; default `/.well-known/oauth-protected-resource` (the REST
   * API). The MCP endpoint names its own document.
   */
  resourceMetadataPath?: string;
}

/** Where the REST API's protected-resource metadata is served (RFC 9728). */
export const API_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessPolicy;
  }
}

/** A public data route: no key needed, metered. */
export const PUBLIC_ROUTE: AccessPolicy = { minTier: 'FREE', requiresKey: false, metering: 'count' };
/** A route that needs an API key of at least `minTier`. */
export function keyRoute(minTier: Tier): AccessPolicy {
  return { minTier, requiresKey: true, metering: 'count' };
}
/** Outside metering: health, docs. */
export const UNMETERED_ROUTE: AccessPolicy = { minTier: 'FREE', requiresKey: false, metering: 'none' };

/**
 * Turns a presented bearer credential into a caller, or an error. API keys
 * today; OAuth access tokens plug in here too, so every route — REST,
 * streams, MCP — goes through the same single step.
 */
export interface CredentialResolver {
  resolve(token: string, request: FastifyRequest): Promise<Caller | ApiError>;
}

/** A route as registered, with the access policy it declared (undefined: outside access control). */
export interface RegisteredRoute {
  method: string;
  url: string;
  access: AccessPolicy | undefined;
}

const registries = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/**
 * Every route registered after `installAccessControl`, with its policy: the
 * source from which tests derive the tier matrix, so a new route cannot escape
 * it. Automatic HEAD routes are included (they share their GET's policy).
 */
export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return registries.get(app) ?? [];
}

export interface AccessOptions {
  resolver: CredentialResolver;
  limits: Limits;
  tierLimits: Readonly<Record<Tier, TierLimits>>;
  /** The wall clock: quota months and window ends are callers' time, never the market's. */
  clock: Clock;
  publicUrl: string;
}

export interface QuotaPeriod {
  readonly id: string;
  readonly start: Date;
  readonly end: Date;
}

/** `YYYY-MM` of the UTC calendar month, and its bounds. */
export function quotaPeriod(now: Date): QuotaPeriod {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { id: start.toISOString().slice(0, 7), start, end };
}

/**
 * `quotaPeriod` for a clock read on every metered request: the month is kept
 * while the clock stays inside it (a fake clock may move either way; any
 * instant outside the kept month computes it again).
 */
function quotaPeriodsOf(clock: Clock): () => QuotaPeriod {
  let kept: QuotaPeriod | null = null;
  return () => {
    const now = clock.now();
    const at = now.getTime();
    if (kept === null || at < kept.start.getTime() || at >= kept.end.getTime()) kept = quotaPeriod(now);
    return kept;
  };
}

export function anonymousCallerFor(ip: string, limits: TierLimits): Caller {
  return {
    kind: 'anonymous',
    tier: 'FREE',
    accountId: null,
    bucket: `ip:${ip}`,
    maxPerPage: limits.maxPerPage,
  };
}

function setQuotaHeaders(reply: FastifyReply, limits: TierLimits, used: number): void {
  reply.header('X-Quota-Limit', limits.monthlyQuota);
  reply.header('X-Quota-Used', used);
  reply.header('X-Quota-Remaining', Math.max(0, limits.monthlyQuota - used));
}

/**
 * When the limits backend (Redis) cannot answer, the request fails closed with
 * 503 and Retry-After — never unmetered, never a bare 500. The backend fails
 * fast while away (no queue, a command timeout), so this costs no waiting.
 */
async function unavailableOnFailure<T>(request: FastifyRequest, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    // A warning with the cause: the outage itself is logged once by the limits
    // backend, and the 503 by the error handler.
    request.log.warn({ err: error }, 'limits backend unavailable');
    throw new ApiError('SERVICE_UNAVAILABLE', 'Rate limiting is temporarily unavailable; retry shortly', {
      retryAfter: 1,
    });
  }
}

/** One call's standing against its caller's monthly quota, as `Metering` judged it. */
export interface QuotaStanding {
  quota: QuotaDecision;
  /** The quota month (UTC) the call fell in. */
  period: QuotaPeriod;
  /** True when this call was counted (its tier may make it); false when the count was only read. */
  charged: boolean;
}

/** What one charged call leaves for headers: the tier's monthly limit and the count after it. */
export interface CallCharge {
  limits: TierLimits;
  used: number;
  /** Past the monthly quota, inside the overage allowance. */
  overage: boolean;
}

/**
 * Tier gating and quota counting for one call, the one implementation behind
 * the access hook (one call per HTTP request) and the MCP endpoint (one call
 * per tool call or resource read, while the HTTP request pays the rate window).
 */
export interface Metering {
  /**
   * Counts one call against the caller's month when its tier may make it
   * (`charged`), else only reads the count: a refused call is never charged.
   * Limits backend down: 503 SERVICE_UNAVAILABLE with Retry-After.
   */
  count(request: FastifyRequest, caller: Caller, minTier: Tier): Promise<QuotaStanding>;
  /** Reads the caller's count without charging (uncounted routes, refused requests). */
  peek(request: FastifyRequest, caller: Caller): Promise<QuotaStanding>;
  /** Throws TIER_RESTRICTED (403) below `minTier`, then QUOTA_EXCEEDED (429, Retry-After: the next month). */
  assertAllowed(caller: Caller, minTier: Tier, quota: QuotaDecision, period: QuotaStanding['period']): void;
  /** `count` then `assertAllowed`: a call of a counted operation, as a REST request of it is charged. */
  charge(request: FastifyRequest, caller: Caller, minTier: Tier): Promise<CallCharge>;
}

export function createMetering(options: Pick<AccessOptions, 'limits' | 'tierLimits' | 'clock'>): Metering {
  const { limits, tierLimits, clock } = options;
  const currentPeriod = quotaPeriodsOf(clock);
  const metering: Metering = {
    async count(request, caller, minTier) {
      const period = currentPeriod();
      if (tierRank(caller.tier) < tierRank(minTier)) return metering.peek(request, caller);
      const tierLimit = tierLimits[caller.tier];
      const quota = await unavailableOnFailure(request, () =>
        limits.quota.increment(caller.bucket, period.id, tierLimit.monthlyQuota + tierLimit.overageLimit),
      );
      return { quota, period, charged: true };
    },
    async peek(request, caller) {
      const period = currentPeriod();
      const used = await unavailableOnFailure(request, () => limits.quota.used(caller.bucket, period.id));
      return { quota: { allowed: true, used }, period, charged: false };
    },
    assertAllowed(caller, minTier, quota, period) {
      if (tierRank(caller.tier) < tierRank(minTier)) {
        throw new ApiError('TIER_RESTRICTED', `This endpoint requires the ${minTier} tier or above`, {
          requiredTier: minTier,
          currentTier: caller.tier,
        });
      }
      if (!quota.allowed) {
        const tierLimit = tierLimits[caller.tier];
        const retryAfter = Math.max(1, Math.ceil((period.end.getTime() - clock.now().getTime()) / 1000));
        throw new ApiError(
          'QUOTA_EXCEEDED',
          `Monthly quota of ${tierLimit.monthlyQuota} requests (plus ${tierLimit.overageLimit} overage) is used up until ${period.end.toISOString()}`,
          { retryAfter },
        );
      }
    },
    async charge(request, caller, minTier) {
      const { quota, period } = await metering.count(request, caller, minTier);
      metering.assertAllowed(caller, minTier, quota, period);
      const tierLimit = tierLimits[caller.tier];
      return { limits: tierLimit, used: quota.used, overage: quota.used > tierLimit.monthlyQuota };
    },
  };
  return metering;
}

/**
 * Installs credential resolution, rate limiting, tier gating and quota
 * counting, in that order, for every route that declares a metered policy.
 * Every answer of a metered route — errors included — carries the
 * X-RateLimit-* and X-Quota-* headers.
 *
 * Windows and quotas are counted per `caller.bucket` — the account for a key
 * (all of an account's keys share one window and one month's count), the
 * client IP for anonymous callers and failed authentication — and each request
 * is judged by its own tier's limits against those shared counts.
 */
export function installAccessControl(app: FastifyInstance, options: AccessOptions): void {
  const { resolver, limits, tierLimits, clock } = options;
  const metering = createMetering(options);
  const routes: RegisteredRoute[] = [];
  registries.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      routes.push({ method, url: route.url, access: route.config?.access });
    }
  });
  /**
   * RFC 6750 §3 / RFC 9728 §5.1: every 401 names the resource metadata; when a
   * credential was presented and refused it also says `invalid_token`, when none
   * was presented it carries no error code.
   */
  const challenge = (policy: AccessPolicy, presented: boolean): string => {
    const metadata = `${options.publicUrl}${policy.resourceMetadataPath ?? API_RESOURCE_METADATA_PATH}`;
    return presented
      ? `Bearer resource_metadata="${metadata}", error="invalid_token"`
      : `Bearer resource_metadata="${metadata}"`;
  };

  app.addHook('onRequest', async (request, reply) => {
    request.caller = anonymousCallerFor(request.ip, tierLimits.FREE);
    const policy = request.routeOptions.config?.access;
    if (!policy || policy.metering === 'none') return;

    let authError: ApiError | null = null;
    const header = request.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      const resolved = match
        ? await resolver.resolve(match[1]!, request)
        : new ApiError('INVALID_API_KEY', 'Authorization must be "Bearer <API key>"');
      if (resolved instanceof ApiError) authError = resolved;
      else request.caller = resolved;
    } else if (policy.requiresKey) {
      authError = new ApiError(
        'MISSING_API_KEY',
        'This endpoint needs an API key: send "Authorization: Bearer <key>"',
      );
    }

    // Failed authentication is limited by client IP, so key guessing is throttled too.
    const caller = request.caller;
    const tierLimit = tierLimits[caller.tier];
    const rate = await unavailableOnFailure(request, () =>
      limits.rate.consume(caller.bucket, tierLimit.ratePerMinute),
    );
    reply.header('X-RateLimit-Limit', rate.limit);
    reply.header('X-RateLimit-Remaining', rate.remaining);
    reply.header('X-RateLimit-Reset', Math.ceil(rate.resetAt / 1000));

    const counted = policy.metering === 'count' && authError === null && rate.allowed;
    const { quota, period, charged } = counted
      ? await metering.count(request, caller, policy.minTier)
      : await metering.peek(request, caller);
    setQuotaHeaders(reply, tierLimit, quota.used);

    // A caller past its window gets 429 even with a bad key: key guessing is throttled by IP.
    if (!rate.allowed) {
      const retryAfter = Math.max(1, Math.ceil((rate.resetAt - clock.now().getTime()) / 1000));
      throw new ApiError('RATE_LIMIT_EXCEEDED', `Rate limit of ${rate.limit} requests per minute exceeded`, {
        retryAfter,
      });
    }
    if (authError) {
      reply.header('WWW-Authenticate', challenge(policy, header !== undefined));
      throw authError;
    }
    metering.assertAllowed(caller, policy.minTier, quota, period);
    if (charged && quota.used > tierLimit.monthlyQuota) reply.header('X-Quota-Overage', 'true');
  });
}
