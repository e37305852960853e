import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.ts';
import { TIERS } from '../../domain/tiers.ts';
import { quotaPeriod } from '../../http/access.ts';
import { ErrorResponse, StringEnum } from '../../http/schemas.ts';

export const UsageSchema = Type.Object(
  {
    tier: StringEnum(TIERS),
    quota: Type.Integer({ description: 'Counted requests included per calendar month (UTC).' }),
    used: Type.Integer({ description: 'Counted requests so far this month (overage included).' }),
    remaining: Type.Integer({ description: 'quota − used, never below 0.' }),
    overageLimit: Type.Integer({
      description:
        'Requests allowed past the quota this month. They succeed and carry `X-Quota-Overage: true`; past quota + overageLimit requests get 429 QUOTA_EXCEEDED until the next month.',
    }),
    percentUsed: Type.Number({ description: 'used / quota × 100, two decimals.' }),
    periodStart: Type.String({ format: 'date-time' }),
    periodEnd: Type.String({
      format: 'date-time',
      description: 'Exclusive: the first instant of the next month.',
    }),
  },
  { $id: 'Usage' },
);
export type Usage = Static<typeof UsageSchema>;

export const UsageResponse = Type.Object({
  data: Type.Ref(UsageSchema),
  meta: Type.Object({ dataAge: Type.Null(), source: Type.Literal('live') }),
});

export function registerUsageRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/v1/usage',
    {
      config: { access: { minTier: 'FREE', requiresKey: false, metering: 'rate' } },
      schema: {
        operationId: 'getUsage',
        tags: ['Service'],
        summary: 'Usage of the current month',
        description:
          "With a key: that key's usage. Without: the anonymous Free-tier bucket of the client IP. Rate-limited, never counted against the quota.",
        response: { 200: UsageResponse, 401: ErrorResponse, 429: ErrorResponse },
      },
    },
    async (request) => {
      const caller = request.caller;
      const limits = ctx.config.tierLimits[caller.tier];
      const period = quotaPeriod(ctx.clock.now());
      const used = await ctx.limits.quota.used(caller.bucket, period.id);
      return {
        data: {
          tier: caller.tier,
          quota: limits.monthlyQuota,
          used,
          remaining: Math.max(0, limits.monthlyQuota - used),
          overageLimit: limits.overageLimit,
          percentUsed: limits.monthlyQuota === 0 ? 0 : Math.round((used / limits.monthlyQuota) * 10000) / 100,
          periodStart: period.start.toISOString(),
          periodEnd: period.end.toISOString(),
        },
        meta: { dataAge: null, source: 'live' as const },
      };
    },
  );
}
