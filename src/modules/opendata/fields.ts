/**
 * Field parsers for the published NYC / FCC / GTFS layouts. Each returns the
 * parsed value, `null` for an empty field, or throws a FieldError naming what
 * is wrong (the importer turns it into a rejected-row report).
 */

/** `column` is the normalized name; the importer reports the file's own spelling of it. */
export class FieldError extends Error {
  constructor(
    readonly column: string,
    readonly detail: string,
  ) {
    super(`${column}: ${detail}`);
    this.name = 'FieldError';
  }
}

/**
 * Header names as matched: lowercase letters and digits only, so the API
 * export (`violationid`, `law_cat_cd`) and the website export (`ViolationID`,
 * `LAW_CAT_CD`, `Unique Key`) of the same dataset read alike.
 */
export function normalizeColumn(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Reads one record's fields by column name; absent columns read as ''. */
export interface FieldReader {
  get(column: string): string;
}

export function required(fields: FieldReader, column: string): string {
  const value = fields.get(column);
  if (value === '') throw new FieldError(column, 'missing value');
  return value;
}

function validDate(y: number, m: number, d: number): boolean {
  if (y < 1900 || y > 2100 || m < 1 || m > 12 || d < 1) return false;
  return d <= new Date(Date.UTC(y, m, 0)).getUTCDate();
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?: \d{1,2}:\d{2}(?::\d{2})?(?: ?[AaPp][Mm])?)?$/;

/**
 * A calendar date, `YYYY-MM-DD`, from the Socrata API form
 * (`2024-03-15T00:00:00.000`) or the website export form (`03/15/2024` or
 * `03/15/2024 11:04:12 PM`). The time of day is dropped: every window this
 * service applies is in whole days. Years outside 1900–2100 are rejected (the
 * NYPD data carries typos such as 1019).
 */
export function parseDate(column: string, value: string): string | null {
  if (value === '') return null;
  let y: number;
  let m: number;
  let d: number;
  const iso = ISO_DATE.exec(value);
  if (iso) {
    y = Number(iso[1]);
    m = Number(iso[2]);
    d = Number(iso[3]);
  } else {
    const us = US_DATE.exec(value);
    if (!us) throw new FieldError(column, `"${clip(value)}" is not a date (YYYY-MM-DD or MM/DD/YYYY)`);
    m = Number(us[1]);
    d = Number(us[2]);
    y = Number(us[3]);
  }
  if (!validDate(y, m, d)) throw new FieldError(column, `"${clip(value)}" is not a valid date in 1900–2100`);
  return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

export function parseNumber(column: string, value: string): number | null {
  if (value === '') return null;
  const n = Number(value.replace(/,/g, ''));
  if (!Number.isFinite(n)) throw new FieldError(column, `"${clip(value)}" is not a number`);
  return n;
}

/** A whole number; a decimal with a zero fraction (`6.00`, as PLUTO writes counts) is accepted. */
export function parseInteger(column: string, value: string): number | null {
  const n = parseNumber(column, value);
  if (n === null) return null;
  if (!Number.isInteger(n)) throw new FieldError(column, `"${clip(value)}" is not a whole number`);
  return n;
}

/**
 * Latitude and longitude as a pair: both empty (or both 0, the placeholder
 * some exports use) means "no location"; one without the other, or a value
 * out of range, is an error.
 */
export function parseCoordinates(
  fields: FieldReader,
  latColumn: string,
  lonColumn: string,
): { latitude: number; longitude: number } | null {
  const lat = parseNumber(latColumn, fields.get(latColumn));
  const lon = parseNumber(lonColumn, fields.get(lonColumn));
  if (lat === null && lon === null) return null;
  if (lat === 0 && lon === 0) return null;
  if (lat === null) throw new FieldError(latColumn, 'missing while the longitude is given');
  if (lon === null) throw new FieldError(lonColumn, 'missing while the latitude is given');
  if (lat < -90 || lat > 90) throw new FieldError(latColumn, `${lat} is outside −90…90`);
  if (lon < -180 || lon > 180) throw new FieldError(lonColumn, `${lon} is outside −180…180`);
  return { latitude: lat, longitude: lon };
}

const BBL_TEXT = /^([1-5])-?(\d{5})-?(\d{4})(?:\.0*)?$/;

/**
 * A Borough-Block-Lot as 10 digits (borough 1–5, block 5, lot 4). Accepts the
 * forms the datasets use: `1012340056`, `1012340056.00000000` (PLUTO's numeric
 * export) and `1-01234-0056`.
 */
export function parseBbl(column: string, value: string): string | null {
  if (value === '') return null;
  const m = BBL_TEXT.exec(value);
  if (!m) throw new FieldError(column, `"${clip(value)}" is not a BBL (10 digits, borough 1–5)`);
  return `${m[1]}${m[2]}${m[3]}`;
}

/** Builds a BBL from its parts (HPD's boroid/block/lot, PLUTO's borough/block/lot). */
export function bblFromParts(borough: string, block: string, lot: string): string | null {
  const boro = BOROUGH_CODES[borough.trim().toUpperCase()] ?? borough.trim();
  if (!/^[1-5]$/.test(boro) || !/^\d{1,5}$/.test(block) || !/^\d{1,4}$/.test(lot)) return null;
  return `${boro}${block.padStart(5, '0')}${lot.padStart(4, '0')}`;
}

const BOROUGH_CODES: Readonly<Record<string, string>> = {
  MN: '1',
  MANHATTAN: '1',
  BX: '2',
  BRONX: '2',
  BK: '3',
  BROOKLYN: '3',
  QN: '4',
  QUEENS: '4',
  SI: '5',
  'STATEN ISLAND': '5',
};

const CD_PREFIX: Readonly<Record<string, string>> = { 1: 'MN', 2: 'BX', 3: 'BK', 4: 'QN', 5: 'SI' };

/** PLUTO's 3-digit community district (`101`, `318`) as the service writes it (`MN01`, `BK18`). */
export function parseCommunityDistrict(column: string, value: string): string | null {
  if (value === '') return null;
  const m = /^([1-5])(\d{2})(?:\.0*)?$/.exec(value);
  if (!m) throw new FieldError(column, `"${clip(value)}" is not a community district (e.g. 101)`);
  return `${CD_PREFIX[m[1]!]}${m[2]}`;
}

/** Long values are cut in reports so one bad row cannot flood the output. */
export function clip(value: string, max = 40): string {
  return value.length <= max ? value : `${value.slice(0, max)}…`;
}
