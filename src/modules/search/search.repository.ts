import {
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type SelectQueryBuilder,
  type SqlBool,
  sql,
} from 'kysely';
import { EARTH_RADIUS_M } from '../../domain/geo.ts';
import {
  type ListingStatus,
  type ListingType,
  MARKET_TIME_ZONE,
  nyDayNumber,
  nyMidnight,
} from '../../domain/listing.ts';
import type { Dialect } from '../../platform/db/database.ts';
import type { BuildingScoresRow, Database } from '../../platform/db/tables.ts';
import { SUMMARY_COLUMNS, type SummaryRow } from '../listings/listing.mapper.ts';
import { candidateBox, type GeoCriteria, type NearCircle, TO_RADIANS } from './search.geo.ts';
import type { SearchSort, SortDir } from './search.schema.ts';

/** Search criteria in storage terms: every bound inclusive, every list an OR, absent means unfiltered. */
export interface SearchCriteria {
  listingType: ListingType;
  statuses: readonly ListingStatus[];
  areaIds: readonly number[] | null;
  minPrice?: number | undefined;
  maxPrice?: number | undefined;
  minBeds?: number | undefined;
  maxBeds?: number | undefined;
  minBaths?: number | undefined;
  maxBaths?: number | undefined;
  buildingTypes?: readonly string[] | undefined;
  saleTypes?: readonly string[] | undefined;
  noFee?: boolean | undefined;
  minDaysOnMarket?: number | undefined;
  maxDaysOnMarket?: number | undefined;
  /** Inclusive ISO instants. */
  listedFrom?: string | undefined;
  listedTo?: string | undefined;
  hasOpenHouse?: boolean | undefined;
  has3dTour?: boolean | undefined;
  minSqft?: number | undefined;
  maxSqft?: number | undefined;
  petsAllowed?: boolean | undefined;
  amenityMask?: number | undefined;
  maxMonthlyCost?: number | undefined;
  minTransitScore?: number | undefined;
  fiberOnly?: boolean | undefined;
  minDownloadMbps?: number | undefined;
  /** `bbox` / `near` + `radius` (see search.geo.ts); absent or null: no geo filter. */
  geo?: GeoCriteria | null | undefined;
  sort: SearchSort;
  sortDir: SortDir;
  /** Reference instant for days on market and open houses. */
  now: Date;
}

type ListingQuery = SelectQueryBuilder<Database, 'listings' | 'buildings' | 'building_scores', object>;
type Eb = ExpressionBuilder<Database, 'listings'>;

/**
 * The New York calendar date of an ISO instant, as SQL. PostgreSQL converts
 * with its time zone database. SQLite has none, so the expression applies the
 * US daylight-time rule in force since 2007 (from the second Sunday of March
 * 02:00 EST to the first Sunday of November 02:00 EDT); `nyDayNumber` in the
 * domain uses the full time zone database, and they agree for every date the
 * service stores (listing dates are recent).
 */
function nyDate(dialect: Dialect, at: Expression<unknown>) {
  if (dialect === 'postgres') {
    return sql<string>`(cast(${at} as timestamptz) at time zone ${sql.lit(MARKET_TIME_ZONE)})::date`;
  }
  const year = sql`strftime('%Y', ${at})`;
  const dstStart = sql`julianday(date(${year} || '-03-01', 'weekday 0', '+7 days'), '+7 hours')`;
  const dstEnd = sql`julianday(date(${year} || '-11-01', 'weekday 0'), '+6 hours')`;
  return sql<string>`date(${at}, case when julianday(${at}) >= ${dstStart} and julianday(${at}) < ${dstEnd} then '-4 hours' else '-5 hours' end)`;
}

/** Whole NY calendar days from `from` to `to`, never below 0 (as the mapper shows them); NULL if either is. */
function daysBetween(dialect: Dialect, from: Expression<unknown>, to: Expression<unknown>) {
  return dialect === 'sqlite'
    ? sql<number>`max(0, cast(julianday(${nyDate(dialect, to)}) - julianday(${nyDate(dialect, from)}) as integer))`
    : // greatest() ignores NULLs; an unknown date must stay NULL (sorted last, never matched).
      sql<number>`case when ${from} is null or ${to} is null then null else greatest(0, ${nyDate(dialect, to)} - ${nyDate(dialect, from)}) end`;
}

