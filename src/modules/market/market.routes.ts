import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../app-context.ts';
import { describeFreshness } from '../../domain/freshness.ts';
import type { ListingType } from '../../domain/listing.ts';
import { PUBLIC_ROUTE } from '../../http/access.ts';
import { paramNames } from '../../http/envelope.ts';
import { ApiError } from '../../http/errors.ts';
import { unknownParamWarnings } from '../../http/pagination.ts';
import {
  CompareQuery,
  CompareResponse,
  MAX_COMPARE_AREAS,
  marketErrors,
  RentalSnapshotResponse,
  SaleSnapshotResponse,
  SnapshotQuery,
  TrendQuery,
  TrendResponse,
} from './market.schema.ts';
import type { MarketSnapshot } from './market.service.ts';
import { MIN_SAMPLE } from './statistics.ts';

const FIGURES_NOTE = `Every figure carries \`n\`, the observations behind it; figures from fewer than ${MIN_SAMPLE} observations are \`null\`, never 0. Quantiles interpolate linearly between closest ranks (type 7).`;

const SNAPSHOTS = [
  {
    path: '/v1/market/rentals/snapshot',
    listingType: 'rental',
    operationId: 'getRentalMarketSnapshot',
    response: RentalSnapshotResponse,
  },
  {
    path: '/v1/market/sales/snapshot',
    listingType: 'sale',
    operationId: 'getSaleMarketSnapshot',
    response: SaleSnapshotResponse,
  },
] as const;

function marketMeta(
  ctx: AppContext,
  request: FastifyRequest,
  computedAt: string | null,
  known: ReadonlySet<string>,
) {
  return {
    ...describeFreshness({
      tier: request.caller.tier,
      kind: 'search',
      refreshedAt: computedAt,
      now: ctx.clock.now(),
    }),
    warnings: unknownParamWarnings(request.query, known),
  };
}

/** Parses `areas` for compare: 1–MAX_COMPARE_AREAS distinct ids, in request order. */
function compareAreas(raw: string): number[] {
  const ids = [...new Set(raw.split(',').map(Number))];
  if (ids.length > MAX_COMPARE_AREAS) {
    throw ApiError.invalidParam({
      parameter: 'areas',
      rule: 'max_items',
      message: `at most ${MAX_COMPARE_AREAS} areas can be compared (got ${ids.length})`,
    });
  }
  return ids;
}

export function registerMarketRoutes(app: FastifyInstance, ctx: AppContext): void {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  for (const op of SNAPSHOTS) {
    const listingType: ListingType = op.listingType;
    const known = paramNames(SnapshotQuery);
    // Untyped registration: the loop's union of response schemas is checked by the serializer and tests.
    app.get(
      op.path,
      {
        config: { access: PUBLIC_ROUTE },
        schema: {
          operationId: op.operationId,
          tags: ['Market'],
          summary: `Market snapshot of ${listingType === 'rental' ? 'rental' : 'sale'} listings in an area`,
          description: `Inventory, new listings, price and price-per-sqft distributions, days on market and price cuts over the ACTIVE listings of an area and its descendants, optionally one bedroom bucket and building type. ${FIGURES_NOTE} Figures are cached for up to a minute per data version; \`computedAt\` (and \`meta.dataAge\`) say when they were computed.`,
          querystring: SnapshotQuery,
          response: { 200: op.response, ...marketErrors },
        },
      },
      async (request) => {
        const q = request.query as SnapshotQuery;
        const data = await ctx.market.snapshot(
          { listingType, areaId: q.areaId, bedrooms: q.bedrooms, buildingType: q.buildingType },
          await ctx.dataVersion.version(),
        );
        return { data, meta: marketMeta(ctx, request, data.computedAt, known) };
      },
    );
  }

  const compareKnown = paramNames(CompareQuery);
  typed.get(
    '/v1/market/compare',
    {
      config: { access: PUBLIC_ROUTE },
      schema: {
        operationId: 'compareMarkets',
        tags: ['Market'],
        summary: 'Compare market snapshots of up to 5 areas',
        description: `The snapshot figures of 1–${MAX_COMPARE_AREAS} areas side by side, in request order. ${FIGURES_NOTE}`,
        querystring: CompareQuery,
        response: { 200: CompareResponse, ...marketErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const listingType: ListingType = q.listingType === 'sales' ? 'sale' : 'rental';
      const ids = compareAreas(q.areas);
      for (const id of ids) ctx.market.assertArea(id, 'areas');
      const version = await ctx.dataVersion.version();
      const data: MarketSnapshot[] = [];
      for (const areaId of ids) {
        data.push(
          await ctx.market.snapshot(
            { listingType, areaId, bedrooms: q.bedrooms, buildingType: q.buildingType },
            version,
            'areas',
          ),
        );
      }
      const computedAt = data.map((s) => s.computedAt).sort()[0]!;
      return {
        data: data as CompareResponse['data'],
        meta: marketMeta(ctx, request, computedAt, compareKnown),
      };
    },
  );
}

const TRENDS = [
  { path: '/v1/market/rentals/trends', listingType: 'rental', operationId: 'getRentalMarketTrends' },
  { path: '/v1/market/sales/trends', listingType: 'sale', operationId: 'getSaleMarketTrends' },
] as const;

export function registerMarketTrendRoutes(app: FastifyInstance, ctx: AppContext): void {
  const known = paramNames(TrendQuery);
  for (const op of TRENDS) {
    const listingType: ListingType = op.listingType;
    app.withTypeProvider<TypeBoxTypeProvider>().get(
      op.path,
      {
        config: { access: PUBLIC_ROUTE },
        schema: {
          operationId: op.operationId,
          tags: ['Market'],
          summary: `Trend of a ${listingType} market metric in an area`,
          description: `A daily, weekly or monthly series of one metric over ${listingType} listings of an area and its descendants, read from daily snapshots a background job materializes (requests never scan listing history). Days not materialized yet give null points and a note in \`meta.warnings\`. ${FIGURES_NOTE}`,
          querystring: TrendQuery,
          response: { 200: TrendResponse, ...marketErrors },
        },
      },
      async (request) => {
        const q = request.query;
        const { data, warnings, materializedAt } = await ctx.marketTrends.trend({
          listingType,
          areaId: q.areaId,
          bedrooms: q.bedrooms,
          metric: q.metric,
          interval: q.interval,
          from: q.from,
          to: q.to,
        });
        // dataAge: when the job last materialized snapshots.
        const meta = marketMeta(ctx, request, materializedAt, known);
        return { data, meta: { ...meta, warnings: [...meta.warnings, ...warnings] } };
      },
    );
  }
}
