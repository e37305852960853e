import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ListingType } from '../../domain/listing.ts';
import { PUBLIC_ROUTE } from '../../http/access.ts';
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
import type { MarketService } from './market.service.ts';
import { MIN_SAMPLE } from './statistics.ts';
import type { MarketTrends } from './trends.ts';

const FIGURES_NOTE = `Every figure carries \`n\`, the observations behind it; figures from fewer than ${MIN_SAMPLE} observations are \`null\`, never 0. Quantiles interpolate linearly between closest ranks (type 7).`;

const SNAPSHOTS = [
  {
    path: '/market/rentals/snapshot',
    listingType: 'rental',
    operationId: 'getRentalMarketSnapshot',
    response: RentalSnapshotResponse,
  },
  {
    path: '/market/sales/snapshot',
    listingType: 'sale',
    operationId: 'getSaleMarketSnapshot',
    response: SaleSnapshotResponse,
  },
] as const;

const TRENDS = [
  { path: '/market/rentals/trends', listingType: 'rental', operationId: 'getRentalMarketTrends' },
  { path: '/market/sales/trends', listingType: 'sale', operationId: 'getSaleMarketTrends' },
] as const;

export interface MarketRouteServices {
  market: MarketService;
  trends: MarketTrends;
}

/** `/market/…`: snapshots, comparisons and trends (public). */
export const marketRoutes: FastifyPluginAsyncTypebox<MarketRouteServices> = async (
  app,
  { market, trends },
) => {
  for (const op of SNAPSHOTS) {
    const listingType: ListingType = op.listingType;
    // The loop's union of response schemas is checked by the serializer and tests.
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
        const q = request.query;
        const { data, meta } = await market.snapshotOf(
          { listingType, areaId: q.areaId, bedrooms: q.bedrooms, buildingType: q.buildingType },
          request.caller.tier,
        );
        // `data` is this operation's snapshot type; TypeScript sees the loop's union of both.
        const body = { data, meta: { ...meta, warnings: [] } };
        return body as never;
      },
    );
  }

  app.get(
    '/market/compare',
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
      const { data, meta } = await market.compare(
        q.listingType === 'sales' ? 'sale' : 'rental',
        q.areas,
        { bedrooms: q.bedrooms, buildingType: q.buildingType },
        request.caller.tier,
      );
      return {
        data: data as CompareResponse['data'],
        meta: { ...meta, warnings: [] },
      };
    },
  );

  for (const op of TRENDS) {
    const listingType: ListingType = op.listingType;
    app.get(
      op.path,
      {
        config: { access: PUBLIC_ROUTE },
        schema: {
          operationId: op.operationId,
          tags: ['Market'],
          summary: `Trend of a ${listingType} market metric in an area`,
          description: `A daily, weekly or monthly series of one metric over ${listingType} listings of an area and its descendants, read from daily snapshots a background job materializes (requests never scan listing history); \`meta.dataAge\` is when it last ran. Days not materialized yet give null points and a note in \`meta.warnings\`. ${FIGURES_NOTE}`,
          querystring: TrendQuery,
          response: { 200: TrendResponse, ...marketErrors },
        },
      },
      async (request) => {
        const q = request.query;
        const { data, meta, warnings } = await trends.trend(
          {
            listingType,
            areaId: q.areaId,
            bedrooms: q.bedrooms,
            metric: q.metric,
            interval: q.interval,
            from: q.from,
            to: q.to,
          },
          request.caller.tier,
        );
        return {
          data,
          meta: { ...meta, warnings },
        };
      },
    );
  }
};
