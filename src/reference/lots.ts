import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseCsv } from './csv.ts';

/** PLUTO borough codes of `nyc-lots.csv` → the area tree's borough ids. */
export const LOT_BOROUGH_IDS: Readonly<Record<string, number>> = {
  MN: 100,
  BX: 200,
  BK: 300,
  QN: 400,
  SI: 500,
};

/** A house number: Queens-style `31-15` has a `block` (31) before the `number` (15). */
export interface HouseNumber {
  block: number | null;
  number: number;
  /** As written on the address (`31-15`, `1033A`). */
  text: string;
}

/** One real residential tax lot, its address normalized (see `normalizeAddress`). */
export interface LotRecord {
  bbl: string;
  boroughId: number;
  /** The address as the source wrote it (`82 TO 92 WASHINGTON ST`). */
  rawAddress: string;
  /** House number + street in the project's one style (`82 Washington Street`). */
  address: string;
  houseNumber: HouseNumber;
  street: string;
  zip: string | null;
  latitude: number;
  longitude: number;
  yearBuilt: number | null;
  floors: number | null;
  unitsRes: number;
  /** PLUTO building class (`D4`, `C1`, `R4`…), null where no source had one. */
  buildingClass: string | null;
  /** PLUTO land use (`01` one-family … `04` elevator multifamily). */
  landUse: string | null;
}

const QUEENS_ID = 400;
const RESOURCES = fileURLToPath(new URL('../../resources/', import.meta.url));

/** Street-type abbreviations of DHCR and PLUTO addresses, spelled out. */
const SUFFIXES: Readonly<Record<string, string>> = {
  ST: 'Street',
  STREET: 'Street',
  AVE: 'Avenue',
  AV: 'Avenue',
  AVENUE: 'Avenue',
  PL: 'Place',
  PLACE: 'Place',
  BLVD: 'Boulevard',
  BOULEVARD: 'Boulevard',
  RD: 'Road',
  ROAD: 'Road',
  DR: 'Drive',
  DRIVE: 'Drive',
  LN: 'Lane',
  LANE: 'Lane',
  PKWY: 'Parkway',
  PARKWAY: 'Parkway',
  TER: 'Terrace',
  TERR: 'Terrace',
  TERRACE: 'Terrace',
  CT: 'Court',
  COURT: 'Court',
  SQ: 'Square',
  SQUARE: 'Square',
  HWY: 'Highway',
  TPKE: 'Turnpike',
  EXPY: 'Expressway',
  CIR: 'Circle',
  PLZ: 'Plaza',
  WAY: 'Way',
  CRES: 'Crescent',
};

/** Spellings of one street that differ beyond abbreviations, after normalization. */
const STREET_ALIASES: Readonly<Record<string, string>> = {
  'Adam C Powell Boulevard': 'Adam Clayton Powell Jr. Boulevard',
  'Fredrick Douglass Bl': 'Frederick Douglass Boulevard',
  'Fredrick Douglass Boulevard': 'Frederick Douglass Boulevard',
  'West Washington Plce': 'West Washington Place',
};

/** Street types abbreviated inside a longer name (`HENRY HUDSON PKWY WEST`). */
const MID_NAME: Readonly<Record<string, string>> = {
  PKWY: 'Parkway',
  BLVD: 'Boulevard',
  EXPWY: 'Expressway',
  EXPY: 'Expressway',
};

/** Abbreviations that open a name rather than end it. */
const PREFIXES: Readonly<Record<string, string>> = {
  E: 'East',
  W: 'West',
  N: 'North',
  S: 'South',
  ST: 'St.',
  SAINT: 'St.',
  FT: 'Fort',
  MT: 'Mount',
  REV: 'Reverend',
  DR: 'Dr.',
  JR: 'Jr.',
  AMER: 'Americas',
};

