import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { AMENITIES } from '../../domain/amenities.ts';
import { BUILDING_TYPES, LISTING_STATUSES, SALE_TYPES } from '../../domain/listing.ts';
import { formatParam } from '../../http/formats.ts';
import {
  CommaList,
  DateOrDateTimeString,
  listResponse,
  PatternString,
  readErrors,
  StringEnum,
} from '../../http/schemas.ts';
import { AreaListParam } from '../areas/areas.schema.ts';
import { BuildingScoresSummarySchema, ListingSummarySchema } from '../listings/listing.schema.ts';
import { LISTING_CSV_DOC, ListingFeatureCollectionSchema } from '../listings/listing-export.ts';
import { BBOX_PATTERN, DEFAULT_RADIUS_M, MAX_RADIUS_M, NEAR_PATTERN } from './search.geo.ts';

export const SORTS = [
  'RECOMMENDED',
  'PRICE',
  'LISTED_AT',
  'PRICE_PER_SQFT',
  'DAYS_ON_MARKET',
  'DISTANCE',
] as const;
export type SearchSort = (typeof SORTS)[number];
export const SORT_DIRS = ['ASC', 'DESC'] as const;
export type SortDir = (typeof SORT_DIRS)[number];

/** Direction used when `sortDir` is omitted: the order a person browsing expects. */
export const DEFAULT_SORT_DIR: Record<SearchSort, SortDir> = {
  RECOMMENDED: 'DESC',
  PRICE: 'ASC',
  LISTED_AT: 'DESC',
  PRICE_PER_SQFT: 'ASC',
  DAYS_ON_MARKET: 'ASC',
  DISTANCE: 'ASC',
};

const MAX_PRICE = 1_000_000_000;

function commaList(values: readonly string[], description: string) {
  return CommaList(values, { description, maxLength: 2000 });
}

