import { type Static, type StringOptions, type TString, Type } from '@sinclair/typebox';
import { CommaList, listResponse, PageQuery, PatternString } from '../../http/schemas.ts';

export const AREA_INCLUDES = ['children', 'ancestors', 'counts', 'centroid'] as const;
export type AreaInclude = (typeof AREA_INCLUDES)[number];

/**
 * An area as a parameter value: an id, or a slug, name or alias (resolved by
 * `area-input.ts`). Commas separate list items, so no name may contain one.
 */
const AREA_ITEM = "[A-Za-z0-9 .'’&()/-]{1,100}";
const AREA_WORDS =
  "an area id (digits) or an area slug, name or alias (letters, digits, spaces and . ' & ( ) / -); GET /v1/areas?q=<name> finds them";

/** One area parameter (`areaId`): an id, slug, name or alias. */
export function AreaParam(options: Omit<StringOptions, 'pattern'> = {}): TString {
  return PatternString(`^${AREA_ITEM}$`, AREA_WORDS, { maxLength: 100, ...options });
}

/**
 * A comma-separated list of areas, each an id, slug, name or alias: 1 to
 * `maxItems` items, or any number when the service bounds them itself.
 */
export function AreaListParam(
  maxItems: number | null,
  options: Omit<StringOptions, 'pattern'> = {},
): TString {
  const more = maxItems === null ? '*' : `{0,${maxItems - 1}}`;
  const count = maxItems === null ? '' : `1 to ${maxItems} `;
  return PatternString(
    `^${AREA_ITEM}(,${AREA_ITEM})${more}$`,
    `a comma-separated list of ${count}areas, each ${AREA_WORDS}`,
    options,
  );
}

const AreaCore = {
  id: Type.Integer(),
  name: Type.String(),
  level: Type.Integer({ minimum: 0, maximum: 5 }),
  parentId: Type.Union([Type.Integer(), Type.Null()], { description: 'null for the root (id 1).' }),
  slug: Type.String({
    description:
      'Derived from the name (`upper-west-side`), unique in the tree; where names collide the parent slug is appended. Accepted wherever an area id is.',
  }),
};

export const AreaRefSchema = Type.Object(AreaCore, {
  $id: 'AreaRef',
  description: 'An area without includes.',
});

export const AreaSchema = Type.Object(
  {
    ...AreaCore,
    aliases: Type.Array(Type.String(), {
      description:
        'Other names the area is known by (`UWS`, `Bed-Stuy`, `Clinton`), from the hand-maintained alias list; empty when it has none. Every parameter that takes an area accepts them, as it accepts the id, `slug` and `name`.',
    }),
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
        'Name search over names, slugs and aliases (`UWS`, `LIC`, `Bed-Stuy`), ignoring case, accents, spaces and punctuation, and tolerating typos (1 for 4–7 letters, 2 from 8). Ranked: exact matches first, then prefix matches, then substring matches, then typo matches (closest first); equally good matches by level (broader areas first), then id.',
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
