/**
 * Geo search: the `bbox`, `near` and `radius` parameters as criteria, and the
 * one distance rule both search paths (the in-memory index and SQL) apply.
 *
 * Contract:
 * - `bbox` is GeoJSON order (RFC 7946 §5): `minLng,minLat,maxLng,maxLat`,
 *   inclusive on every edge. A box crossing the antimeridian (minLng > maxLng)
 *   is not supported (the service covers New York): it is a 400, as is a
 *   degenerate box (min = max on an axis).
 * - `near` is `lat,lng`, the order maps copy a point in; `radius` is whole
 *   metres, DEFAULT_RADIUS_M when omitted, at most MAX_RADIUS_M. A listing
 *   matches when its `distance` (below) is ≤ radius.
 * - `distance` is the haversine great-circle distance (src/domain/geo.ts, same
 *   sphere) from `near` to the listing, rounded to whole metres (half up):
 *   what the result shows is what the radius and `sort=DISTANCE` compare.
 * - Both given: the intersection.
 */
import { EARTH_RADIUS_M } from '../../domain/geo.ts';
import { ApiError } from '../../http/errors.ts';

/** `radius` when `near` is given without one, metres. */
export const DEFAULT_RADIUS_M = 1_000;
/** Largest `radius`, metres: all five boroughs fit in it from Midtown. */
export const MAX_RADIUS_M = 50_000;

/** Inclusive box, degrees. */
export interface GeoBox {
  minLat: number;
  maxLat: number;
  minLng: number;
  maxLng: number;
}

export interface NearCircle {
  latitude: number;
  longitude: number;
  /** Whole metres; a listing matches when its rounded distance is ≤ this. */
  radiusM: number;
}

/** The geo part of search criteria; both null means no geo filter. */
export interface GeoCriteria {
  box: GeoBox | null;
  near: NearCircle | null;
}

export const TO_RADIANS = Math.PI / 180;

/**
 * Rounded great-circle distance (metres) from `near` to a point. The
 * operations are the ones `sqlDistance` (search.repository.ts) writes in SQL,
 * in the same order, so both paths compute the same doubles up to the last
 * bit of the platform's sin/cos, and agree on the rounded result.
 */
export function distanceFrom(near: Pick<NearCircle, 'latitude' | 'longitude'>) {
  const lat0 = near.latitude;
  const lng0 = near.longitude;
  const cosLat0 = Math.cos(lat0 * TO_RADIANS);
  return (latitude: number, longitude: number): number =>
    distanceOfTerm(haversineTerm(lat0, lng0, cosLat0, latitude, longitude, Math.cos(latitude * TO_RADIANS)));
}

/**
 * The haversine term h of the distance from (lat0, lng0) to a point, given
 * both latitudes' cosines (`Math.cos(latitude × TO_RADIANS)`, which a caller
 * may keep per point: the same double). `distanceFrom` is `distanceOfTerm` of it.
 */
export function haversineTerm(
  lat0: number,
  lng0: number,
  cosLat0: number,
  latitude: number,
  longitude: number,
  cosLatitude: number,
): number {
  const sinHalfLat = Math.sin(((latitude - lat0) * TO_RADIANS) / 2);
  const sinHalfLng = Math.sin(((longitude - lng0) * TO_RADIANS) / 2);
  return sinHalfLat * sinHalfLat + cosLat0 * cosLatitude * (sinHalfLng * sinHalfLng);
}

/** The rounded distance (metres) of a haversine term. */
export function distanceOfTerm(h: number): number {
  return Math.floor(2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h))) + 0.5);
}

/**
 * Half-angles (radians) below which `roundedDistanceWithin` uses power series
 * (about 12.7 km of latitude, more than any usual radius).
 */
const SERIES_HALF_ANGLE = 1e-3;
/**
 * A series distance this close to a half metre is computed again with
 * sin/asin: the series and the library functions differ by ~1e-12 m here,
 * so farther from a rounding boundary both round alike.
 */
const ROUNDING_GUARD_M = 1e-6;

/**
 * The unrounded distance (metres) from (lat0, lng0) to a point whose half
 * angle differences x (latitude) and y (longitude) are below
 * SERIES_HALF_ANGLE, by power series instead of sin and asin:
 * sin² t = t² (1 − t²/3 + …) and asin s = s (1 + s²/6 + 3 s⁴/40 + …), with
 * s² the haversine term h. The terms left out are below 1e-13 of the
 * distance there (3e-10 m), and only multiplications remain (a division
 * costs as much as the rest of the loop of a radius search).
 */
