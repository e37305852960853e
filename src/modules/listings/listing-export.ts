/**
 * Listing pages as CSV and GeoJSON: the one place that turns ListingSummary
 * objects into those formats, used by search and building listings alike.
 * Pure functions; negotiation, headers and the generic CSV writer are in
 * src/http/formats.ts.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { PaginatedMeta } from '../../http/envelope.ts';
import { type CsvColumn, encodeCsv, type ListFormat, sendExport } from '../../http/formats.ts';
import { PaginatedMetaSchema } from '../../http/schemas.ts';
import { type ListingSummary, ListingSummarySchema } from './listing.schema.ts';

/**
 * A summary as a list serves it. `distance` (metres from the `near` point) is
 * present only on searches that measure one.
 */
export type ExportedListing = ListingSummary & { distance?: number | null };

type Column = CsvColumn<ExportedListing>;

/** Every CSV column but the optional `distance`, in order; named as the JSON fields they copy. */
export const LISTING_CSV_COLUMNS: readonly Column[] = [
  { name: 'id', value: (l) => l.id },
  { name: 'listingType', value: (l) => l.listingType },
  { name: 'status', value: (l) => l.status },
  { name: 'street', value: (l) => l.address.street },
  { name: 'unit', value: (l) => l.address.unit },
  { name: 'city', value: (l) => l.address.city },
  { name: 'state', value: (l) => l.address.state },
  { name: 'zipCode', value: (l) => l.address.zipCode },
  { name: 'areaId', value: (l) => l.areaId },
  { name: 'areaName', value: (l) => l.areaName },
  { name: 'latitude', value: (l) => l.geoPoint.latitude },
  { name: 'longitude', value: (l) => l.geoPoint.longitude },
  { name: 'price', value: (l) => l.price },
  { name: 'netEffective', value: (l) => l.netEffective },
  { name: 'monthsFree', value: (l) => l.monthsFree },
  { name: 'leaseTermMonths', value: (l) => l.leaseTermMonths },
  { name: 'monthlyCost', value: (l) => l.monthlyCost },
  { name: 'priceDelta', value: (l) => l.priceDelta },
  { name: 'bedroomCount', value: (l) => l.bedroomCount },
  { name: 'fullBathroomCount', value: (l) => l.fullBathroomCount },
  { name: 'halfBathroomCount', value: (l) => l.halfBathroomCount },
  { name: 'sqft', value: (l) => l.sqft },
  { name: 'pricePerSqft', value: (l) => l.pricePerSqft },
  { name: 'buildingType', value: (l) => l.buildingType },
  { name: 'saleType', value: (l) => l.saleType },
  { name: 'noFee', value: (l) => l.noFee },
  { name: 'listedAt', value: (l) => l.listedAt },
  { name: 'listedAtIsApproximate', value: (l) => l.listedAtIsApproximate },
  { name: 'availableAt', value: (l) => l.availableAt },
  { name: 'daysOnMarket', value: (l) => l.daysOnMarket },
  { name: 'buildingId', value: (l) => l.buildingId },
  { name: 'sourceGroupLabel', value: (l) => l.sourceGroupLabel },
  { name: 'urlPath', value: (l) => l.urlPath },
];

const DISTANCE_COLUMN: Column = { name: 'distance', value: (l) => l.distance };

/** The CSV columns as documented in the OpenAPI `format` parameter and the README. */
export const LISTING_CSV_DOC = `CSV columns, in this order, each a copy of the ListingSummary field of the same name (address parts from \`address\`, \`latitude\`/\`longitude\` from \`geoPoint\`): ${LISTING_CSV_COLUMNS.map((c) => `\`${c.name}\``).join(', ')}, then \`distance\` on searches that measure one. Empty cell: null. Booleans: \`true\`/\`false\`. Text starting with \`=\`, \`+\`, \`-\`, \`@\`, a tab or a CR gets a leading \`'\` so spreadsheets do not run it as a formula (numbers are never changed). Not in CSV: \`buildingScores\`, \`leadPhotoKey\`, \`detailScraped\` (JSON and GeoJSON have them).`;

/** A page of listings as CSV (`distance` is added as the last column when the listings carry one). */
export function listingsCsv(listings: readonly ExportedListing[]): string {
  const measured = listings.some((l) => typeof l.distance === 'number');
  return encodeCsv(measured ? [...LISTING_CSV_COLUMNS, DISTANCE_COLUMN] : LISTING_CSV_COLUMNS, listings);
}

