/**
 * Great-circle distance: the one distance rule for every "how far apart"
 * question (open-data proximity scores, PLUTO lot matching, demo placement
 * checks).
 */

/** Mean Earth radius (IUGG), metres. */
export const EARTH_RADIUS_M = 6_371_008.8;

export interface LatLon {
  latitude: number;
  longitude: number;
}

/**
 * Great-circle distance in metres between two WGS 84 points (haversine on a
 * sphere of EARTH_RADIUS_M; within 0.5 % of the ellipsoidal distance). The
 * clamp keeps rounding near antipodal points from producing NaN.
 */
export function haversineMeters(a: LatLon, b: LatLon): number {
  const toRad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * toRad;
  const dLon = (b.longitude - a.longitude) * toRad;
  const h =
    Math.sin(dLat / 2) ** 2 +
    Math.cos(a.latitude * toRad) * Math.cos(b.latitude * toRad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}
