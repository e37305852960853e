import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { latLngToCell } from 'h3-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAreas } from '../src/modules/areas/areas.repository.ts';
import { readScope } from '../src/modules/freshness/data-version.ts';
import type { DatasetName } from '../src/modules/opendata/datasets.ts';
import { type ImportSummary, runImport } from '../src/modules/opendata/opendata.service.ts';
import {
  healthScore,
  noiseScore,
  safetyScore,
  transitScore,
} from '../src/modules/opendata/score-formulas.ts';
import { windowStart } from '../src/modules/opendata/scores.ts';
import { ManualClock } from '../src/platform/clock.ts';
import type { Store } from '../src/platform/db/database.ts';
import type { BuildingRow } from '../src/platform/db/tables.ts';
import { AreaTree } from '../src/reference/areas.ts';
import { createFixtureStore, FIXTURE_NOW, fixturePath, readFixture } from './opendata.fixtures.ts';

let store: Store;
let areaTree: AreaTree;
const clock = new ManualClock(FIXTURE_NOW);
/** Buildings as the demo loaded them, before any import. */
let before: Map<string, BuildingRow>;

beforeAll(async () => {
  store = await createFixtureStore();
  areaTree = new AreaTree(await listAreas(store.db));
  before = new Map((await store.db.selectFrom('buildings').selectAll().execute()).map((b) => [b.id, b]));
});
afterAll(async () => {
  await store?.close();
});

async function buildingsVersion(): Promise<string> {
  const row = await readScope(store.db, 'buildings');
  if (!row) throw new Error('the fixture store has no buildings version');
  return row.at;
}

/** Imports a sample; the stopped test clock must not keep the data version from moving. */
async function importFixture(dataset: DatasetName, file: string, scores = true): Promise<ImportSummary> {
  const version = await buildingsVersion();
  const summary = await runImport(store, areaTree, clock, { dataset, file: fixturePath(file), scores });
  expect(await buildingsVersion()).not.toBe(version);
  expect((await buildingsVersion()) > version).toBe(true);
  return summary;
}

async function buildings(): Promise<Map<string, BuildingRow>> {
  return new Map((await store.db.selectFrom('buildings').selectAll().execute()).map((b) => [b.id, b]));
}

/** Independent haversine (the importer's lives in geo.ts). */
function metres(aLat: number, aLon: number, bLat: number, bLon: number): number {
  const r = Math.PI / 180;
  const h =
    Math.sin(((bLat - aLat) * r) / 2) ** 2 +
    Math.cos(aLat * r) * Math.cos(bLat * r) * Math.sin(((bLon - aLon) * r) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.sqrt(h));
}

function normalizedBbl(value: string): string {
  return value.replace(/\.0+$/, '');
}

