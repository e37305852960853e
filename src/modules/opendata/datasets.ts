/**
 * The six importable datasets: which published columns each needs, how a
 * record becomes a row of its table, and the natural key re-imports upsert by.
 *
 * Outcomes per record: a row (upserted), "ignored" with a reason (valid but
 * not what this service stores: a 311 request that is not a noise complaint, a
 * GTFS platform, a complaint without a location), or rejected by a
 * FieldError (malformed: reported with its line number and skipped).
 */
import { isValidCell } from 'h3-js';
import { TECHNOLOGY_LABELS } from '../../domain/broadband.ts';
import type {
  BroadbandAvailabilityTable,
  CrimeComplaintsTable,
  HpdViolationsTable,
  NoiseComplaintsTable,
  PlutoLotsTable,
  TransitStationsTable,
} from '../../platform/db/tables.ts';
import {
  bblFromParts,
  clip,
  FieldError,
  type FieldReader,
  parseBbl,
  parseCommunityDistrict,
  parseCoordinates,
  parseDate,
  parseInteger,
  parseNumber,
  required,
} from './fields.ts';
import { cellOf } from './geo.ts';

export const DATASET_NAMES = [
  'hpd-violations',
  'pluto',
  'fcc-bdc',
  '311',
  'nypd-complaints',
  'mta-stops',
] as const;
export type DatasetName = (typeof DATASET_NAMES)[number];

export function isDatasetName(value: string): value is DatasetName {
  return (DATASET_NAMES as readonly string[]).includes(value);
}

export type ParseOutcome<R> = { row: R } | { ignore: string };

export interface DatasetSpec<R extends object> {
  name: DatasetName;
  /** The publisher's dataset, for messages and docs. */
  source: string;
  /** Normalized column names (see normalizeColumn); an inner list means "any one of". */
  requiredColumns: readonly (string | readonly string[])[];
  table: string;
  columns: readonly (keyof R & string)[];
  keyColumns: readonly (keyof R & string)[];
  key(row: R): string;
  /** Throws FieldError for a malformed record. */
  parse(fields: FieldReader, importedAt: string): ParseOutcome<R>;
}

// --- HPD Housing Maintenance Code Violations (wvxf-dwi5) -------------------

const HPD_CLASSES = new Set(['A', 'B', 'C', 'I']);

/**
 * `violationstatus` (Open / Close) decides whether a violation is open; files
 * without it fall back on `currentstatus`, where only closed and dismissed
 * violations are no longer open (NOV SENT OUT, NOT COMPLIED WITH, FIRST NO
 * ACCESS…, CERTIFIED LATE… all still await correction or re-inspection).
 */
function hpdIsOpen(violationStatus: string, currentStatus: string): 0 | 1 {
  if (violationStatus !== '') {
    const v = violationStatus.toUpperCase();
    if (v === 'OPEN') return 1;
    if (v === 'CLOSE' || v === 'CLOSED') return 0;
    throw new FieldError('violationstatus', `"${clip(violationStatus)}" is not Open or Close`);
  }
  return /CLOSED|DISMISSED/i.test(currentStatus) ? 0 : 1;
}

/** The stored status, in HPD's `violationstatus` vocabulary whichever column it came from. */
const HPD_STATUS = { 1: 'Open', 0: 'Close' } as const;

export const hpdViolations: DatasetSpec<HpdViolationsTable> = {
  name: 'hpd-violations',
  source: 'HPD Housing Maintenance Code Violations (NYC Open Data wvxf-dwi5)',
  requiredColumns: ['violationid', 'bbl', 'class', 'inspectiondate', ['currentstatus', 'violationstatus']],
  table: 'hpd_violations',
  columns: ['violation_id', 'bbl', 'class', 'status', 'description', 'inspection_date', 'is_open'],
  keyColumns: ['violation_id'],
  key: (row) => row.violation_id,
  parse(fields) {
    const violationId = required(fields, 'violationid');
    if (!/^\d{1,12}$/.test(violationId))
      throw new FieldError('violationid', `"${clip(violationId)}" is not a violation number`);
    const bbl =
      parseBbl('bbl', fields.get('bbl')) ??
      bblFromParts(fields.get('boroid'), fields.get('block'), fields.get('lot'));
    if (bbl === null) throw new FieldError('bbl', 'missing value (and no boroid/block/lot to build it from)');
    const cls = required(fields, 'class').toUpperCase();
    if (!HPD_CLASSES.has(cls)) throw new FieldError('class', `"${clip(cls)}" is not one of A, B, C, I`);
    const inspectionDate = parseDate('inspectiondate', required(fields, 'inspectiondate'))!;
    const currentStatus = fields.get('currentstatus');
    const violationStatus = fields.get('violationstatus');
    if (currentStatus === '' && violationStatus === '')
      throw new FieldError('currentstatus', 'missing value (and no violationstatus)');
    const isOpen = hpdIsOpen(violationStatus, currentStatus);
    return {
      row: {
        violation_id: violationId,
        bbl,
        class: cls as HpdViolationsTable['class'],
        status: HPD_STATUS[isOpen],
        description: fields.get('novdescription'),
        inspection_date: inspectionDate,
        is_open: isOpen,
      },
    };
  },
};