/**
 * Days on market as SQL, matching `daysOnMarket()` in the domain: to now while
 * ACTIVE, else to the contract date or the day the listing left the market.
 */
function daysOnMarketExpr(dialect: Dialect, eb: Eb, nowIso: string) {
  const end = eb
    .case()
    .when('listings.status', '=', 'ACTIVE')
    .then(sql.val(nowIso))
    .else(eb.fn.coalesce('listings.contract_at', 'listings.off_market_at', sql.val(nowIso)))
    .end();
  return daysBetween(dialect, eb.ref('listings.listed_at'), end);
}

/**
 * The rounded distance (metres) from `near` to the listing, as SQL: the
 * operations of `distanceFrom` (search.geo.ts) in the same order, with the
 * constants computed once in JS and bound as doubles, so SQLite, PostgreSQL
 * and the index round the same value. `floor(x + 0.5)` rather than round():
 * PostgreSQL rounds a double half to even.
 */
function sqlDistance(dialect: Dialect, near: NearCircle) {
  const double = (value: number) =>
    dialect === 'postgres' ? sql<number>`cast(${value} as double precision)` : sql<number>`${value}`;
  const rad = double(TO_RADIANS);
  const sinHalfLat = sql`sin(((listings.latitude - ${double(near.latitude)}) * ${rad}) / 2)`;
  const sinHalfLng = sql`sin(((listings.longitude - ${double(near.longitude)}) * ${rad}) / 2)`;
  const cosLat0 = double(Math.cos(near.latitude * TO_RADIANS));
  const h = sql`${sinHalfLat} * ${sinHalfLat} + ${cosLat0} * cos(listings.latitude * ${rad}) * (${sinHalfLng} * ${sinHalfLng})`;
  const least = dialect === 'postgres' ? sql.raw('least') : sql.raw('min');
  return sql<number>`floor(2 * ${double(EARTH_RADIUS_M)} * asin(${least}(1, sqrt(${h}))) + 0.5)`;
}

/**
 * `bbox` and `near`: a box prefilter on the columns (the circle's box, met
 * with bbox), then the exact box and distance tests.
 */
function applyGeoFilter(query: ListingQuery, geo: GeoCriteria, dialect: Dialect): ListingQuery {
  const box = candidateBox(geo);
  if (box === null) return query.where(sql<SqlBool>`1 = 0`);
  let q = query
    .where('listings.latitude', '>=', box.minLat)
    .where('listings.latitude', '<=', box.maxLat)
    .where('listings.longitude', '>=', box.minLng)
    .where('listings.longitude', '<=', box.maxLng);
  if (geo.near) q = q.where(sqlDistance(dialect, geo.near), '<=', geo.near.radiusM);
  return q;
}

