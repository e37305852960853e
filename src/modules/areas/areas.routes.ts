import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.ts';
import { describeFreshness } from '../../domain/freshness.ts';
import { PUBLIC_ROUTE } from '../../http/access.ts';
import { capPerPage, paginatedMeta, paramNames } from '../../http/envelope.ts';
import { assertPageInRange } from '../../http/pagination.ts';
import { readErrors } from '../../http/schemas.ts';
import { type AreaInclude, ListAreasQuery, ListAreasResponse } from './areas.schema.ts';

const KNOWN = paramNames(ListAreasQuery);

export function registerAreaRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/v1/areas',
    {
      config: { access: PUBLIC_ROUTE },
      schema: {
        operationId: 'listAreas',
        tags: ['Areas'],
        summary: 'List and search the area tree',
        description:
          'The 349-row tree of regions, boroughs and neighborhoods (NYC and Northern New Jersey). Filter by `level` or `parentId`, search by name with `q`, and add `include` extras. Paging through all pages without filters yields every row, ordered by id.',
        querystring: ListAreasQuery,
        response: { 200: ListAreasResponse, ...readErrors },
      },
    },
    async (request) => {
      const query = request.query;
      const capped = capPerPage(query.perPage ?? 10, request.caller.maxPerPage);
      const page = { page: query.page ?? 1, perPage: capped.perPage };
      const include = new Set((query.include?.split(',') ?? []) as AreaInclude[]);
      const result = await ctx.areas.list({
        ...query,
        include,
        ...page,
        dataVersion: await ctx.dataVersion.version(),
      });
      assertPageInRange(page, result.total);
      const freshness = describeFreshness({
        tier: request.caller.tier,
        kind: 'search',
        refreshedAt: await ctx.dataVersion.refreshedAt('areas'),
        now: ctx.clock.now(),
      });
      return {
        data: result.items,
        meta: paginatedMeta(
          request,
          ctx.config.publicUrl,
          freshness,
          page,
          result.total,
          KNOWN,
          capped.warnings,
        ),
      };
    },
  );
}
