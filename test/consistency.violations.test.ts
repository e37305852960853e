/**
 * A building's violation count and its violation list come from the same rows:
 * `violationsOpen` (building scores, listing summaries, property detail) is the
 * number of `Open` rows `GET /building/{id}/violations` serves, for every
 * building of a small demo market, and equals what the scores job computes
 * from the stored rows.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateBuildings } from '../src/demo/market/buildings.ts';
import { loadDemoMarket } from '../src/demo/market/load.ts';
import { DEMO_VIOLATION_ID_BASE, sampleViolations } from '../src/demo/market/violations.ts';
import { listAreas } from '../src/modules/areas/areas.repository.ts';
import type { BuildingScoresResponse, ViolationsResponse } from '../src/modules/building/building.schema.ts';
import { MAX_VIOLATIONS } from '../src/modules/building/building.service.ts';
import type { ListingSummary } from '../src/modules/listings/listing.schema.ts';
import { runImport } from '../src/modules/opendata/opendata.service.ts';
import { databaseSources, violationFigures, windowStart } from '../src/modules/opendata/scores.ts';
import { isoDate } from '../src/platform/clock.ts';
import type { BuildingRow } from '../src/platform/db/tables.ts';
import { AreaTree } from '../src/reference/areas.ts';
import { fixturePath } from './opendata.fixtures.ts';
import { createTestApp, okJson, TEST_NOW, TEST_SEED, type TestApp } from './support/app.ts';

let t: TestApp;
let buildings: BuildingRow[];
beforeAll(async () => {
  t = await createTestApp({ scale: 0.02 });
  buildings = await t.store.db.selectFrom('buildings').selectAll().orderBy('id').execute();
});
afterAll(async () => {
  await t?.close();
});

const json = <T>(path: string) => okJson<T>(t, path);

/** Open rows the violations list serves for a building (the list is not paged: all of it, or a warning). */
async function openListed(id: string): Promise<number> {
  const body = await json<ViolationsResponse & { meta: { warnings?: string[] } }>(
    `/v1/building/${id}/violations`,
  );
  expect(body.data.length).toBeLessThanOrEqual(MAX_VIOLATIONS);
  expect(body.meta.warnings ?? [], `building ${id}: list truncated`).not.toContainEqual(
    expect.stringContaining('More than'),
  );
  return body.data.filter((v) => v.status === 'Open').length;
}

describe('violation counts and lists agree (demo market)', () => {
  it('the demo stores violation rows: classes A/B/C/I, open and closed, inside the scores window', async () => {
    const rows = await t.store.db.selectFrom('hpd_violations').selectAll().execute();
    const synthetic = rows.filter((r) => r.violation_id.length === 12 && r.violation_id.startsWith('9'));
    expect(synthetic.length).toBeGreaterThan(50);
    expect(new Set(synthetic.map((r) => r.class))).toEqual(new Set(['A', 'B', 'C', 'I']));
    expect(new Set(synthetic.map((r) => r.status))).toEqual(new Set(['Open', 'Close']));
    for (const r of synthetic) {
      expect(r.is_open).toBe(r.status === 'Open' ? 1 : 0);
      expect(r.inspection_date >= windowStart(TEST_NOW) && r.inspection_date <= isoDate(TEST_NOW)).toBe(true);
      expect(r.description).toMatch(/ADM CODE|HMC/);
    }
    const bbls = new Set(buildings.map((b) => b.bbl));
    expect(rows.every((r) => bbls.has(r.bbl))).toBe(true);
  });

  it('every building: scores.violationsOpen == open rows of its violations list', async () => {
    let withOpen = 0;
    for (const b of buildings) {
      const scores = await json<BuildingScoresResponse>(`/v1/building/${b.id}/scores`);
      const listed = await openListed(b.id);
      expect(scores.data.violationsOpen, `building ${b.id}`).toBe(listed);
      if (listed > 0) withOpen++;
    }
    // Not a vacuous pass: a good share of the market has open violations.
    expect(withOpen).toBeGreaterThan(buildings.length / 10);
  });

  it('listing summaries (search, building listings) and property detail show the same count', async () => {
    const open = new Map<string, number>();
    const search = await json<{ data: ListingSummary[] }>('/v1/search/rentals?perPage=50&areas=1');
    const listingIds = search.data.map((l) => l.id).slice(0, 20);
    expect(listingIds.length).toBeGreaterThan(5);
    for (const item of search.data) {
      const buildingId = item.buildingId;
      if (!open.has(buildingId)) open.set(buildingId, await openListed(buildingId));
      expect(item.buildingScores.violationsOpen, `listing ${item.id}`).toBe(open.get(buildingId));
    }
    for (const id of listingIds) {
      const detail = await json<{ data: ListingSummary }>(`/v1/property/${id}`);
      const buildingId = detail.data.buildingId;
      expect(detail.data.buildingScores.violationsOpen, `property ${id}`).toBe(
        open.get(buildingId) ?? (await openListed(buildingId)),
      );
      const inBuilding = await json<{ data: ListingSummary[] }>(
        `/v1/building/${buildingId}/listings?status=ACTIVE,IN_CONTRACT,OFF_MARKET&perPage=5`,
      );
      for (const item of inBuilding.data) {
        expect(item.buildingScores.violationsOpen).toBe(detail.data.buildingScores.violationsOpen);
      }
    }
  });

  it('the stored figures are what the scores job computes from the stored rows', async () => {
    const sources = databaseSources(t.store.db, new Set(['hpd-violations']), windowStart(TEST_NOW));
    const linked = buildings.filter((b) => b.bbl !== null);
    const counts = await sources.openViolations!([...new Set(linked.map((b) => b.bbl!))]);
    const stored = new Map(
      (await t.store.db.selectFrom('building_scores').selectAll().execute()).map((s) => [s.building_id, s]),
    );
    for (const b of buildings) {
      const s = stored.get(b.id)!;
      if (b.bbl === null) {
        expect({ open: s.violations_open, health: s.health_score }).toEqual({ open: 0, health: null });
        continue;
      }
      const figures = violationFigures(counts.get(b.bbl) ?? {}, b.unit_count);
      expect({ open: s.violations_open, health: s.health_score }, `building ${b.id}`).toEqual({
        open: figures.violationsOpen,
        health: figures.health,
      });
    }
  });
});

