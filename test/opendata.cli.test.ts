import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoMarket } from '../src/demo/market/load.ts';
import type { ImportSummary } from '../src/modules/opendata/opendata.service.ts';
import type { ScoresRunSummary } from '../src/modules/opendata/scores.ts';
import { openStore, type Store } from '../src/platform/db/database.ts';
import { migrateToLatest } from '../src/platform/db/migrate.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { FIXTURE_NOW, FIXTURE_SCALE, FIXTURE_SEED, fixturePath } from './opendata.fixtures.ts';
import { type CliResult, cliStore, ROOT, runStoop } from './support/cli.ts';
import { TEST_DIALECT } from './support/store.ts';

const cli = cliStore('opendata-cli', { DEMO: 'false' });
const { dataDir, databaseUrl, schema } = cli;
const childEnv = cli.env;

/** Runs the real `stoop` CLI in a child process (stderr is a pipe: no progress bar). */
const stoop = (...args: string[]) => runStoop(childEnv, args);

function onlyJson<T>(result: CliResult): T {
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(result.stdout) as T;
}

let store: Store;

beforeAll(async () => {
  // The demo market the samples were made for, written where the CLI will look.
  store = await openStore({ dialect: TEST_DIALECT, databaseUrl, schema, poolSize: 2 });
  await migrateToLatest(store);
  await syncAreas(store);
  await loadDemoMarket(store, { seed: FIXTURE_SEED, scale: FIXTURE_SCALE, now: FIXTURE_NOW });
});
afterAll(async () => {
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('stoop import', () => {
  it('--json prints one JSON object with counts, derived matches, scores and memory', async () => {
    const summary = onlyJson<ImportSummary & { memory: { peakRssBytes: number } }>(
      await stoop('import', 'pluto', fixturePath('pluto.csv'), '--json'),
    );
    expect(summary).toMatchObject({ dataset: 'pluto', counts: { read: 268, upserted: 268, rejected: 0 } });
    expect(summary.pluto!.matchedByBbl).toBeGreaterThan(150);
    expect(summary.pluto!.buildingsUpdated).toBeGreaterThan(150);
    // PLUTO feeds no score: with no score dataset imported yet, the demo scores stay.
    expect(summary.scores).toMatchObject({ computed: false, buildings: 0 });
    expect(summary.memory.peakRssBytes).toBeGreaterThan(0);
    const year = await store.db
      .selectFrom('buildings')
      .select('nyc_data_json')
      .where('bbl', 'is not', null)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(year.nyc_data_json)).toHaveProperty('buildingClass');
  });

  it('prints one summary line per step for people; no progress bar off a terminal', async () => {
    const result = await stoop('import', 'mta-stops', fixturePath('mta-stops.txt'));
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      /^mta-stops: 1,488 records read from .*mta-stops\.txt in \d+\.\d s \([\d,]+\/s\): 496 upserted, 992 ignored \(992 platform of a station\), 0 rejected\.$/,
    );
    // Health comes from the violation rows the demo market stored (no HPD import needed).
    expect(lines[1]).toMatch(
      /^Scores: 240 buildings in \d+\.\d s \(health [1-9]\d*, noise 0, safety 0, transit 240 non-null\)\.$/,
    );
    expect(lines).toHaveLength(2);
    expect(result.stderr).toBe('');
  });

  it('reports rejected rows with line numbers on stderr, keeps the good ones, and lists all with --rejects', async () => {
    const header = 'unique_key,created_date,complaint_type,latitude,longitude';
    const good = (i: number) => `${7000 + i},2026-05-01T10:00:00.000,Noise - Residential,40.75,-73.99`;
    const lines = [header];
    for (let i = 0; i < 50; i++)
      lines.push(i % 2 === 0 ? good(i) : `${7000 + i},2026-99-01,Noise,40.75,-73.99`);
    const file = join(dataDir, 'bad311.csv');
    const rejectsFile = join(dataDir, 'rejects.csv');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const result = await stoop('import', '311', file, '--no-scores', '--rejects', rejectsFile);
    expect(result.code, result.stderr).toBe(0);
    const stderr = result.stderr.trim().split('\n');
    expect(stderr[0]).toBe('rejected line 3: created_date: "2026-99-01" is not a valid date in 1900–2100');
    expect(stderr).toHaveLength(21);
    expect(stderr[20]).toBe(`… and 5 more rejected rows (all in ${rejectsFile}).`);
    expect(result.stdout).toMatch(/25 upserted, 0 ignored, 25 rejected\.\n$/);
    const rejects = readFileSync(rejectsFile, 'utf8').trim().split('\n');
    expect(rejects[0]).toBe('line,reason');
    expect(rejects).toHaveLength(26);
    expect(rejects[25]).toBe('51,"created_date: ""2026-99-01"" is not a valid date in 1900–2100"');
  });

  it('refuses a file of another dataset, naming the missing columns, without a stack trace', async () => {
    const result = await stoop('import', 'pluto', fixturePath('311.csv'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error: .*311\.csv is not a pluto file \(.*\): missing required columns yearbuilt, numfloors, unitsres, bldgclass, cd, policeprct; found: Unique Key, /,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).toBe('');
  });

  it('rejects an unknown dataset and an unreadable file', async () => {
    const unknown = await stoop('import', 'census', fixturePath('311.csv'));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      "error: command-argument value 'census' is invalid for argument 'dataset'. must be one of hpd-violations, pluto, fcc-bdc, 311, nypd-complaints, mta-stops",
    );
    const missing = await stoop('import', '311', join(dataDir, 'absent.csv'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: cannot read .*absent\.csv: ENOENT/);
  });
});

describe('on a terminal', () => {
  // util-linux `script` gives the child a pseudo-terminal.
  it.skipIf(!existsSync('/usr/bin/script'))('draws a progress bar over the file', async () => {
    const command = [
      process.execPath,
      '--import',
      'tsx',
      'src/cli.ts',
      'import',
      'mta-stops',
      fixturePath('mta-stops.txt'),
      '--no-scores',
    ]
      .map((arg) => `'${arg}'`)
      .join(' ');
    const output = await new Promise<string>((done, fail) => {
      execFile(
        '/usr/bin/script',
        ['-qec', command, '/dev/null'],
        { cwd: ROOT, env: childEnv, timeout: 60_000 },
        (error, stdout) => (error ? fail(error) : done(stdout)),
      );
    });
    expect(output).toMatch(/mta-stops \[[█░]+\] 100% \| 1,488 records \| \d+s/);
    expect(output).toMatch(/mta-stops: 1,488 records read/);
  });
});

describe('stoop scores compute', () => {
  it('recomputes every building and reports it', async () => {
    const summary = onlyJson<ScoresRunSummary>(await stoop('scores', 'compute', '--json'));
    expect(summary).toMatchObject({ computed: true, buildings: 240, withTransit: 240, withNoise: 228 });
    const human = await stoop('scores', 'compute');
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(
      /^Scores: 240 buildings in \d+\.\d s \(health \d+, noise 228, safety 0, transit 240 non-null\)\.\n$/,
    );
  });
});
