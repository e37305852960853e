import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { keyRoute } from '../../http/access.ts';
import { sendServedJson } from '../../http/envelope.ts';
import { assertPathId } from '../../http/path-id.ts';
import { detailErrors } from '../../http/schemas.ts';
import {
  ByUrlQuery,
  FeesResponse,
  ListingDetailResponse,
  ListingIdParams,
  OpenHousesResponse,
  PriceHistoryResponse,
} from './property.schema.ts';
import type { PropertyService } from './property.service.ts';

const FRESHNESS_NOTE =
  '`meta.dataAge` is when the listing was last refreshed from upstream; when it is older than the caller tier detail threshold, a background refresh is started (`meta.refreshTriggered`).';

export interface PropertyRouteServices {
  property: PropertyService;
}

/** `/property/…`: one listing and its history, fees and open houses (Starter+). */
export const propertyRoutes: FastifyPluginAsyncTypebox<PropertyRouteServices> = async (
  app,
  { property: service },
) => {
  const tags = ['Listings'];
  const checkId = assertPathId('Listing');
  const detailDescription = `The full listing record: every ListingSummary field plus the detail page (description, amenities, unit features, lease terms and concessions or sale details, agents, pets policy, photos, floor plan, tour, building link, status dates). A listing whose detail page has not been fetched answers with its summary fields and \`detailScraped: false\`. Business and Internal callers get live data: the listing is fetched from upstream first (\`meta.source: live\`); if upstream fails or times out the stored copy is served with \`source: stale\`. ${FRESHNESS_NOTE}`;

  app.get(
    '/property/by-url',
    {
      config: { access: keyRoute('STARTER') },
      schema: {
        operationId: 'getListingByUrl',
        tags,
        summary: 'Get a listing by its page URL',
        description: `Same answer as \`GET /v1/property/{id}\` for the listing whose page path (\`urlPath\`) the \`url\` names. A malformed \`url\` is a 400; a well-formed one no listing has is a 404.`,
        querystring: ByUrlQuery,
        response: { 200: ListingDetailResponse, ...detailErrors },
      },
    },
    async (request, reply) =>
      sendServedJson(reply, await service.detailByUrl(request.query.url, request.caller.tier)),
  );

  app.get(
    '/property/:id',
    {
      config: { access: keyRoute('STARTER') },
      preValidation: checkId,
      schema: {
        operationId: 'getListing',
        tags,
        summary: 'Get a listing',
        description: detailDescription,
        params: ListingIdParams,
        response: { 200: ListingDetailResponse, ...detailErrors },
      },
    },
    async (request, reply) =>
      sendServedJson(reply, await service.detail(request.params.id, request.caller.tier)),
  );

  app.get(
    '/property/:id/history',
    {
      config: { access: keyRoute('PRO') },
      preValidation: checkId,
      schema: {
        operationId: 'getListingHistory',
        tags,
        summary: 'Price history of a listing',
        description: `The listing timeline in date order (ties in recording order): listed, price changes, contract, rented or sold, delisted, relisted. \`pctChange\` is the change from the previous event's price; null for the first event. ${FRESHNESS_NOTE}`,
        params: ListingIdParams,
        response: { 200: PriceHistoryResponse, ...detailErrors },
      },
    },
    async (request) => service.history(request.params.id, request.caller.tier),
  );

  app.get(
    '/property/:id/fees',
    {
      config: { access: keyRoute('STARTER') },
      preValidation: checkId,
      schema: {
        operationId: 'getListingFees',
        tags,
        summary: 'Fees of a listing',
        description: `Fees a renter or buyer pays besides rent or price (broker, application, deposits, building and transfer fees, taxes). Empty when none are known, including listings whose detail page has not been fetched (\`meta.detailScraped: false\`). ${FRESHNESS_NOTE}`,
        params: ListingIdParams,
        response: { 200: FeesResponse, ...detailErrors },
      },
    },
    async (request) => service.fees(request.params.id, request.caller.tier),
  );

  app.get(
    '/property/:id/open-houses',
    {
      config: { access: keyRoute('STARTER') },
      preValidation: checkId,
      schema: {
        operationId: 'getListingOpenHouses',
        tags,
        summary: 'Upcoming open houses of a listing',
        description: `Future open houses only: those that have not ended yet (upcoming, or in progress), soonest first. ${FRESHNESS_NOTE}`,
        params: ListingIdParams,
        response: { 200: OpenHousesResponse, ...detailErrors },
      },
    },
    async (request) => service.openHouses(request.params.id, request.caller.tier),
  );
};
