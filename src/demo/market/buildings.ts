/**
 * The building stock: a fixed set per (seed, scale), independent of time, so a
 * simulator advancing the clock keeps the same buildings while listings churn.
 */
import { type Amenity, amenityMask } from '../../domain/amenities.ts';
import {
  FCC_DISCLAIMER,
  type InternetProvider,
  type InternetProviders,
  TECHNOLOGY_LABELS,
} from '../../domain/broadband.ts';
import type { BuildingType } from '../../domain/listing.ts';
import { violationFigures } from '../../modules/opendata/scores.ts';
import type {
  BuildingScoresTable,
  NewBuilding,
  NewHpdViolation,
  NewPhoto,
} from '../../platform/db/tables.ts';
import type { LotRecord } from '../../reference/lots.ts';
import { ARCHETYPES, type ArchetypeSpec } from './archetypes.ts';
import { type DemoArea, demoAreas } from './geography.ts';
import { LotPlanner, lotIndex, lotKind, type Placement, zipNear } from './lots.ts';
import {
  ARCHITECTS,
  BUILDING_NAMES,
  DEVELOPERS,
  type Firm,
  firmFits,
  MANAGERS,
  NAME_SUFFIXES,
  SMALL_MANAGERS,
} from './names.ts';
import { hexKey, Rng, WeightedTable } from './random.ts';
import { sampleViolations, syntheticViolations } from './violations.ts';

/** Buildings at scale 1. */
export const FULL_SCALE_BUILDINGS = 12_000;

export interface DemoBuilding {
  index: number;
  id: string;
  area: DemoArea;
  spec: ArchetypeSpec;
  type: BuildingType;
  elevator: boolean;
  doorman: boolean;
  yearBuilt: number;
  floors: number;
  units: number;
  /** Price multiplier for the building's finish and service level (1 = area norm). */
  quality: number;
  amenities: readonly Amenity[];
  amenityMask: number;
  petsAllowed: boolean;
  latitude: number;
  longitude: number;
  street: string;
  zip: string;
  managementCompany: string | null;
  /** Rental building whose landlord lists in-house and offers concessions. */
  concessions: boolean;
  row: NewBuilding;
  /** `violations_open` and `health_score` are computed from the BBL's violation rows. */
  scores: BuildingScoresTable;
  photos: NewPhoto[];
  /**
   * The violation rows of the building's BBL, carried by the first building
   * with that BBL (empty for the others and for buildings without a BBL).
   */
  violations: NewHpdViolation[];
}

const BOROUGH_DIGIT: Readonly<Record<number, number>> = { 100: 1, 200: 2, 300: 3, 400: 4, 500: 5 };
const BOROUGH_MAX_BLOCK: Readonly<Record<number, number>> = {
  100: 2250,
  200: 5958,
  300: 8955,
  400: 16350,
  500: 8050,
};
const COUNTY_FIPS: Readonly<Record<number, string>> = {
  100: '36061',
  200: '36005',
  300: '36047',
  400: '36081',
  500: '36085',
};
/** Bergen County towns; the rest of the demo's New Jersey is Hudson County. */
const BERGEN_IDS: ReadonlySet<number> = new Set([1000001, 1000002, 1000003]);

/** One-to-one with the mix keys so building generation can blend rental and sale mixes. */
const TYPES: readonly BuildingType[] = [
  'RENTAL',
  'CONDO',
  'COOP',
  'CONDOP',
  'TOWNHOUSE',
  'MULTI_FAMILY',
  'HOUSE',
];

/** Listing-volume share each building type carries relative to its building count. */
const SMALL_TYPES: ReadonlySet<BuildingType> = new Set(['TOWNHOUSE', 'MULTI_FAMILY', 'HOUSE']);

export function buildingCount(scale: number): number {
  return Math.max(40, Math.round(FULL_SCALE_BUILDINGS * scale));
}