interface PointGeometry {
  type: 'Point';
  coordinates: [number, number];
}

/** RFC 7946 §3.1.1 position order: longitude, latitude. A listing without coordinates has no geometry. */
function pointOf(geoPoint: ListingSummary['geoPoint'] | null | undefined): PointGeometry | null {
  if (!geoPoint || !Number.isFinite(geoPoint.longitude) || !Number.isFinite(geoPoint.latitude)) return null;
  return { type: 'Point', coordinates: [geoPoint.longitude, geoPoint.latitude] };
}

/**
 * A page of listings as an RFC 7946 FeatureCollection: one Feature per
 * listing (`id` the listing id, `properties` the ListingSummary without
 * `geoPoint`, which is the geometry), and the JSON page's `meta` as a
 * foreign member.
 */
export function listingsFeatureCollection(listings: readonly ExportedListing[], meta: PaginatedMeta): string {
  const features = listings.map((listing) => {
    const { geoPoint, ...properties } = listing;
    return { type: 'Feature', id: listing.id, geometry: pointOf(geoPoint), properties };
  });
  return JSON.stringify({ type: 'FeatureCollection', features, meta });
}

export const ListingFeatureCollectionSchema = Type.Object(
  {
    type: Type.Literal('FeatureCollection'),
    features: Type.Array(
      Type.Object({
        type: Type.Literal('Feature'),
        id: Type.String({ description: 'The listing id.' }),
        geometry: Type.Union(
          [
            Type.Object({
              type: Type.Literal('Point'),
              coordinates: Type.Array(Type.Number(), {
                minItems: 2,
                maxItems: 2,
                description: '[longitude, latitude] (RFC 7946 order).',
              }),
            }),
            Type.Null(),
          ],
          { description: 'The listing location; null when it has no coordinates.' },
        ),
        properties: Type.Composite(
          [
            Type.Omit(ListingSummarySchema, ['geoPoint']),
            Type.Object({
              distance: Type.Optional(
                Type.Union([Type.Number(), Type.Null()], {
                  description: 'Metres from the `near` point, on searches that measure one.',
                }),
              ),
            }),
          ],
          { description: 'The ListingSummary fields (nested as in JSON) except `geoPoint`.' },
        ),
      }),
    ),
    meta: Type.Ref(PaginatedMetaSchema, {
      description: 'The JSON page’s `meta` (an RFC 7946 foreign member).',
    }),
  },
  { $id: 'ListingFeatureCollection', description: 'A page of listings as a GeoJSON FeatureCollection.' },
);

/**
 * The 200 response of a listing list in its three representations; Fastify
 * serializes JSON with `json` and picks it by the reply's Content-Type (the
 * exports are sent as encoded buffers and skip serialization).
 */
export function listingListContent<T extends TSchema>(json: T) {
  return {
    description: 'A page of listings: JSON (default), CSV or GeoJSON (see the `format` parameter).',
    content: {
      'application/json': { schema: json },
      'text/csv': { schema: Type.String({ description: 'RFC 4180 CSV with a header row.' }) },
      'application/geo+json': { schema: Type.Ref(ListingFeatureCollectionSchema) },
    },
  };
}

/** The listings of a search page, from the summary cache's serialized fragments (one parse for the page). */
export function listingsFromFragments(fragments: readonly Buffer[]): ExportedListing[] {
  const parts: Buffer[] = [Buffer.from('[')];
  fragments.forEach((fragment, i) => {
    if (i > 0) parts.push(Buffer.from(','));
    parts.push(fragment);
  });
  parts.push(Buffer.from(']'));
  return JSON.parse(Buffer.concat(parts).toString('utf8')) as ExportedListing[];
}

/** Sends a page of listings as CSV or GeoJSON, with the paging headers, as `<fileStem>.csv|geojson`. */
export function sendListingExport(
  reply: FastifyReply,
  format: Exclude<ListFormat, 'json'>,
  listings: readonly ExportedListing[],
  meta: PaginatedMeta,
  fileStem: string,
): FastifyReply {
  const body = format === 'csv' ? listingsCsv(listings) : listingsFeatureCollection(listings, meta);
  return sendExport(reply, format, body, meta, fileStem);
}
