import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { UNMETERED_ROUTE } from '../../http/access.ts';
import { HealthResponse } from './health.schema.ts';
import type { HealthService } from './health.service.ts';

export interface HealthRouteServices {
  health: HealthService;
}

/** `/health`: public, outside rate limits and quotas. */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthRouteServices> = async (app, { health }) => {
  app.get(
    '/health',
    {
      config: { access: UNMETERED_ROUTE },
      schema: {
        operationId: 'getHealth',
        tags: ['Service'],
        summary: 'Service health',
        description:
          'Public, outside rate limits and quotas. Always 200 while the process serves HTTP; `status` says whether the database answers and `data` how old each dataset is.',
        response: { 200: HealthResponse },
      },
    },
    async () => health.check(),
  );
};
