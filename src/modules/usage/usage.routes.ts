import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorResponse } from '../../http/schemas.ts';
import { UsageResponse } from './usage.schema.ts';
import type { UsageService } from './usage.service.ts';

export interface UsageRouteServices {
  usage: UsageService;
}

/** `/usage`: the caller's monthly usage (rate-limited, never counted). */
export const usageRoutes: FastifyPluginAsyncTypebox<UsageRouteServices> = async (app, { usage }) => {
  app.get(
    '/usage',
    {
      config: { access: { minTier: 'FREE', requiresKey: false, metering: 'rate' } },
      schema: {
        operationId: 'getUsage',
        tags: ['Service'],
        summary: 'Usage of the current month',
        description:
          "With a key: the usage of the key's account, which all of its keys share, measured against the calling key's tier. Without: the anonymous Free-tier bucket of the client IP. Rate-limited, never counted against the quota.",
        response: { 200: UsageResponse, 401: ErrorResponse, 429: ErrorResponse },
      },
    },
    async (request) => ({
      data: await usage.usageOf(request.caller),
      meta: { dataAge: null, source: 'live' as const },
    }),
  );
};
