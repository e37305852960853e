import { beforeAll, describe, expect, it } from 'vitest';
import { type DemoBuilding, generateBuildings } from '../src/demo/market/buildings.ts';
import { demoAreas } from '../src/demo/market/geography.ts';
import { BESIDE_MAX_STEPS, lotIndex, lotKind } from '../src/demo/market/lots.ts';
import { marketAt } from '../src/demo/market/market.ts';
import { haversineMeters } from '../src/domain/geo.ts';
import { type LotRecord, normalizeAddress, readLots } from '../src/reference/lots.ts';

const T = new Date('2026-11-01T15:00:00.000Z');
const SEED = 7;
const NJ = 1000000;

/** A house number as one orderable key (Queens `31-15` → 3115), as on the street. */
const key = (lot: { houseNumber: { block: number | null; number: number } }) =>
  lot.houseNumber.block === null
    ? lot.houseNumber.number
    : lot.houseNumber.block * 100 + lot.houseNumber.number;

describe('demo buildings on real tax lots', () => {
  let buildings: DemoBuilding[];
  let lots: LotRecord[];
  let realByAddress: Map<string, LotRecord>;
  let areaLots: ReadonlyMap<number, { lots: LotRecord[] }>;

  beforeAll(() => {
    // The full-scale stock (12,000 buildings): every building is checked.
    buildings = generateBuildings(SEED, 1, T);
    lots = readLots();
    realByAddress = new Map(lots.map((l) => [`${l.boroughId}|${l.address}`, l]));
    areaLots = lotIndex(demoAreas().areas).byArea;
  });

  it("shares the lots out to neighborhoods near each lot (no lot over 1.8 km from its area's centre)", () => {
    const areas = new Map(demoAreas().areas.map((a) => [a.id, a]));
    for (const [id, { lots: own }] of areaLots) {
      const area = areas.get(id)!;
      for (const lot of own) {
        expect(lot.boroughId).toBe(area.boroughId);
        expect(haversineMeters(lot, area)).toBeLessThanOrEqual(1800);
      }
    }
  });

  it('puts buildings on real lots with their address, BBL, coordinates, year, floors, units and a fitting type', () => {
    let onLots = 0;
    const seen = new Set<string>();
    for (const b of buildings) {
      if (b.area.boroughId === NJ) continue;
      const where = `${b.area.boroughId}|${b.street}`;
      expect(seen.has(where), `two buildings at ${b.street}`).toBe(false);
      seen.add(where);
      const lot = realByAddress.get(where);
      if (!lot) continue;
      onLots++;
      expect(
        areaLots.get(b.area.id)!.lots.some((l) => l.bbl === lot.bbl),
        `${b.street} in ${b.area.name}`,
      ).toBe(true);
      expect(b.row.bbl).toBe(lot.bbl);
      expect([b.latitude, b.longitude]).toEqual([lot.latitude, lot.longitude]);
      if (lot.yearBuilt !== null && b.row.year_built !== null) expect(b.row.year_built).toBe(lot.yearBuilt);
      if (lot.floors !== null) expect(b.floors).toBe(Math.max(1, Math.round(lot.floors)));
      expect(b.units).toBe(Math.max(1, lot.unitsRes));
      const kind = lotKind(lot);
      expect(kind.types.has(b.type), `${b.type} on a ${lot.buildingClass ?? lot.landUse} lot`).toBe(true);
      expect(b.elevator).toBe(!kind.walkup);
      if (lot.zip !== null) expect(b.zip).toBe(lot.zip);
      if (lot.buildingClass !== null)
        expect(JSON.parse(b.row.nyc_data_json!).buildingClass).toBe(lot.buildingClass);
    }
    // Most real lots carry a demo building (some lots' classes fit no type the areas draw).
    expect(onLots).toBeGreaterThan(3500);
  });

  it("synthesizes other addresses only on a neighborhood's real streets, same side, inside the real numbers, near the real lots", () => {
    let synthesized = 0;
    let profileOnly = 0;
    const nyc = buildings.filter((b) => b.area.boroughId !== NJ);
    for (const b of nyc) {
      if (realByAddress.has(`${b.area.boroughId}|${b.street}`)) continue;
      const own = areaLots.get(b.area.id)?.lots;
      if (!own) {
        // No real lot within reach of the area (south Staten Island, Breezy Point…): its profile streets.
        expect(b.area.profile.streets.some((s) => b.street.endsWith(` ${s}`))).toBe(true);
        profileOnly++;
        continue;
      }
      synthesized++;
      const parsed = normalizeAddress(b.street.toUpperCase(), b.area.boroughId)!;
      expect(parsed, b.street).not.toBeNull();
      // Written in the lots' own style, so re-normalizing changes nothing.
      expect(`${parsed.houseNumber.text} ${parsed.street}`).toBe(b.street);
      const onStreet = own.filter((l) => l.street === parsed.street);
      expect(onStreet.length, `${b.street}: no real lot of ${b.area.name} on that street`).toBeGreaterThan(0);
      const hyphenated = parsed.houseNumber.block !== null;
      const parity = parsed.houseNumber.number % 2;
      const side = onStreet.filter(
        (l) => (l.houseNumber.block !== null) === hyphenated && l.houseNumber.number % 2 === parity,
      );
      expect(side.length, `${b.street}: no real lot on that side of the street`).toBeGreaterThan(0);
      const k = key(parsed);
      const keys = side.map(key);
      const inRange = k > Math.min(...keys) && k < Math.max(...keys);
      // Or a few numbers from a lone real lot, on the same block face (same hundred / Queens prefix).
      const besideOne = side.some(
        (l) =>
          l.houseNumber.block === parsed.houseNumber.block &&
          Math.floor(l.houseNumber.number / 100) === Math.floor(parsed.houseNumber.number / 100) &&
          Math.abs(l.houseNumber.number - parsed.houseNumber.number) <= 2 * BESIDE_MAX_STEPS,
      );
      expect(inRange || besideOne, `${b.street} outside the real numbers of ${b.area.name}`).toBe(true);
      const nearest = Math.min(...side.map((l) => haversineMeters(l, b)));
      expect(nearest, `${b.street} far from its street's lots`).toBeLessThan(400);
      // Its ZIP is one the real lots around it use.
      const zipped = own.filter((l) => l.zip === b.zip);
      if (own.some((l) => l.zip !== null)) {
        expect(zipped.length, `${b.street} ZIP ${b.zip}`).toBeGreaterThan(0);
        expect(Math.min(...zipped.map((l) => haversineMeters(l, b)))).toBeLessThan(1000);
      }
      // Its BBL is on the tax block of a real lot of the street and is no real lot's.
      if (b.row.bbl !== null) {
        expect(side.some((l) => l.bbl.slice(0, 6) === b.row.bbl!.slice(0, 6))).toBe(true);
        expect(lots.some((l) => l.bbl === b.row.bbl)).toBe(false);
      }
    }
    expect(synthesized).toBeGreaterThan(1000);
    expect(profileOnly / nyc.length).toBeLessThan(0.05);
  });

  it('uses no street name (nickname or other) outside the real streets of the neighborhood', () => {
    const streets = buildings
      .filter((b) => b.area.boroughId !== NJ && areaLots.has(b.area.id))
      .map((b) => ({ b, street: normalizeAddress(b.street.toUpperCase(), b.area.boroughId)!.street }));
    for (const { b, street } of streets)
      expect(
        areaLots.get(b.area.id)!.lots.some((l) => l.street === street),
        `${street} in ${b.area.name}`,
      ).toBe(true);
    expect(buildings.some((b) => /Strivers Row/.test(b.street))).toBe(false);
  });

  it('writes Queens addresses Queens style where the street is numbered that way', () => {
    const queens = buildings.filter((b) => b.area.boroughId === 400 && areaLots.has(b.area.id));
    const hyphenated = queens.filter((b) => /^\d+-\d+ /.test(b.street));
    expect(hyphenated.length / queens.length).toBeGreaterThan(0.6);
    // Elsewhere only a real lot's own address may be hyphenated (`156-20 Riverside Drive West`).
    const elsewhere = buildings.filter((b) => b.area.boroughId !== 400 && /^\d+-\d+ /.test(b.street));
    for (const b of elsewhere)
      expect(realByAddress.has(`${b.area.boroughId}|${b.street}`), b.street).toBe(true);
  });

  it('is the same stock for the same seed, and a smaller scale is its first buildings', () => {
    const quarter = generateBuildings(SEED, 0.25, T);
    expect(quarter.map((b) => `${b.id} ${b.street} ${b.row.bbl}`)).toEqual(
      buildings.slice(0, quarter.length).map((b) => `${b.id} ${b.street} ${b.row.bbl}`),
    );
  });

  it("gives listings unit numbers on one of the building's floors", () => {
    const market = marketAt(SEED, 0.03, T);
    const floors = new Map(market.buildings.map((b) => [b.id, b.floor_count!]));
    let checked = 0;
    for (const listing of market.listings) {
      if (listing.unit === null || listing.building_id === null) continue;
      const top = floors.get(listing.building_id)!;
      const ph = /^PH/.exec(listing.unit);
      if (ph) {
        expect(top).toBeGreaterThanOrEqual(8);
        continue;
      }
      if (['GARDEN', 'PARLOR'].includes(listing.unit)) continue;
      if (listing.unit === 'TOP FLOOR') {
        expect(top).toBeGreaterThanOrEqual(3);
        continue;
      }
      const floor = /^(\d+)[A-Z]?$/.exec(listing.unit);
      expect(floor, listing.unit).not.toBeNull();
      expect(Number(floor![1]), `${listing.unit} in a ${top}-floor building`).toBeLessThanOrEqual(top);
      expect(Number(floor![1])).toBeGreaterThanOrEqual(1);
      checked++;
    }
    expect(checked).toBeGreaterThan(1000);
  });
});