describe('after the scores job runs (an import of another dataset made it due)', () => {
  it('violationsOpen still equals the open rows listed, and health is still computed from them', async () => {
    const before = new Map(
      (await t.store.db.selectFrom('building_scores').selectAll().execute()).map((s) => [s.building_id, s]),
    );
    const areaTree = new AreaTree(await listAreas(t.store.db));
    const summary = await runImport(t.store, areaTree, t.clock, {
      dataset: '311',
      file: fixturePath('311.csv'),
    });
    // HPD was never imported: the job still counts the violation rows the demo stored.
    expect(summary.scores).toMatchObject({
      computed: true,
      withHealth: buildings.filter((b) => b.bbl !== null).length,
    });
    t.ctx.dataVersion.invalidate();
    for (const b of buildings) {
      const scores = await json<BuildingScoresResponse>(`/v1/building/${b.id}/scores`);
      expect(scores.data.violationsOpen, `building ${b.id}`).toBe(await openListed(b.id));
      expect(scores.data.healthScore, `building ${b.id}`).toBe(before.get(b.id)!.health_score);
    }
  });
});

describe('real HPD rows for the BBLs of the shipped sample', () => {
  it('ships a byte-identical copy of the shared sample', () => {
    const shared = new URL('../../shared/data/hpd-violations-sample.csv', import.meta.url);
    const shipped = new URL('../resources/hpd-violations-sample.csv', import.meta.url);
    let original: string;
    try {
      original = readFileSync(shared, 'utf8');
    } catch {
      return; // a clone without the shared folder beside it
    }
    expect(readFileSync(shipped, 'utf8')).toBe(original);
  });

  it('parses the 1,481 sample records as the importer stores them', () => {
    const sample = sampleViolations();
    const rows = [...sample.values()].flat();
    expect(sample.size).toBe(195);
    expect(rows).toHaveLength(1481);
    expect(rows.filter((r) => r.is_open === 1)).toHaveLength(1447);
    expect(rows.every((r) => Number(r.violation_id) < DEMO_VIOLATION_ID_BASE)).toBe(true);
  });

  it('a building with a sample BBL carries exactly those rows, and its count is theirs', () => {
    const generated = generateBuildings(TEST_SEED, 0.25, TEST_NOW);
    const sample = sampleViolations();
    const withSample = generated.filter((b) => b.row.bbl && sample.has(b.row.bbl));
    expect(withSample.length).toBeGreaterThan(5);
    const carried = new Set<string>();
    for (const b of withSample) {
      const real = sample.get(b.row.bbl!)!;
      if (b.violations.length > 0) {
        expect(b.violations).toEqual(real);
        carried.add(b.row.bbl!);
      }
      expect(b.scores.violations_open).toBe(real.filter((r) => r.is_open === 1).length);
    }
    expect(carried).toEqual(new Set(withSample.map((b) => b.row.bbl)));
  });
});

describe('reloading the demo market', () => {
  it('replaces its synthetic violations and keeps rows stored under HPD numbering', async () => {
    const imported = {
      violation_id: '12345678',
      bbl: '1000010001',
      class: 'B' as const,
      status: 'Open',
      description: 'imported',
      inspection_date: '2026-01-02',
      is_open: 1 as const,
    };
    await t.store.db.insertInto('hpd_violations').values(imported).execute();
    const real = await t.store.db
      .selectFrom('hpd_violations')
      .select('violation_id')
      .where('violation_id', '<', String(DEMO_VIOLATION_ID_BASE))
      .execute();
    await loadDemoMarket(t.store, { seed: TEST_SEED + 1, scale: 0.02, now: TEST_NOW, replace: true });
    const stored = await t.store.db.selectFrom('hpd_violations').select('violation_id').execute();
    const synthetic = (ids: { violation_id: string }[]) =>
      ids
        .map((r) => r.violation_id)
        .filter((id) => id.length === 12 && id >= String(DEMO_VIOLATION_ID_BASE))
        .sort();
    const regenerated = generateBuildings(TEST_SEED + 1, 0.02, TEST_NOW).flatMap((b) => b.violations);
    // Only the new market's synthetic rows: the old market's are gone, not merely overwritten.
    expect(synthetic(stored)).toEqual(synthetic(regenerated));
    const kept = new Set(stored.map((r) => r.violation_id));
    expect(real.every((r) => kept.has(r.violation_id))).toBe(true);
  });
});