function applyFilters(query: ListingQuery, c: SearchCriteria, dialect: Dialect): ListingQuery {
  const nowIso = c.now.toISOString();
  let q = query.where('listings.listing_type', '=', c.listingType);
  // A literal (not a bound parameter) lets both planners use the partial
  // active-only indexes for the default search.
  q =
    c.statuses.length === 1 && c.statuses[0] === 'ACTIVE'
      ? q.where('listings.status', '=', sql.lit('ACTIVE'))
      : q.where('listings.status', 'in', [...c.statuses]);
  if (c.areaIds) q = q.where('listings.area_id', 'in', [...c.areaIds]);
  if (c.minPrice !== undefined) q = q.where('listings.price', '>=', c.minPrice);
  if (c.maxPrice !== undefined) q = q.where('listings.price', '<=', c.maxPrice);
  if (c.minBeds !== undefined) q = q.where('listings.bedroom_count', '>=', c.minBeds);
  if (c.maxBeds !== undefined) q = q.where('listings.bedroom_count', '<=', c.maxBeds);
  if (c.minBaths !== undefined) q = q.where('listings.bathrooms', '>=', c.minBaths);
  if (c.maxBaths !== undefined) q = q.where('listings.bathrooms', '<=', c.maxBaths);
  if (c.buildingTypes) q = q.where('listings.building_type', 'in', [...c.buildingTypes]);
  if (c.saleTypes)
    q = q.where('listings.sale_type', 'in', [
      ...(c.saleTypes as ('RESALE' | 'SPONSOR_UNIT' | 'FORECLOSURE')[]),
    ]);
  if (c.noFee !== undefined) q = q.where('listings.no_fee', '=', c.noFee ? 1 : 0);
  if (c.has3dTour !== undefined) q = q.where('listings.has_3d_tour', '=', c.has3dTour ? 1 : 0);
  if (c.petsAllowed !== undefined) q = q.where('listings.pets_allowed', '=', c.petsAllowed ? 1 : 0);
  if (c.minSqft !== undefined) q = q.where('listings.sqft', '>=', c.minSqft);
  if (c.maxSqft !== undefined) q = q.where('listings.sqft', '<=', c.maxSqft);
  if (c.maxMonthlyCost !== undefined) q = q.where('listings.monthly_cost', '<=', c.maxMonthlyCost);
  if (c.amenityMask) {
    const mask = c.amenityMask;
    q = q.where(sql<SqlBool>`(listings.amenity_mask & ${mask}) = ${mask}`);
  }
  if (c.listedFrom !== undefined) q = q.where('listings.listed_at', '>=', c.listedFrom);
  if (c.listedTo !== undefined) q = q.where('listings.listed_at', '<=', c.listedTo);
  if (c.hasOpenHouse === true) q = q.where('listings.next_open_house_at', '>=', nowIso);
  if (c.hasOpenHouse === false) {
    q = q.where((eb) =>
      eb.or([eb('listings.next_open_house_at', 'is', null), eb('listings.next_open_house_at', '<', nowIso)]),
    );
  }
  if (c.minDaysOnMarket !== undefined || c.maxDaysOnMarket !== undefined) {
    q = q.where((eb) => daysOnMarketFilter(eb as unknown as Eb, c, dialect, nowIso));
  }
  if (c.fiberOnly !== undefined || c.minDownloadMbps !== undefined) {
    q = q.innerJoin('buildings', 'buildings.id', 'listings.building_id');
    if (c.fiberOnly !== undefined) q = q.where('buildings.fiber_available', '=', c.fiberOnly ? 1 : 0);
    if (c.minDownloadMbps !== undefined) q = q.where('buildings.max_download_mbps', '>=', c.minDownloadMbps);
  }
  if (c.minTransitScore !== undefined) {
    q = q
      .innerJoin('building_scores', 'building_scores.building_id', 'listings.building_id')
      .where('building_scores.transit_score', '>=', c.minTransitScore);
  }
  if (c.geo) q = applyGeoFilter(q, c.geo, dialect);
  return q;
}

/**
 * Active listings compare `listed_at` with precomputed instants (index-friendly);
 * other statuses use the days-on-market expression.
 */
function daysOnMarketFilter(eb: Eb, c: SearchCriteria, dialect: Dialect, nowIso: string) {
  const activeConds = [eb('listings.status', '=', 'ACTIVE')];
  // On NY days: DOM ≥ n ⇔ listed before the NY midnight starting day (today − n + 1);
  // DOM ≤ m ⇔ listed at or after the NY midnight starting day (today − m).
  // DOM is clamped at 0 (a listing dated in the future shows 0), so n = 0 only needs a date.
  const today = nyDayNumber(c.now.getTime());
  const midnightIso = (day: number) => new Date(nyMidnight(day)).toISOString();
  if (c.minDaysOnMarket === 0) activeConds.push(eb('listings.listed_at', 'is not', null));
  else if (c.minDaysOnMarket !== undefined) {
    activeConds.push(eb('listings.listed_at', '<', midnightIso(today - c.minDaysOnMarket + 1)));
  }
  if (c.maxDaysOnMarket !== undefined) {
    activeConds.push(eb('listings.listed_at', '>=', midnightIso(today - c.maxDaysOnMarket)));
  }
  const branches = [eb.and(activeConds)];
  if (c.statuses.some((s) => s !== 'ACTIVE')) {
    const dom = daysOnMarketExpr(dialect, eb, nowIso);
    const closedConds = [eb('listings.status', '!=', 'ACTIVE'), eb('listings.listed_at', 'is not', null)];
    if (c.minDaysOnMarket !== undefined) closedConds.push(eb(dom, '>=', c.minDaysOnMarket));
    if (c.maxDaysOnMarket !== undefined) closedConds.push(eb(dom, '<=', c.maxDaysOnMarket));
    branches.push(eb.and(closedConds));
  }
  return eb.or(branches);
}

