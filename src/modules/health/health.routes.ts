import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { UNMETERED_ROUTE } from '../../http/access.ts';
import { ApiError, errorBody } from '../../http/errors.ts';
import { ErrorResponse } from '../../http/schemas.ts';
import { HealthResponse, LivenessResponse, ReadinessResponse } from './health.schema.ts';
import type { HealthService, ReadinessCheck } from './health.service.ts';

export interface HealthRouteServices {
  health: HealthService;
  /** PUBLIC_URL: the origin of the `docs` link of the not-ready error. */
  publicUrl: string;
}

/** Seconds a balancer or client is told to wait before probing a node that is not ready again. */
export const NOT_READY_RETRY_AFTER_S = 1;

/**
 * The 503 a node that is not ready answers on `/health/ready` (this route, and
 * the starting node before it: src/http/starting.ts): the failing checks and
 * the pending components with what each is doing, in the message and in
 * `details`. `stage` prefixes the list (`starting`).
 */
export function notReadyError(state: Omit<ReadinessCheck, 'ready'>, stage?: string): ApiError {
  const { checks, pending, components } = state;
  const away = [
    ...Object.entries(checks)
      .filter(([, status]) => status !== 'ok')
      .map(([name, status]) => `${name} ${status}`),
    ...pending.map((name) => `${name} ${components[name].detail ?? 'pending'}`),
  ].join(', ');
  return new ApiError('SERVICE_UNAVAILABLE', `Not ready: ${stage ? `${stage} (${away})` : away}`, {
    checks,
    pending,
    retryAfter: NOT_READY_RETRY_AFTER_S,
  });
}

/** `/health`, `/health/ready`, `/health/live`: public, outside rate limits and quotas. */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthRouteServices> = async (
  app,
  { health, publicUrl },
) => {
  app.get(
    '/health',
    {
      config: { access: UNMETERED_ROUTE },
      schema: {
        operationId: 'getHealth',
        tags: ['Service'],
        summary: 'Service health',
        description:
          'Public, outside rate limits and quotas. Always 200 while the process serves HTTP (`live`); `status` says whether every needed dependency (database, limits backend) answers, `ready` whether the node is also prepared (schema, demo data, search index, market caches: `readiness` names what is pending), and the body how each dependency stands, how old each dataset is, and how background work is progressing (`background`: the market-history backfill and every job).',
        response: { 200: HealthResponse },
      },
    },
    async () => health.check(),
  );

  app.get(
    '/health/ready',
    {
      config: { access: UNMETERED_ROUTE },
      schema: {
        operationId: 'getReadiness',
        tags: ['Service'],
        summary: 'Readiness for a load balancer',
        description:
          'Public, outside rate limits and quotas. 200 once the node is prepared (schema migrated, demo market loaded, search index built, market caches warm) and while the database and the limits backend both answer; otherwise 503 `SERVICE_UNAVAILABLE` with `details.checks` saying how each dependency stands and `details.pending` naming the components not prepared yet, so a load balancer (or `npm run bench`) waits and stops routing to the node until it is ready. Background work (history backfill, refresh cycles) does not make a node unready: see `GET /v1/health`.',
        response: { 200: ReadinessResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      const { ready, checks, pending, components } = await health.readiness();
      if (ready)
        return { status: 'ready' as const, checks: { database: 'ok' as const, limits: 'ok' as const } };
      const error = notReadyError({ checks, pending, components });
      // Answered here rather than thrown: a probe polled every few seconds is not an error to log each time.
      reply.header('Retry-After', String(NOT_READY_RETRY_AFTER_S));
      return reply.status(503).send(errorBody(error, request.id, publicUrl));
    },
  );

  app.get(
    '/health/live',
    {
      config: { access: UNMETERED_ROUTE },
      schema: {
        operationId: 'getLiveness',
        tags: ['Service'],
        summary: 'Liveness',
        description:
          'Public, outside rate limits and quotas. 200 while the process serves HTTP, whatever its dependencies do: restart the process only when this stops answering.',
        response: { 200: LivenessResponse },
      },
    },
    async () => health.liveness(),
  );
};
