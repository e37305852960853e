import { type Static, Type } from '@sinclair/typebox';

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
export type Health = Static<typeof HealthResponse>;
