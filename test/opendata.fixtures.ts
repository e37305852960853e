/**
 * Generates the synthetic open-data samples in fixtures/open-data/ (the MTA
 * stops file there is a real extract and is not generated; see its README).
 *
 * Every sample sits on the demo market of FIXTURE_SEED (the default DEMO_SEED):
 * its first buildings are the same at any scale, so violations, lots, broadband
 * records and complaints land on (or near) real demo buildings and the imports
 * match. Regenerate after a change to the demo building generator with
 *   npx tsx test/opendata.fixtures.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { latLngToCell } from 'h3-js';
import { type DemoBuilding, generateBuildings, jitter } from '../src/demo/market/buildings.ts';
import { loadDemoMarket } from '../src/demo/market/load.ts';
import { Rng } from '../src/demo/market/random.ts';
import type { Store } from '../src/platform/db/database.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { parseCsv } from '../src/reference/csv.ts';
import { createTestStore } from './support/store.ts';

export const FIXTURE_SEED = 20261121;
/** The demo scale whose buildings the samples use (240 buildings). */
export const FIXTURE_SCALE = 0.02;
export const FIXTURE_NOW = new Date('2026-11-01T15:00:00.000Z');
export const FIXTURE_DIR = resolve(import.meta.dirname, '..', 'fixtures', 'open-data');

export function fixtureBuildings(): DemoBuilding[] {
  return generateBuildings(FIXTURE_SEED, FIXTURE_SCALE, FIXTURE_NOW);
}

/** A fresh store (dialect under test) holding the demo market the samples were made for. */
export async function createFixtureStore(): Promise<Store> {
  const store = await createTestStore();
  await syncAreas(store);
  await loadDemoMarket(store, { seed: FIXTURE_SEED, scale: FIXTURE_SCALE, now: FIXTURE_NOW });
  // The import tests compare the tables with the samples they import: the demo's
  // own violation rows would add to the samples' on the same BBLs.
  await store.db.deleteFrom('hpd_violations').execute();
  return store;
}

export function fixturePath(name: string): string {
  return join(FIXTURE_DIR, name);
}

/** A sample read with the reference CSV reader (an oracle independent of the importer's parser). */
export function readFixture(name: string): Record<string, string>[] {
  return parseCsv(readFileSync(fixturePath(name), 'utf8'));
}

