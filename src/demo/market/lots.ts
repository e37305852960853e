/**
 * Where demo buildings stand: the real residential tax lots of
 * resources/nyc-lots.csv, shared out to the demo's neighborhoods, and, where a
 * neighborhood needs more buildings than it has lots, addresses synthesized on
 * the streets those lots use (same side of the street, inside the real
 * house-number range, ZIP and coordinates from the neighbouring real lots).
 */

import { haversineMeters } from '../../domain/geo.ts';
import type { BuildingType } from '../../domain/listing.ts';
import { type LotRecord, readLots } from '../../reference/lots.ts';
import type { DemoArea } from './geography.ts';
import type { Rng } from './random.ts';

/** How far (in jitter radii) from an area's centre a lot may still be that area's. */
const MEMBER_RADII = 1.6;
/** No lot further than this from its area's centre (the demo keeps listings within 2 km of it). */
const MAX_MEMBER_M = 1800;
/** An area with fewer street sides than this reaches further for lots, in these steps. */
const MIN_SIDES = 3;
const REACH_STEPS_M = [900, 1300, MAX_MEMBER_M];
/** Areas with a shorter radius are hemmed in by water: they never reach further. */
const WIDE_RADIUS_M = 380;
const NEW_JERSEY_ID = 1000000;

/** What a lot's PLUTO building class (or land use) says a building on it can be. */
export interface LotKind {
  types: ReadonlySet<BuildingType>;
  walkup: boolean;
}

const set = (...types: BuildingType[]): ReadonlySet<BuildingType> => new Set(types);
const HOUSE = set('HOUSE');
const ATTACHED = set('HOUSE', 'TOWNHOUSE');
const TWO_FAMILY = set('MULTI_FAMILY', 'TOWNHOUSE');
const SMALL = set('MULTI_FAMILY', 'TOWNHOUSE', 'RENTAL');
const RENTAL = set('RENTAL');
const COOP = set('COOP', 'CONDOP');
const CONDO = set('CONDO', 'CONDOP');
const ANY_MULTI = set('RENTAL', 'COOP', 'CONDO', 'CONDOP');

/**
 * PLUTO classes: A one-family (A4 city residence, A5 attached, A7 town house),
 * B two-family, C walk-up apartments (C0/C3 three and four families, C6/C8
 * walk-up co-ops), D elevator apartments (D0/D4 co-ops), R condominiums (R2/R3
 * walk-up, R4 elevator, RR condo rentals), S residence with stores (S0–S2 one
 * or two families). A lot without a class is read from its land use: 01 one
 * family, 02 two families, 03 walk-up, 04 elevator.
 */
export function lotKind(lot: LotRecord): LotKind {
  const cls = lot.buildingClass ?? '';
  const floors = lot.floors ?? 1;
  const first = cls[0];
  if (first === 'A') return { types: /^A[457]$/.test(cls) ? ATTACHED : HOUSE, walkup: true };
  if (first === 'B' || cls === 'S0' || cls === 'S1' || cls === 'S2')
    return { types: TWO_FAMILY, walkup: true };
  if (cls === 'C0' || cls === 'C3' || cls === 'S3' || cls === 'S4') return { types: SMALL, walkup: true };
  if (cls === 'C6' || cls === 'C8') return { types: COOP, walkup: true };
  if (first === 'C' || first === 'S') return { types: RENTAL, walkup: true };
  if (cls === 'D0' || cls === 'D4') return { types: COOP, walkup: false };
  if (first === 'D' || cls === 'RR') return { types: RENTAL, walkup: false };
  if (first === 'R') return { types: CONDO, walkup: cls === 'R2' || cls === 'R3' || floors < 6 };
  if (cls === '') {
    if (lot.landUse === '01') return { types: lot.unitsRes > 1 ? TWO_FAMILY : HOUSE, walkup: true };
    if (lot.landUse === '02') return { types: lot.unitsRes <= 4 ? TWO_FAMILY : RENTAL, walkup: true };
    if (lot.landUse === '04' || floors >= 7) return { types: ANY_MULTI, walkup: false };
    return { types: lot.unitsRes <= 4 ? SMALL : RENTAL, walkup: true };
  }
  // Mixed commercial classes carrying apartments (K, O, H…): a rental building.
  return { types: RENTAL, walkup: floors < 7 };
}

