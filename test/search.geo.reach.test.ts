import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EARTH_RADIUS_M } from '../src/domain/geo.ts';
import { CircleReach, gridCellOf } from '../src/modules/search/active-index.ts';
import { distanceFrom, MAX_RADIUS_M, TO_RADIANS } from '../src/modules/search/search.geo.ts';

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

describe('geo search skips grid cells beyond the circle', () => {
  it('never skips the cell of a point the exact radius test keeps (antimeridian and high latitudes included)', () => {
    const centre = fc.record({
      latitude: fc.oneof(
        fc.double({ min: 40.4, max: 41, noNaN: true }),
        fc.double({ min: -85, max: 85, noNaN: true }),
      ),
      longitude: fc.oneof(
        fc.double({ min: -74.3, max: -73.6, noNaN: true }),
        fc.double({ min: -180, max: 180, noNaN: true }),
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
