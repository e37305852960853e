import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CellRange, cellOf, forEachSiteNear, type GridPoint } from '../src/modules/opendata/geo.ts';
import { pointsInCells, type TablePoint } from '../src/modules/opendata/opendata.repository.ts';
import {
  healthScore,
  NOISE_RADIUS_M,
  noiseScore,
  SAFETY_RADIUS_M,
  safetyScore,
  transitScore,
  type ViolationClass,
} from '../src/modules/opendata/score-formulas.ts';
import {
  type OpenViolationCounts,
  type ScoreSite,
  type ScoreSources,
  scoreSites,
} from '../src/modules/opendata/scores.ts';
import type { Store } from '../src/platform/db/database.ts';
import { createTestStore } from './support/store.ts';

/** Independent haversine (the one under test lives in geo.ts). */
function metres(
  a: { latitude: number; longitude: number },
  b: { latitude: number; longitude: number },
): number {
  const r = Math.PI / 180;
  const h =
    Math.sin(((b.latitude - a.latitude) * r) / 2) ** 2 +
    Math.cos(a.latitude * r) *
      Math.cos(b.latitude * r) *
      Math.sin(((b.longitude - a.longitude) * r) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.sqrt(h));
}

// A 6 km × 6 km patch of Brooklyn: sites and points cross many cells and several 2 km tiles.
const LAT0 = 40.66;
const LON0 = -73.98;
const latArb = fc.double({ min: LAT0, max: LAT0 + 0.054, noNaN: true });
const lonArb = fc.double({ min: LON0, max: LON0 + 0.071, noNaN: true });
const categoryArb = fc.constantFrom('FELONY', 'MISDEMEANOR', 'VIOLATION');

interface RawPoint {
  latitude: number;
  longitude: number;
  category: string;
}

const pointArb: fc.Arbitrary<RawPoint> = fc.record({
  latitude: latArb,
  longitude: lonArb,
  category: categoryArb,
});

const siteArb: fc.Arbitrary<ScoreSite> = fc.record({
  id: fc.uuid(),
  bbl: fc.constantFrom(null, '3001230001', '3001230002', '3004560010'),
  unitCount: fc.option(fc.integer({ min: 1, max: 400 }), { nil: null }),
  latitude: latArb,
  longitude: lonArb,
  inNyc: fc.boolean(),
});

function toPoint(raw: RawPoint): TablePoint {
  const cell = cellOf(raw.latitude, raw.longitude);
  return { ...raw, cellX: cell.x, cellY: cell.y };
}

/** An in-memory point table read the way the database reads it: by cell rectangle. */
function memoryLoader(points: readonly RawPoint[]): (range: CellRange) => Promise<TablePoint[]> {
  const grid = points.map(toPoint);
  return async (range) =>
    grid.filter(
      (p) => p.cellX >= range.minX && p.cellX <= range.maxX && p.cellY >= range.minY && p.cellY <= range.maxY,
    );
}

interface World {
  noise: RawPoint[];
  crime: RawPoint[];
  stations: RawPoint[];
  violations: { bbl: string; cls: ViolationClass }[];
}

function sources(world: World): ScoreSources {
  return {
    openViolations: async (bbls) => {
      const out = new Map<string, OpenViolationCounts>();
      for (const v of world.violations) {
        if (!bbls.includes(v.bbl)) continue;
        const counts = out.get(v.bbl) ?? {};
        counts[v.cls] = (counts[v.cls] ?? 0) + 1;
        out.set(v.bbl, counts);
      }
      return out;
    },
    noise: memoryLoader(world.noise),
    crime: memoryLoader(world.crime),
    stations: memoryLoader(world.stations),
  };
}

const violationArb = fc.record({
  bbl: fc.constantFrom('3001230001', '3001230002', '3004560010'),
  cls: fc.constantFrom<ViolationClass>('A', 'B', 'C', 'I'),
});

const worldArb: fc.Arbitrary<World> = fc.record({
  noise: fc.array(pointArb, { minLength: 20, maxLength: 150 }),
  crime: fc.array(pointArb, { minLength: 20, maxLength: 150 }),
  stations: fc.array(pointArb, { minLength: 3, maxLength: 25 }),
  violations: fc.array(violationArb, { minLength: 2, maxLength: 30 }),
});