/** A house number as one orderable key: Queens `31-15` → 3115. */
function numberKey(lot: LotRecord): number {
  const h = lot.houseNumber;
  return h.block === null ? h.number : h.block * 100 + h.number;
}

/** One side of one street inside one area: its real lots ordered by house number. */
interface StreetSide {
  street: string;
  hyphenated: boolean;
  parity: number;
  lots: LotRecord[];
  keys: number[];
  /** Largest number after the hyphen seen on the street (Queens style only). */
  maxNumber: number;
}

export interface AreaLots {
  lots: LotRecord[];
  sides: StreetSide[];
  /** Normalized street names of the area's real lots. */
  streets: ReadonlySet<string>;
}

export interface LotIndex {
  byArea: ReadonlyMap<number, AreaLots>;
  /** `${boroughId}|${address}` of every real lot, so no synthetic address copies one. */
  realAddresses: ReadonlySet<string>;
  realBbls: ReadonlySet<string>;
  all: readonly LotRecord[];
}

/** The areas a lot belongs to: its nearest centre (in radii) and any other centre it is close to. */
export function lotAreas(lot: LotRecord, areas: readonly DemoArea[]): DemoArea[] {
  let best: DemoArea | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  const near: DemoArea[] = [];
  for (const area of areas) {
    if (area.boroughId !== lot.boroughId) continue;
    const d = haversineMeters(lot, area);
    if (d > MAX_MEMBER_M) continue;
    const score = d / area.radius;
    if (score < bestScore) {
      bestScore = score;
      best = area;
    }
    if (score <= MEMBER_RADII) near.push(area);
  }
  if (best && !near.includes(best)) near.push(best);
  return near;
}

/** The sides of the streets of `lots` with room for another number between their real ones. */
function streetSides(lots: readonly LotRecord[]): StreetSide[] {
  const sidesByKey = new Map<string, StreetSide>();
  for (const lot of lots) {
    const hyphenated = lot.houseNumber.block !== null;
    const parity = lot.houseNumber.number % 2;
    const key = `${lot.street}|${hyphenated}|${parity}`;
    let side = sidesByKey.get(key);
    if (!side) {
      side = { street: lot.street, hyphenated, parity, lots: [], keys: [], maxNumber: 0 };
      sidesByKey.set(key, side);
    }
    side.lots.push(lot);
    side.maxNumber = Math.max(side.maxNumber, lot.houseNumber.number);
  }
  const sides = [...sidesByKey.values()];
  for (const side of sides) {
    side.lots.sort((a, b) => numberKey(a) - numberKey(b) || a.bbl.localeCompare(b.bbl));
    side.keys = side.lots.map(numberKey);
  }
  return sides.filter((s) => s.keys.at(-1)! - s.keys[0]! >= 4);
}

let cachedIndex: { areas: readonly DemoArea[]; index: LotIndex } | undefined;

/** Lots by demo area (built once per area list; the free lists are copied per generation run). */
export function lotIndex(areas: readonly DemoArea[]): LotIndex {
  if (cachedIndex?.areas === areas) return cachedIndex.index;
  const all = readLots();
  const byArea = new Map<number, LotRecord[]>();
  for (const lot of all) {
    for (const area of lotAreas(lot, areas)) {
      const list = byArea.get(area.id) ?? [];
      list.push(lot);
      byArea.set(area.id, list);
    }
  }
  const out = new Map<number, AreaLots>();
  for (const area of areas) {
    if (area.boroughId === NEW_JERSEY_ID) continue;
    let lots = byArea.get(area.id) ?? [];
    let sides = streetSides(lots);
    // Too few streets to place more buildings: reach further (never across water,
    // so not for the narrow areas whose radius is cut short).
    if (area.radius >= WIDE_RADIUS_M) {
      for (const reach of REACH_STEPS_M) {
        if (sides.length >= MIN_SIDES) break;
        const member = new Set(lots);
        const more = all.filter(
          (l) => l.boroughId === area.boroughId && !member.has(l) && haversineMeters(l, area) <= reach,
        );
        if (more.length === 0) continue;
        lots = [...lots, ...more];
        sides = streetSides(lots);
      }
    }
    if (lots.length === 0) continue;
    out.set(area.id, { lots, sides, streets: new Set(lots.map((l) => l.street)) });
  }
  // A ranged lot (`82 TO 92 WASHINGTON ST`) holds every number of its range.
  const realAddresses = new Set<string>();
  for (const lot of all) {
    realAddresses.add(`${lot.boroughId}|${lot.address}`);
    const range = /^(\d+) TO (\d+) /.exec(lot.rawAddress);
    if (!range) continue;
    for (let n = Number(range[1]); n <= Number(range[2]) && n - Number(range[1]) < 200; n += 2)
      realAddresses.add(`${lot.boroughId}|${n} ${lot.street}`);
  }
  const index = { byArea: out, realAddresses, realBbls: new Set(all.map((l) => l.bbl)), all };
  cachedIndex = { areas, index };
  return index;
}

