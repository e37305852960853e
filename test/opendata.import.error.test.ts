import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAreas } from '../src/modules/areas/areas.repository.ts';
import { OpenDataError, type RejectedRow } from '../src/modules/opendata/csv-import.ts';
import type { DatasetName } from '../src/modules/opendata/datasets.ts';
import { type ImportSummary, runImport } from '../src/modules/opendata/opendata.service.ts';
import { ManualClock } from '../src/platform/clock.ts';
import type { Store } from '../src/platform/db/database.ts';
import { AreaTree } from '../src/reference/areas.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { parseCsvRows } from '../src/reference/csv.ts';
import { FIXTURE_NOW, fixturePath } from './opendata.fixtures.ts';
import { createTestStore } from './support/store.ts';

let store: Store;
let areaTree: AreaTree;
const clock = new ManualClock(FIXTURE_NOW);
const dir = mkdtempSync(join(tmpdir(), 'stoop-opendata-error-'));

beforeAll(async () => {
  store = await createTestStore();
  await syncAreas(store);
  areaTree = new AreaTree(await listAreas(store.db));
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

let fileCount = 0;
function write(content: string | Buffer, suffix = '.csv'): string {
  const file = join(dir, `f${fileCount++}${suffix}`);
  writeFileSync(file, content);
  return file;
}

async function load(
  dataset: DatasetName,
  file: string,
): Promise<{ summary: ImportSummary; rejects: RejectedRow[] }> {
  const rejects: RejectedRow[] = [];
  const summary = await runImport(store, areaTree, clock, {
    dataset,
    file,
    scores: false,
    onReject: (r) => rejects.push(r),
  });
  return { summary, rejects };
}

async function count(table: 'hpd_violations' | 'noise_complaints' | 'transit_stations'): Promise<number> {
  const row = await store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * A sample with a changed copy of the record on physical line `line` inserted
 * at that line (the original moves down one). Samples hold one record per line.
 */
function withBadCopy(
  sample: string,
  line: number,
  changes: Record<string, string>,
): { file: string; total: number } {
  const lines = readFileSync(fixturePath(sample), 'utf8').split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  const header = parseCsvRows(lines[0]!)[0]!;
  const record = parseCsvRows(lines[line - 1]!)[0]!;
  for (const [column, value] of Object.entries(changes)) record[header.indexOf(column)] = value;
  const field = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  lines.splice(line - 1, 0, record.map(field).join(','));
  return { file: write(`${lines.join('\n')}\n`), total: lines.length - 1 };
}

describe('required columns', () => {
  it('refuses a file lacking required columns, naming each, before writing anything', async () => {
    const file = write('violationid,bbl,currentstatus\n1,1000010001,OPEN\n');
    const error = await load('hpd-violations', file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenDataError);
    expect((error as Error).message).toMatch(/missing required columns class, inspectiondate/);
    expect((error as Error).message).toContain('found: violationid, bbl, currentstatus');
    expect(await count('hpd_violations')).toBe(0);
  });

  it('names alternatives when neither is present', async () => {
    const file = write('violationid,bbl,class,inspectiondate\n1,1000010001,A,2025-01-01\n');
    await expect(load('hpd-violations', file)).rejects.toThrow(
      /missing required column currentstatus or violationstatus/,
    );
  });

  it('names the dataset-specific columns for every dataset', async () => {
    const file = write('foo,bar\n1,2\n');
    const expected: Record<DatasetName, RegExp> = {
      'hpd-violations': /violationid, bbl, class, inspectiondate, currentstatus or violationstatus/,
      pluto: /bbl, yearbuilt, numfloors, unitsres, bldgclass, cd, policeprct, latitude, longitude/,
      'fcc-bdc': /providerid, brandname, locationid, technology, maxadvertiseddownloadspeed/,
      '311': /uniquekey, createddate, complainttype, latitude, longitude/,
      'nypd-complaints': /cmplntnum, cmplntfrdt, lawcatcd, latitude, longitude/,
      'mta-stops': /stopid, stopname, stoplat, stoplon/,
    };
    for (const [dataset, pattern] of Object.entries(expected)) {
      await expect(load(dataset as DatasetName, file)).rejects.toThrow(pattern);
    }
  });

  it('reads columns in any order, in either header style, and ignores extra columns', async () => {
    const file = write(
      'Extra,Inspection Date,CLASS,BBL,Violation ID,Violation Status,Another\n' +
        'x,03/15/2025,b,1-00001-0001,900001,Open,y\n' +
        'x,2025-03-16T00:00:00.000,C,1000010001.00000000,900002,Close,y\n',
    );
    const { summary, rejects } = await load('hpd-violations', file);
    expect(rejects).toEqual([]);
    expect(summary.counts).toMatchObject({ read: 2, upserted: 2 });
    const rows = await store.db
      .selectFrom('hpd_violations')
      .selectAll()
      .where('violation_id', 'in', ['900001', '900002'])
      .orderBy('violation_id')
      .execute();
    expect(rows.map((r) => [r.bbl, r.class, r.inspection_date, r.status, Number(r.is_open)])).toEqual([
      ['1000010001', 'B', '2025-03-15', 'Open', 1],
      ['1000010001', 'C', '2025-03-16', 'Close', 0],
    ]);
  });
});

describe('malformed rows are reported with their line number and skipped', () => {
  it('HPD: a bad class, a bad date, a short row and broken quoting; good rows kept', async () => {
    const file = write(
      [
        'violationid,bbl,class,inspectiondate,currentstatus,novdescription',
        '800001,1000010001,A,2025-01-01,NOV SENT OUT,"PAINT, PLASTER"',
        '',
        '800002,1000010001,Z,2025-01-01,NOV SENT OUT,x',
        '800003,1000010001,B,2025-01-01,VIOLATION CLOSED,"TWO',
        'LINES"',
        '800004,1000010001,C,2025-02-30,NOV SENT OUT,x',
        '800005,1000010001,C',
        '800006,1000010001,C,2025-01-01,NOV SENT OUT,"x"y,z',
        '800007,1000010001,A,2025-01-01,VIOLATION OPEN,ok',
        '',
      ].join('\n'),
    );
    const { summary, rejects } = await load('hpd-violations', file);
    expect(rejects).toEqual([
      { line: 4, reason: 'class: "Z" is not one of A, B, C, I' },
      { line: 7, reason: 'inspectiondate: "2025-02-30" is not a valid date in 1900–2100' },
      { line: 8, reason: 'has 3 fields; the header has 6' },
      { line: 9, reason: 'has 7 fields; the header has 6' },
    ]);
    expect(summary.counts).toMatchObject({ read: 7, upserted: 3, rejected: 4 });
    const kept = await store.db
      .selectFrom('hpd_violations')
      .select(['violation_id', 'description', 'status', 'is_open'])
      .where('violation_id', 'like', '80000%')
      .orderBy('violation_id')
      .execute();
    // Without violationstatus, currentstatus decides: only closed or dismissed violations are closed.
    expect(kept.map((r) => [r.violation_id, r.description, r.status, Number(r.is_open)])).toEqual([
      ['800001', 'PAINT, PLASTER', 'Open', 1],
      ['800003', 'TWO\nLINES', 'Close', 0],
      ['800007', 'ok', 'Open', 1],
    ]);
  });

  it('an unterminated quote is reported at the line it starts on', async () => {
    const file = write(
      'violationid,bbl,class,inspectiondate,currentstatus\n810001,1000010001,A,2025-01-01,OPEN\n810002,1000010001,A,2025-01-01,"OPEN\n',
    );
    const { summary, rejects } = await load('hpd-violations', file);
    expect(rejects).toHaveLength(1);
    expect(rejects[0]!.line).toBe(3);
    expect(rejects[0]!.reason).toMatch(/^malformed CSV: Quote Not Closed/);
    expect(summary.counts).toMatchObject({ upserted: 1, rejected: 1 });
  });

  it('line numbers stay exact deep into a file, however far the parser runs ahead', async () => {
    const lines = ['violationid,bbl,class,inspectiondate,currentstatus,novdescription'];
    for (let i = 0; i < 30_000; i++) {
      // Every 1000th description spans two lines.
      const description = i % 1000 === 0 ? '"LINE ONE\nLINE TWO"' : 'ONE LINE';
      lines.push(`${820_000 + i},1000010001,${i === 20_000 ? 'Q' : 'A'},2025-01-01,OPEN,${description}`);
    }
    lines.push('850000,1000010001,A,2025-01-01,"OPEN');
    const { summary, rejects } = await load('hpd-violations', write(`${lines.join('\n')}\n`));
    // Line of record i: 2 + i + (multi-line records before it).
    expect(rejects.map((r) => r.line)).toEqual([2 + 20_000 + 20, 2 + 30_000 + 30]);
    expect(rejects[0]!.reason).toBe('class: "Q" is not one of A, B, C, I');
    expect(rejects[1]!.reason).toMatch(/^malformed CSV: Quote Not Closed/);
    expect(summary.counts).toMatchObject({ read: 30_001, upserted: 29_999, rejected: 2 });
  });

  const cases: [DatasetName, string, number, Record<string, string>, RegExp][] = [
    ['hpd-violations', 'hpd-violations.csv', 5, { class: 'Z' }, /^class: "Z" is not one of A, B, C, I$/],
    ['pluto', 'pluto.csv', 7, { yearbuilt: 'abc' }, /^yearbuilt: "abc" is not a number$/],
    [
      'fcc-bdc',
      'fcc-bdc.csv',
      12,
      { technology: '99' },
      /^technology: 99 is not a fixed-broadband technology code$/,
    ],
    [
      '311',
      '311.csv',
      30,
      { 'Created Date': '13/45/2026 01:00:00 AM' },
      /^Created Date: "13\/45\/2026 01:00:00 AM" is not a valid date/,
    ],
    [
      'nypd-complaints',
      'nypd-complaints.csv',
      9,
      { LAW_CAT_CD: 'FELONIOUS' },
      /^LAW_CAT_CD: "FELONIOUS" is not FELONY, MISDEMEANOR or VIOLATION$/,
    ],
    [
      'mta-stops',
      'mta-stops.txt',
      20,
      { stop_id: 'X1', location_type: '1', parent_station: '', stop_lon: '-200' },
      /^stop_lon: -200 is outside −180…180$/,
    ],
  ];
  for (const [dataset, sample, line, changes, reason] of cases) {
    it(`${dataset}: the bad row at line ${line} is rejected, every other row kept`, async () => {
      const { file, total } = withBadCopy(sample, line, changes);
      const clean = await load(dataset, fixturePath(sample));
      const { summary, rejects } = await load(dataset, file);
      expect(rejects).toHaveLength(1);
      expect(rejects[0]!.line).toBe(line);
      expect(rejects[0]!.reason).toMatch(reason);
      expect(summary.counts.read).toBe(total);
      expect(summary.counts.rejected).toBe(1);
      expect(summary.counts.upserted).toBe(clean.summary.counts.upserted);
      expect(summary.counts.ignored).toBe(clean.summary.counts.ignored);
    });
  }
});

describe('files', () => {
  it('a missing file, a directory and an empty file are refused with the path', async () => {
    await expect(load('311', join(dir, 'nope.csv'))).rejects.toThrow(/cannot read .*nope\.csv: ENOENT/);
    await expect(load('311', dir)).rejects.toThrow(/cannot read .*: not a regular file/);
    await expect(load('311', write(''))).rejects.toThrow(/is empty: expected a CSV header line/);
  });

  it('reads gzip-compressed files', async () => {
    const before = await count('transit_stations');
    const file = write(gzipSync(readFileSync(fixturePath('mta-stops.txt'))), '.csv.gz');
    const { summary } = await load('mta-stops', file);
    expect(summary.counts.upserted).toBeGreaterThan(400);
    expect(await count('transit_stations')).toBe(Math.max(before, summary.counts.upserted));
    await expect(load('mta-stops', write(Buffer.from('not gzip at all'), '.csv.gz'))).rejects.toThrow(
      /cannot read .*\.csv\.gz/,
    );
  });

  it('an NYPD complaint with a mistyped start date takes its report date; with neither it is rejected', async () => {
    const file = write(
      'CMPLNT_NUM,CMPLNT_FR_DT,RPT_DT,LAW_CAT_CD,Latitude,Longitude\n' +
        '9001,12/31/1019,01/02/2026,FELONY,40.7,-73.9\n' +
        '9002,,01/03/2026,violation,40.7,-73.9\n' +
        '9003,12/31/1019,,MISDEMEANOR,40.7,-73.9\n' +
        '9004,,,MISDEMEANOR,40.7,-73.9\n',
    );
    const { summary, rejects } = await load('nypd-complaints', file);
    expect(rejects).toEqual([
      { line: 4, reason: 'CMPLNT_FR_DT: "12/31/1019" is not a valid date in 1900–2100' },
      { line: 5, reason: 'CMPLNT_FR_DT: missing value (and no RPT_DT)' },
    ]);
    expect(summary.counts.upserted).toBe(2);
    const rows = await store.db
      .selectFrom('crime_complaints')
      .select(['cmplnt_num', 'complaint_date', 'law_category'])
      .where('cmplnt_num', 'in', ['9001', '9002'])
      .orderBy('cmplnt_num')
      .execute();
    expect(rows).toEqual([
      { cmplnt_num: '9001', complaint_date: '2026-01-02', law_category: 'FELONY' },
      { cmplnt_num: '9002', complaint_date: '2026-01-03', law_category: 'VIOLATION' },
    ]);
  });

  it('a 311 row without coordinates is ignored, one with half a coordinate rejected', async () => {
    const file = write(
      'unique_key,created_date,complaint_type,latitude,longitude\n' +
        '5001,2026-01-01T10:00:00.000,Noise - Residential,,\n' +
        '5002,2026-01-01T10:00:00.000,Noise - Residential,40.7,\n' +
        '5003,2026-01-01T10:00:00.000,Noise - Residential,40.7,-73.9\n',
    );
    const before = await count('noise_complaints');
    const { summary, rejects } = await load('311', file);
    expect(summary.counts).toMatchObject({ ignored: 1, rejected: 1, upserted: 1 });
    expect(rejects).toEqual([{ line: 3, reason: 'longitude: missing while the latitude is given' }]);
    expect(await count('noise_complaints')).toBe(before + 1);
  });
});
