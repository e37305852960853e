import { DAY_MS } from './time.ts';

/** Value sets shared by the store, the generator and the API schemas. */
export const LISTING_TYPES = ['rental', 'sale'] as const;
export type ListingType = (typeof LISTING_TYPES)[number];

export const LISTING_STATUSES = ['ACTIVE', 'IN_CONTRACT', 'OFF_MARKET'] as const;
export type ListingStatus = (typeof LISTING_STATUSES)[number];

/**
 * Building types, after StreetEasy's and RESO's PropertySubType vocabularies
 * narrowed to what NYC listings use.
 */
export const BUILDING_TYPES = [
  'CONDO',
  'COOP',
  'CONDOP',
  'RENTAL',
  'TOWNHOUSE',
  'MULTI_FAMILY',
  'HOUSE',
] as const;
export type BuildingType = (typeof BUILDING_TYPES)[number];

export const SALE_TYPES = ['RESALE', 'SPONSOR_UNIT', 'FORECLOSURE'] as const;
export type SaleType = (typeof SALE_TYPES)[number];

/**
 * When a listing's days-on-market value next changes (epoch ms): the next
 * whole day since it was listed while it is ACTIVE; never otherwise (the count
 * stopped). Rendered JSON carrying that value is valid until then.
 */
export function daysOnMarketValidUntil(
  listing: { status: string; listed_at: string | null },
  now: Date,
): number {
  if (listing.status !== 'ACTIVE' || !listing.listed_at) return Number.POSITIVE_INFINITY;
  const listed = Date.parse(listing.listed_at);
  return listed + (Math.floor((now.getTime() - listed) / DAY_MS) + 1) * DAY_MS;
}