// --- PLUTO (64uk-42ks) -------------------------------------------------------

function nonNegative(column: string, value: number | null): number | null {
  if (value !== null && value < 0) throw new FieldError(column, `${value} is negative`);
  return value;
}

export const pluto: DatasetSpec<PlutoLotsTable> = {
  name: 'pluto',
  source: 'Primary Land Use Tax Lot Output, PLUTO (NYC Open Data 64uk-42ks)',
  requiredColumns: [
    'bbl',
    'yearbuilt',
    'numfloors',
    'unitsres',
    'bldgclass',
    'cd',
    'policeprct',
    'latitude',
    'longitude',
  ],
  table: 'pluto_lots',
  columns: [
    'bbl',
    'year_built',
    'num_floors',
    'units_res',
    'units_total',
    'building_class',
    'community_district',
    'police_precinct',
    'zoning',
    'address',
    'latitude',
    'longitude',
    'cell_x',
    'cell_y',
    'imported_at',
  ],
  keyColumns: ['bbl'],
  key: (row) => row.bbl,
  parse(fields, importedAt) {
    const bbl =
      parseBbl('bbl', fields.get('bbl')) ??
      bblFromParts(fields.get('borough'), fields.get('block'), fields.get('lot'));
    if (bbl === null) throw new FieldError('bbl', 'missing value');
    // PLUTO writes 0 for an unknown year built.
    const yearBuilt = parseInteger('yearbuilt', fields.get('yearbuilt'));
    if (yearBuilt !== null && yearBuilt !== 0 && (yearBuilt < 1600 || yearBuilt > 2100))
      throw new FieldError('yearbuilt', `${yearBuilt} is not a plausible year`);
    const floors = nonNegative('numfloors', parseNumber('numfloors', fields.get('numfloors')));
    const unitsRes = nonNegative('unitsres', parseInteger('unitsres', fields.get('unitsres')));
    const unitsTotal = nonNegative('unitstotal', parseInteger('unitstotal', fields.get('unitstotal')));
    const precinct = parseInteger('policeprct', fields.get('policeprct'));
    const location = parseCoordinates(fields, 'latitude', 'longitude');
    const cell = location ? cellOf(location.latitude, location.longitude) : null;
    const text = (column: string) => {
      const value = fields.get(column);
      return value === '' ? null : value;
    };
    return {
      row: {
        bbl,
        year_built: yearBuilt === 0 ? null : yearBuilt,
        // Fractional floor counts (mezzanines) round to whole floors; 0 means unknown.
        num_floors: floors === null || floors === 0 ? null : Math.max(1, Math.round(floors)),
        units_res: unitsRes,
        units_total: unitsTotal,
        building_class: text('bldgclass'),
        community_district: parseCommunityDistrict('cd', fields.get('cd')),
        police_precinct: precinct === 0 ? null : precinct,
        zoning: text('zonedist1'),
        address: text('address'),
        latitude: location?.latitude ?? null,
        longitude: location?.longitude ?? null,
        cell_x: cell?.x ?? null,
        cell_y: cell?.y ?? null,
        imported_at: importedAt,
      },
    };
  },
};

// --- FCC Broadband Data Collection, fixed availability ----------------------

/** BDC technology codes and the labels the service shows (see InternetProviders). */

function parseFlag(column: string, value: string): 0 | 1 {
  const v = value.toLowerCase();
  if (v === '1' || v === 'true' || v === 't' || v === 'y' || v === 'yes') return 1;
  if (v === '0' || v === 'false' || v === 'f' || v === 'n' || v === 'no') return 0;
  throw new FieldError(column, `"${clip(value)}" is not 0/1 or true/false`);
}