const commonParams = {
  areas: Type.Optional(
    AreaListParam(100, {
      maxLength: 2000,
      description:
        'Comma-separated areas (up to 100), each an area id (numeric), slug, name or common alias, in any case and spacing: `100`, `upper-west-side`, `Upper West Side`, `UWS`, `Bed-Stuy`. Each includes all its descendants: `100` is all of Manhattan, `100,200,300,400,500` all of NYC. Names cannot contain commas. An unknown or ambiguous name is a 400 suggesting the closest areas; `GET /v1/areas?q=<name>` finds ids and names. `meta.areas` says what each resolved to.',
    }),
  ),
  minPrice: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_PRICE, description: 'Inclusive, USD.' })),
  maxPrice: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_PRICE, description: 'Inclusive, USD.' })),
  minBeds: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, description: 'Inclusive; 0 is a studio.' })),
  maxBeds: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, description: 'Inclusive.' })),
  minBaths: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 20,
      multipleOf: 0.5,
      description: 'Inclusive; a half bath counts 0.5.',
    }),
  ),
  maxBaths: Type.Optional(
    Type.Number({ minimum: 0, maximum: 20, multipleOf: 0.5, description: 'Inclusive.' }),
  ),
  buildingType: Type.Optional(
    commaList(BUILDING_TYPES, `Comma-separated, any of: ${BUILDING_TYPES.join(', ')}.`),
  ),
  minDaysOnMarket: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 3650, description: 'Inclusive, whole days.' }),
  ),
  maxDaysOnMarket: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 3650, description: 'Inclusive, whole days.' }),
  ),
  listedAfter: Type.Optional(
    DateOrDateTimeString({
      description:
        'Inclusive. A date (`2026-11-01`: from the start of that day in New York, the calendar `listedAt` is given in) or an ISO 8601 date-time. Listings with an unknown listing date never match.',
    }),
  ),
  listedBefore: Type.Optional(
    DateOrDateTimeString({
      description: 'Inclusive. A date (through the end of that day in New York) or an ISO 8601 date-time.',
    }),
  ),
  hasOpenHouse: Type.Optional(
    Type.Boolean({ description: '`true`: has an open house scheduled in the future.' }),
  ),
  has3dTour: Type.Optional(Type.Boolean()),
  minSqft: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 100000,
      description: 'Inclusive; listings without a size never match.',
    }),
  ),
  maxSqft: Type.Optional(Type.Integer({ minimum: 0, maximum: 100000, description: 'Inclusive.' })),
  petsAllowed: Type.Optional(Type.Boolean({ description: '`true`: cats or dogs allowed.' })),
  amenities: Type.Optional(
    commaList(AMENITIES, `Comma-separated; every one must be present. Any of: ${AMENITIES.join(', ')}.`),
  ),
  maxMonthlyCost: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_PRICE,
      description:
        "Inclusive, USD per month; compares each listing's `monthlyCost`. Rentals: rent plus the monthly fees every tenant pays (`REQUIRED` monthly fees such as an amenity fee); conditional fees that apply only to some tenants, such as pet rent, are excluded (they are listed with `requirement: CONDITIONAL` by `GET /property/{id}/fees`). Sales: maintenance or common charges plus real estate taxes (no mortgage).",
    }),
  ),
  minTransitScore: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 100,
      description: "Building's transit score; unknown scores never match.",
    }),
  ),
  fiberOnly: Type.Optional(
    Type.Boolean({
      description: '`true`: the building has a fiber-to-the-premises provider (FCC technology 50).',
    }),
  ),
  minDownloadMbps: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100000,
      description: 'Fastest advertised download speed of any provider at the building, in Mbps.',
    }),
  ),
  bbox: Type.Optional(
    PatternString(BBOX_PATTERN, 'four decimals: minLng,minLat,maxLng,maxLat', {
      maxLength: 200,
      description:
        'Bounding box in GeoJSON order (RFC 7946), **longitude first**: `minLng,minLat,maxLng,maxLat`, e.g. `-74.02,40.70,-73.97,40.76` (lower Manhattan). Inclusive; longitudes in [-180, 180], latitudes in [-90, 90], min < max on each axis (a degenerate box is a 400; boxes crossing the antimeridian are not supported). Combines with every other filter, `near` and `areas` included (all must match).',
      examples: ['-74.02,40.70,-73.97,40.76'],
    }),
  ),
  near: Type.Optional(
    PatternString(NEAR_PATTERN, 'two decimals: lat,lng', {
      maxLength: 100,
      description: `A point as maps copy it, **latitude first**: \`lat,lng\`, e.g. \`40.7549,-73.9840\` (Bryant Park). Keeps listings within \`radius\` of it (great-circle distance), and adds \`distance\` (whole metres) to each result. Note the order differs from \`bbox\` (GeoJSON, longitude first).`,
      examples: ['40.7549,-73.9840'],
    }),
  ),
  radius: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_RADIUS_M,
      description: `Metres from \`near\` (inclusive, compared with the rounded \`distance\`); default ${DEFAULT_RADIUS_M.toLocaleString('en-US')}, at most ${MAX_RADIUS_M.toLocaleString('en-US')}. Only with \`near\` (without it, a 400).`,
    }),
  ),
  status: Type.Optional(
    commaList(LISTING_STATUSES, 'Comma-separated statuses to include; default `ACTIVE`.'),
  ),
  sort: Type.Optional(
    StringEnum(SORTS, {
      description:
        '`RECOMMENDED` (default): quality and recency rank. `PRICE`, `LISTED_AT` (unknown dates last), `PRICE_PER_SQFT` (unknown sizes last), `DAYS_ON_MARKET`, `DISTANCE` (from `near`, which it requires). Ties are broken by id, so pages are stable.',
    }),
  ),
  sortDir: Type.Optional(
    StringEnum(SORT_DIRS, {
      description:
        'Default per sort: RECOMMENDED DESC, PRICE ASC, LISTED_AT DESC (newest first), PRICE_PER_SQFT ASC, DAYS_ON_MARKET ASC, DISTANCE ASC (nearest first).',
    }),
  ),
  page: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100000,
      default: 1,
      description:
        '1-indexed page. Only the first 10,000 results of a search are served (`page × perPage` ≤ 10,000); narrow the search (areas, price, `listedAfter`/`listedBefore`) to reach listings beyond them.',
    }),
  ),
  perPage: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 500,
      default: 10,
      description: 'Page size, 1–500 (default 10); capped by the caller tier maximum with a warning.',
    }),
  ),
  format: formatParam(LISTING_CSV_DOC),
};

export const RentalSearchQuery = Type.Object({
  ...commonParams,
  noFee: Type.Optional(Type.Boolean({ description: '`true`: no broker fee for the tenant.' })),
});
export type RentalSearchQuery = Static<typeof RentalSearchQuery>;

export const SaleSearchQuery = Type.Object({
  ...commonParams,
  saleType: Type.Optional(commaList(SALE_TYPES, `Comma-separated, any of: ${SALE_TYPES.join(', ')}.`)),
});
export type SaleSearchQuery = Static<typeof SaleSearchQuery>;

export const SearchResponse = listResponse(Type.Ref(ListingSummarySchema));
export type SearchResponse = Static<typeof SearchResponse>;

export const SEARCH_SCHEMAS: TSchema[] = [
  BuildingScoresSummarySchema,
  ListingSummarySchema,
  ListingFeatureCollectionSchema,
];

export const searchErrors = readErrors;
