import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../app-context.ts';
import { keyRoute } from '../../http/access.ts';
import { sendJsonText } from '../../http/envelope.ts';
import { ApiError } from '../../http/errors.ts';
import { DetailFreshness } from './detail-freshness.ts';
import {
  ByUrlQuery,
  detailErrors,
  FeesResponse,
  isResourceId,
  ListingDetailResponse,
  ListingIdParams,
  OpenHousesResponse,
  PriceHistoryResponse,
  RESOURCE_ID_MAX_LENGTH,
} from './property.schema.ts';
import { PropertyService, type ServedJson } from './property.service.ts';

const DATA_OPEN = Buffer.from('{"data":');
const META_OPEN = Buffer.from(',"meta":');

/**
 * Sends `{data, meta}` whose data is already serialized (cached per data
 * version): spliced, not re-encoded. It skips the route serializer, so the
 * route's tests validate these bodies against its response schema.
 */
export function sendServedJson(reply: FastifyReply, served: ServedJson): FastifyReply {
  return sendJsonText(
    reply,
    Buffer.concat([DATA_OPEN, served.json, META_OPEN, Buffer.from(`${JSON.stringify(served.meta)}}`)]),
  );
}

/**
 * Checks the `id` path parameter before schema validation, so a malformed id
 * gets a 400 that says what an id looks like (the schema's pattern documents it).
 */
export function assertPathId(what: 'Listing' | 'Building') {
  return async (request: FastifyRequest): Promise<void> => {
    const id = (request.params as { id?: unknown }).id;
    if (typeof id !== 'string' || !isResourceId(id)) {
      const shown = typeof id === 'string' ? ` (got "${id.slice(0, 40)}${id.length > 40 ? '…' : ''}")` : '';
      throw ApiError.invalidParam({
        parameter: 'id',
        location: 'path',
        rule: 'pattern',
        message: `must be a ${what.toLowerCase()} id: 1 to ${RESOURCE_ID_MAX_LENGTH} digits${shown}`,
      });
    }
  };
}

const FRESHNESS_NOTE =
  '`meta.dataAge` is when the listing was last refreshed from upstream; when it is older than the caller tier detail threshold, a background refresh is started (`meta.refreshTriggered`).';

export function registerPropertyRoutes(app: FastifyInstance, ctx: AppContext): void {
  const service = new PropertyService(
    ctx.store.db,
    ctx.areaTree,
    ctx.clock,
    new DetailFreshness(ctx.refresher, ctx.config.upstream.liveTimeoutMs),
    { photoBaseUrl: ctx.config.photoBaseUrl, publicUrl: ctx.config.publicUrl },
    () => ctx.dataVersion.version(),
  );
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Listings'];
  const checkId = assertPathId('Listing');
  const detailDescription = `The full listing record: every ListingSummary field plus the detail page (description, amenities, unit features, lease terms and concessions or sale details, agents, pets policy, photos, floor plan, tour, building link, status dates). A listing whose detail page has not been fetched answers with its summary fields and \`detailScraped: false\`. Business and Internal callers get live data: the listing is fetched from upstream first (\`meta.source: live\`); if upstream fails or times out the stored copy is served with \`source: stale\`. ${FRESHNESS_NOTE}`;

  typed.get(
    '/v1/property/by-url',
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

  typed.get(
    '/v1/property/:id',
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

  typed.get(
    '/v1/property/:id/history',
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

  typed.get(
    '/v1/property/:id/fees',
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

  typed.get(
    '/v1/property/:id/open-houses',
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
}