/** A point within `radius` metres of `site` (so it lands inside the site's disk). */
function pointNear(site: ScoreSite, radius: number): fc.Arbitrary<RawPoint> {
  return fc
    .record({
      r: fc.double({ min: 0, max: radius * 0.99, noNaN: true }),
      theta: fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }),
      category: categoryArb,
    })
    .map(({ r, theta, category }) => ({
      latitude: site.latitude + (r * Math.cos(theta)) / 111_320,
      longitude:
        site.longitude + (r * Math.sin(theta)) / (111_320 * Math.cos((site.latitude * Math.PI) / 180)),
      category,
    }));
}

describe('score formulas', () => {
  it('are 0–100 integers, non-increasing in nuisances and non-decreasing in station access', () => {
    fc.assert(
      fc.property(fc.nat(50_000), fc.nat(50), (n, extra) => {
        for (const f of [noiseScore, safetyScore]) {
          const s = f(n);
          expect(Number.isInteger(s) && s >= 0 && s <= 100).toBe(true);
          expect(f(n + extra)).toBeLessThanOrEqual(s);
        }
        expect(noiseScore(0)).toBe(100);
        expect(safetyScore(0)).toBe(100);
      }),
    );
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 3000, noNaN: true }),
        fc.double({ min: 0, max: 3000, noNaN: true }),
        fc.nat(20),
        fc.nat(5),
        (d1, d2, n, more) => {
          const [near, far] = d1 <= d2 ? [d1, d2] : [d2, d1];
          expect(transitScore(near, n + more)).toBeGreaterThanOrEqual(transitScore(far, n));
          expect(transitScore(near, n)).toBeGreaterThanOrEqual(transitScore(null, n));
        },
      ),
    );
    fc.assert(
      fc.property(
        fc.record({ A: fc.nat(30), B: fc.nat(30), C: fc.nat(30), I: fc.nat(30) }),
        fc.constantFrom<ViolationClass>('A', 'B', 'C', 'I'),
        fc.option(fc.integer({ min: 1, max: 500 }), { nil: null }),
        (open, cls, units) => {
          const more = { ...open, [cls]: open[cls] + 1 };
          expect(healthScore(more, units)).toBeLessThanOrEqual(healthScore(open, units));
        },
      ),
    );
    expect(healthScore({}, 10)).toBe(100);
    expect(transitScore(100, 5)).toBe(100);
    expect(transitScore(null, 0)).toBe(0);
  });
});

