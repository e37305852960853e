/**
 * HPD housing maintenance code violations of the demo market, written to
 * `hpd_violations` as the open-data importer stores them (each record goes
 * through the importer's own parser), so that a building's `violationsOpen`
 * and health score are computed from the rows its violations list serves
 * (scores.ts `violationFigures`) instead of being invented beside them.
 *
 * A BBL found in the shipped sample of real HPD records
 * (resources/hpd-violations-sample.csv) keeps its real rows; every other BBL
 * gets synthetic rows, seeded per building, dated inside the 12-month window
 * the scores count back from the market's `now`.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { hpdViolations } from '../../modules/opendata/datasets.ts';
import { type FieldReader, normalizeColumn } from '../../modules/opendata/fields.ts';
import { WINDOW_DAYS } from '../../modules/opendata/score-formulas.ts';
import { DAY_MS, isoDate } from '../../platform/clock.ts';
import type { NewHpdViolation } from '../../platform/db/tables.ts';
import { Rng } from './random.ts';

const SAMPLE_FILE = new URL('../../../resources/hpd-violations-sample.csv', import.meta.url);

/**
 * Synthetic violation numbers start here: 12 digits, far above HPD's own
 * (8 digits today), so they never collide with imported records and a demo
 * reload can remove exactly its own.
 */
export const DEMO_VIOLATION_ID_BASE = 900_000_000_000;
/** Synthetic rows per building are numbered below this (violation id = base + index · this + n). */
const PER_BUILDING = 1000;

type ViolationClass = NewHpdViolation['class'];

/** One record of the importer's table, from a column → value map in the published layout. */
function parseRecord(values: Readonly<Record<string, string>>): NewHpdViolation {
  const fields: FieldReader = { get: (column) => (values[column] ?? '').trim() };
  const outcome = hpdViolations.parse(fields, '');
  if (!('row' in outcome)) throw new Error(`HPD record ${values.violationid} is not a violation row`);
  return outcome.row;
}

let sample: ReadonlyMap<string, readonly NewHpdViolation[]> | null = null;

/** The real HPD rows of the shipped sample, by BBL (parsed once per process, ~1,500 rows). */
export function sampleViolations(): ReadonlyMap<string, readonly NewHpdViolation[]> {
  if (sample) return sample;
  const records = parse(readFileSync(SAMPLE_FILE), {
    columns: (header: string[]) => header.map(normalizeColumn),
  });
  const byBbl = new Map<string, NewHpdViolation[]>();
  for (const record of records as Record<string, string>[]) {
    const row = parseRecord(record);
    const rows = byBbl.get(row.bbl);
    if (rows) rows.push(row);
    else byBbl.set(row.bbl, [row]);
  }
  sample = byBbl;
  return byBbl;
}

/** Where in the building a defect was found, in HPD's wording. */
function location(rng: Rng, floors: number): string {
  const story = rng.int(1, Math.max(1, floors));
  const ordinal = (n: number) =>
    `${n}${n % 10 === 1 && n !== 11 ? 'st' : n % 10 === 2 && n !== 12 ? 'nd' : n % 10 === 3 && n !== 13 ? 'rd' : 'th'}`;
  if (rng.chance(0.15)) return `IN THE PUBLIC HALL AT ${ordinal(story)} STORY`;
  const room = rng.pick([
    'KITCHEN',
    'BATHROOM',
    '1st ROOM FROM NORTH',
    '2nd ROOM FROM EAST',
    'FOYER',
    'BEDROOM',
  ]);
  const apartment = `${story}${rng.pick(['A', 'B', 'C', 'D', 'E', 'F'])}`;
  const side = rng.pick(['EAST', 'WEST', 'NORTH', 'SOUTH']);
  const from = rng.pick(['EAST', 'WEST', 'NORTH', 'SOUTH']);
  return `IN THE ${room} LOCATED AT APT ${apartment}, ${ordinal(story)} STORY, ${ordinal(rng.int(1, 4))} APARTMENT FROM ${from} AT ${side}`;
}