export function seriesDistance(x: number, y: number, cosLat0: number, cosLatitude: number): number {
  const x2 = x * x;
  const y2 = y * y;
  const h = x2 * (1 - x2 * ONE_THIRD) + cosLat0 * cosLatitude * (y2 * (1 - y2 * ONE_THIRD));
  return EARTH_DIAMETER_M * Math.sqrt(h) * (1 + h * (ONE_SIXTH + h * THREE_FORTIETHS));
}

const ONE_THIRD = 1 / 3;
const ONE_SIXTH = 1 / 6;
const THREE_FORTIETHS = 3 / 40;
const EARTH_DIAMETER_M = 2 * EARTH_RADIUS_M;
const HALF_RADIANS_PER_DEGREE = TO_RADIANS / 2;

/**
 * `distanceOfTerm(haversineTerm(…))` for one point, the same whole metres;
 * +∞ instead for some points past `far` (`termBeyond` of the radius), which
 * a radius test rejects either way. A radius
 * search computes this for every candidate, and sin/asin were most of its
 * time: nearby points use `seriesDistance`, and fall back to the exact
 * functions only next to a rounding boundary.
 */
export function roundedDistanceWithin(
  lat0: number,
  lng0: number,
  cosLat0: number,
  latitude: number,
  longitude: number,
  cosLatitude: number,
  far: number,
): number {
  const x = (latitude - lat0) * HALF_RADIANS_PER_DEGREE;
  const y = (longitude - lng0) * HALF_RADIANS_PER_DEGREE;
  if (Math.abs(x) < SERIES_HALF_ANGLE && Math.abs(y) < SERIES_HALF_ANGLE) {
    const shifted = seriesDistance(x, y, cosLat0, cosLatitude) + 0.5;
    const whole = Math.floor(shifted);
    const fraction = shifted - whole;
    if (fraction > ROUNDING_GUARD_M && fraction < 1 - ROUNDING_GUARD_M) return whole;
  }
  const h = haversineTerm(lat0, lng0, cosLat0, latitude, longitude, cosLatitude);
  return h > far ? Number.POSITIVE_INFINITY : distanceOfTerm(h);
}

/**
 * A haversine term above this is more than `radiusM` + 1 m away, so its
 * rounded distance is past `radiusM`: rows can be rejected on the term alone,
 * without the square root and arcsine. The metre of margin dwarfs the
 * rounding of the few operations between the term and the distance (~1e-9 m).
 */
export function termBeyond(radiusM: number): number {
  const half = Math.sin(Math.min(Math.PI / 2, (radiusM + 1) / (2 * EARTH_RADIUS_M)));
  return half * half;
}

/**
 * A box that holds every point within the circle (padded, so rounding never
 * drops a point the exact test would keep): the spatial prefilter. It spans
 * every longitude when the circle reaches a pole or the antimeridian.
 */
export function circleBox(near: NearCircle): GeoBox {
  // +1 m: the rounded distance may be ≤ radius while the exact one is up to 0.5 m more.
  const angle = (near.radiusM + 1) / EARTH_RADIUS_M;
  const dLat = (angle / TO_RADIANS) * 1.000001;
  const minLat = near.latitude - dLat;
  const maxLat = near.latitude + dLat;
  if (minLat <= -90 || maxLat >= 90)
    return { minLat: Math.max(minLat, -90), maxLat: Math.min(maxLat, 90), minLng: -180, maxLng: 180 };
  // The widest longitude offset of a spherical cap of angular radius `angle`.
  const dLng =
    (Math.asin(Math.min(1, Math.sin(angle) / Math.cos(near.latitude * TO_RADIANS))) / TO_RADIANS) * 1.000001;
  const minLng = near.longitude - dLng;
  const maxLng = near.longitude + dLng;
  if (minLng < -180 || maxLng > 180) return { minLat, maxLat, minLng: -180, maxLng: 180 };
  return { minLat, maxLat, minLng, maxLng };
}

/** The box every match lies in (bbox ∩ the circle's box); null when they do not meet (nothing matches). */
export function candidateBox(geo: GeoCriteria): GeoBox | null {
  const boxes = [geo.box, geo.near ? circleBox(geo.near) : null].filter((b): b is GeoBox => b !== null);
  const box: GeoBox = {
    minLat: Math.max(...boxes.map((b) => b.minLat)),
    maxLat: Math.min(...boxes.map((b) => b.maxLat)),
    minLng: Math.max(...boxes.map((b) => b.minLng)),
    maxLng: Math.min(...boxes.map((b) => b.maxLng)),
  };
  return box.minLat <= box.maxLat && box.minLng <= box.maxLng ? box : null;
}

