import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../../app-context.ts';
import type { ListingType } from '../../domain/listing.ts';
import { PUBLIC_ROUTE } from '../../http/access.ts';
import {
  capPerPage,
  listBodyFromFragments,
  paginatedMeta,
  paramNames,
  sendJsonText,
} from '../../http/envelope.ts';
import { assertPageInRange } from '../../http/pagination.ts';
import { freshnessWithRefresh } from '../freshness/freshness-policy.ts';
import { RentalSearchQuery, SaleSearchQuery, SearchResponse, searchErrors } from './search.schema.ts';
import type { SearchQuery } from './search.service.ts';

const OPERATIONS = [
  {
    path: '/v1/search/rentals',
    listingType: 'rental',
    operationId: 'searchRentals',
    summary: 'Search rental listings',
    querystring: RentalSearchQuery,
  },
  {
    path: '/v1/search/sales',
    listingType: 'sale',
    operationId: 'searchSales',
    summary: 'Search sale listings',
    querystring: SaleSearchQuery,
  },
] as const;

export function registerSearchRoutes(app: FastifyInstance, ctx: AppContext): void {
  for (const op of OPERATIONS) {
    const known = paramNames(op.querystring);
    const listingType: ListingType = op.listingType;
    app.withTypeProvider<TypeBoxTypeProvider>().get(
      op.path,
      {
        config: { access: PUBLIC_ROUTE },
        schema: {
          operationId: op.operationId,
          tags: ['Search'],
          summary: op.summary,
          description:
            'Active listings by default. Every range is inclusive; `areas` includes descendants; list parameters are comma-separated (any of, except `amenities`: all of). Results are paged with stable ordering (ties broken by id). Unknown parameters are ignored with a warning in `meta.warnings`.',
          querystring: op.querystring,
          response: { 200: SearchResponse, ...searchErrors },
        },
      },
      async (request, reply) => {
        const query = request.query as SearchQuery;
        const criteria = ctx.search.toCriteria(listingType, query);
        const capped = capPerPage(query.perPage ?? 10, request.caller.maxPerPage);
        const page = { page: query.page ?? 1, perPage: capped.perPage };
        const result = await ctx.search.search(
          criteria,
          page.page,
          page.perPage,
          await ctx.dataVersion.version(),
        );
        assertPageInRange(page, result.total);
        const freshness = freshnessWithRefresh(ctx.refresher, {
          tier: request.caller.tier,
          kind: 'search',
          refreshedAt: await ctx.dataVersion.refreshedAt(
            listingType === 'rental' ? 'search:rental' : 'search:sale',
          ),
          now: criteria.now,
          target: { kind: 'search', listingType },
          detailScraped: result.allDetailScraped,
        });
        const meta = paginatedMeta(
          request,
          ctx.config.publicUrl,
          freshness,
          page,
          result.total,
          known,
          capped.warnings,
        );
        // Listings arrive pre-serialized from the summary cache; the body is spliced
        // rather than re-encoded. Tests validate it against SearchResponse.
        return sendJsonText(reply as FastifyReply, listBodyFromFragments(result.items, meta));
      },
    );
  }
}
