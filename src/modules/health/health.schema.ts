import { type Static, Type } from '@sinclair/typebox';
import { READINESS_COMPONENTS } from './readiness.ts';

const ComponentState = Type.Object({
  ready: Type.Boolean(),
  detail: Type.Optional(Type.String({ description: 'What the component is doing while not ready.' })),
});

const ISO_DATE = { format: 'date' } as const;

/** How far the daily market-snapshot history (trends) reaches back, against the target. */
export const BackfillSchema = Type.Object(
  {
    firstDate: Type.Union([Type.String(ISO_DATE), Type.Null()], {
      description: 'First day covered; null before the first chunk is written.',
    }),
    lastDate: Type.Union([Type.String(ISO_DATE), Type.Null()], { description: 'Last day covered.' }),
    targetFirstDate: Type.Union([Type.String(ISO_DATE), Type.Null()], {
      description: 'First day the backfill aims for (24 months back).',
    }),
    percent: Type.Number({
      minimum: 0,
      maximum: 100,
      description: 'Share of the target range covered; 100 once complete.',
    }),
    complete: Type.Boolean(),
    running: Type.Boolean({ description: 'Whether the snapshot job is running now.' }),
  },
  {
    description:
      'The market-history backfill. Trend requests serve the days covered while it runs; it does not affect readiness.',
  },
);
export type Backfill = Static<typeof BackfillSchema>;

export const BackgroundJobSchema = Type.Object({
  name: Type.String({ description: 'e.g. `refresh:search`, `refresh:buildings`, `market-snapshots`.' }),
  running: Type.Boolean(),
  lastRunAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description:
      "On the market clock, like the data's own times: these jobs produce market data, so they run on market time (ahead of `time` after a fast simulated run; see the README's clocks section).",
  }),
  nextRunAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'On the market clock, as `lastRunAt`. Null while running or stopped.',
  }),
  lastError: Type.Union(
    [Type.Object({ at: Type.String({ format: 'date-time' }), kind: Type.String() }), Type.Null()],
    { description: 'The most recent failure (kept after later successes; compare `at` with `lastRunAt`).' },
  ),
  progress: Type.Union(
    [
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])),
      Type.Null(),
    ],
    {
      description:
        'What the job reports of its progress, as flat figures named by the job (the snapshot job: its coverage dates and `complete`; `search-summaries`, the warm-up of the serialized search results after each index swap: `warmed` of `of` active listings); null when it reports none.',
    },
  ),
});
export type BackgroundJob = Static<typeof BackgroundJobSchema>;

export const HealthResponse = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
      description:
        '`degraded` when a dependency every request needs is away — the database does not answer, or the limits backend is `unreachable` or has lost its lease — so a load balancer should drain the node (see `GET /v1/health/ready`); the service still responds. An upstream failure does not degrade: reads are served from the store.',
    }),
    live: Type.Literal(true, {
      description: 'Always true in an answer: the process serves HTTP (see `GET /v1/health/live`).',
    }),
    ready: Type.Boolean({
      description:
        'Whether the node is ready to serve at full speed (see `GET /v1/health/ready`): the database and the limits backend answer, and schema, demo data, search index and market caches are prepared.',
    }),
    readiness: Type.Object(
      {
        pending: Type.Array(Type.Union(READINESS_COMPONENTS.map((name) => Type.Literal(name))), {
          description: 'Components not prepared yet; empty when only dependencies (or nothing) are missing.',
        }),
        components: Type.Object(
          Object.fromEntries(READINESS_COMPONENTS.map((name) => [name, ComponentState])) as Record<
            (typeof READINESS_COMPONENTS)[number],
            typeof ComponentState
          >,
          {
            description:
              '`schema`: migrated; `demo`: the demo market loaded (ready when there is no demo); `searchIndex`: the in-memory search index built (a rebuild after a data change runs beside the one in use); `marketCaches`: market snapshot caches warm.',
          },
        ),
      },
      { description: "This node's own preparation." },
    ),
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
    background: Type.Object(
      { backfill: BackfillSchema, jobs: Type.Array(BackgroundJobSchema) },
      { description: 'Background work in progress; none of it affects readiness.' },
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
