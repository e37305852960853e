/**
 * Listing pages as CSV and GeoJSON: the one place that turns ListingSummary
 * objects into those formats, used by search and building listings alike.
 * Pure functions; negotiation, headers and the generic CSV writer are in
 * src/http/formats.ts.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { PaginatedMeta } from '../../http/envelope.ts';
import { type CsvColumn, csvHeader, csvRecords, type ListFormat, sendExport } from '../../http/formats.ts';
import { PaginatedMetaSchema } from '../../http/schemas.ts';
import { type ListingSummary, ListingSummarySchema } from './listing.schema.ts';

/** A summary as a list serves it (`distance` only on searches with `near`). */
export type ExportedListing = ListingSummary;

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

/**
 * The CSV columns of a page: `distance` is added as the last one when the
 * listings measure one (a search from a point gives every listing one; the
 * first slice of the page decides, as the header row is written with it).
 */
function csvColumnsFor(firstSlice: readonly ExportedListing[]): readonly Column[] {
  const measured = firstSlice.some((listing) => typeof listing.distance === 'number');
  return measured ? [...LISTING_CSV_COLUMNS, DISTANCE_COLUMN] : LISTING_CSV_COLUMNS;
}

/** A page of listings as CSV. */
export function listingsCsv(listings: readonly ExportedListing[]): string {
  const columns = csvColumnsFor(listings.slice(0, EXPORT_SLICE));
  return csvHeader(columns) + csvRecords(columns, listings);
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

/** One listing as a Feature: `id` the listing id, `properties` the summary without `geoPoint` (the geometry). */
function featureJson(listing: ExportedListing): string {
  const { geoPoint, ...properties } = listing;
  return JSON.stringify({ type: 'Feature', id: listing.id, geometry: pointOf(geoPoint), properties });
}

const COLLECTION_OPEN = '{"type":"FeatureCollection","features":[';
const collectionClose = (meta: PaginatedMeta): string => `],"meta":${JSON.stringify(meta)}}`;

/**
 * A page of listings as an RFC 7946 FeatureCollection, one Feature per
 * listing, with the JSON page's `meta` as a foreign member.
 */
export function listingsFeatureCollection(listings: readonly ExportedListing[], meta: PaginatedMeta): string {
  return COLLECTION_OPEN + listings.map(featureJson).join(',') + collectionClose(meta);
}

/**
 * Listings decoded and encoded per slice of an export. A page is at most 500
 * listings (about 0.5 MB of JSON); encoding it in one go would hold the event
 * loop for several milliseconds, a slice of this many for a fraction of one.
 */
export const EXPORT_SLICE = 100;

/**
 * The text of an export, a slice at a time with a turn of the event loop
 * between slices: the same bytes as `listingsCsv`/`listingsFeatureCollection`.
 * `toListing` turns an item into its summary (search pages hold serialized
 * fragments, decoded here slice by slice rather than all at once).
 */
export async function* listingExportChunks<T>(
  format: Exclude<ListFormat, 'json'>,
  items: readonly T[],
  toListing: (item: T) => ExportedListing,
  meta: PaginatedMeta,
): AsyncGenerator<string> {
  let columns: readonly Column[] = LISTING_CSV_COLUMNS;
  for (let start = 0; start === 0 || start < items.length; start += EXPORT_SLICE) {
    if (start > 0) await nextTurn();
    const listings = items.slice(start, start + EXPORT_SLICE).map(toListing);
    if (format === 'csv') {
      if (start === 0) columns = csvColumnsFor(listings);
      yield (start === 0 ? csvHeader(columns) : '') + csvRecords(columns, listings);
    } else {
      const features = listings.map(featureJson).join(',');
      yield start === 0 ? COLLECTION_OPEN + features : `,${features}`;
    }
  }
  if (format === 'geojson') yield collectionClose(meta);
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
        properties: Type.Omit(ListingSummarySchema, ['geoPoint'], {
          description: 'The ListingSummary fields (nested as in JSON) except `geoPoint`.',
        }),
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
    description:
      'A page of listings: JSON (default), CSV or GeoJSON (see the `format` parameter). CSV and GeoJSON carry the paging metadata in headers: `Link` (RFC 8288: first, prev, next, last), `X-Total-Count`, `X-Page`, `X-Per-Page`, and `X-Stoop-Warnings` (a JSON array of strings, only when there are warnings); they are sent as a download (`Content-Disposition: attachment; filename="…-page-N.csv"`).',
    content: {
      'application/json': { schema: json },
      'text/csv': { schema: Type.String({ description: 'RFC 4180 CSV with a header row.' }) },
      'application/geo+json': { schema: Type.Ref(ListingFeatureCollectionSchema) },
    },
  };
}

/** A listing from the summary cache's serialized fragment (search pages). */
export function listingFromFragment(fragment: Buffer): ExportedListing {
  return JSON.parse(fragment.toString('utf8')) as ExportedListing;
}

/** Sends a page of listings as CSV or GeoJSON, with the paging headers, as `<fileStem>.csv|geojson`. */
export function sendListingExport<T>(
  reply: FastifyReply,
  format: Exclude<ListFormat, 'json'>,
  items: readonly T[],
  toListing: (item: T) => ExportedListing,
  meta: PaginatedMeta,
  fileStem: string,
): FastifyReply {
  return sendExport(reply, format, listingExportChunks(format, items, toListing, meta), meta, fileStem);
}
