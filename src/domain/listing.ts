import { DAY_MS, HOUR_MS } from './time.ts';

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
 * Days on market are counted on one calendar, New York's: the NY calendar
 * date the count ends on (today while ACTIVE, else the day the listing went
 * into contract or left the market) minus the NY calendar date of `listed_at`,
 * never below 0. A listing listed at 23:30 NY time yesterday has 1 day on
 * market at 00:30 today, although the UTC dates of both instants are the same.
 * The SQL filters (search.repository.ts) and the in-memory index compute the
 * same numbers from `nyDayNumber`/`nyMidnight`.
 */
export const MARKET_TIME_ZONE = 'America/New_York';

const nyDateFormat = new Intl.DateTimeFormat('en-US', {
  timeZone: MARKET_TIME_ZONE,
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
});

/**
 * NY day numbers by UTC hour: New York's offsets are whole hours and its
 * transitions fall on whole UTC hours, so every instant of one UTC hour has the
 * same NY date. Bounded: cleared when full (a working set refills quickly).
 */
const dayByUtcHour = new Map<number, number>();
const DAY_CACHE_LIMIT = 200_000;

/** The New York calendar date of an instant, as days since 1970-01-01. */
export function nyDayNumber(ms: number): number {
  const hour = Math.floor(ms / HOUR_MS);
  const cached = dayByUtcHour.get(hour);
  if (cached !== undefined) return cached;
  let year = 0;
  let month = 0;
  let day = 0;
  for (const part of nyDateFormat.formatToParts(hour * HOUR_MS)) {
    if (part.type === 'year') year = Number(part.value);
    else if (part.type === 'month') month = Number(part.value);
    else if (part.type === 'day') day = Number(part.value);
  }
  const dayNumber = Date.UTC(year, month - 1, day) / DAY_MS;
  if (dayByUtcHour.size >= DAY_CACHE_LIMIT) dayByUtcHour.clear();
  dayByUtcHour.set(hour, dayNumber);
  return dayNumber;
}

/** The New York calendar date (`YYYY-MM-DD`) of an instant. */
export function nyDate(ms: number): string {
  return new Date(nyDayNumber(ms) * DAY_MS).toISOString().slice(0, 10);
}

/** The instant (epoch ms) New York's calendar day `dayNumber` starts. */
export function nyMidnight(dayNumber: number): number {
  // Midnight is 04:00 UTC under daylight time, 05:00 UTC otherwise (NY changes at 02:00).
  const edt = dayNumber * DAY_MS + 4 * HOUR_MS;
  return nyDayNumber(edt) === dayNumber ? edt : edt + HOUR_MS;
}

/** The columns days on market are computed from. */
export interface DaysOnMarketFields {
  status: string;
  listed_at: string | null;
  contract_at?: string | null | undefined;
  off_market_at?: string | null | undefined;
}

/** The instant the days-on-market count ends at: null while it still runs (to now). */
export function daysOnMarketEnd(listing: DaysOnMarketFields): string | null {
  if (listing.status === 'ACTIVE') return null;
  return listing.contract_at ?? listing.off_market_at ?? null;
}

/**
 * Whole days on market on New York's calendar (see MARKET_TIME_ZONE), never
 * below 0; null when the listing date is unknown.
 */
export function daysOnMarket(listing: DaysOnMarketFields, now: Date): number | null {
  if (!listing.listed_at) return null;
  const end = daysOnMarketEnd(listing);
  const endDay = nyDayNumber(end === null ? now.getTime() : Date.parse(end));
  return Math.max(0, endDay - nyDayNumber(Date.parse(listing.listed_at)));
}

/**
 * When a listing's days-on-market value next changes (epoch ms): the next New
 * York midnight while the count runs; never once it stopped (or without a
 * listing date). Rendered JSON carrying that value is valid until then.
 */
export function daysOnMarketValidUntil(listing: DaysOnMarketFields, now: Date): number {
  if (!listing.listed_at || daysOnMarketEnd(listing) !== null) return Number.POSITIVE_INFINITY;
  return nyMidnight(nyDayNumber(now.getTime()) + 1);
}