export const fccBdc: DatasetSpec<BroadbandAvailabilityTable> = {
  name: 'fcc-bdc',
  source: 'FCC Broadband Data Collection, fixed broadband availability (location level)',
  requiredColumns: [
    'providerid',
    'brandname',
    'locationid',
    'technology',
    'maxadvertiseddownloadspeed',
    'maxadvertiseduploadspeed',
    'lowlatency',
    'businessresidentialcode',
    'blockgeoid',
    'h3res8id',
  ],
  table: 'broadband_availability',
  columns: [
    'location_id',
    'provider_id',
    'technology',
    'frn',
    'brand_name',
    'holding_company',
    'max_download_mbps',
    'max_upload_mbps',
    'low_latency',
    'business_residential_code',
    'state_usps',
    'block_geoid',
    'h3_res8_id',
    'imported_at',
  ],
  keyColumns: ['location_id', 'provider_id', 'technology'],
  key: (row) => `${row.location_id}|${row.provider_id}|${row.technology}`,
  parse(fields, importedAt) {
    const locationId = parseInteger('locationid', required(fields, 'locationid'))!;
    if (locationId <= 0) throw new FieldError('locationid', `${locationId} is not a location id`);
    const providerId = parseInteger('providerid', required(fields, 'providerid'))!;
    const technology = parseInteger('technology', required(fields, 'technology'))!;
    if (TECHNOLOGY_LABELS[technology] === undefined)
      throw new FieldError('technology', `${technology} is not a fixed-broadband technology code`);
    const down = nonNegative(
      'maxadvertiseddownloadspeed',
      parseNumber('maxadvertiseddownloadspeed', required(fields, 'maxadvertiseddownloadspeed')),
    )!;
    const up = nonNegative(
      'maxadvertiseduploadspeed',
      parseNumber('maxadvertiseduploadspeed', required(fields, 'maxadvertiseduploadspeed')),
    )!;
    const code = required(fields, 'businessresidentialcode').toUpperCase();
    if (code !== 'R' && code !== 'B' && code !== 'X')
      throw new FieldError('businessresidentialcode', `"${clip(code)}" is not R, B or X`);
    const blockGeoid = fields.get('blockgeoid');
    if (blockGeoid !== '' && !/^\d{15}$/.test(blockGeoid))
      throw new FieldError('blockgeoid', `"${clip(blockGeoid)}" is not a 15-digit census block GEOID`);
    const h3 = fields.get('h3res8id').toLowerCase();
    if (h3 !== '' && !isValidCell(h3)) throw new FieldError('h3res8id', `"${clip(h3)}" is not an H3 cell`);
    const optional = (column: string) => {
      const value = fields.get(column);
      return value === '' ? null : value;
    };
    return {
      row: {
        location_id: locationId,
        provider_id: providerId,
        technology,
        frn: optional('frn'),
        brand_name: required(fields, 'brandname'),
        // Not in the availability file; some derived exports add it.
        holding_company: optional('holdingcompany') ?? optional('holdingcompanyname'),
        max_download_mbps: down,
        max_upload_mbps: up,
        low_latency: parseFlag('lowlatency', required(fields, 'lowlatency')),
        business_residential_code: code,
        state_usps: optional('stateusps'),
        block_geoid: blockGeoid === '' ? null : blockGeoid,
        h3_res8_id: h3 === '' ? null : h3,
        imported_at: importedAt,
      },
    };
  },
};

// --- NYC 311 service requests (erm2-nwe9): noise complaints ----------------

function lenientBbl(fields: FieldReader): string | null {
  // An unused, often malformed column must not cost a usable complaint its row.
  try {
    return parseBbl('bbl', fields.get('bbl'));
  } catch {
    return null;
  }
}

export const nyc311: DatasetSpec<NoiseComplaintsTable> = {
  name: '311',
  source: '311 Service Requests (NYC Open Data erm2-nwe9); complaint types starting with "Noise"',
  requiredColumns: ['uniquekey', 'createddate', 'complainttype', 'latitude', 'longitude'],
  table: 'noise_complaints',
  columns: [
    'unique_key',
    'created_date',
    'complaint_type',
    'descriptor',
    'bbl',
    'latitude',
    'longitude',
    'cell_x',
    'cell_y',
  ],
  keyColumns: ['unique_key'],
  key: (row) => row.unique_key,
  parse(fields) {
    const uniqueKey = required(fields, 'uniquekey');
    const createdDate = parseDate('createddate', required(fields, 'createddate'))!;
    const complaintType = required(fields, 'complainttype');
    if (!/^noise/i.test(complaintType)) return { ignore: 'not a noise complaint' };
    const location = parseCoordinates(fields, 'latitude', 'longitude');
    if (location === null) return { ignore: 'no location' };
    const cell = cellOf(location.latitude, location.longitude);
    const descriptor = fields.get('descriptor');
    return {
      row: {
        unique_key: uniqueKey,
        created_date: createdDate,
        complaint_type: complaintType,
        descriptor: descriptor === '' ? null : descriptor,
        bbl: lenientBbl(fields),
        latitude: location.latitude,
        longitude: location.longitude,
        cell_x: cell.x,
        cell_y: cell.y,
      },
    };
  },
};

