import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ImportSummary } from '../src/modules/opendata/opendata.service.ts';
import { openStore } from '../src/platform/db/database.ts';
import { TEST_DIALECT, testSchemaName } from './support/store.ts';

/**
 * A million-row HPD file through the real CLI, in a child process whose V8
 * heap is capped at HEAP_CAP_MB: an importer that held the rows (hundreds of
 * megabytes as JS objects) could not finish, and the resident-set growth it
 * reports must stay far below the file's size.
 */
const ROWS = 1_000_000;
const HEAP_CAP_MB = 128;
const ROOT = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'stoop-opendata-bulk-'));
const schema = TEST_DIALECT === 'postgres' ? testSchemaName() : undefined;
const databaseUrl =
  TEST_DIALECT === 'postgres' ? process.env.DATABASE_URL! : `sqlite:${join(dir, 'stoop.sqlite')}`;

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const CLASSES = ['A', 'B', 'C', 'I'];
const DESCRIPTIONS = [
  '"§ 27-2005 ADM CODE REPAIR THE BROKEN OR DEFECTIVE PLASTERED SURFACES, PAINT IN A UNIFORM COLOR"',
  '§ 27-2017.3 HMC: TRACE AND ERADICATE THE INFESTATION OF MICE IN THE ENTIRE APARTMENT',
  '"§ 27-2031 ADM CODE PROVIDE HOT WATER AT ALL HOURS, AT ALL FIXTURES"',
];

/** Writes ROWS violations in the published layout (extra columns included), in 1 MB chunks. */
function writeHpdFile(file: string): number {
  const fd = openSync(file, 'w');
  writeSync(
    fd,
    'violationid,buildingid,registrationid,boroid,boro,block,lot,class,inspectiondate,novdescription,currentstatus,violationstatus,latitude,longitude,bin,bbl\n',
  );
  let chunk = '';
  for (let i = 0; i < ROWS; i++) {
    const boro = 1 + (i % 5);
    const block = String(1 + ((i * 7919) % 9000)).padStart(5, '0');
    const lot = String(1 + (i % 150)).padStart(4, '0');
    const open = i % 3 !== 0;
    chunk +=
      `${20_000_000 + i},${i % 60_000},${100_000 + (i % 60_000)},${boro},X,${block},${lot},${CLASSES[i % 4]},` +
      `2025-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00.000,` +
      `${DESCRIPTIONS[i % 3]},${open ? 'NOV SENT OUT' : 'VIOLATION CLOSED'},${open ? 'Open' : 'Close'},` +
      `40.${700_000 + (i % 99_999)},-73.${900_000 + (i % 99_999)},${boro}${String(i % 999_999).padStart(6, '0')},${boro}${block}${lot}\n`;
    if (chunk.length >= 1 << 20) {
      writeSync(fd, chunk);
      chunk = '';
    }
  }
  writeSync(fd, chunk);
  closeSync(fd);
  return statSync(file).size;
}

function stoop(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [`--max-old-space-size=${HEAP_CAP_MB}`, '--import', 'tsx', 'src/cli.ts', ...args],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          DATA_DIR: dir,
          DEMO: 'false',
          LOG_LEVEL: 'silent',
          DATABASE_URL: databaseUrl,
          ...(schema ? { DATABASE_SCHEMA: schema } : {}),
        },
        timeout: 170_000,
        maxBuffer: 1 << 20,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

describe('a 1,000,000-row HPD import', () => {
  it('streams in bounded memory and keeps every row', { timeout: 180_000 }, async () => {
    const file = join(dir, 'hpd-violations.csv');
    const bytes = writeHpdFile(file);
    const started = performance.now();
    const result = await stoop('import', 'hpd-violations', file, '--json');
    const wallSeconds = (performance.now() - started) / 1000;
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as ImportSummary & {
      memory: { rssAtStartBytes: number; peakRssBytes: number };
    };
    expect(summary.counts).toEqual({
      read: ROWS,
      upserted: ROWS,
      ignored: 0,
      rejected: 0,
      ignoredReasons: {},
    });

    const growthMb = (summary.memory.peakRssBytes - summary.memory.rssAtStartBytes) / 2 ** 20;
    // The file alone is ~190 MB and its rows as objects far more; the import may grow by a bounded amount.
    expect(bytes).toBeGreaterThan(150 * 2 ** 20);
    expect(growthMb).toBeLessThan(200);

    const store = await openStore({ dialect: TEST_DIALECT, databaseUrl, schema, poolSize: 1 });
    try {
      const counts = await store.db
        .selectFrom('hpd_violations')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('is_open').as('open')])
        .executeTakeFirstOrThrow();
      expect(Number(counts.n)).toBe(ROWS);
      expect(Number(counts.open)).toBe(ROWS - Math.ceil(ROWS / 3));
    } finally {
      await store.close();
    }
    // Measurements for the record (the test asserts memory, not speed: the machine is shared).
    console.info(
      `[${TEST_DIALECT}] ${ROWS.toLocaleString('en-US')} rows (${(bytes / 2 ** 20).toFixed(0)} MB) in ` +
        `${summary.seconds.toFixed(1)} s import / ${wallSeconds.toFixed(1)} s wall: ` +
        `${summary.recordsPerSecond.toLocaleString('en-US')} rows/s; RSS at start ` +
        `${(summary.memory.rssAtStartBytes / 2 ** 20).toFixed(0)} MB, peak ` +
        `${(summary.memory.peakRssBytes / 2 ** 20).toFixed(0)} MB (+${growthMb.toFixed(0)} MB)`,
    );
  });
});
