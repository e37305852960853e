import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScoresSchedule, DEFAULT_SCORES_INTERVAL_MS, ScoresJob } from '../src/jobs/scores.ts';
import { listAreas } from '../src/modules/areas/areas.repository.ts';
import { readScope } from '../src/modules/freshness/data-version.ts';
import { runImport } from '../src/modules/opendata/opendata.service.ts';
import { DAY_MS, HOUR_MS, ManualClock } from '../src/platform/clock.ts';
import type { Store } from '../src/platform/db/database.ts';
import type { BuildingScoresRow } from '../src/platform/db/tables.ts';
import { AreaTree } from '../src/reference/areas.ts';
import { createFixtureStore, FIXTURE_NOW, fixturePath } from './opendata.fixtures.ts';

let store: Store;
let areaTree: AreaTree;
const clock = new ManualClock(FIXTURE_NOW);

beforeAll(async () => {
  store = await createFixtureStore();
  areaTree = new AreaTree(await listAreas(store.db));
});
afterAll(async () => {
  await store?.close();
});

async function scores(): Promise<Map<string, BuildingScoresRow>> {
  return new Map(
    (await store.db.selectFrom('building_scores').selectAll().execute()).map((s) => [s.building_id, s]),
  );
}

async function scoresRunAt(): Promise<string | undefined> {
  const row = await readScope(store.db, 'scores');
  return row?.at;
}

describe('ScoresJob', () => {
  it('has the weekly interval as data', () => {
    const job = new ScoresJob(store.db, areaTree, clock);
    expect(job.intervalMs).toBe(7 * DAY_MS);
    expect(DEFAULT_SCORES_INTERVAL_MS).toBe(7 * DAY_MS);
    expect(new ScoresJob(store.db, areaTree, clock, { intervalMs: DAY_MS }).intervalMs).toBe(DAY_MS);
  });

  it('does nothing while no open data is imported: the demo scores stay', async () => {
    const demo = await scores();
    const job = new ScoresJob(store.db, areaTree, clock);
    expect(await job.isDue()).toBe(false);
    expect(await job.tick()).toBeNull();
    const forced = await job.runOnce();
    expect(forced.computed).toBe(false);
    expect(await scores()).toEqual(demo);
    expect(await scoresRunAt()).toBeUndefined();
  });

  it('runs after an import, then weekly; a newer import makes it due again', async () => {
    const job = new ScoresJob(store.db, areaTree, clock);
    clock.advance(HOUR_MS);
    await runImport(store, areaTree, clock, { dataset: '311', file: fixturePath('311.csv'), scores: false });
    expect(await job.isDue()).toBe(true);
    clock.advance(1000);
    const first = await job.tick();
    expect(first).toMatchObject({
      computed: true,
      buildings: 240,
      withNoise: 228,
      withHealth: 0,
      withTransit: 0,
    });
    expect(await scoresRunAt()).toBe(clock.now().toISOString());
    // Only 311 is imported: the other scores are null, as their inputs are absent.
    const computed = await scores();
    expect([...computed.values()].every((s) => s.health_score === null && s.transit_score === null)).toBe(
      true,
    );
    expect([...computed.values()].filter((s) => s.noise_score !== null)).toHaveLength(228);

    clock.advance(6 * DAY_MS);
    expect(await job.tick()).toBeNull();
    clock.advance(DAY_MS);
    expect(await job.tick()).toMatchObject({ computed: true });

    clock.advance(HOUR_MS);
    await runImport(store, areaTree, clock, {
      dataset: 'mta-stops',
      file: fixturePath('mta-stops.txt'),
      scores: false,
    });
    clock.advance(1000);
    expect(await job.tick()).toMatchObject({ computed: true, withTransit: 240 });
    expect(await job.tick()).toBeNull();
  });

  it('concurrent runs share one computation', async () => {
    const job = new ScoresJob(store.db, areaTree, clock);
    const a = job.runOnce();
    const b = job.runOnce();
    expect(a).toBe(b);
    await a;
  });

  it('its schedule checks at once and on its interval; stop() ends the schedule', async () => {
    clock.advance(8 * DAY_MS);
    const job = new ScoresJob(store.db, areaTree, clock, { checkEveryMs: 20 });
    const errors: unknown[] = [];
    const schedule = createScoresSchedule(job, { clock, onError: (error) => errors.push(error) });
    await schedule.start();
    for (let i = 0; i < 100 && (await scoresRunAt()) !== clock.now().toISOString(); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await scoresRunAt()).toBe(clock.now().toISOString());
    await schedule.stop();
    clock.advance(8 * DAY_MS);
    await new Promise((r) => setTimeout(r, 100));
    expect(await scoresRunAt()).not.toBe(clock.now().toISOString());
    expect(errors).toEqual([]);
  });
});