const DECIMAL = '-?\\d{1,3}(\\.\\d{1,20})?';
const SEPARATOR = ' *, *';
/** Pattern of `bbox`: four decimals (spaces after the commas are allowed, as pasted). */
export const BBOX_PATTERN = `^${DECIMAL}(${SEPARATOR}${DECIMAL}){3}$`;
/** Pattern of `near`: two decimals. */
export const NEAR_PATTERN = `^${DECIMAL}${SEPARATOR}${DECIMAL}$`;

function invalid(parameter: string, rule: string, message: string): ApiError {
  return ApiError.invalidParam({ parameter, rule, message });
}

function decimals(value: string): number[] {
  return value.split(',').map((part) => Number(part.trim()));
}

function checkLatitude(parameter: string, name: string, value: number): void {
  if (!Number.isFinite(value) || value < -90 || value > 90) {
    throw invalid(parameter, 'range', `${name} must be a latitude in [-90, 90] (got ${value})`);
  }
}

function checkLongitude(parameter: string, name: string, value: number): void {
  if (!Number.isFinite(value) || value < -180 || value > 180) {
    throw invalid(parameter, 'range', `${name} must be a longitude in [-180, 180] (got ${value})`);
  }
}

function parseBbox(value: string): GeoBox {
  const parts = decimals(value);
  if (parts.length !== 4 || parts.some((n) => !Number.isFinite(n))) {
    throw invalid('bbox', 'format', 'must be four decimals: minLng,minLat,maxLng,maxLat');
  }
  const [minLng, minLat, maxLng, maxLat] = parts as [number, number, number, number];
  checkLongitude('bbox', 'minLng (1st value)', minLng);
  checkLatitude('bbox', 'minLat (2nd value)', minLat);
  checkLongitude('bbox', 'maxLng (3rd value)', maxLng);
  checkLatitude('bbox', 'maxLat (4th value)', maxLat);
  if (minLng >= maxLng) {
    throw invalid(
      'bbox',
      'range',
      `minLng (${minLng}) must be less than maxLng (${maxLng}); the order is minLng,minLat,maxLng,maxLat, and boxes crossing the antimeridian are not supported`,
    );
  }
  if (minLat >= maxLat) {
    throw invalid(
      'bbox',
      'range',
      `minLat (${minLat}) must be less than maxLat (${maxLat}); the order is minLng,minLat,maxLng,maxLat`,
    );
  }
  return { minLat, maxLat, minLng, maxLng };
}

function parseNear(value: string, radius: number | undefined): NearCircle {
  const parts = decimals(value);
  if (parts.length !== 2 || parts.some((n) => !Number.isFinite(n))) {
    throw invalid('near', 'format', 'must be two decimals: lat,lng');
  }
  const [latitude, longitude] = parts as [number, number];
  checkLatitude('near', 'lat (1st value; near is lat,lng)', latitude);
  checkLongitude('near', 'lng (2nd value)', longitude);
  return { latitude, longitude, radiusM: radius ?? DEFAULT_RADIUS_M };
}

/** Two parameters that are only valid together: one 400 naming both. */
function needsNear(parameter: string, message: string): ApiError {
  return new ApiError('INVALID_PARAMS', `Invalid parameter "${parameter}": ${message}`, {
    params: [
      { parameter, location: 'query', rule: 'requires_near', message },
      { parameter: 'near', location: 'query', rule: 'required', message: `required with ${parameter}` },
    ],
  });
}

/**
 * The geo criteria of a query (null without `bbox` or `near`), or a 400 naming
 * the parameter: malformed or out-of-range coordinates, a degenerate or
 * inverted box, `radius` or `sort=DISTANCE` without `near`.
 */
export function geoCriteria(q: {
  bbox?: string | undefined;
  near?: string | undefined;
  radius?: number | undefined;
  sort?: string | undefined;
}): GeoCriteria | null {
  if (q.near === undefined) {
    if (q.radius !== undefined) {
      throw needsNear('radius', 'radius is the distance from near (lat,lng): give near too');
    }
    if (q.sort === 'DISTANCE') {
      throw needsNear('sort', 'sort=DISTANCE orders by the distance from near (lat,lng): give near too');
    }
  }
  if (q.radius !== undefined && (!Number.isInteger(q.radius) || q.radius < 1 || q.radius > MAX_RADIUS_M)) {
    throw invalid('radius', 'range', `must be whole metres from 1 to ${MAX_RADIUS_M}`);
  }
  const box = q.bbox === undefined ? null : parseBbox(q.bbox);
  const near = q.near === undefined ? null : parseNear(q.near, q.radius);
  return box === null && near === null ? null : { box, near };
}