function ordinalOf(n: number): string {
  const mod100 = n % 100;
  if (mod100 >= 11 && mod100 <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}

function titleWord(word: string): string {
  const lower = word.toLowerCase();
  if (/^mc[a-z]{2,}$/.test(lower)) return `Mc${lower[2]!.toUpperCase()}${lower.slice(3)}`;
  if (lower === 'of' || lower === 'the') return lower;
  return lower.replace(/(^|['-])([a-z])/g, (_m, sep: string, ch: string) => sep + ch.toUpperCase());
}

/**
 * A street name in one style whatever the source: `W 86TH ST`, `WEST 86 STREET`
 * → `West 86th Street`; `ST NICHOLAS AVE` → `St. Nicholas Avenue`; `AVENUE OF
 * THE AMER` → `Avenue of the Americas`; numbered streets and avenues as
 * ordinal digits (`10th Avenue`, `Beach 116th Street`).
 */
export function normalizeStreet(raw: string): string {
  const words = raw.trim().toUpperCase().split(/\s+/).filter(Boolean);
  const out: string[] = [];
  words.forEach((word, i) => {
    const last = i === words.length - 1;
    const numbered = /^(\d+)(ST|ND|RD|TH)?$/.exec(word);
    if (numbered) {
      out.push(ordinalOf(Number(numbered[1])));
      return;
    }
    if (last && i > 0 && SUFFIXES[word]) {
      out.push(SUFFIXES[word]!);
      return;
    }
    // Direction letters and Saint/Fort/Mount only before the rest of the name.
    if (!last && PREFIXES[word] && (word.length > 1 || i === 0)) {
      out.push(PREFIXES[word]!);
      return;
    }
    // `CENTRAL PARK W`, but `AVENUE W` is a street of its own.
    if (last && i >= 2 && /^[EWNS]$/.test(word) && words[i - 1] !== 'AVENUE' && words[i - 1] !== 'AVE') {
      out.push(PREFIXES[word]!);
      return;
    }
    if (!last && MID_NAME[word]) {
      out.push(MID_NAME[word]!);
      return;
    }
    if (word === 'AMER' || word === 'JR') {
      out.push(PREFIXES[word]!);
      return;
    }
    out.push(titleWord(word));
  });
  const name = out.join(' ').replace(/\bMc ([A-Z])/g, 'Mc$1');
  return STREET_ALIASES[name] ?? name;
}

/**
 * Parses a house number. A range (`82 TO 92`) keeps its first number, the
 * address the post office uses; a letter O typed for a zero (`16O`) is read
 * as the digit.
 */
export function parseHouseNumber(raw: string): HouseNumber | null {
  const text = raw.replace(/(\d)O$/, '$10');
  const queens = /^(\d+)-(\d+)([A-Z]?)$/.exec(text);
  if (queens) return { block: Number(queens[1]), number: Number(queens[2]), text };
  const plain = /^(\d+)([A-Z]?)$/.exec(text);
  if (plain) return { block: null, number: Number(plain[1]), text };
  return null;
}

/**
 * `82 TO 92 WASHINGTON ST` → `82 Washington Street`; `31-15 30TH AVE` →
 * `31-15 30th Avenue`. Outside Queens (`boroughId` other than 400) a
 * hyphenated pair rising left to right (`236-240 WEST 64 STREET`) is a range
 * too, and keeps its first number.
 */
export function normalizeAddress(
  raw: string,
  boroughId = QUEENS_ID,
): { houseNumber: HouseNumber; street: string } | null {
  const match = /^(\S+)(?:\s+TO\s+\S+)?\s+(.+)$/.exec(raw.trim().toUpperCase());
  if (!match) return null;
  let number = match[1]!;
  const pair = /^(\d+)-(\d+)$/.exec(number);
  if (pair && boroughId !== QUEENS_ID && Number(pair[2]) > Number(pair[1])) number = pair[1]!;
  const houseNumber = parseHouseNumber(number);
  if (!houseNumber) return null;
  return { houseNumber, street: normalizeStreet(match[2]!) };
}

function numberOrNull(text: string | undefined): number | null {
  if (text === undefined || text === '') return null;
  const n = Number(text);
  return Number.isFinite(n) && n > 0 ? n : null;
}

/**
 * Reads the shipped copy of `nyc-lots.csv` (the project's shared reference
 * data; a test keeps it identical). Lots whose address cannot be read are left
 * out (none in the shipped file).
 */
export function readLots(dir = RESOURCES): LotRecord[] {
  const out: LotRecord[] = [];
  for (const row of parseCsv(readFileSync(`${dir}/nyc-lots.csv`, 'utf8'))) {
    const boroughId = LOT_BOROUGH_IDS[row.borough ?? ''];
    const parsed = normalizeAddress(row.address ?? '', boroughId);
    const latitude = Number(row.latitude);
    const longitude = Number(row.longitude);
    if (boroughId === undefined || !parsed || !Number.isFinite(latitude) || !Number.isFinite(longitude))
      continue;
    out.push({
      bbl: row.bbl!,
      boroughId,
      rawAddress: row.address!,
      address: `${parsed.houseNumber.text} ${parsed.street}`,
      houseNumber: parsed.houseNumber,
      street: parsed.street,
      zip: row.zipcode || null,
      latitude,
      longitude,
      yearBuilt: numberOrNull(row.yearbuilt),
      floors: numberOrNull(row.numfloors),
      unitsRes: Number(row.unitsres) || 0,
      buildingClass: row.bldgclass || null,
      landUse: row.landuse || null,
    });
  }
  return out;
}
