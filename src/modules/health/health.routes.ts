import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { AppContext } from '../../app-context.ts';
import { UNMETERED_ROUTE } from '../../http/access.ts';
import { latestSequence } from '../events/event-log.ts';

export const HealthResponse = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
      description: '`degraded` when the database does not answer; the service still responds.',
    }),
    version: Type.String(),
    uptimeSeconds: Type.Integer(),
    time: Type.String({ format: 'date-time' }),
    database: Type.Object({
      dialect: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
      status: Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]),
      latencyMs: Type.Union([Type.Number(), Type.Null()]),
    }),
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

export function registerHealthRoutes(app: FastifyInstance, ctx: AppContext): void {
  const startedAt = Date.now();
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/v1/health',
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
    async () => {
      const started = performance.now();
      let dbStatus: 'ok' | 'unreachable' = 'ok';
      let latencyMs: number | null = null;
      try {
        // Bounded: health must answer (as degraded) even when the database hangs.
        await Promise.race([
          sql`select 1`.execute(ctx.store.db),
          new Promise((_, reject) =>
            setTimeout(() => reject(new Error('database probe timed out')), 2000).unref(),
          ),
        ]);
        latencyMs = Math.round((performance.now() - started) * 100) / 100;
      } catch {
        dbStatus = 'unreachable';
      }
      const now = ctx.clock.now();
      const [searchRentals, searchSales, buildings] =
        dbStatus === 'ok'
          ? await Promise.all([
              ctx.dataVersion.refreshedAt('search:rental'),
              ctx.dataVersion.refreshedAt('search:sale'),
              ctx.dataVersion.refreshedAt('buildings'),
            ])
          : [null, null, null];
      const latestEventSequence = dbStatus === 'ok' ? await latestSequence(ctx.store.db) : null;
      const stamps = [searchRentals, searchSales, buildings].filter((s): s is string => s !== null);
      const oldest = stamps.length > 0 ? Math.min(...stamps.map((s) => Date.parse(s))) : null;
      return {
        status: dbStatus === 'ok' ? ('ok' as const) : ('degraded' as const),
        version: ctx.config.version,
        uptimeSeconds: Math.floor((Date.now() - startedAt) / 1000),
        time: now.toISOString(),
        database: { dialect: ctx.store.dialect, status: dbStatus, latencyMs },
        data: {
          searchRentals,
          searchSales,
          buildings,
          oldestAgeSeconds: oldest === null ? null : Math.max(0, Math.floor((now.getTime() - oldest) / 1000)),
        },
        pipeline: { ...ctx.refresher.status(), latestEventSequence },
      };
    },
  );
}
