import { type Static, Type } from '@sinclair/typebox';
import { CommaList, listResponse, PageQuery } from '../../http/schemas.ts';

export const AREA_INCLUDES = ['children', 'ancestors', 'counts', 'centroid'] as const;
export type AreaInclude = (typeof AREA_INCLUDES)[number];

const AreaCore = {
  id: Type.Integer(),
  name: Type.String(),
  level: Type.Integer({ minimum: 0, maximum: 5 }),
  parentId: Type.Union([Type.Integer(), Type.Null()], { description: 'null for the root (id 1).' }),
  slug: Type.String(),
};

export const AreaRefSchema = Type.Object(AreaCore, {
  $id: 'AreaRef',
  description: 'An area without includes.',
});

export const AreaSchema = Type.Object(
  {
    ...AreaCore,
    children: Type.Optional(
      Type.Array(Type.Ref(AreaRefSchema), { description: '`include=children`: direct children, by id.' }),
    ),
    ancestors: Type.Optional(
      Type.Array(Type.Ref(AreaRefSchema), {
        description: '`include=ancestors`: from the root down to the parent.',
      }),
    ),
    listingCounts: Type.Optional(
      Type.Object(
        {
          rentals: Type.Integer({ description: 'Active rentals in the area and all its descendants.' }),
          sales: Type.Integer({ description: 'Active sales in the area and all its descendants.' }),
        },
        { description: '`include=counts`.' },
      ),
    ),
    centroid: Type.Optional(
      Type.Union([Type.Object({ latitude: Type.Number(), longitude: Type.Number() }), Type.Null()], {
        description: '`include=centroid`: approximate centre point; null for the root and Unassigned.',
      }),
    ),
  },
  { $id: 'Area' },
);
export type Area = Static<typeof AreaSchema>;

export const ListAreasQuery = Type.Object({
  level: Type.Optional(Type.Integer({ minimum: 0, maximum: 5, description: 'Only areas at this depth.' })),
  parentId: Type.Optional(Type.Integer({ minimum: 1, description: 'Only direct children of this area.' })),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        'Name search, case- and accent-insensitive: exact name matches first, then prefix matches, then substring matches (each group by id).',
    }),
  ),
  include: Type.Optional(
    CommaList(AREA_INCLUDES, {
      maxLength: 200,
      description: `Comma-separated extras per area: ${AREA_INCLUDES.map((i) => `\`${i}\``).join(', ')}.`,
    }),
  ),
  ...PageQuery,
  perPage: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 500, default: 10, description: 'Page size (default 10).' }),
  ),
});
export type ListAreasQuery = Static<typeof ListAreasQuery>;

export const ListAreasResponse = listResponse(Type.Ref(AreaSchema));
