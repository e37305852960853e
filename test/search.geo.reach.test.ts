import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EARTH_RADIUS_M } from '../src/domain/geo.ts';
import { CircleReach, gridCellOf } from '../src/modules/search/active-index.ts';
import {
  distanceFrom,
  haversineTerm,
  MAX_RADIUS_M,
  roundedDistanceWithin,
  seriesDistance,
  TO_RADIANS,
  termBeyond,
} from '../src/modules/search/search.geo.ts';

/** The point `metres` from (lat, lng) along `bearing` (degrees), on the same sphere. */
function destination(lat: number, lng: number, bearing: number, metres: number): [number, number] {
  const angle = metres / EARTH_RADIUS_M;
  const phi1 = lat * TO_RADIANS;
  const theta = bearing * TO_RADIANS;
  const phi2 = Math.asin(
    Math.sin(phi1) * Math.cos(angle) + Math.cos(phi1) * Math.sin(angle) * Math.cos(theta),
  );
  const lambda2 =
    lng * TO_RADIANS +
    Math.atan2(
      Math.sin(theta) * Math.sin(angle) * Math.cos(phi1),
      Math.cos(angle) - Math.sin(phi1) * Math.sin(phi2),
    );
  const lng2 = ((((lambda2 / TO_RADIANS + 180) % 360) + 360) % 360) - 180;
  return [phi2 / TO_RADIANS, lng2];
}

/** Centres around New York or anywhere short of the poles. */
const nycOrAnyLatitude = fc.oneof(
  fc.double({ min: 40.4, max: 41, noNaN: true }),
  fc.double({ min: -85, max: 85, noNaN: true }),
);
const nycOrAnyLongitude = fc.oneof(
  fc.double({ min: -74.3, max: -73.6, noNaN: true }),
  fc.double({ min: -180, max: 180, noNaN: true }),
);

describe('geo search skips grid cells beyond the circle', () => {
  it('never skips the cell of a point the exact radius test keeps (antimeridian and high latitudes included)', () => {
    const centre = fc.record({
      latitude: nycOrAnyLatitude,
      longitude: fc.oneof(
        nycOrAnyLongitude,
        fc.double({ min: 179.5, max: 180, noNaN: true }),
        fc.double({ min: -180, max: -179.5, noNaN: true }),
      ),
    });
    fc.assert(
      fc.property(
        centre,
        fc.integer({ min: 1, max: MAX_RADIUS_M }),
        fc.double({ min: 0, max: 360, noNaN: true }),
        fc.double({ min: 0.9, max: 1.0005, noNaN: true }),
        ({ latitude, longitude }, radiusM, bearing, fraction) => {
          const [lat, lng] = destination(latitude, longitude, bearing, radiusM * fraction);
          // Only points the exact test keeps: the rounded distance within the radius.
          fc.pre(distanceFrom({ latitude, longitude })(lat, lng) <= radiusM);
          const { row, column } = gridCellOf(lat, lng);
          const reach = new CircleReach({ latitude, longitude, radiusM });
          expect(reach.forGridRow(row).outside(column)).toBe(false);
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('skips cells well beyond the circle', () => {
    const near = { latitude: 40.7536, longitude: -73.9832, radiusM: 1500 };
    const reach = new CircleReach(near);
    const [lat, lng] = destination(near.latitude, near.longitude, 45, 3000);
    const { row, column } = gridCellOf(lat, lng);
    expect(reach.forGridRow(row).outside(column)).toBe(true);
    const centre = gridCellOf(near.latitude, near.longitude);
    expect(reach.forGridRow(centre.row).outside(centre.column)).toBe(false);
  });
});

describe('distances of a radius search by power series', () => {
  const centre = fc.record({ latitude: nycOrAnyLatitude, longitude: nycOrAnyLongitude });
  const cos = (degrees: number) => Math.cos(degrees * TO_RADIANS);

  it('stays within 1e-8 m of sin/asin wherever the series is used (the rounding guard is 1e-6 m)', () => {
    fc.assert(
      fc.property(
        centre,
        fc.double({ min: 0, max: 13_000, noNaN: true }),
        fc.double({ min: 0, max: 360, noNaN: true }),
        ({ latitude, longitude }, metres, bearing) => {
          const [lat, lng] = destination(latitude, longitude, bearing, metres);
          const x = ((lat - latitude) * TO_RADIANS) / 2;
          const y = ((lng - longitude) * TO_RADIANS) / 2;
          fc.pre(Math.abs(x) < 1e-3 && Math.abs(y) < 1e-3);
          const term = haversineTerm(latitude, longitude, cos(latitude), lat, lng, cos(lat));
          const exact = 2 * EARTH_RADIUS_M * Math.asin(Math.sqrt(term));
          expect(Math.abs(seriesDistance(x, y, cos(latitude), cos(lat)) - exact)).toBeLessThan(1e-8);
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('rounds to the same whole metres as distanceFrom, half-metre boundaries included', () => {
    fc.assert(
      fc.property(
        centre,
        fc.oneof(
          fc.double({ min: 0, max: 60_000, noNaN: true }),
          // Within ~1e-9 m of a half metre: the series must defer to sin/asin there.
          fc.integer({ min: 0, max: 20_000 }).map((whole) => whole + 0.5),
        ),
        fc.double({ min: 0, max: 360, noNaN: true }),
        ({ latitude, longitude }, metres, bearing) => {
          const [lat, lng] = destination(latitude, longitude, bearing, metres);
          const expected = distanceFrom({ latitude, longitude })(lat, lng);
          const far = termBeyond(MAX_RADIUS_M);
          const got = roundedDistanceWithin(latitude, longitude, cos(latitude), lat, lng, cos(lat), far);
          if (got === Number.POSITIVE_INFINITY) expect(expected).toBeGreaterThan(MAX_RADIUS_M);
          else expect(got).toBe(expected);
        },
      ),
      { numRuns: 50_000 },
    );
  });
});