function applySort(query: ListingQuery, c: SearchCriteria, dialect: Dialect): ListingQuery {
  const dir = c.sortDir === 'ASC' ? 'asc' : 'desc';
  switch (c.sort) {
    case 'DISTANCE': {
      // The service admits DISTANCE only with `near`.
      const near = c.geo?.near;
      if (!near) throw new Error('sort DISTANCE without near');
      return query.orderBy(sqlDistance(dialect, near), dir).orderBy('listings.id', dir);
    }
    case 'RECOMMENDED':
      return query.orderBy('listings.rank_score', dir).orderBy('listings.id', dir);
    case 'PRICE':
      return query.orderBy('listings.price', dir).orderBy('listings.id', dir);
    case 'PRICE_PER_SQFT':
      return query
        .orderBy('listings.price_per_sqft', (ob) => (dir === 'asc' ? ob.asc() : ob.desc()).nullsLast())
        .orderBy('listings.id', dir);
    case 'LISTED_AT':
      return query
        .orderBy('listings.listed_at', (ob) => (dir === 'asc' ? ob.asc() : ob.desc()).nullsLast())
        .orderBy('listings.id', dir);
    case 'DAYS_ON_MARKET': {
      if (c.statuses.every((s) => s === 'ACTIVE')) {
        // For active listings fewer days on market means a later listing date.
        return query
          .orderBy('listings.listed_at', (ob) => (dir === 'asc' ? ob.desc() : ob.asc()).nullsLast())
          .orderBy('listings.id', dir);
      }
      const nowIso = c.now.toISOString();
      return query
        .orderBy(
          (eb) => daysOnMarketExpr(dialect, eb as unknown as Eb, nowIso),
          (ob) => (dir === 'asc' ? ob.asc() : ob.desc()).nullsLast(),
        )
        .orderBy('listings.id', dir);
    }
  }
}

export interface IdPage {
  ids: string[];
  total: number;
  /** With `near`: each id's distance from it (metres, see search.geo.ts), in the order of `ids`. */
  distances?: number[];
}

/**
 * One page of matching ids plus the total. Deferred join: the page is chosen
 * from the narrow search indexes first; full rows are read only for those ids.
 */
export async function searchListingIds(
  db: Kysely<Database>,
  dialect: Dialect,
  c: SearchCriteria,
  limit: number,
  offset: number,
): Promise<IdPage> {
  const base = applyFilters(db.selectFrom('listings') as ListingQuery, c, dialect);
  const near = c.geo?.near;
  const page = applySort(base, c, dialect).limit(limit).offset(offset);
  const count = base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  if (!near) {
    const [idRows, countRow] = await Promise.all([page.select('listings.id').execute(), count]);
    return { ids: idRows.map((r) => r.id), total: Number(countRow.n) };
  }
  const [idRows, countRow] = await Promise.all([
    page.select(['listings.id', sqlDistance(dialect, near).as('distance')]).execute(),
    count,
  ]);
  return {
    ids: idRows.map((r) => r.id),
    total: Number(countRow.n),
    distances: idRows.map((r) => Number(r.distance)),
  };
}

/** Summary rows for the given ids, in the order of `ids`. */
export async function findSummaryRows(db: Kysely<Database>, ids: readonly string[]): Promise<SummaryRow[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('listings')
    .select(SUMMARY_COLUMNS)
    .where('id', 'in', [...ids])
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)).filter((r): r is SummaryRow => r !== undefined);
}

export async function findBuildingScores(
  db: Kysely<Database>,
  buildingIds: readonly string[],
): Promise<Map<string, BuildingScoresRow>> {
  if (buildingIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('building_scores')
    .selectAll()
    .where('building_id', 'in', [...new Set(buildingIds)])
    .execute();
  return new Map(rows.map((r) => [r.building_id, r]));
}
