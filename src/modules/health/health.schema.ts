import { type Static, Type } from '@sinclair/typebox';

export const HealthResponse = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
      description:
        '`degraded` when a dependency every request needs is away — the database does not answer, or the limits backend is `unreachable` or has lost its lease — so a load balancer should drain the node (see `GET /v1/health/ready`); the service still responds. An upstream failure does not degrade: reads are served from the store.',
    }),
    version: Type.String(),
    uptimeSeconds: Type.Integer(),
    time: Type.String({ format: 'date-time' }),
    database: Type.Object({
      dialect: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
      status: Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]),
      latencyMs: Type.Union([Type.Number(), Type.Null()]),
    }),
    limits: Type.Object(
      {
        backend: Type.Union([Type.Literal('memory'), Type.Literal('redis')], {
          description:
            '`memory`: rate windows in this process and quotas in the database (one process per store); `redis`: both in Redis, shared by every process.',
        }),
        status: Type.Union([Type.Literal('ok'), Type.Literal('unreachable'), Type.Literal('lease_lost')], {
          description:
            "`unreachable`: Redis does not answer, so metered routes answer 503 `SERVICE_UNAVAILABLE` (fail closed); `lease_lost`: another process took over this store's embedded limits.",
        }),
        latencyMs: Type.Union([Type.Number(), Type.Null()], {
          description: 'Round trip of a Redis PING; null for `memory` or when unreachable.',
        }),
      },
      { description: 'The rate-limit and quota backend.' },
    ),
    data: Type.Object({
      searchRentals: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description: 'When rental search data was last refreshed.',
      }),
      searchSales: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      buildings: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      oldestAgeSeconds: Type.Union([Type.Integer(), Type.Null()], {
        description: 'Age of the least recently refreshed dataset.',
      }),
    }),
    pipeline: Type.Object(
      {
        upstream: Type.Union([Type.Literal('reso'), Type.Literal('simulator'), Type.Null()], {
          description:
            '`reso`: a RESO Web API feed; `simulator`: the demo market simulator; null: no upstream.',
        }),
        lastFailure: Type.Union(
          [
            Type.Object({
              at: Type.String({ format: 'date-time' }),
              kind: Type.String({ description: '`timeout`, `unavailable`, `parse_failed` or `internal`.' }),
            }),
            Type.Null(),
          ],
          { description: 'The last failed upstream refresh since start.' },
        ),
        backgroundPending: Type.Integer({
          minimum: 0,
          description: 'Background refreshes running or queued.',
        }),
        latestEventSequence: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
          description: 'Sequence of the newest listing event (null when the database does not answer).',
        }),
      },
      { description: 'The refresh pipeline.' },
    ),
  },
  { $id: 'Health' },
);
export type Health = Static<typeof HealthResponse>;

export const DEPENDENCY_NAMES = ['database', 'limits'] as const;
export type DependencyName = (typeof DEPENDENCY_NAMES)[number];

/** What a load balancer's readiness probe gets while every needed dependency answers. */
export const ReadinessResponse = Type.Object({
  status: Type.Literal('ready'),
  checks: Type.Object({ database: Type.Literal('ok'), limits: Type.Literal('ok') }),
});
export type Readiness = Static<typeof ReadinessResponse>;

/** Liveness: the process serves HTTP; says nothing about dependencies. */
export const LivenessResponse = Type.Object({
  status: Type.Literal('live'),
  uptimeSeconds: Type.Integer(),
});
export type Liveness = Static<typeof LivenessResponse>;