function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csv(header: readonly string[], rows: readonly (readonly (string | number | null)[])[]): string {
  return `${[header, ...rows].map((row) => row.map(csvField).join(',')).join('\n')}\n`;
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** `MM/DD/YYYY hh:mm:ss AM` as the NYC Open Data website exports dates. */
function usDateTime(ms: number): string {
  const d = new Date(ms);
  const h = d.getUTCHours();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${d.getUTCFullYear()} ${pad(h % 12 === 0 ? 12 : h % 12)}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} ${h < 12 ? 'AM' : 'PM'}`;
}

function usDate(ms: number): string {
  return usDateTime(ms).slice(0, 10);
}

const DAY = 86_400_000;
const BORO_NAMES = ['', 'MANHATTAN', 'BRONX', 'BROOKLYN', 'QUEENS', 'STATEN ISLAND'];

/** A date within the 12 months before FIXTURE_NOW (most), or older (the rest). */
function complaintTime(rng: Rng, recentShare: number): number {
  const now = FIXTURE_NOW.getTime();
  const days = rng.chance(recentShare) ? rng.int(2, 350) : rng.int(380, 900);
  return now - days * DAY - rng.int(0, 86_399) * 1000;
}

const nycBuildings = (all: readonly DemoBuilding[]) => all.filter((b) => b.area.boroughId < 1000000);

// --- HPD violations ----------------------------------------------------------

const HPD_HEADER = [
  'violationid',
  'buildingid',
  'registrationid',
  'boroid',
  'boro',
  'housenumber',
  'lowhousenumber',
  'highhousenumber',
  'streetname',
  'streetcode',
  'zip',
  'apartment',
  'story',
  'block',
  'lot',
  'class',
  'inspectiondate',
  'approveddate',
  'originalcertifybydate',
  'originalcorrectbydate',
  'newcertifybydate',
  'newcorrectbydate',
  'certifieddate',
  'ordernumber',
  'novid',
  'novdescription',
  'novissueddate',
  'currentstatusid',
  'currentstatus',
  'currentstatusdate',
  'novtype',
  'violationstatus',
  'rentimpairing',
  'latitude',
  'longitude',
  'communityboard',
  'councildistrict',
  'censustract',
  'bin',
  'bbl',
  'nta',
] as const;

const NOV_DESCRIPTIONS: Readonly<Record<'A' | 'B' | 'C' | 'I', readonly string[]>> = {
  A: [
    '§ 27-2005 ADM CODE PAINT WITH LIGHT COLORED PAINT TO THE SATISFACTION OF THIS DEPARTMENT THE CEILING IN THE KITCHEN LOCATED AT APT 3B, 3rd STORY, 1st APARTMENT FROM EAST AT SOUTH',
    '§ 27-2046.1 HMC: REPAIR OR REPLACE THE SMOKE DETECTOR, "DEFECTIVE", IN THE ENTIRE APARTMENT',
    '§ 27-2005 ADM CODE PROPERLY REPAIR THE BROKEN OR DEFECTIVE WOOD FLOOR IN THE FOYER',
  ],
  B: [
    '§ 27-2005 ADM CODE REPAIR THE BROKEN OR DEFECTIVE PLASTERED SURFACES AND PAINT IN A UNIFORM COLOR CEILING IN THE BATHROOM',
    '§ 27-2017.3 HMC: TRACE AND ERADICATE THE INFESTATION OF MICE IN THE ENTIRE APARTMENT',
    '§ 27-2005 ADM CODE REPAIR THE LEAKY AND/OR DEFECTIVE FAUCETS AT KITCHEN SINK',
  ],
  C: [
    '§ 27-2031 ADM CODE PROVIDE HOT WATER AT ALL HOURS AT ALL FIXTURES, IN THE ENTIRE BUILDING',
    '§ 27-2056.6 ADM CODE CORRECT THE LEAD-BASED PAINT HAZARD - DETERIORATED SUBSURFACE AT WINDOW SILL',
    '§ 27-2046.1 HMC: PROVIDE AN APPROVED AND OPERATIONAL CARBON MONOXIDE DETECTING DEVICE IN THE BEDROOM',
  ],
  I: ['§ 27-2056.4 ADM CODE FILE AN ANNUAL REPORT (INFORMATION ORDER) WITH THIS DEPARTMENT'],
};

const OPEN_STATUSES = [
  'NOV SENT OUT',
  'VIOLATION OPEN',
  'FIRST NO ACCESS TO RE- INSPECT VIOLATION',
  'NOT COMPLIED WITH',
];
const CLOSED_STATUSES = ['VIOLATION CLOSED', 'VIOLATION DISMISSED', 'NOV CERTIFIED ON TIME'];

function hpdViolations(buildings: readonly DemoBuilding[]): string {
  const rows: (string | number | null)[][] = [];
  let violationId = 15_800_000;
  for (const b of nycBuildings(buildings)) {
    const bbl = b.row.bbl;
    // HPD enforces the housing code in multiple dwellings (3+ units).
    if (!bbl || b.units < 3) continue;
    const rng = new Rng(FIXTURE_SEED, 'fixture-hpd', b.id);
    // Old rental buildings carry most violations; a quarter of buildings have none.
    const mean = b.type === 'RENTAL' && b.yearBuilt < 1950 ? 7 : 1.5;
    const count = rng.chance(0.25) ? 0 : Math.min(14, rng.poisson(mean));
    const [house, ...street] = b.street.split(' ');
    for (let i = 0; i < count; i++) {
      const cls = (['A', 'B', 'C', 'I'] as const)[rng.weighted([40, 40, 17, 3])]!;
      const inspected = FIXTURE_NOW.getTime() - rng.int(5, 900) * DAY;
      const open = rng.chance(inspected > FIXTURE_NOW.getTime() - 400 * DAY ? 0.6 : 0.25);
      const status = open ? rng.pick(OPEN_STATUSES) : rng.pick(CLOSED_STATUSES);
      const storey = rng.int(1, Math.max(1, b.floors));
      const apartment = `${storey}${'ABCDEF'[rng.int(0, 5)]}`;
      rows.push([
        violationId++,
        400_000 + Number(b.id.slice(-5)),
        100_000 + Number(b.id.slice(-5)),
        bbl[0]!,
        BORO_NAMES[Number(bbl[0])]!,
        house ?? '',
        house ?? '',
        house ?? '',
        street.join(' ').toUpperCase(),
        rng.int(10000, 99999),
        b.zip,
        apartment,
        storey,
        Number(bbl.slice(1, 6)),
        Number(bbl.slice(6)),
        cls,
        `${isoDay(inspected)}T00:00:00.000`,
        `${isoDay(inspected + 2 * DAY)}T00:00:00.000`,
        `${isoDay(inspected + 30 * DAY)}T00:00:00.000`,
        `${isoDay(inspected + 21 * DAY)}T00:00:00.000`,
        '',
        '',
        open ? '' : `${isoDay(inspected + 25 * DAY)}T00:00:00.000`,
        rng.int(500, 780),
        9_000_000 + violationId,
        rng.pick(NOV_DESCRIPTIONS[cls]),
        `${isoDay(inspected + 3 * DAY)}T00:00:00.000`,
        open ? 2 : 19,
        status,
        `${isoDay(inspected + 10 * DAY)}T00:00:00.000`,
        'Original',
        open ? 'Open' : 'Close',
        cls === 'C' && rng.chance(0.3) ? 'Y' : 'N',
        b.latitude,
        b.longitude,
        Number(bbl[0]) * 100 + rng.int(1, 12),
        rng.int(1, 51),
        rng.int(1, 1500),
        b.row.bin ?? null,
        bbl,
        'MN99',
      ]);
    }
  }
  return csv(HPD_HEADER, rows);
}

// --- PLUTO -------------------------------------------------------------------

const PLUTO_HEADER = [
  'borough',
  'block',
  'lot',
  'cd',
  'ct2010',
  'cb2010',
  'schooldist',
  'council',
  'zipcode',
  'firecomp',
  'policeprct',
  'address',
  'zonedist1',
  'bldgclass',
  'landuse',
  'ownertype',
  'ownername',
  'lotarea',
  'bldgarea',
  'numbldgs',
  'numfloors',
  'unitsres',
  'unitstotal',
  'lotfront',
  'lotdepth',
  'yearbuilt',
  'yearalter1',
  'yearalter2',
  'histdist',
  'landmark',
  'bbl',
  'condono',
  'xcoord',
  'ycoord',
  'latitude',
  'longitude',
  'version',
] as const;

const BOROUGH_CODES = ['', 'MN', 'BX', 'BK', 'QN', 'SI'];

function plutoLots(buildings: readonly DemoBuilding[]): string {
  const rows: (string | number | null)[][] = [];
  const used = new Set<string>();
  const lotRow = (rng: Rng, bbl: string, lat: number, lon: number, b: DemoBuilding | null) => {
    const boro = Number(bbl[0]);
    const nycData = b ? (JSON.parse(b.row.nyc_data_json) as Record<string, string | number>) : {};
    const district = String(nycData.communityDistrict ?? `${BOROUGH_CODES[boro]}0${rng.int(1, 9)}`);
    const floors = b ? b.floors : rng.int(2, 6);
    const units = b ? b.units + (rng.chance(0.3) ? rng.int(1, 3) : 0) : rng.int(1, 24);
    const year = b ? (rng.chance(0.2) ? b.yearBuilt + rng.int(-3, 3) : b.yearBuilt) : rng.int(1899, 2015);
    // A few lots in PLUTO's numeric export form, to exercise BBL normalization.
    const bblText = rng.chance(0.2) ? `${bbl}.00000000` : bbl;
    rows.push([
      BOROUGH_CODES[boro]!,
      Number(bbl.slice(1, 6)),
      Number(bbl.slice(6)),
      `${boro}${district.slice(2)}`,
      rng.int(1, 1500),
      rng.int(1000, 3015),
      rng.int(1, 32),
      rng.int(1, 51),
      b?.zip ?? '',
      `E${rng.int(1, 330).toString().padStart(3, '0')}`,
      nycData.policePrecinct ?? rng.int(1, 123),
      b ? b.street.toUpperCase() : `${rng.int(1, 500)} SAMPLE STREET`,
      rng.pick(['R6', 'R7A', 'R8B', 'C6-2', 'R5']),
      String(nycData.buildingClass ?? rng.pick(['C1', 'D1', 'B2'])),
      rng.pick(['01', '02', '03', '04']),
      rng.chance(0.9) ? '' : 'X',
      'SAMPLE OWNER LLC',
      rng.int(1500, 40000),
      rng.int(2000, 200000),
      1,
      rng.chance(0.1) ? `${floors}.50` : `${floors}.00`,
      units,
      units + (rng.chance(0.2) ? 1 : 0),
      rng.int(18, 100),
      100,
      year,
      rng.chance(0.3) ? rng.int(1990, 2020) : 0,
      0,
      '',
      '',
      bblText,
      0,
      rng.int(980000, 1040000),
      rng.int(150000, 260000),
      lat,
      lon,
      '25v1',
    ]);
  };
  for (const b of nycBuildings(buildings)) {
    const rng = new Rng(FIXTURE_SEED, 'fixture-pluto', b.id);
    if (b.row.bbl) {
      if (used.has(b.row.bbl)) continue;
      used.add(b.row.bbl);
      // Lot centroids are a little off the geocoded building point.
      const [lat, lon] = jitter(rng, b.latitude, b.longitude, 12);
      lotRow(rng, b.row.bbl, lat, lon, b);
    } else {
      // A building without a BBL: its lot is within a few metres of its point.
      const [lat, lon] = jitter(rng, b.latitude, b.longitude, 15);
      const bbl = `${b.area.boroughId / 100}${String(rng.int(1, 2000)).padStart(5, '0')}${String(rng.int(1, 99)).padStart(4, '0')}`;
      if (used.has(bbl)) continue;
      used.add(bbl);
      lotRow(rng, bbl, lat, lon, b);
    }
  }
  // Lots that match no building: far from every demo point.
  const rng = new Rng(FIXTURE_SEED, 'fixture-pluto-extra');
  for (let i = 0; i < 40; i++) {
    const bbl = `5${String(rng.int(1, 8050)).padStart(5, '0')}${String(rng.int(1, 200)).padStart(4, '0')}`;
    if (used.has(bbl)) continue;
    used.add(bbl);
    lotRow(rng, bbl, 40.5 + rng.range(0, 0.02), -74.24 + rng.range(0, 0.02), null);
  }
  return csv(PLUTO_HEADER, rows);
}

// --- FCC BDC fixed availability --------------------------------------------

const FCC_HEADER = [
  'frn',
  'provider_id',
  'brand_name',
  'location_id',
  'technology',
  'max_advertised_download_speed',
  'max_advertised_upload_speed',
  'low_latency',
  'business_residential_code',
  'state_usps',
  'block_geoid',
  'h3_res8_id',
] as const;

interface Offer {
  frn: string;
  providerId: number;
  brand: string;
  technology: number;
  down: number;
  up: number;
  lowLatency: number;
}

const OFFERS: Readonly<Record<string, Offer>> = {
  fios: {
    frn: '0003290673',
    providerId: 131425,
    brand: 'Verizon',
    technology: 50,
    down: 2300,
    up: 2300,
    lowLatency: 1,
  },
  dsl: {
    frn: '0003290673',
    providerId: 131425,
    brand: 'Verizon',
    technology: 10,
    down: 15,
    up: 1,
    lowLatency: 1,
  },
  spectrum: {
    frn: '0004350807',
    providerId: 130077,
    brand: 'Spectrum',
    technology: 40,
    down: 1000,
    up: 35,
    lowLatency: 1,
  },
  optimum: {
    frn: '0009697107',
    providerId: 130317,
    brand: 'Optimum',
    technology: 40,
    down: 1000,
    up: 50,
    lowLatency: 1,
  },
  tmobile: {
    frn: '0001565449',
    providerId: 130403,
    brand: 'T-Mobile Home Internet',
    technology: 71,
    down: 415,
    up: 55,
    lowLatency: 1,
  },
  starlink: {
    frn: '0026577888',
    providerId: 430076,
    brand: 'Starlink',
    technology: 61,
    down: 220,
    up: 25,
    lowLatency: 1,
  },
  viasat: {
    frn: '0004305645',
    providerId: 130626,
    brand: 'Viasat',
    technology: 60,
    down: 100,
    up: 3,
    lowLatency: 0,
  },
};

function fccAvailability(buildings: readonly DemoBuilding[]): string {
  const rows: (string | number | null)[][] = [];
  let nextLocation = 1_900_000_000;
  const addLocation = (rng: Rng, locationId: number, block: string, h3: string, b: DemoBuilding) => {
    const offers: Offer[] = [];
    offers.push(rng.chance(0.65) ? OFFERS.fios! : OFFERS.dsl!);
    offers.push(b.area.boroughId === 200 ? OFFERS.optimum! : OFFERS.spectrum!);
    if (rng.chance(0.8)) offers.push(OFFERS.tmobile!);
    offers.push(OFFERS.starlink!);
    if (rng.chance(0.3)) offers.push(OFFERS.viasat!);
    const code = rng.chance(0.85) ? 'R' : rng.chance(0.5) ? 'X' : 'B';
    for (const o of offers) {
      rows.push([
        o.frn,
        o.providerId,
        o.brand,
        locationId,
        o.technology,
        o.down,
        o.up,
        o.lowLatency,
        code,
        b.area.state,
        block,
        h3,
      ]);
    }
  };
  for (const b of buildings.slice(0, 160)) {
    const rng = new Rng(FIXTURE_SEED, 'fixture-fcc', b.id);
    const h3 = latLngToCell(b.latitude, b.longitude, 8);
    const demo = b.row.internet_providers_json
      ? (JSON.parse(b.row.internet_providers_json) as { fccLocationId: number; blockGeoid: string })
      : null;
    if (demo && rng.chance(0.5)) {
      // The building's own FCC location (known from the demo record): a location-level match.
      addLocation(rng, demo.fccLocationId, demo.blockGeoid, h3, b);
    } else if (rng.chance(0.8)) {
      // Other locations in the building's H3 cell: an h3_res8 match.
      const block =
        demo?.blockGeoid ?? `36061${String(rng.int(100, 99999)).padStart(6, '0')}${rng.int(1000, 3015)}`;
      for (let i = rng.int(1, 2); i > 0; i--) addLocation(rng, nextLocation++, block, h3, b);
    }
  }
  return csv(FCC_HEADER, rows);
}

// --- 311 service requests (website export layout) ---------------------------

const NYC311_HEADER = [
  'Unique Key',
  'Created Date',
  'Closed Date',
  'Agency',
  'Agency Name',
  'Complaint Type',
  'Descriptor',
  'Location Type',
  'Incident Zip',
  'Incident Address',
  'Street Name',
  'City',
  'Status',
  'Resolution Description',
  'Community Board',
  'BBL',
  'Borough',
  'X Coordinate (State Plane)',
  'Y Coordinate (State Plane)',
  'Open Data Channel Type',
  'Latitude',
  'Longitude',
  'Location',
] as const;

const NOISE_TYPES: readonly (readonly [string, string, string])[] = [
  ['Noise - Residential', 'Loud Music/Party', 'Residential Building/House'],
  ['Noise - Residential', 'Banging/Pounding', 'Residential Building/House'],
  ['Noise - Street/Sidewalk', 'Loud Talking', 'Street/Sidewalk'],
  ['Noise - Commercial', 'Loud Music/Party', 'Club/Bar/Restaurant'],
  ['Noise - Vehicle', 'Car/Truck Horn', 'Street/Sidewalk'],
  ['Noise', 'Noise: Construction Before/After Hours (NM1)', 'Above Address'],
  ['Noise - Helicopter', 'Other', 'Above Address'],
];
const OTHER_TYPES: readonly (readonly [string, string, string])[] = [
  ['HEAT/HOT WATER', 'ENTIRE BUILDING', 'RESIDENTIAL BUILDING'],
  ['Illegal Parking', 'Blocked Hydrant', 'Street/Sidewalk'],
  ['Blocked Driveway', 'No Access', 'Street/Sidewalk'],
  ['UNSANITARY CONDITION', 'PESTS', 'RESIDENTIAL BUILDING'],
];

function nyc311(buildings: readonly DemoBuilding[]): string {
  const rng = new Rng(FIXTURE_SEED, 'fixture-311');
  const nyc = nycBuildings(buildings);
  const rows: (string | number | null)[][] = [];
  // A few loud blocks: complaints cluster around some buildings, as they do.
  const hotspots = nyc.filter((_, i) => i % 9 === 0);
  for (let i = 0; i < 420; i++) {
    const b = rng.chance(0.6) ? rng.pick(hotspots) : rng.pick(nyc);
    const noise = rng.chance(0.8);
    const [type, descriptor, locationType] = rng.pick(noise ? NOISE_TYPES : OTHER_TYPES);
    const created = complaintTime(rng, 0.85);
    const located = rng.chance(0.97);
    const [lat, lon] = jitter(rng, b.latitude, b.longitude, 350);
    rows.push([
      63_000_000 + i * 7,
      usDateTime(created),
      usDateTime(created + rng.int(1, 48) * 3_600_000),
      noise ? 'NYPD' : 'HPD',
      noise ? 'New York City Police Department' : 'Department of Housing Preservation and Development',
      type,
      descriptor,
      locationType,
      b.zip,
      b.street.toUpperCase(),
      b.street.split(' ').slice(1).join(' ').toUpperCase(),
      b.area.city.toUpperCase(),
      'Closed',
      'The Police Department responded to the complaint and determined that police action was not necessary.',
      `0${Math.floor(b.area.boroughId / 100)} ${BORO_NAMES[b.area.boroughId / 100]}`,
      rng.chance(0.7) ? (b.row.bbl ?? '') : '',
      BORO_NAMES[b.area.boroughId / 100]!,
      located ? rng.int(980000, 1040000) : '',
      located ? rng.int(150000, 260000) : '',
      rng.pick(['PHONE', 'ONLINE', 'MOBILE']),
      located ? lat : '',
      located ? lon : '',
      located ? `(${lat}, ${lon})` : '',
    ]);
  }
  return csv(NYC311_HEADER, rows);
}

// --- NYPD complaints (website export layout) ---------------------------------

const NYPD_HEADER = [
  'CMPLNT_NUM',
  'ADDR_PCT_CD',
  'BORO_NM',
  'CMPLNT_FR_DT',
  'CMPLNT_FR_TM',
  'CMPLNT_TO_DT',
  'CMPLNT_TO_TM',
  'CRM_ATPT_CPTD_CD',
  'JURIS_DESC',
  'KY_CD',
  'LAW_CAT_CD',
  'LOC_OF_OCCUR_DESC',
  'OFNS_DESC',
  'PD_CD',
  'PD_DESC',
  'PREM_TYP_DESC',
  'RPT_DT',
  'SUSP_AGE_GROUP',
  'VIC_AGE_GROUP',
  'X_COORD_CD',
  'Y_COORD_CD',
  'Latitude',
  'Longitude',
  'Lat_Lon',
] as const;

const OFFENSES: readonly (readonly [string, number, string])[] = [
  ['FELONY', 109, 'GRAND LARCENY'],
  ['FELONY', 105, 'ROBBERY'],
  ['FELONY', 107, 'BURGLARY'],
  ['FELONY', 106, 'FELONY ASSAULT'],
  ['MISDEMEANOR', 341, 'PETIT LARCENY'],
  ['MISDEMEANOR', 344, 'ASSAULT 3 & RELATED OFFENSES'],
  ['MISDEMEANOR', 351, 'CRIMINAL MISCHIEF & RELATED OF'],
  ['MISDEMEANOR', 235, 'DANGEROUS DRUGS'],
  ['VIOLATION', 578, 'HARRASSMENT 2'],
  ['VIOLATION', 361, 'OFF. AGNST PUB ORD SENSBLTY &'],
];

function nypdComplaints(buildings: readonly DemoBuilding[]): string {
  const rng = new Rng(FIXTURE_SEED, 'fixture-nypd');
  const nyc = nycBuildings(buildings);
  const rows: (string | number | null)[][] = [];
  for (let i = 0; i < 360; i++) {
    const b = rng.pick(nyc);
    const [category, key, offense] = OFFENSES[rng.weighted([6, 3, 3, 4, 12, 8, 6, 3, 10, 3])]!;
    const occurred = complaintTime(rng, 0.8);
    const [lat, lon] = jitter(rng, b.latitude, b.longitude, 700);
    const nycData = JSON.parse(b.row.nyc_data_json) as { policePrecinct?: number };
    const located = rng.chance(0.97);
    rows.push([
      String(240_000_000 + i * 13),
      nycData.policePrecinct ?? rng.int(1, 123),
      BORO_NAMES[b.area.boroughId / 100]!,
      usDate(occurred),
      `${String(rng.int(0, 23)).padStart(2, '0')}:${String(rng.int(0, 59)).padStart(2, '0')}:00`,
      '(null)',
      '(null)',
      'COMPLETED',
      'N.Y. POLICE DEPT',
      key,
      category,
      rng.pick(['INSIDE', 'FRONT OF', 'OPPOSITE OF', '(null)']),
      offense,
      rng.int(100, 999),
      offense,
      rng.pick(['STREET', 'RESIDENCE - APT. HOUSE', 'COMMERCIAL BUILDING', 'RESIDENCE-HOUSE']),
      usDate(occurred + rng.int(0, 3) * DAY),
      rng.pick(['25-44', '18-24', '45-64', 'UNKNOWN']),
      rng.pick(['25-44', '18-24', '45-64', 'UNKNOWN']),
      located ? rng.int(980000, 1040000) : '',
      located ? rng.int(150000, 260000) : '',
      located ? lat : '',
      located ? lon : '',
      located ? `(${lat}, ${lon})` : '',
    ]);
  }
  return csv(NYPD_HEADER, rows);
}

/** File name → content of every generated sample. */
export function generateOpenDataFixtures(): Record<string, string> {
  const buildings = fixtureBuildings();
  return {
    'hpd-violations.csv': hpdViolations(buildings),
    'pluto.csv': plutoLots(buildings),
    'fcc-bdc.csv': fccAvailability(buildings),
    '311.csv': nyc311(buildings),
    'nypd-complaints.csv': nypdComplaints(buildings),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  for (const [name, content] of Object.entries(generateOpenDataFixtures())) {
    writeFileSync(join(FIXTURE_DIR, name), content);
    process.stdout.write(`${name}: ${content.split('\n').length - 2} rows\n`);
  }
}
