import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PUBLIC_ROUTE } from '../../http/access.ts';
import {
  capPerPage,
  listBodyFromFragments,
  paginatedMeta,
  paramNames,
  sendJsonText,
} from '../../http/envelope.ts';
import { assertPageInRange } from '../../http/pagination.ts';
import { readErrors } from '../../http/schemas.ts';
import { type AreaInclude, ListAreasQuery, ListAreasResponse } from './areas.schema.ts';
import type { AreasService } from './areas.service.ts';

const KNOWN = paramNames(ListAreasQuery);

export interface AreaRouteServices {
  areas: AreasService;
  /** Origin of pagination links (PUBLIC_URL). */
  publicUrl: string;
}

/** `/areas`: the area tree (public). */
export const areaRoutes: FastifyPluginAsyncTypebox<AreaRouteServices> = async (app, { areas, publicUrl }) => {
  app.get(
    '/areas',
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
    async (request, reply) => {
      const query = request.query;
      const capped = capPerPage(query.perPage ?? 10, request.caller.maxPerPage);
      const page = { page: query.page ?? 1, perPage: capped.perPage };
      const include = new Set((query.include?.split(',') ?? []) as AreaInclude[]);
      const result = await areas.list({ ...query, include, ...page, tier: request.caller.tier });
      assertPageInRange(page, result.total);
      const meta = paginatedMeta(request, publicUrl, result.meta, page, result.total, KNOWN, capped.warnings);
      // Areas without counts arrive serialized (cached with the tree): spliced, not encoded
      // again. Tests validate such bodies against ListAreasResponse.
      if (result.json) return sendJsonText(reply, listBodyFromFragments(result.json, meta));
      return { data: [...result.items], meta };
    },
  );
};