describe('HPD violations import', () => {
  const rows = readFixture('hpd-violations.csv');
  let summary: ImportSummary;

  beforeAll(async () => {
    summary = await importFixture('hpd-violations', 'hpd-violations.csv');
  });

  it('upserts every sample row by violation id with its class, status and date', async () => {
    expect(rows.length).toBeGreaterThan(200);
    expect(summary.counts).toMatchObject({
      read: rows.length,
      upserted: rows.length,
      rejected: 0,
      ignored: 0,
    });
    const stored = new Map(
      (await store.db.selectFrom('hpd_violations').selectAll().execute()).map((v) => [v.violation_id, v]),
    );
    expect(stored.size).toBe(rows.length);
    for (const row of rows) {
      const v = stored.get(row.violationid!)!;
      expect(v).toMatchObject({
        bbl: row.bbl,
        class: row.class,
        status: row.violationstatus,
        description: row.novdescription,
        inspection_date: row.inspectiondate!.slice(0, 10),
      });
      expect(Number(v.is_open)).toBe(row.violationstatus === 'Open' ? 1 : 0);
    }
  });

  it('feeds violations_open and the health score of buildings by BBL; no BBL → health null', async () => {
    const scores = new Map(
      (await store.db.selectFrom('building_scores').selectAll().execute()).map((s) => [s.building_id, s]),
    );
    let withViolations = 0;
    for (const b of before.values()) {
      const s = scores.get(b.id)!;
      if (b.bbl === null) {
        expect(s.health_score).toBeNull();
        continue;
      }
      const open = rows.filter((r) => r.bbl === b.bbl && r.violationstatus === 'Open');
      const byClass = { A: 0, B: 0, C: 0, I: 0 } as Record<'A' | 'B' | 'C' | 'I', number>;
      for (const r of open) byClass[r.class as 'A']++;
      expect(Number(s.violations_open)).toBe(open.length);
      expect(s.health_score).toBe(healthScore(byClass, b.unit_count));
      if (open.length > 0) withViolations++;
    }
    expect(withViolations).toBeGreaterThan(20);
  });

  it('is idempotent, and a re-import updates a changed violation in place', async () => {
    const again = await importFixture('hpd-violations', 'hpd-violations.csv', false);
    expect(again.counts.upserted).toBe(rows.length);
    const count = await store.db
      .selectFrom('hpd_violations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(rows.length);

    const target = rows.find((r) => r.violationstatus === 'Open')!;
    const dir = mkdtempSync(join(tmpdir(), 'stoop-hpd-'));
    const file = join(dir, 'changed.csv');
    const lines = readFileSync(fixturePath('hpd-violations.csv'), 'utf8').split('\n');
    const index = lines.findIndex((l) => l.startsWith(`${target.violationid},`));
    lines[index] = lines[index]!.replace(',Open,', ',Close,').replace(
      target.currentstatus!,
      'VIOLATION CLOSED',
    );
    writeFileSync(file, lines.join('\n'));
    try {
      await runImport(store, areaTree, clock, { dataset: 'hpd-violations', file, scores: false });
      const changed = await store.db
        .selectFrom('hpd_violations')
        .selectAll()
        .where('violation_id', '=', target.violationid!)
        .executeTakeFirstOrThrow();
      expect(changed).toMatchObject({ status: 'Close' });
      expect(Number(changed.is_open)).toBe(0);
    } finally {
      await runImport(store, areaTree, clock, {
        dataset: 'hpd-violations',
        file: fixturePath('hpd-violations.csv'),
        scores: false,
      });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('PLUTO import', () => {
  const lots = readFixture('pluto.csv').map(
    (l): Record<string, string> => ({ ...l, bbl: normalizedBbl(l.bbl!) }),
  );
  const lotByBbl = new Map(lots.map((l) => [l.bbl!, l]));
  let summary: ImportSummary;
  let after: Map<string, BuildingRow>;

  beforeAll(async () => {
    summary = await importFixture('pluto', 'pluto.csv');
    after = await buildings();
  });

  it('matches buildings by BBL and sets year built, floors, units and NYC data, keeping other keys', () => {
    let matched = 0;
    for (const b of before.values()) {
      const lot = b.bbl === null ? undefined : lotByBbl.get(b.bbl);
      if (!lot) continue;
      matched++;
      const a = after.get(b.id)!;
      expect(a.bbl).toBe(b.bbl);
      expect(a.year_built).toBe(Number(lot.yearbuilt));
      expect(a.floor_count).toBe(Math.max(1, Math.round(Number(lot.numfloors))));
      expect(a.unit_count).toBe(Number(lot.unitsres));
      const nycData = JSON.parse(a.nyc_data_json) as Record<string, unknown>;
      const old = JSON.parse(b.nyc_data_json) as Record<string, unknown>;
      const prefix = ['', 'MN', 'BX', 'BK', 'QN', 'SI'][Number(lot.cd![0])];
      expect(nycData).toEqual({
        ...old,
        buildingClass: lot.bldgclass,
        communityDistrict: `${prefix}${lot.cd!.slice(1)}`,
        policePrecinct: Number(lot.policeprct),
        zoning: lot.zonedist1,
      });
    }
    expect(matched).toBe(summary.pluto!.matchedByBbl);
    expect(matched).toBeGreaterThan(150);
  });

  it('gives a building without a BBL the nearest lot within 40 m, and leaves the rest alone', () => {
    let proximity = 0;
    for (const b of before.values()) {
      if (b.bbl !== null) continue;
      let best: { bbl: string; d: number } | null = null;
      for (const lot of lots) {
        const d = metres(b.latitude, b.longitude, Number(lot.latitude), Number(lot.longitude));
        if (d <= 40 && (best === null || d < best.d)) best = { bbl: lot.bbl, d };
      }
      const a = after.get(b.id)!;
      if (best === null) {
        expect(a.bbl).toBeNull();
        expect(a.nyc_data_json).toBe(b.nyc_data_json);
      } else {
        proximity++;
        expect(a.bbl).toBe(best.bbl);
        expect(a.year_built).toBe(Number(lotByBbl.get(best.bbl)!.yearbuilt));
      }
    }
    expect(proximity).toBe(summary.pluto!.matchedByProximity);
    // Demo buildings stand on real lots now, so few lack a BBL (those in areas without lots): not vacuous.
    expect(proximity).toBeGreaterThan(0);
  });

  it('re-importing the same file changes no building', async () => {
    const again = await importFixture('pluto', 'pluto.csv', false);
    expect(again.counts.upserted).toBe(lots.length);
    expect(again.pluto!.buildingsUpdated).toBe(0);
    // Buildings matched by proximity now carry the lot's BBL and match by it.
    expect(again.pluto!.matchedByBbl).toBe(summary.pluto!.matchedByBbl + summary.pluto!.matchedByProximity);
  });
});

describe('FCC BDC import', () => {
  const rows = readFixture('fcc-bdc.csv');
  let summary: ImportSummary;
  let after: Map<string, BuildingRow>;

  beforeAll(async () => {
    summary = await importFixture('fcc-bdc', 'fcc-bdc.csv');
    after = await buildings();
  });

  interface Expected {
    down: number;
    up: number;
    name: string;
  }

  function expectedProviders(records: Record<string, string>[]): Map<string, Expected> {
    const out = new Map<string, Expected>();
    for (const r of records) {
      if (r.business_residential_code === 'B') continue;
      const key = `${r.provider_id}|${r.technology}`;
      const e = out.get(key);
      const down = Number(r.max_advertised_download_speed);
      const up = Number(r.max_advertised_upload_speed);
      out.set(key, {
        down: Math.max(e?.down ?? 0, down),
        up: Math.max(e?.up ?? 0, up),
        name: r.brand_name!,
      });
    }
    return out;
  }

  it('writes the InternetProviders record: by known FCC location, else by H3 res-8 cell', () => {
    const counts = { building: 0, h3_res8: 0 };
    for (const b of before.values()) {
      const a = after.get(b.id)!;
      const demo = b.internet_providers_json
        ? (JSON.parse(b.internet_providers_json) as { fccLocationId: number })
        : null;
      const atLocation = demo
        ? expectedProviders(rows.filter((r) => Number(r.location_id) === demo.fccLocationId))
        : new Map<string, Expected>();
      const cell = latLngToCell(b.latitude, b.longitude, 8);
      const inCell = expectedProviders(rows.filter((r) => r.h3_res8_id === cell));
      const expected = atLocation.size > 0 ? atLocation : inCell;
      if (expected.size === 0) {
        expect(a.internet_providers_json).toBe(b.internet_providers_json);
        continue;
      }
      const record = JSON.parse(a.internet_providers_json!) as {
        coverageLevel: string;
        source: string;
        status: string;
        fccLocationId: number;
        providers: {
          providerId: number;
          technologyCode: number;
          technologyLabel: string;
          maxDownloadMbps: number;
          maxUploadMbps: number;
        }[];
        disclaimer: string;
        updatedAt: string;
        unitCount: number;
      };
      const level = atLocation.size > 0 ? 'building' : 'h3_res8';
      counts[level]++;
      expect(record).toMatchObject({
        status: 'matched',
        source: 'fcc_bdc',
        coverageLevel: level,
        updatedAt: FIXTURE_NOW.toISOString(),
        unitCount: a.unit_count,
        disclaimer: 'This product uses FCC data but is not endorsed or certified by the FCC.',
      });
      if (level === 'building') expect(record.fccLocationId).toBe(demo!.fccLocationId);
      expect(record.providers).toHaveLength(expected.size);
      for (const p of record.providers) {
        const e = expected.get(`${p.providerId}|${p.technologyCode}`)!;
        expect(p.maxDownloadMbps).toBe(e.down);
        expect(p.maxUploadMbps).toBe(e.up);
      }
      const label = Object.fromEntries(record.providers.map((p) => [p.technologyCode, p.technologyLabel]));
      if (label[50]) expect(label[50]).toBe('Fiber to the Premises');
      if (label[40]) expect(label[40]).toBe('Cable');
      if (label[10]) expect(label[10]).toBe('Copper Wire');
      expect(Number(a.fiber_available)).toBe(record.providers.some((p) => p.technologyCode === 50) ? 1 : 0);
      expect(Number(a.max_download_mbps)).toBe(Math.max(...record.providers.map((p) => p.maxDownloadMbps)));
    }
    expect(counts.building).toBe(summary.broadband!.matchedByLocation);
    expect(counts.h3_res8).toBe(summary.broadband!.matchedByH3);
    expect(counts.building).toBeGreaterThan(30);
    expect(counts.h3_res8).toBeGreaterThan(30);
  });

  it('re-importing the same file changes no building', async () => {
    clock.advance(60_000);
    const again = await importFixture('fcc-bdc', 'fcc-bdc.csv', false);
    expect(again.counts.upserted).toBe(rows.length);
    expect(again.broadband!.buildingsUpdated).toBe(0);
    clock.set(FIXTURE_NOW);
  });
});

describe('311, NYPD and MTA imports, and the scores they feed', () => {
  const noise = readFixture('311.csv');
  const crime = readFixture('nypd-complaints.csv');
  const stops = readFixture('mta-stops.txt');
  const results: Partial<Record<DatasetName, ImportSummary>> = {};

  beforeAll(async () => {
    results['311'] = await importFixture('311', '311.csv', false);
    results['nypd-complaints'] = await importFixture('nypd-complaints', 'nypd-complaints.csv', false);
    results['mta-stops'] = await importFixture('mta-stops', 'mta-stops.txt');
  });

  it('keeps 311 noise complaints with a location; other complaint types are ignored', async () => {
    const isNoise = (r: Record<string, string>) => /^noise/i.test(r['Complaint Type']!);
    const located = noise.filter((r) => isNoise(r) && r.Latitude !== '');
    expect(results['311']!.counts).toMatchObject({
      read: noise.length,
      upserted: located.length,
      rejected: 0,
      ignoredReasons: {
        'not a noise complaint': noise.filter((r) => !isNoise(r)).length,
        'no location': noise.filter((r) => isNoise(r) && r.Latitude === '').length,
      },
    });
    const stored = await store.db.selectFrom('noise_complaints').selectAll().orderBy('unique_key').execute();
    expect(stored).toHaveLength(located.length);
    const first = located.find((r) => r['Unique Key'] === stored[0]!.unique_key)!;
    const [m, d, y] = first['Created Date']!.slice(0, 10).split('/');
    expect(stored[0]!.created_date).toBe(`${y}-${m}-${d}`);
  });

  it('keeps NYPD complaints with their law category; MTA stations without platforms', async () => {
    const located = crime.filter((r) => r.Latitude !== '');
    expect(results['nypd-complaints']!.counts).toMatchObject({ upserted: located.length, rejected: 0 });
    const categories = await store.db
      .selectFrom('crime_complaints')
      .select((eb) => ['law_category', eb.fn.countAll<number>().as('n')])
      .groupBy('law_category')
      .execute();
    for (const c of categories)
      expect(Number(c.n)).toBe(located.filter((r) => r.LAW_CAT_CD === c.law_category).length);
    const stations = stops.filter((s) => s.location_type === '1');
    expect(results['mta-stops']!.counts).toMatchObject({
      read: stops.length,
      upserted: stations.length,
      ignoredReasons: { 'platform of a station': stops.length - stations.length },
    });
  });

  it('scores every building from a brute-force recount of the samples', async () => {
    const since = windowStart(FIXTURE_NOW);
    const isoOf = (us: string) => `${us.slice(6, 10)}-${us.slice(0, 2)}-${us.slice(3, 5)}`;
    const recentNoise = noise
      .filter((r) => /^noise/i.test(r['Complaint Type']!) && r.Latitude !== '')
      .filter((r) => isoOf(r['Created Date']!) >= since);
    const recentCrime = crime.filter((r) => r.Latitude !== '' && isoOf(r.CMPLNT_FR_DT!) >= since);
    const stations = stops.filter((s) => s.location_type === '1');
    const weights: Record<string, number> = { FELONY: 3, MISDEMEANOR: 2, VIOLATION: 1 };
    const scores = new Map(
      (await store.db.selectFrom('building_scores').selectAll().execute()).map((s) => [s.building_id, s]),
    );
    const current = await buildings();
    let nycChecked = 0;
    for (const b of current.values()) {
      const s = scores.get(b.id)!;
      const inNyc = (areaTree.borough(b.area_id)?.id ?? 0) < 1000000;
      const near = (lat: string, lon: string, r: number) =>
        metres(b.latitude, b.longitude, Number(lat), Number(lon)) <= r;
      const distances = stations.map((st) =>
        metres(b.latitude, b.longitude, Number(st.stop_lat), Number(st.stop_lon)),
      );
      const nearest = Math.min(...distances);
      expect(s.transit_score).toBe(
        transitScore(nearest <= 1600 ? nearest : null, distances.filter((d) => d <= 800).length),
      );
      if (!inNyc) {
        expect(s.noise_score).toBeNull();
        expect(s.safety_score).toBeNull();
        continue;
      }
      nycChecked++;
      const n = recentNoise.filter((r) => near(r.Latitude!, r.Longitude!, 200)).length;
      expect(s.noise_score).toBe(noiseScore(n));
      const w = recentCrime
        .filter((r) => near(r.Latitude!, r.Longitude!, 400))
        .reduce((sum, r) => sum + weights[r.LAW_CAT_CD!]!, 0);
      expect(s.safety_score).toBe(safetyScore(w));
    }
    expect(nycChecked).toBeGreaterThan(200);
    const spread = new Set([...scores.values()].map((s) => s.noise_score));
    expect(spread.size).toBeGreaterThan(3);
  });
});
