import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ListingType } from '../../domain/listing.ts';
import { PUBLIC_ROUTE } from '../../http/access.ts';
import {
  capPerPage,
  listBodyFromFragments,
  paginatedMeta,
  paramNames,
  sendJsonText,
} from '../../http/envelope.ts';
import { negotiateListFormat, varyOnAccept } from '../../http/formats.ts';
import { assertPageInRange } from '../../http/pagination.ts';
import type { ResponseSlabs } from '../../http/response-slabs.ts';
import { ErrorResponse } from '../../http/schemas.ts';
import { listingFromFragment, listingListContent, sendListingExport } from '../listings/listing-export.ts';
import { RentalSearchQuery, SaleSearchQuery, SearchResponse, searchErrors } from './search.schema.ts';
import { DISTANCE_MEMBER, type SearchQuery, type SearchService } from './search.service.ts';

const OPERATIONS = [
  {
    path: '/search/rentals',
    listingType: 'rental',
    operationId: 'searchRentals',
    summary: 'Search rental listings',
    querystring: RentalSearchQuery,
    exportName: 'rentals',
  },
  {
    path: '/search/sales',
    listingType: 'sale',
    operationId: 'searchSales',
    summary: 'Search sale listings',
    querystring: SaleSearchQuery,
    exportName: 'sales',
  },
] as const;

export interface SearchRouteServices {
  search: SearchService;
  /** Origin of pagination links (PUBLIC_URL). */
  publicUrl: string;
  /** Memory the JSON page is assembled in. */
  slabs: ResponseSlabs;
}

/** `/search/rentals`, `/search/sales`: listing search (public, Free-tier limits without a key). */
export const searchRoutes: FastifyPluginAsyncTypebox<SearchRouteServices> = async (
  app,
  { search, publicUrl, slabs },
) => {
  for (const op of OPERATIONS) {
    const known = paramNames(op.querystring);
    const listingType: ListingType = op.listingType;
    app.get(
      op.path,
      {
        config: { access: PUBLIC_ROUTE },
        schema: {
          operationId: op.operationId,
          tags: ['Search'],
          summary: op.summary,
          description:
            'Active listings by default. Every range is inclusive; `areas` includes descendants; list parameters are comma-separated (any of, except `amenities`: all of). Results are paged with stable ordering (ties broken by id). Unknown parameters are a 400 naming them (with the closest known one); enum values are case-insensitive.',
          querystring: op.querystring,
          response: { 200: listingListContent(SearchResponse), 406: ErrorResponse, ...searchErrors },
        },
      },
      async (request, reply) => {
        const query = request.query as SearchQuery;
        varyOnAccept(reply);
        const format = negotiateListFormat(query.format, request.headers.accept);
        const capped = capPerPage(query.perPage ?? 10, request.caller.maxPerPage);
        const page = { page: query.page ?? 1, perPage: capped.perPage };
        // Page and body live in slabs returned to the pool when the response has been written.
        const memory = slabs.memoryFor(reply.raw);
        // JSON splices each result's distance while writing the body (no memory for the
        // service to splice them in); exports take them spliced.
        const result = await search.find(
          listingType,
          query,
          page,
          request.caller.tier,
          format === 'json' ? null : memory,
        );
        assertPageInRange(page, result.total);
        const meta = paginatedMeta(
          request,
          publicUrl,
          result.meta,
          page,
          result.total,
          known,
          capped.warnings,
        );
        if (format !== 'json') {
          const stem = `${op.exportName}-page-${page.page}`;
          return sendListingExport(reply, format, result.items, listingFromFragment, meta, stem);
        }
        // Listings arrive pre-serialized from the summary cache; the body is spliced
        // rather than re-encoded. Tests validate it against SearchResponse.
        const distances = result.distances && { prefix: DISTANCE_MEMBER, values: result.distances };
        return sendJsonText(reply, listBodyFromFragments(result.items, meta, memory, distances));
      },
    );
  }
};