/** HPD order texts by class: A non-hazardous, B hazardous, C immediately hazardous, I information orders. */
const DESCRIPTIONS: Readonly<Record<ViolationClass, readonly [text: string, located: boolean][]>> = {
  A: [
    [
      '§ 27-2005 ADM CODE REPAIR THE BROKEN OR DEFECTIVE PLASTERED SURFACES AND PAINT IN A UNIFORM COLOR',
      true,
    ],
    ['§ 27-2013 ADM CODE PAINT WITH LIGHT COLORED PAINT TO THE SATISFACTION OF THIS DEPARTMENT', true],
    ['§ 27-2005 ADM CODE PROPERLY REPAIR THE BROKEN OR DEFECTIVE FLOOR TILES', true],
    ['§ 27-2005 ADM CODE REPAIR THE BROKEN OR DEFECTIVE CABINET DOOR', true],
    ['D26-41.03 ADM CODE FILE WITH THIS DEPARTMENT A REGISTRATION STATEMENT FOR BUILDING.', false],
  ],
  B: [
    ['§ 27-2005 ADM CODE REPAIR THE LEAKY AND/OR DEFECTIVE FAUCETS', true],
    ['§ 27-2026 ADM CODE REPAIR THE LEAKY AND/OR DEFECTIVE WATER CLOSET', true],
    ['§ 27-2017.3 HMC: TRACE AND ERADICATE THE NUISANCE CONSISTING OF MICE', true],
    ['§ 27-2018 ADM CODE ABATE THE NUISANCE CONSISTING OF ROACHES', true],
    ['§ 27-2005 ADM CODE REPAIR THE SELF-CLOSING DOOR AND MAKE IT SELF-CLOSING', true],
    ['§ 27-2017.4 ADM CODE ABATE THE INFESTATION CONSISTING OF MOLD', true],
  ],
  C: [
    ['§ 27-2045 ADM CODE REPAIR OR REPLACE THE SMOKE DETECTOR', true],
    ['§ 27-2046.1 HMC: REPAIR OR REPLACE THE CARBON MONOXIDE DETECTING DEVICE(S)', true],
    ['§ 27-2043.1 ADM CODE INSTALL APPROVED WINDOW GUARDS', true],
    ['§ 27-2031 ADM CODE PROVIDE HOT WATER AT ALL HOURS IN THE ENTIRE BUILDING', false],
    [
      '§ 27-2056.6 ADM CODE - CORRECT THE LEAD-BASED PAINT HAZARD - PRESUMED LEAD PAINT THAT IS PEELING OR ON A DETERIORATED SUBSURFACE USING WORK PRACTICES SET FORTH IN 28 RCNY §11-06(B)(2)',
      true,
    ],
  ],
  I: [
    ['§ 27-2018.1 ADM CODE FILE WITH THIS DEPARTMENT THE ANNUAL BEDBUG INFESTATION REPORT', false],
    ['§ 27-2056.4 ADM CODE PROVIDE RECORDS OF THE ANNUAL LEAD-BASED PAINT INVESTIGATION', false],
  ],
};

const CLASSES: readonly ViolationClass[] = ['A', 'B', 'C', 'I'];
/** Class shares of HPD's violations (hazardous B the most common, information orders rare). */
const CLASS_WEIGHTS = [30, 44, 21, 5];

export interface ViolationSite {
  index: number;
  bbl: string;
  floors: number;
  /** Open violations to generate (the building's draw). */
  open: number;
}

/**
 * Synthetic rows for one building: `open` open ones and some closed ones, a
 * class mix, inspection dates inside the 12-month window ending at `now`.
 */
export function syntheticViolations(seed: number, site: ViolationSite, now: Date): NewHpdViolation[] {
  const rng = new Rng(seed, 'violations', site.index);
  const closed = rng.poisson(0.6 * site.open + 0.4);
  const total = Math.min(site.open + closed, PER_BUILDING);
  const rows: NewHpdViolation[] = [];
  for (let n = 0; n < total; n++) {
    const cls = CLASSES[rng.weighted(CLASS_WEIGHTS)]!;
    const [text, located] = rng.pick(DESCRIPTIONS[cls]);
    const daysAgo = rng.int(0, WINDOW_DAYS - 1);
    rows.push(
      parseRecord({
        violationid: String(DEMO_VIOLATION_ID_BASE + site.index * PER_BUILDING + n),
        bbl: site.bbl,
        class: cls,
        inspectiondate: `${isoDate(now.getTime() - daysAgo * DAY_MS)}T00:00:00.000`,
        novdescription: located ? `${text} ${location(rng, site.floors)}` : text,
        violationstatus: n < site.open ? 'Open' : 'Close',
      }),
    );
  }
  return rows;
}
