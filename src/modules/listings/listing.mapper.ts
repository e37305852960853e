import { daysOnMarket, nyDate } from '../../domain/listing.ts';
import type { BuildingScoresRow, ListingRow } from '../../platform/db/tables.ts';
import type { ListingSummary } from './listing.schema.ts';

/** The listing columns a summary needs (search selects exactly these). */
export const SUMMARY_COLUMNS = [
  'id',
  'listing_type',
  'status',
  'building_id',
  'area_id',
  'street',
  'unit',
  'city',
  'state',
  'zip_code',
  'latitude',
  'longitude',
  'url_path',
  'building_type',
  'price',
  'price_delta',
  'net_effective',
  'months_free',
  'lease_term_months',
  'monthly_cost',
  'no_fee',
  'sale_type',
  'bedroom_count',
  'full_bathroom_count',
  'half_bathroom_count',
  'sqft',
  'price_per_sqft',
  'listed_at',
  'listed_at_is_approximate',
  'available_at',
  'off_market_at',
  'contract_at',
  'lead_photo_key',
  'source_group_label',
  'detail_scraped',
] as const satisfies readonly (keyof ListingRow)[];

export type SummaryRow = Pick<ListingRow, (typeof SUMMARY_COLUMNS)[number]>;

/** The one days-on-market rule (New York's calendar), re-exported for the mappers' callers. */
export { daysOnMarket };

const NO_SCORES = {
  healthScore: null,
  noiseScore: null,
  safetyScore: null,
  transitScore: null,
  violationsOpen: null,
  updatedAt: null,
};

/** The one mapping from a stored listing row to the API's ListingSummary. */
export function toListingSummary(
  row: SummaryRow,
  areaName: string,
  scores: BuildingScoresRow | undefined,
  now: Date,
): ListingSummary {
  return {
    id: row.id,
    address: { street: row.street, unit: row.unit, city: row.city, state: row.state, zipCode: row.zip_code },
    price: row.price,
    netEffective: row.net_effective,
    monthsFree: row.months_free,
    leaseTermMonths: row.lease_term_months,
    monthlyCost: row.monthly_cost,
    bedroomCount: row.bedroom_count,
    fullBathroomCount: row.full_bathroom_count,
    halfBathroomCount: row.half_bathroom_count,
    sqft: row.sqft,
    pricePerSqft: row.price_per_sqft === null ? null : Math.round(row.price_per_sqft * 100) / 100,
    buildingType: row.building_type as ListingSummary['buildingType'],
    saleType: row.sale_type,
    areaName,
    areaId: row.area_id,
    status: row.status,
    geoPoint: { latitude: row.latitude, longitude: row.longitude },
    leadPhotoKey: row.lead_photo_key,
    sourceGroupLabel: row.source_group_label,
    urlPath: row.url_path,
    listingType: row.listing_type,
    // The New York date, so that daysOnMarket is today's NY date minus this one.
    listedAt: row.listed_at ? nyDate(Date.parse(row.listed_at)) : null,
    listedAtIsApproximate: row.listed_at_is_approximate === 1,
    availableAt: row.available_at,
    daysOnMarket: daysOnMarket(row, now),
    buildingId: row.building_id,
    buildingScores: scores
      ? {
          healthScore: scores.health_score,
          noiseScore: scores.noise_score,
          safetyScore: scores.safety_score,
          transitScore: scores.transit_score,
          violationsOpen: scores.violations_open,
          updatedAt: scores.updated_at,
        }
      : NO_SCORES,
    noFee: row.no_fee === 1,
    detailScraped: row.detail_scraped === 1,
    priceDelta: row.price_delta,
  };
}
