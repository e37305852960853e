import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ListingStatus } from '../../domain/listing.ts';
import { keyRoute } from '../../http/access.ts';
import { capPerPage, paginatedMeta, paramNames, sendServedJson } from '../../http/envelope.ts';
import { negotiateListFormat, varyOnAccept } from '../../http/formats.ts';
import { assertPageInRange } from '../../http/pagination.ts';
import { assertPathId } from '../../http/path-id.ts';
import { detailErrors, ErrorResponse } from '../../http/schemas.ts';
import { listingListContent, sendListingExport } from '../listings/listing-export.ts';
import {
  BuildingDetailResponse,
  BuildingIdParams,
  BuildingListingsQuery,
  BuildingListingsResponse,
  BuildingScoresResponse,
  ViolationsResponse,
} from './building.schema.ts';
import { type BuildingService, MAX_VIOLATIONS } from './building.service.ts';

const FRESHNESS_NOTE =
  '`meta.dataAge` is when the building was last refreshed from upstream; when it is older than the caller tier detail threshold, a background refresh of the building is started (`meta.refreshTriggered`).';

export interface BuildingRouteServices {
  building: BuildingService;
  /** Origin of pagination links (PUBLIC_URL). */
  publicUrl: string;
}

/** `/building/…`: one building, its listings, scores and HPD violations (Starter+). */
export const buildingRoutes: FastifyPluginAsyncTypebox<BuildingRouteServices> = async (
  app,
  { building: service, publicUrl },
) => {
  const tags = ['Buildings'];
  const access = keyRoute('STARTER');
  const checkId = assertPathId('Building');

  app.get(
    '/building/:id',
    {
      config: { access },
      preValidation: checkId,
      schema: {
        operationId: 'getBuilding',
        tags,
        summary: 'Get a building',
        description: `The building record: address, type, age and size, amenities, policies, NYC public-record data (community district, police precinct, building class), developer and architect, tax abatement, management, BBL (absent when unknown), likely internet providers from the FCC Broadband Data Collection (with the FCC's required disclaimer) and photos. ${FRESHNESS_NOTE}`,
        params: BuildingIdParams,
        response: { 200: BuildingDetailResponse, ...detailErrors },
      },
    },
    async (request, reply) =>
      sendServedJson(reply, await service.detail(request.params.id, request.caller.tier)),
  );

  const listingsKnown = paramNames(BuildingListingsQuery);
  app.get(
    '/building/:id/listings',
    {
      config: { access },
      preValidation: checkId,
      schema: {
        operationId: 'listBuildingListings',
        tags,
        summary: 'Listings in a building',
        description:
          "The building's listings as ListingSummary rows, newest first (unknown listing dates last, ties by id). `status` (comma-separated) defaults to `ACTIVE` as in search; `listingType` to both. Paged like search: `perPage` is capped by the caller tier maximum with a warning; unknown parameters are a 400. `meta.dataAge` is the age of the oldest row served (building or listing), against the tier search threshold.",
        params: BuildingIdParams,
        querystring: BuildingListingsQuery,
        response: { 200: listingListContent(BuildingListingsResponse), 406: ErrorResponse, ...detailErrors },
      },
    },
    async (request, reply) => {
      const query = request.query;
      varyOnAccept(reply);
      const format = negotiateListFormat(query.format, request.headers.accept);
      const capped = capPerPage(query.perPage ?? 10, request.caller.maxPerPage);
      const page = { page: query.page ?? 1, perPage: capped.perPage };
      const statuses = query.status
        ? ([...new Set(query.status.split(','))] as ListingStatus[])
        : (['ACTIVE'] as ListingStatus[]);
      const result = await service.listings(
        request.params.id,
        request.caller.tier,
        { statuses, listingType: query.listingType },
        page.page,
        page.perPage,
      );
      assertPageInRange(page, result.total);
      const meta = paginatedMeta(
        request,
        publicUrl,
        result.meta,
        page,
        result.total,
        listingsKnown,
        capped.warnings,
      );
      if (format !== 'json') {
        const stem = `building-${request.params.id}-listings-page-${page.page}`;
        return sendListingExport(reply, format, result.items, (listing) => listing, meta, stem);
      }
      return { data: result.items, meta };
    },
  );

  app.get(
    '/building/:id/scores',
    {
      config: { access },
      preValidation: checkId,
      schema: {
        operationId: 'getBuildingScores',
        tags,
        summary: 'Building scores',
        description: `Composite scores 0–100 (higher is better) derived from public city data and updated weekly: health (HPD violations), noise (complaints within 200 m), safety (crime within 400 m), transit (subway and bus access). A score the building lacks is null. ${FRESHNESS_NOTE}`,
        params: BuildingIdParams,
        response: { 200: BuildingScoresResponse, ...detailErrors },
      },
    },
    async (request) => service.scores(request.params.id, request.caller.tier),
  );

  app.get(
    '/building/:id/violations',
    {
      config: { access },
      preValidation: checkId,
      schema: {
        operationId: 'listBuildingViolations',
        tags,
        summary: 'HPD violations of a building',
        description: `NYC HPD housing maintenance code violations linked to the building by its BBL, newest inspection first (at most ${MAX_VIOLATIONS}; a warning says when more exist). A building without a known BBL answers 200 with an empty list and a \`meta.warnings\` entry saying no BBL is known, so clients need no special case. ${FRESHNESS_NOTE}`,
        params: BuildingIdParams,
        response: { 200: ViolationsResponse, ...detailErrors },
      },
    },
    async (request) => {
      const { data, meta, warnings } = await service.violations(request.params.id, request.caller.tier);
      return { data, meta: { ...meta, warnings } };
    },
  );
};