// --- NYPD complaint data (qgea-i56i historic, 5uac-w243 current) ----------

const LAW_CATEGORIES = new Set(['FELONY', 'MISDEMEANOR', 'VIOLATION']);

function reportDate(fields: FieldReader): string | null {
  try {
    return parseDate('rptdt', fields.get('rptdt'));
  } catch {
    return null;
  }
}

export const nypdComplaints: DatasetSpec<CrimeComplaintsTable> = {
  name: 'nypd-complaints',
  source: 'NYPD Complaint Data (NYC Open Data qgea-i56i historic, 5uac-w243 year to date)',
  requiredColumns: ['cmplntnum', 'cmplntfrdt', 'lawcatcd', 'latitude', 'longitude'],
  table: 'crime_complaints',
  columns: [
    'cmplnt_num',
    'complaint_date',
    'offense',
    'law_category',
    'precinct',
    'latitude',
    'longitude',
    'cell_x',
    'cell_y',
  ],
  keyColumns: ['cmplnt_num'],
  key: (row) => row.cmplnt_num,
  parse(fields) {
    const id = required(fields, 'cmplntnum');
    // When the offense began is often unknown or mistyped (years like 1019); the report date stands in.
    let date: string | null;
    try {
      date = parseDate('cmplntfrdt', fields.get('cmplntfrdt'));
    } catch (error) {
      date = reportDate(fields);
      if (date === null) throw error;
    }
    date ??= reportDate(fields);
    if (date === null) throw new FieldError('cmplntfrdt', 'missing value (and no RPT_DT)');
    const category = required(fields, 'lawcatcd').toUpperCase();
    if (!LAW_CATEGORIES.has(category))
      throw new FieldError('lawcatcd', `"${clip(category)}" is not FELONY, MISDEMEANOR or VIOLATION`);
    let precinct: number | null = null;
    try {
      precinct = parseInteger('addrpctcd', fields.get('addrpctcd'));
    } catch {
      precinct = null;
    }
    const location = parseCoordinates(fields, 'latitude', 'longitude');
    if (location === null) return { ignore: 'no location' };
    const cell = cellOf(location.latitude, location.longitude);
    const offense = fields.get('ofnsdesc');
    return {
      row: {
        cmplnt_num: id,
        complaint_date: date,
        offense: offense === '' ? null : offense,
        law_category: category as CrimeComplaintsTable['law_category'],
        precinct,
        latitude: location.latitude,
        longitude: location.longitude,
        cell_x: cell.x,
        cell_y: cell.y,
      },
    };
  },
};

// --- GTFS stops.txt (MTA subway) ---------------------------------------------

export const mtaStops: DatasetSpec<TransitStationsTable> = {
  name: 'mta-stops',
  source: 'MTA GTFS static feed, stops.txt (stations)',
  requiredColumns: ['stopid', 'stopname', 'stoplat', 'stoplon'],
  table: 'transit_stations',
  columns: ['stop_id', 'name', 'latitude', 'longitude', 'cell_x', 'cell_y'],
  keyColumns: ['stop_id'],
  key: (row) => row.stop_id,
  parse(fields) {
    const stopId = required(fields, 'stopid');
    const locationType = fields.get('locationtype');
    // GTFS: empty or 0 = stop/platform, 1 = station, 2 = entrance, 3 = node, 4 = boarding area.
    if (locationType !== '' && locationType !== '0' && locationType !== '1') {
      if (!/^[2-4]$/.test(locationType))
        throw new FieldError('locationtype', `"${clip(locationType)}" is not a GTFS location type 0–4`);
      return { ignore: 'entrance, node or boarding area' };
    }
    if (locationType !== '1' && fields.get('parentstation') !== '')
      return { ignore: 'platform of a station' };
    const location = parseCoordinates(fields, 'stoplat', 'stoplon');
    if (location === null) throw new FieldError('stoplat', 'missing value');
    const cell = cellOf(location.latitude, location.longitude);
    return {
      row: {
        stop_id: stopId,
        name: required(fields, 'stopname'),
        latitude: location.latitude,
        longitude: location.longitude,
        cell_x: cell.x,
        cell_y: cell.y,
      },
    };
  },
};