/** Per-generation state: which lots and addresses are taken. */
export class LotPlanner {
  private readonly usedLots = new Set<string>();
  private readonly usedAddresses = new Set<string>();
  private readonly free = new Map<string, LotRecord[]>();
  private readonly full = new Set<number>();

  constructor(readonly index: LotIndex) {}

  areaLots(areaId: number): AreaLots | undefined {
    return this.index.byArea.get(areaId);
  }

  /**
   * Where a building of `type` in `area` stands: a free real lot, else a
   * synthetic address on the area's streets; `{}` for an area without lots
   * (its profile's streets are used); null when the area has lots but no room
   * left, so the building must go elsewhere.
   */
  place(rng: Rng, area: DemoArea, type: BuildingType): Placement | null {
    if (!this.index.byArea.has(area.id)) return {};
    if (this.full.has(area.id)) return null;
    const lot = this.takeLot(rng, area.id, type);
    if (lot) return { lot };
    const site = this.synthesize(rng, area);
    if (site) return { site };
    this.full.add(area.id);
    return null;
  }

  /** A free real lot of the area that can carry a building of `type`, or undefined. */
  takeLot(rng: Rng, areaId: number, type: BuildingType): LotRecord | undefined {
    const area = this.index.byArea.get(areaId);
    if (!area) return undefined;
    const key = `${areaId}|${type}`;
    let free = this.free.get(key);
    if (!free) {
      free = area.lots.filter((l) => lotKind(l).types.has(type));
      this.free.set(key, free);
    }
    while (free.length > 0) {
      const i = rng.int(0, free.length - 1);
      const lot = free[i]!;
      free[i] = free[free.length - 1]!;
      free.pop();
      // Two lots may share an address (written two ways by two sources): one building per address.
      const address = `${lot.boroughId}|${lot.address}`;
      if (this.usedLots.has(lot.bbl) || this.usedAddresses.has(address)) continue;
      this.usedLots.add(lot.bbl);
      this.usedAddresses.add(address);
      return lot;
    }
    return undefined;
  }

  /** A BBL on the tax block of `near` that no real lot has (condo billing lots 7501–7599). */
  syntheticBbl(rng: Rng, near: LotRecord, condo: boolean): string {
    const block = near.bbl.slice(0, 6);
    for (;;) {
      const bbl = `${block}${String(condo ? rng.int(7501, 7599) : rng.int(161, 299)).padStart(4, '0')}`;
      if (!this.index.realBbls.has(bbl)) return bbl;
    }
  }

  /**
   * A new address on a street of the area's real lots, never a real lot's
   * address nor one already given out: first between two real lots on the
   * same side of a street (position interpolated between them, ZIP of the
   * nearer); else, in areas whose lots are scattered one per street, a few
   * numbers from a real lot on the same side of the same block (same hundred,
   * or same Queens block prefix), next to it. Undefined when the area has no
   * lots or no room left.
   */
  synthesize(rng: Rng, area: DemoArea): SyntheticAddress | undefined {
    const lots = this.index.byArea.get(area.id);
    if (!lots) return undefined;
    if (lots.sides.length > 0) {
      for (let attempt = 0; attempt < 24; attempt++) {
        const made = this.between(rng, area, rng.pick(lots.sides));
        if (made) return made;
      }
    }
    for (let attempt = 0; attempt < 80; attempt++) {
      const made = this.beside(rng, area, rng.pick(lots.lots));
      if (made) return made;
    }
    return undefined;
  }