describe('building scores are monotone in their inputs', () => {
  const caseArb = fc.record({
    world: worldArb,
    sites: fc.array(siteArb, { minLength: 3, maxLength: 15 }),
    pick: fc.nat(),
  });

  it('adding a noise complaint or an NYPD complaint near a building never raises its score', async () => {
    await fc.assert(
      fc.asyncProperty(
        caseArb.chain((c) => {
          const site = c.sites[c.pick % c.sites.length]!;
          return fc.record({
            c: fc.constant(c),
            noise: pointNear(site, NOISE_RADIUS_M),
            crime: pointNear(site, SAFETY_RADIUS_M),
          });
        }),
        async ({ c, noise, crime }) => {
          const site = c.sites[c.pick % c.sites.length]!;
          const base = await scoreSites(c.sites, sources(c.world));
          const louder = await scoreSites(c.sites, sources({ ...c.world, noise: [...c.world.noise, noise] }));
          const riskier = await scoreSites(
            c.sites,
            sources({ ...c.world, crime: [...c.world.crime, crime] }),
          );
          for (const s of c.sites) {
            const b = base.get(s.id)!;
            if (!s.inNyc) {
              expect(b.noise).toBeNull();
              expect(b.safety).toBeNull();
              continue;
            }
            expect(louder.get(s.id)!.noise!).toBeLessThanOrEqual(b.noise!);
            expect(riskier.get(s.id)!.safety!).toBeLessThanOrEqual(b.safety!);
          }
          if (site.inNyc) {
            expect(louder.get(site.id)!.noiseComplaints).toBe(base.get(site.id)!.noiseComplaints! + 1);
            expect(riskier.get(site.id)!.crimeWeight!).toBeGreaterThan(base.get(site.id)!.crimeWeight!);
          }
        },
      ),
      { numRuns: 60, endOnFailure: true },
    );
  });

  it('adding a station never lowers transit; adding an open violation never raises health', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, pointArb, violationArb, async (c, station, violation) => {
        const base = await scoreSites(c.sites, sources(c.world));
        const served = await scoreSites(
          c.sites,
          sources({ ...c.world, stations: [...c.world.stations, station] }),
        );
        const worse = await scoreSites(
          c.sites,
          sources({ ...c.world, violations: [...c.world.violations, violation] }),
        );
        for (const s of c.sites) {
          expect(served.get(s.id)!.transit!).toBeGreaterThanOrEqual(base.get(s.id)!.transit!);
          if (s.bbl === null) expect(worse.get(s.id)!.health).toBeNull();
          else expect(worse.get(s.id)!.health!).toBeLessThanOrEqual(base.get(s.id)!.health!);
        }
      }),
      { numRuns: 60, endOnFailure: true },
    );
  });

  it('counts match a brute-force distance computation', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const scores = await scoreSites(c.sites, sources(c.world));
        for (const s of c.sites) {
          const got = scores.get(s.id)!;
          const stationDistances = c.world.stations.map((p) => metres(s, p));
          expect(got.stationsWithin800m).toBe(stationDistances.filter((d) => d <= 800).length);
          const nearest = Math.min(...stationDistances.filter((d) => d <= 1600));
          if (Number.isFinite(nearest)) expect(got.nearestStationM).toBeCloseTo(nearest, 6);
          else expect(got.nearestStationM).toBeNull();
          if (!s.inNyc) continue;
          expect(got.noiseComplaints).toBe(c.world.noise.filter((p) => metres(s, p) <= 200).length);
          const weight = c.world.crime
            .filter((p) => metres(s, p) <= 400)
            .reduce(
              (sum, p) =>
                sum + ({ FELONY: 3, MISDEMEANOR: 2, VIOLATION: 1 } as Record<string, number>)[p.category]!,
              0,
            );
          expect(got.crimeWeight).toBe(weight);
        }
      }),
      { numRuns: 80, endOnFailure: true },
    );
  });
});

describe('the indexed database query', () => {
  let store: Store;
  beforeAll(async () => {
    store = await createTestStore();
  });
  afterAll(async () => {
    await store?.close();
  });

  it('finds exactly the points a brute-force scan finds, within the date window', async () => {
    let key = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            point: pointArb,
            date: fc.constantFrom('2025-06-30', '2025-11-01', '2026-03-15', '2026-10-31'),
          }),
          { minLength: 50, maxLength: 300 },
        ),
        fc.array(fc.record({ latitude: latArb, longitude: lonArb }), { minLength: 3, maxLength: 15 }),
        fc.constantFrom(200, 400, 800),
        async (rows, sites, radius) => {
          await store.db.deleteFrom('crime_complaints').execute();
          const values = rows.map(({ point, date }) => {
            const cell = cellOf(point.latitude, point.longitude);
            return {
              cmplnt_num: String(key++),
              complaint_date: date,
              offense: null,
              law_category: point.category as 'FELONY',
              precinct: null,
              latitude: point.latitude,
              longitude: point.longitude,
              cell_x: cell.x,
              cell_y: cell.y,
            };
          });
          for (let i = 0; i < values.length; i += 100)
            await store.db
              .insertInto('crime_complaints')
              .values(values.slice(i, i + 100))
              .execute();
          const since = '2025-11-01';
          const found = new Map<number, number>();
          let reads = 0;
          await forEachSiteNear<{ latitude: number; longitude: number; i: number }, GridPoint>(
            sites.map((s, i) => ({ ...s, i })),
            radius,
            (range) => {
              reads++;
              return pointsInCells(store.db, 'crime_complaints', range, since);
            },
            (site, near) => found.set(site.i, near.length),
          );
          // One indexed read per occupied 2 km tile, not one per site.
          expect(reads).toBeLessThanOrEqual(Math.min(sites.length, 16));
          sites.forEach((site, i) => {
            const expected = rows.filter((r) => r.date >= since && metres(site, r.point) <= radius).length;
            expect(found.get(i)).toBe(expected);
          });
        },
      ),
      { numRuns: 25, endOnFailure: true },
    );
  });
});