/** Metres → degrees around a latitude; uniform over a disk so density matches a neighborhood. */
export function jitter(rng: Rng, lat: number, lon: number, radiusM: number): [number, number] {
  const r = radiusM * Math.sqrt(rng.next());
  const theta = rng.next() * 2 * Math.PI;
  const dLat = (r * Math.cos(theta)) / 111_320;
  const dLon = (r * Math.sin(theta)) / (111_320 * Math.cos((lat * Math.PI) / 180));
  return [round6(lat + dLat), round6(lon + dLon)];
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** Generates every building of the demo market (pure function of seed, scale and the load instant). */
export function generateBuildings(seed: number, scale: number, now: Date): DemoBuilding[] {
  const { areas } = demoAreas();
  // Small buildings carry few listings each, so townhouse-heavy areas need more of them.
  const areaTable = new WeightedTable(
    areas,
    areas.map((a) => {
      const spec = ARCHETYPES[a.profile.archetype];
      const small =
        (spec.rentMix.MULTI_FAMILY ?? 0) + (spec.saleMix.HOUSE ?? 0) + (spec.saleMix.TOWNHOUSE ?? 0);
      return a.profile.weight * (1 + spec.saleRatio) * (1 + small / 60);
    }),
  );
  const count = buildingCount(scale);
  const nowIso = now.toISOString();
  const year = now.getUTCFullYear();
  const usedSlugs = new Set<string>();
  const planner = new LotPlanner(lotIndex(areas));
  const out: DemoBuilding[] = [];
  const openDraws: number[] = [];
  for (let index = 0; index < count; index++) {
    const rng = new Rng(seed, 'building', index);
    let area = areaTable.pick(rng);
    let spec = ARCHETYPES[area.profile.archetype];
    let type = pickType(rng, spec);
    const id = String(100_001 + index * 3 + (rng.u32() % 3));
    // A real lot of the area fit for the type, else a new address on its real
    // streets (own draws, so the building's other draws stay what they were).
    // An area whose streets are full passes the building to another area.
    const lotRng = new Rng(seed, 'lot', index);
    let placement = planner.place(lotRng, area, type);
    for (let attempt = 0; placement === null && attempt < 50; attempt++) {
      const again = new Rng(seed, 'building-area', index, attempt);
      area = areaTable.pick(again);
      spec = ARCHETYPES[area.profile.archetype];
      type = pickType(again, spec);
      placement = planner.place(lotRng, area, type);
    }
    const made = makeBuilding(rng, {
      seed,
      index,
      id,
      area,
      spec,
      type,
      nowIso,
      year,
      usedSlugs,
      planner,
      lotRng,
      placement: placement ?? {},
    });
    out.push(made.building);
    openDraws.push(made.openViolations);
  }
  attachViolations(seed, out, openDraws, now);
  return out;
}

/**
 * Gives every BBL its violation rows (the real sample's where it has the BBL,
 * else synthetic ones from the buildings' draws) and computes each building's
 * violation figures from its BBL's rows with the scores job's code. Buildings
 * sharing a BBL share its rows, as the scores job and the violations list do.
 */
function attachViolations(
  seed: number,
  buildings: DemoBuilding[],
  openDraws: readonly number[],
  now: Date,
): void {
  const sample = sampleViolations();
  const rowsByBbl = new Map<string, NewHpdViolation[]>();
  for (const b of buildings) {
    const bbl = b.row.bbl;
    if (bbl === null || bbl === undefined) continue;
    const real = sample.get(bbl);
    let rows = rowsByBbl.get(bbl);
    if (rows === undefined) {
      rows = real ? [...real] : [];
      rowsByBbl.set(bbl, rows);
      b.violations = rows;
    }
    if (!real) {
      const site = { index: b.index, bbl, floors: b.floors, open: openDraws[b.index]! };
      rows.push(...syntheticViolations(seed, site, now));
    }
  }
  for (const b of buildings) {
    const bbl = b.row.bbl;
    if (bbl === null || bbl === undefined) continue;
    const open: Partial<Record<NewHpdViolation['class'], number>> = {};
    for (const row of rowsByBbl.get(bbl)!)
      if (row.is_open === 1) open[row.class] = (open[row.class] ?? 0) + 1;
    const figures = violationFigures(open, b.units);
    b.scores.violations_open = figures.violationsOpen;
    b.scores.health_score = figures.health;
  }
}

interface BuildingContext {
  seed: number;
  index: number;
  id: string;
  area: DemoArea;
  spec: ArchetypeSpec;
  type: BuildingType;
  nowIso: string;
  year: number;
  usedSlugs: Set<string>;
  planner: LotPlanner;
  lotRng: Rng;
  placement: Placement;
}

function pickType(rng: Rng, spec: ArchetypeSpec): BuildingType {
  return TYPES[
    rng.weighted(TYPES.map((t) => 0.55 * (spec.rentMix[t] ?? 0) + 0.45 * (spec.saleMix[t] ?? 0)))
  ]!;
}

function makeBuilding(rng: Rng, ctx: BuildingContext): { building: DemoBuilding; openViolations: number } {
  const { area, spec, type, year } = ctx;
  const boroughId = area.boroughId;
  const { lot, site } = ctx.placement;
  const era = spec.eras[rng.weighted(spec.eras.map((e) => e[2]))]!;
  let yearBuilt = rng.int(era[0], Math.min(era[1], year - 1));
  const small = SMALL_TYPES.has(type);
  const drawnWalkup =
    small || (type === 'RENTAL' && rng.chance(spec.walkupShare)) || (type === 'COOP' && rng.chance(0.12));
  const walkup = lot ? lotKind(lot).walkup : drawnWalkup;
  // Walk-up tenements are pre-war; a "new" walk-up is a small infill building.
  if (walkup && !small && yearBuilt > 1940 && rng.chance(0.7)) yearBuilt = rng.int(1890, 1930);
  let floors: number;
  let units: number;
  if (type === 'HOUSE') {
    floors = rng.int(2, 3);
    units = 1;
  } else if (type === 'TOWNHOUSE') {
    floors = rng.int(3, 5);
    units = rng.weighted([55, 25, 12, 8]) + 1;
  } else if (type === 'MULTI_FAMILY') {
    floors = rng.int(2, 4);
    units = rng.int(2, 4);
  } else if (walkup) {
    floors = rng.int(3, 6);
    units = floors * rng.int(2, 5);
  } else {
    const [lo, hi] = spec.floors;
    // Newer buildings are taller; skew heights toward the low end of the range.
    const tall = yearBuilt >= 1990 ? 1 : 0.6;
    floors = Math.max(lo, Math.round(lo + (hi - lo) * rng.next() ** 2 * tall));
    units = Math.max(8, Math.round(floors * rng.range(3, type === 'RENTAL' ? 14 : 9)));
  }
  if (lot) {
    // The lot's own figures where PLUTO has them.
    if (lot.yearBuilt !== null && lot.yearBuilt < year) yearBuilt = lot.yearBuilt;
    if (lot.floors !== null) floors = Math.max(1, Math.round(lot.floors));
    units = Math.max(1, lot.unitsRes);
  }
  const elevator = !walkup;
  const luxury = area.profile.rent >= 4200;
  const doorman = elevator && rng.chance(Math.min(0.95, spec.doorman * (luxury ? 1.25 : 1)));
  const modern = yearBuilt >= 2005;
  // Centred so an area's typical building prices at the area's profile level.
  const quality = Math.exp(
    0.05 * rng.normal() - 0.04 + (doorman ? 0.1 : 0) + (modern ? 0.08 : 0) - (walkup && !small ? 0.07 : 0),
  );

  const amenities = buildingAmenities(rng, { type, elevator, doorman, modern, walkup, yearBuilt, boroughId });
  const petsAllowed =
    type === 'CONDO' || type === 'HOUSE'
      ? rng.chance(0.85)
      : rng.chance(walkup ? 0.45 : type === 'COOP' ? 0.6 : 0.7);

  let [latitude, longitude] = jitter(rng, area.latitude, area.longitude, area.radius);
  let zip = rng.pick(area.profile.zips);
  let street = streetAddress(rng, area);
  const areaLots = ctx.planner.areaLots(area.id);
  const near: LotRecord | undefined = lot ?? site?.near;
  if (lot) {
    street = lot.address;
    latitude = lot.latitude;
    longitude = lot.longitude;
  } else if (site) {
    street = site.address;
    latitude = site.latitude;
    longitude = site.longitude;
  } else {
    // No real lot near this area (New Jersey, a few islands and beaches): its profile's streets.
    const town = area.state === 'NJ' ? area.city : area.boroughId;
    for (let attempt = 0; !ctx.planner.claim(town, street) && attempt < 20; attempt++) {
      street = streetAddress(rng, area);
    }
  }
  if (near && areaLots) zip = zipNear(areaLots, near) ?? zip;

  const named =
    elevator && rng.chance(modern ? 0.45 : doorman ? 0.18 : 0.04) && (type === 'RENTAL' || type === 'CONDO');
  const name = named ? buildingName(rng) : street;
  let slug = slugify(`${street} ${area.slug}`);
  if (ctx.usedSlugs.has(slug)) slug = `${slug}-${ctx.id}`;
  ctx.usedSlugs.add(slug);

  const bigLandlord = type === 'RENTAL' && elevator && units >= 60;
  const managementCompany =
    type === 'HOUSE' || (type === 'MULTI_FAMILY' && rng.chance(0.7))
      ? null
      : bigLandlord || type === 'CONDO' || type === 'COOP' || type === 'CONDOP'
        ? rng.pick(MANAGERS)
        : rng.pick(SMALL_MANAGERS);
  // Credits only from firms that existed when the building went up (none for an era without one).
  const developer =
    modern || (yearBuilt >= 1980 && rng.chance(0.5)) ? creditFor(rng, DEVELOPERS, yearBuilt) : null;
  const architect = elevator && (modern || rng.chance(0.4)) ? creditFor(rng, ARCHITECTS, yearBuilt) : null;
  const concessions = type === 'RENTAL' && elevator && yearBuilt >= 2005 && rng.chance(spec.concession * 1.6);

  let taxAbatement: string | null = null;
  let abatementYears: number | null = null;
  if (
    boroughId !== 1000000 &&
    (type === 'RENTAL' || type === 'CONDO') &&
    yearBuilt >= 2008 &&
    rng.chance(0.75)
  ) {
    taxAbatement = yearBuilt >= 2023 ? '485x' : '421a';
    abatementYears = Math.max(0, yearBuilt + (type === 'RENTAL' ? 35 : 15) - year);
  } else if (boroughId !== 1000000 && type === 'RENTAL' && yearBuilt < 1975 && rng.chance(0.08)) {
    taxAbatement = 'J-51';
    abatementYears = rng.int(0, 14);
  }

  const boroughDigit = BOROUGH_DIGIT[boroughId];
  const isCondo = type === 'CONDO' || type === 'CONDOP';
  const drawnBbl =
    boroughDigit !== undefined && rng.chance(0.9)
      ? `${boroughDigit}${String(rng.int(1, BOROUGH_MAX_BLOCK[boroughId]!)).padStart(5, '0')}${String(
          isCondo ? rng.int(7501, 7599) : rng.int(1, 160),
        ).padStart(4, '0')}`
      : null;
  // A synthetic address sits on the tax block of the real lot beside it, on a lot number of its own.
  const bbl = lot
    ? lot.bbl
    : site && drawnBbl !== null
      ? ctx.planner.syntheticBbl(ctx.lotRng, site.near, isCondo)
      : drawnBbl;
  const bin =
    boroughDigit !== undefined && rng.chance(0.88)
      ? `${boroughDigit}${rng.int(0, 999_999).toString().padStart(6, '0')}`
      : null;
  const renovated =
    yearBuilt < 1990 && rng.chance(0.35) ? rng.int(Math.max(yearBuilt + 20, 1985), year - 1) : null;

  const internet = internetProviders(rng, area, street, zip, units, ctx.nowIso);
  const { scores, openViolations } = buildingScores(rng, {
    area,
    spec,
    type,
    walkup,
    yearBuilt,
    units,
    id: ctx.id,
    nowIso: ctx.nowIso,
  });
  const dogs = petsAllowed && rng.chance(0.8);

  const row: NewBuilding = {
    id: ctx.id,
    slug,
    name,
    address_street: street,
    city: area.city,
    state: area.state,
    zip_code: zip,
    area_id: area.id,
    building_type: type,
    year_built: rng.chance(0.97) ? yearBuilt : null,
    year_renovated: renovated,
    floor_count: floors,
    unit_count: units,
    latitude,
    longitude,
    bbl,
    bin,
    management_company: managementCompany,
    developer,
    architect,
    tax_abatement_status: taxAbatement,
    tax_abatement_years_remaining: abatementYears,
    amenities_json: JSON.stringify({
      list: amenities,
      doorman: doorman
        ? rng.chance(0.75)
          ? 'FULL_TIME'
          : 'PART_TIME'
        : amenities.includes('virtual_doorman')
          ? 'VIRTUAL'
          : 'NONE',
      laundry: amenities.includes('laundry_in_building') ? 'IN_BUILDING' : small ? 'IN_UNIT' : 'NONE',
      parking: amenities.includes('parking')
        ? boroughId === 100
          ? 'GARAGE_FEE'
          : 'GARAGE'
        : small && boroughId >= 300
          ? 'DRIVEWAY'
          : 'NONE',
    }),
    policies_json: JSON.stringify(buildingPolicies(rng, type, petsAllowed, dogs)),
    nyc_data_json: JSON.stringify(
      boroughDigit === undefined
        ? { county: BERGEN_IDS.has(area.id) ? 'Bergen' : 'Hudson', municipality: area.city }
        : {
            communityDistrict: area.profile.communityDistrict,
            policePrecinct: area.profile.policePrecinct,
            buildingClass: lotClassOr(lot, buildingClass(rng, type, walkup, units)),
            zoning: zoning(rng, area),
            landmarkDistrict: yearBuilt < 1920 && rng.chance(0.25),
            rentStabilizedUnits:
              type === 'RENTAL' && (yearBuilt < 1974 || taxAbatement === '421a') && rng.chance(0.6)
                ? Math.round(units * rng.range(0.2, 1))
                : 0,
          },
    ),
    additional_details_json: JSON.stringify({
      lotSizeSqft: Math.round((small ? rng.range(1500, 3500) : rng.range(2500, 40_000)) / 10) * 10,
      elevators: elevator ? Math.max(1, Math.round(units / 90)) : 0,
      heating: rng.pick(
        modern ? ['Forced air', 'Electric heat pump', 'Hot water'] : ['Steam', 'Hot water', 'Steam'],
      ),
      cooling: amenities.includes('central_air')
        ? 'Central'
        : rng.pick(['Through-wall units', 'Window units', 'Ductless mini-split']),
      construction: small && boroughId >= 400 ? 'Wood frame' : modern ? 'Concrete' : 'Brick',
      lobby: doorman ? 'Attended' : elevator ? 'Unattended' : null,
    }),
    internet_providers_json: internet ? JSON.stringify(internet) : null,
    fiber_available: internet?.providers.some((p) => p.technologyCode === 50) ? 1 : 0,
    max_download_mbps: internet ? Math.max(...internet.providers.map((p) => p.maxDownloadMbps)) : null,
    pets_allowed: petsAllowed ? 1 : 0,
    refreshed_at: ctx.nowIso,
    created_at: ctx.nowIso,
    updated_at: ctx.nowIso,
  };
  const photos: NewPhoto[] = [];
  const photoRng = new Rng(ctx.seed, 'building-photos', ctx.id);
  const photoCount = elevator ? photoRng.int(1, 3) : photoRng.int(0, 1);
  for (let position = 0; position < photoCount; position++) {
    const key = hexKey(ctx.seed, 'building-photo', ctx.id, position);
    photos.push({
      key,
      listing_id: null,
      building_id: ctx.id,
      position,
      width: 1200,
      height: 800,
      caption: position === 0 ? 'Exterior' : rng.pick(['Lobby', 'Roof deck', 'Street view', 'Entrance']),
      render_seed: Number.parseInt(key.slice(0, 8), 16) & 0x7fffffff,
    });
  }
  return {
    building: {
      index: ctx.index,
      id: ctx.id,
      area,
      spec,
      type,
      elevator,
      doorman,
      yearBuilt,
      floors,
      units,
      quality,
      amenities,
      amenityMask: amenityMask(amenities),
      petsAllowed,
      latitude,
      longitude,
      street,
      zip,
      managementCompany,
      concessions,
      row,
      scores,
      photos,
      violations: [],
    },
    openViolations,
  };
}

interface AmenityInput {
  type: BuildingType;
  elevator: boolean;
  doorman: boolean;
  modern: boolean;
  walkup: boolean;
  yearBuilt: number;
  boroughId: number;
}

function buildingAmenities(rng: Rng, b: AmenityInput): Amenity[] {
  const list: Amenity[] = [];
  const add = (amenity: Amenity, p: number) => {
    if (rng.chance(p)) list.push(amenity);
  };
  const house = b.type === 'HOUSE' || b.type === 'TOWNHOUSE' || b.type === 'MULTI_FAMILY';
  if (b.doorman) list.push('doorman');
  if (b.elevator) list.push('elevator');
  if (!house) add('laundry_in_building', b.modern ? 0.5 : b.elevator ? 0.85 : 0.35);
  if (b.elevator) {
    add('gym', b.modern ? 0.85 : b.doorman ? 0.45 : 0.1);
    add('pool', b.modern && b.doorman ? 0.18 : 0.01);
    add('roof_deck', b.modern ? 0.75 : 0.2);
    add('parking', b.boroughId === 100 ? (b.modern ? 0.3 : 0.15) : 0.45);
    add('storage', 0.45);
    add('bike_room', b.modern ? 0.85 : 0.35);
    add('package_room', b.modern ? 0.9 : 0.35);
    if (b.doorman) add('concierge', b.modern ? 0.7 : 0.3);
    add('live_in_super', b.modern ? 0.3 : 0.75);
    add('childrens_playroom', b.modern && b.doorman ? 0.45 : 0.05);
    add('media_room', b.modern ? 0.3 : 0.02);
    add('cold_storage', b.modern ? 0.5 : 0.03);
    add('wheelchair_access', b.yearBuilt >= 1990 ? 0.9 : 0.35);
    add('green_building', b.modern ? 0.3 : 0.01);
    add('central_air', b.yearBuilt >= 1990 ? 0.8 : 0.1);
  } else {
    add('virtual_doorman', b.modern ? 0.5 : 0.12);
    add('roof_deck', 0.08);
    add('garden', house ? 0.6 : 0.15);
    add('bike_room', 0.1);
    if (house) add('parking', b.boroughId >= 400 && b.boroughId < 1000000 ? 0.7 : 0.2);
  }
  if (b.modern && !b.doorman && b.elevator) add('virtual_doorman', 0.5);
  if (b.type === 'CONDO' || b.type === 'CONDOP') add('pied_a_terre_allowed', 0.85);
  else if (b.type === 'COOP') add('pied_a_terre_allowed', 0.08);
  return list;
}

function buildingPolicies(
  rng: Rng,
  type: BuildingType,
  pets: boolean,
  dogs: boolean,
): Record<string, unknown> {
  const coop = type === 'COOP';
  return {
    petsAllowed: pets,
    dogsAllowed: dogs,
    catsAllowed: pets,
    petWeightLimitLbs: dogs && rng.chance(0.4) ? rng.pick([25, 35, 50]) : null,
    guarantorsAccepted: rng.chance(coop ? 0.3 : 0.9),
    smokeFree: rng.chance(0.55),
    subletPolicy: coop ? rng.pick(['Not allowed', '2 of 5 years', 'Case by case']) : 'Allowed',
    boardApprovalRequired: coop || type === 'CONDOP',
    minimumDownPaymentPct: coop ? rng.pick([10, 20, 20, 25, 30, 50]) : type === 'CONDO' ? 10 : null,
    flipTaxPct: coop && rng.chance(0.55) ? rng.pick([1, 1.5, 2, 2, 3]) : null,
    coPurchasingAllowed: coop ? rng.chance(0.5) : true,
  };
}

function buildingClass(rng: Rng, type: BuildingType, walkup: boolean, units: number): string {
  switch (type) {
    case 'HOUSE':
      return rng.pick(['A1', 'A2', 'A5', 'A9']);
    case 'TOWNHOUSE':
      return units > 1 ? rng.pick(['B1', 'B2', 'C0']) : rng.pick(['A4', 'A5', 'A7']);
    case 'MULTI_FAMILY':
      return units === 2 ? rng.pick(['B1', 'B2', 'B3', 'S2']) : rng.pick(['C0', 'S3']);
    case 'COOP':
      return walkup ? 'C6' : 'D4';
    case 'CONDO':
    case 'CONDOP':
      return walkup ? 'R2' : 'R4';
    default:
      return walkup ? rng.pick(['C1', 'C4', 'C7', 'C2']) : rng.pick(['D1', 'D3', 'D6', 'D7', 'D8', 'D9']);
  }
}

/** The lot's PLUTO class when it has one, else the drawn one (drawn either way, so later draws stay put). */
function lotClassOr(lot: LotRecord | undefined, drawn: string): string {
  return lot?.buildingClass ?? drawn;
}

function zoning(rng: Rng, area: DemoArea): string {
  switch (area.boroughId) {
    case 100:
      return rng.pick(['C6-4', 'C6-2A', 'R8B', 'R10A', 'C5-2', 'R7-2', 'C6-3']);
    case 200:
      return rng.pick(['R7-1', 'R6', 'R8', 'C4-4', 'R6A']);
    case 300:
      return rng.pick(['R6B', 'R7A', 'R6', 'C4-3', 'R5', 'R8A']);
    case 400:
      return rng.pick(['R5', 'R6B', 'R4', 'R7-1', 'R6', 'M1-4/R7A']);
    default:
      return rng.pick(['R3-2', 'R3X', 'R3A', 'R4']);
  }
}

const STREET_TYPE_NUMBERED = /^(\d+)(st|nd|rd|th) (Street|Avenue|Road|Drive|Place|Lane)$/;

function streetAddress(rng: Rng, area: DemoArea): string {
  const street = rng.pick(area.profile.streets);
  if (area.boroughId === 400 && STREET_TYPE_NUMBERED.test(street)) {
    // Queens hyphenated addresses: cross-street block, then house number.
    return `${rng.int(10, 220)}-${String(rng.int(1, 99)).padStart(2, '0')} ${street}`;
  }
  const avenue = /Avenue|Boulevard|Broadway|Parkway|Drive|Road|Bowery/.test(street);
  const max = area.boroughId === 100 ? (avenue ? 2200 : 560) : avenue ? 1800 : 900;
  // House numbers cluster low: most blocks have small numbers.
  const number = Math.max(1, Math.round(max * rng.next() ** 1.6));
  return `${number} ${street}`;
}

function buildingName(rng: Rng): string {
  const stem = rng.pick(BUILDING_NAMES);
  const suffix = rng.pick(NAME_SUFFIXES);
  return suffix === '' ? `The ${stem}` : `${stem}${suffix}`;
}

interface ScoreInput {
  area: DemoArea;
  spec: ArchetypeSpec;
  type: BuildingType;
  walkup: boolean;
  yearBuilt: number;
  units: number;
  id: string;
  nowIso: string;
}

/** Area-level quirks on top of the archetype baselines (Midtown is loud, the Rockaways far from the subway). */
const SCORE_TWEAKS: Readonly<Record<number, readonly [transit: number, quiet: number, safety: number]>> = {
  120: [4, -18, -10],
  122: [4, -15, -8],
  152: [0, -12, -4],
  124: [0, -10, -4],
  121: [0, -6, 4],
  101: [-15, 20, 12],
  112: [-4, 18, 10],
  105: [-2, 5, 6],
  110: [0, -10, 0],
  117: [0, -10, -2],
  109: [0, -10, -2],
  341: [-10, -5, -10],
  354: [-5, -5, -20],
  201: [0, -10, -12],
  204: [-8, -10, -15],
};

/**
 * Noise, safety and transit scores (the demo has no 311, NYPD or GTFS rows to
 * compute them from) and the building's draw of open HPD violations; the
 * violation figures are computed from the rows later (`attachViolations`).
 */
function buildingScores(rng: Rng, b: ScoreInput): { scores: BuildingScoresTable; openViolations: number } {
  const tweak = SCORE_TWEAKS[b.area.id] ?? [0, 0, 0];
  const borough = b.area.boroughId;
  const boroughTransit = borough === 100 ? 6 : borough === 500 ? -12 : borough === 1000000 ? -6 : 0;
  const boroughSafety = borough === 200 ? -14 : borough === 500 ? 6 : 0;
  const clamp = (x: number) => Math.max(0, Math.min(100, Math.round(x)));
  const transit = clamp(b.spec.transit + boroughTransit + tweak[0] + 8 * rng.normal());
  const noise = clamp(b.spec.quiet + tweak[1] + (b.walkup ? 3 : 0) + 9 * rng.normal());
  const safety = clamp(b.spec.safety + boroughSafety + tweak[2] + 8 * rng.normal());
  // Open HPD violations pile up in old rental walk-ups; condos and houses have few.
  const oldRental = b.type === 'RENTAL' && b.yearBuilt < 1950;
  const violationMean =
    b.type === 'RENTAL'
      ? (oldRental ? 6 : 1.2) * (borough === 200 ? 2.2 : borough === 100 ? 0.8 : 1) * Math.sqrt(b.units / 20)
      : b.type === 'MULTI_FAMILY'
        ? 0.6
        : 0.15;
  const openViolations = rng.poisson(violationMean);
  // Drawn and unused since health comes from violation rows: later draws (and so
  // every other field of the market) stay what they were.
  rng.normal();
  rng.chance(0.03);
  return {
    scores: {
      building_id: b.id,
      health_score: null,
      noise_score: rng.chance(0.04) ? null : noise,
      safety_score: rng.chance(0.03) ? null : safety,
      transit_score: rng.chance(0.02) ? null : transit,
      violations_open: 0,
      updated_at: b.nowIso,
    },
    openViolations,
  };
}

function provider(
  providerId: number,
  providerName: string,
  holdingCompanyName: string,
  technologyCode: number,
  down: number,
  up: number,
): InternetProvider {
  return {
    providerId,
    providerName,
    holdingCompanyName,
    technologyCode,
    technologyLabel: TECHNOLOGY_LABELS[technologyCode]!,
    maxDownloadMbps: down,
    maxUploadMbps: up,
    lowLatency: technologyCode !== 61 || providerName === 'Starlink',
  };
}

const FIOS_SHARE: Readonly<Record<number, number>> = {
  100: 0.72,
  200: 0.55,
  300: 0.62,
  400: 0.7,
  500: 0.8,
  1000000: 0.65,
};

function internetProviders(
  rng: Rng,
  area: DemoArea,
  street: string,
  zip: string,
  units: number,
  nowIso: string,
): InternetProviders | null {
  if (rng.chance(0.05)) return null;
  const borough = area.boroughId;
  const providers: InternetProvider[] = [];
  if (rng.chance(FIOS_SHARE[borough] ?? 0.6)) {
    providers.push(
      provider(
        131425,
        'Verizon Fios',
        'Verizon Communications Inc.',
        50,
        rng.chance(0.6) ? 2300 : 940,
        rng.chance(0.6) ? 2300 : 880,
      ),
    );
  } else if (rng.chance(0.4)) {
    providers.push(provider(131425, 'Verizon', 'Verizon Communications Inc.', 10, 15, 1));
  }
  const eastBrooklyn = borough === 300 && area.longitude > -73.95;
  if (borough === 200 || eastBrooklyn || BERGEN_IDS.has(area.id)) {
    providers.push(provider(130317, 'Optimum', 'Altice USA, Inc.', 40, 1000, 50));
    if (rng.chance(0.25))
      providers.push(provider(130317, 'Optimum Fiber', 'Altice USA, Inc.', 50, 8000, 8000));
  } else if (borough === 1000000) {
    providers.push(provider(130228, 'Xfinity', 'Comcast Corporation', 40, 2000, 200));
  } else {
    providers.push(provider(130077, 'Spectrum', 'Charter Communications Inc.', 40, 1000, 35));
  }
  if ((borough === 100 || borough === 400 || borough === 300) && rng.chance(0.25)) {
    providers.push(provider(130627, 'Astound Broadband (RCN)', 'Radiate Holdings, L.P.', 40, 1200, 50));
  }
  providers.push(
    provider(
      130403,
      'T-Mobile Home Internet',
      'T-Mobile USA, Inc.',
      71,
      rng.pick([245, 318, 415]),
      rng.pick([31, 55]),
    ),
  );
  if (rng.chance(0.6))
    providers.push(provider(131425, 'Verizon 5G Home', 'Verizon Communications Inc.', 71, 300, 50));
  providers.push(provider(430076, 'Starlink', 'Space Exploration Technologies Corp.', 61, 220, 25));
  const county = COUNTY_FIPS[borough] ?? (BERGEN_IDS.has(area.id) ? '34003' : '34017');
  const tract = String(rng.int(1, 1600) * 100 + rng.pick([0, 0, 0, 1, 2])).padStart(6, '0');
  const block = String(rng.int(1000, 3015));
  return {
    status: 'matched',
    source: 'fcc_bdc',
    coverageLevel: 'building',
    fccLocationId: 1_000_000_000 + rng.int(0, 799_999_999),
    blockGeoid: `${county}${tract}${block}`,
    matchedAddress: `${street.toUpperCase()}, ${area.city.toUpperCase()}, ${area.state} ${zip}`,
    unitCount: units,
    updatedAt: nowIso,
    providers,
    disclaimer: FCC_DISCLAIMER,
  };
}

/** A firm of `firms` that could have worked on a building completed in `yearBuilt`, or null. */
function creditFor(rng: Rng, firms: readonly Firm[], yearBuilt: number): string | null {
  const eligible = firms.filter((firm) => firmFits(firm, yearBuilt));
  return eligible.length === 0 ? null : rng.pick(eligible).name;
}