  /**
   * Takes an address for a building (`place` — borough id, or town for New
   * Jersey — and house number + street); false if a real lot or another
   * building has it.
   */
  claim(place: number | string, address: string): boolean {
    const key = `${place}|${address}`;
    if (this.index.realAddresses.has(key) || this.usedAddresses.has(key)) return false;
    this.usedAddresses.add(key);
    return true;
  }

  private between(rng: Rng, area: DemoArea, side: StreetSide): SyntheticAddress | undefined {
    const lo = side.keys[0]!;
    const hi = side.keys.at(-1)!;
    let key = rng.int(lo, hi);
    if (key % 2 !== side.parity) key += key < hi ? 1 : -1;
    const number = side.hyphenated ? key % 100 : key;
    if (number < 1 || (side.hyphenated && number > side.maxNumber)) return undefined;
    const text = side.hyphenated
      ? `${Math.floor(key / 100)}-${String(number).padStart(2, '0')}`
      : String(key);
    const address = `${text} ${side.street}`;
    let upper = side.keys.findIndex((k) => k >= key);
    if (upper < 0) upper = side.keys.length - 1;
    const lower = Math.max(0, upper - 1);
    const a = side.lots[lower]!;
    const b = side.lots[upper]!;
    const span = side.keys[upper]! - side.keys[lower]!;
    const t = span === 0 ? 0 : Math.min(1, Math.max(0, (key - side.keys[lower]!) / span));
    // Far-apart neighbours (a long street with few real lots) would put the address nowhere near either.
    if (haversineMeters(a, b) > MAX_GAP_M || !this.claim(area.boroughId, address)) return undefined;
    const nearer = t < 0.5 ? a : b;
    return {
      street: side.street,
      address,
      near: nearer,
      latitude: round6(a.latitude + (b.latitude - a.latitude) * t),
      longitude: round6(a.longitude + (b.longitude - a.longitude) * t),
    };
  }

  private beside(rng: Rng, area: DemoArea, lot: LotRecord): SyntheticAddress | undefined {
    const h = lot.houseNumber;
    const step = 2 * rng.int(1, BESIDE_MAX_STEPS) * (rng.chance(0.5) ? 1 : -1);
    const number = h.number + step;
    // Same block face: the same hundred (or, Queens style, the same prefix and a two-digit number).
    if (number < 1 || Math.floor(number / 100) !== Math.floor(h.number / 100)) return undefined;
    const text = h.block === null ? String(number) : `${h.block}-${String(number).padStart(2, '0')}`;
    const address = `${text} ${lot.street}`;
    if (!this.claim(area.boroughId, address)) return undefined;
    // A house lot is some 6 m wide per number pair: step along an arbitrary bearing.
    const metres = Math.abs(step / 2) * BESIDE_M_PER_STEP;
    const bearing = rng.next() * 2 * Math.PI;
    const dLat = (metres * Math.cos(bearing)) / 111_320;
    const dLon = (metres * Math.sin(bearing)) / (111_320 * Math.cos((lot.latitude * Math.PI) / 180));
    return {
      street: lot.street,
      address,
      near: lot,
      latitude: round6(lot.latitude + dLat),
      longitude: round6(lot.longitude + dLon),
    };
  }
}

/** Numbers (in pairs) a synthetic address may sit from a lone real lot, and metres per pair. */
export const BESIDE_MAX_STEPS = 20;
/** Two real lots further apart than this are not interpolated between. */
const MAX_GAP_M = 500;
const BESIDE_M_PER_STEP = 7;

/** A building's site: a real lot, a synthetic address, or neither (an area without lots). */
export interface Placement {
  lot?: LotRecord;
  site?: SyntheticAddress;
}

export interface SyntheticAddress {
  street: string;
  /** House number and street (`84 Washington Street`, `31-17 30th Avenue`). */
  address: string;
  /** The real lot it was placed next to (for its ZIP and block). */
  near: LotRecord;
  latitude: number;
  longitude: number;
}

/** The ZIP of the nearest lot of the area that has one (on the same street first). */
export function zipNear(lots: AreaLots, from: LotRecord): string | null {
  if (from.zip !== null) return from.zip;
  let best: LotRecord | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const lot of lots.lots) {
    if (lot.zip === null) continue;
    const score = haversineMeters(lot, from) + (lot.street === from.street ? 0 : 400);
    if (score < bestScore) {
      bestScore = score;
      best = lot;
    }
  }
  return best?.zip ?? null;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
