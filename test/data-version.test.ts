import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  BUILDINGS_HIGH_WATER_MARK,
  LISTINGS_HIGH_WATER_MARK,
  readHighWaterMark,
  writeHighWaterMark,
} from '../src/jobs/refresh/pipeline-state.repository.ts';
import {
  CONTENT_SCOPES,
  DataVersion,
  forgetScopes,
  MARKER_SCOPES,
  markChanged,
  markConfirmed,
  markRecordsRefreshed,
  readScope,
  readScopes,
  setScopeTimes,
  writeMarker,
} from '../src/modules/freshness/data-version.ts';
import { ManualClock } from '../src/platform/clock.ts';
import type { Store } from '../src/platform/db/database.ts';
import { up as moveReplicationStart } from '../src/platform/db/migrations/0006_replication_start.ts';
import { createTestStore } from './support/store.ts';

const NOW = new Date('2026-11-21T12:00:00.000Z');
const ROOT = resolve(import.meta.dirname, '..');

let store: Store;
/** Stopped: every write below happens within one clock tick. */
const clock = new ManualClock(NOW);
let dataVersion: DataVersion;

beforeAll(async () => {
  store = await createTestStore();
});
afterAll(async () => {
  await store?.close();
});
beforeEach(async () => {
  await forgetScopes(store.db, [
    ...CONTENT_SCOPES,
    'refresh:search:rental',
    'refresh:search:sale',
    'refresh:buildings',
    ...MARKER_SCOPES,
  ]);
  clock.set(NOW);
  dataVersion = new DataVersion(store.db, clock);
});

describe('the data version', () => {
  it('records strictly increasing change times within one clock tick', async () => {
    const first = await markChanged(store.db, 'search:rental', clock.now());
    const second = await markChanged(store.db, 'search:rental', clock.now());
    const third = await markChanged(store.db, 'search:rental', clock.now());
    expect(first).toBe(NOW.toISOString());
    expect(Date.parse(second)).toBeGreaterThan(Date.parse(first));
    expect(Date.parse(third)).toBeGreaterThan(Date.parse(second));
    expect((await readScope(store.db, 'search:rental'))?.at).toBe(third);
  });

  it('never moves a change time back, even when the clock is behind it', async () => {
    await setScopeTimes(store.db, ['buildings'], new Date(NOW.getTime() + 60_000));
    const written = await markChanged(store.db, 'buildings', NOW, 'an import');
    expect(written).toBe(new Date(NOW.getTime() + 60_001).toISOString());
    expect(await readScope(store.db, 'buildings')).toEqual({
      scope: 'buildings',
      at: written,
      detail: 'an import',
    });
  });

  it('moves on a change of any content scope', async () => {
    const seen = new Set([await dataVersion.version()]);
    for (const scope of CONTENT_SCOPES) {
      await markChanged(store.db, scope, clock.now());
      dataVersion.invalidate();
      const version = await dataVersion.version();
      expect(seen.has(version), `a change of ${scope} must move the version`).toBe(false);
      seen.add(version);
      expect(await dataVersion.changedAt(scope)).toBe(NOW.toISOString());
    }
  });

  it('a confirmation moves dataAge, not the version', async () => {
    await markChanged(store.db, 'search:sale', clock.now());
    dataVersion.invalidate();
    const version = await dataVersion.version();
    expect(await dataVersion.refreshedAt('search:sale')).toBe(NOW.toISOString());

    const confirmedAt = new Date(NOW.getTime() + 3_600_000);
    await markConfirmed(store.db, ['search:sale'], confirmedAt);
    dataVersion.invalidate();
    expect(await dataVersion.refreshedAt('search:sale')).toBe(confirmedAt.toISOString());
    expect(await dataVersion.changedAt('search:sale')).toBe(NOW.toISOString());
    expect(await dataVersion.version()).toBe(version);
    // Only the confirmed dataset looks fresh.
    expect(await dataVersion.refreshedAt('search:rental')).toBeNull();
  });

  it('a change alone does not make a confirmed dataset look fresher', async () => {
    await markConfirmed(store.db, ['buildings'], NOW);
    await markChanged(store.db, 'buildings', new Date(NOW.getTime() + 1000));
    dataVersion.invalidate();
    expect(await dataVersion.refreshedAt('buildings')).toBe(NOW.toISOString());
  });

  it('markers keep their detail and never move the version', async () => {
    await markChanged(store.db, 'detail', clock.now());
    dataVersion.invalidate();
    const version = await dataVersion.version();
    await writeMarker(store.db, 'scores', NOW, '{"buildings":3}');
    await writeMarker(store.db, 'demo:loading', NOW);
    dataVersion.invalidate();
    expect(await dataVersion.version()).toBe(version);
    expect(await readScope(store.db, 'scores')).toEqual({
      scope: 'scores',
      at: NOW.toISOString(),
      detail: '{"buildings":3}',
    });
    await forgetScopes(store.db, ['demo:loading']);
    expect(await readScope(store.db, 'demo:loading')).toBeNull();
  });

  it('serves a cached snapshot for a second, and a fresh one after invalidate()', async () => {
    await markChanged(store.db, 'areas', clock.now());
    const before = await dataVersion.version();
    await markChanged(store.db, 'areas', clock.now());
    expect(await dataVersion.version()).toBe(before);
    clock.advance(1000);
    expect(await dataVersion.version()).not.toBe(before);
  });

  it('keeps its epoch across re-reads that find nothing written; any write of a scope, or invalidate(), starts a new one', async () => {
    await markChanged(store.db, 'search:rental', clock.now());
    const first = await dataVersion.epoch();
    expect(dataVersion.epochIfFresh()).toBe(first);
    // Re-read after its time to live, nothing written: the same epoch (readers keep what they read in it).
    clock.advance(1000);
    expect(dataVersion.epochIfFresh()).toBeNull();
    expect(await dataVersion.epoch()).toBe(first);
    clock.advance(1000);
    expect(await dataVersion.epoch()).toBe(first);

    // Each kind of write ends the epoch at the next re-read: content, confirmation, marker, records.
    const writes: [string, () => Promise<unknown>][] = [
      ['a content change', () => markChanged(store.db, 'detail', clock.now())],
      ['a confirmation', () => markConfirmed(store.db, ['buildings'], clock.now())],
      ['a marker', () => writeMarker(store.db, 'scores', clock.now(), '{"buildings":1}')],
      ['records refreshed', () => markRecordsRefreshed(store.db, clock.now())],
      // Twice within one clock tick still moves it (strictly later, like markChanged).
      ['records refreshed again in the same tick', () => markRecordsRefreshed(store.db, clock.now())],
    ];
    let epoch = first;
    for (const [what, write] of writes) {
      await write();
      expect(await dataVersion.epoch(), `${what}, before the re-read`).toBe(epoch);
      clock.advance(1000);
      const next = await dataVersion.epoch();
      expect(next, what).not.toBe(epoch);
      epoch = next;
    }

    dataVersion.invalidate();
    expect(await dataVersion.epoch(), 'after invalidate()').not.toBe(epoch);
  });

  it('gives callers waiting on one read the same epoch, and caches no read begun before invalidate()', async () => {
    await markChanged(store.db, 'areas', clock.now());
    const [a, b] = await Promise.all([dataVersion.epoch(), dataVersion.epoch()]);
    expect(a).toBe(b);
    clock.advance(1000);
    const stale = dataVersion.version();
    // A write signalled while that read is in flight: the next caller reads again and sees it.
    const changedAt = await markChanged(store.db, 'areas', clock.now());
    dataVersion.invalidate();
    await stale;
    expect(await dataVersion.version()).toContain(`areas=${changedAt}`);
  });

  it('writes inside a transaction, visible only once it commits', async () => {
    await store.db.transaction().execute(async (trx) => {
      await setScopeTimes(trx, ['search:rental', 'refresh:search:rental'], NOW);
      await writeMarker(trx, 'demo', NOW, '{}');
    });
    expect((await readScopes(store.db)).map((s) => s.scope)).toEqual([
      'demo',
      'refresh:search:rental',
      'search:rental',
    ]);
    await expect(
      store.db.transaction().execute(async (trx) => {
        await markChanged(trx, 'search:rental', new Date(NOW.getTime() + 5000));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await readScope(store.db, 'search:rental'))?.at).toBe(NOW.toISOString());
  });
});

describe('replication marks (pipeline state)', () => {
  it('an upgraded store keeps its replication position (migration 0006)', async () => {
    const loadedAt = new Date('2026-10-01T00:00:00.000Z');
    const replicatedTo = '2026-10-05T00:00:00.000Z';
    // A store loaded as of `loadedAt` under the old scheme, whose buildings were replicated since.
    await setScopeTimes(store.db, ['search:rental', 'buildings'], loadedAt);
    await writeHighWaterMark(store.db, BUILDINGS_HIGH_WATER_MARK, replicatedTo, NOW);
    expect(await readHighWaterMark(store.db, LISTINGS_HIGH_WATER_MARK)).toBeNull();

    await moveReplicationStart(store.db);
    expect(await readHighWaterMark(store.db, LISTINGS_HIGH_WATER_MARK)).toBe(loadedAt.toISOString());
    // A mark that exists already is the position: never moved back.
    expect(await readHighWaterMark(store.db, BUILDINGS_HIGH_WATER_MARK)).toBe(replicatedTo);
  });
});

/** Every file under `dir` (relative to the repository root, `/`-separated). */
function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split('\\').join('/'));
}

/** Files under src/ and bench/ whose text mentions `table`, other than `allowed`. */
function mentionsOutside(table: string, allowed: (path: string) => boolean): string[] {
  return [...filesUnder('src'), ...filesUnder('bench')]
    .filter((path) => !allowed(path))
    .filter((path) => readFileSync(join(ROOT, path), 'utf8').includes(table));
}

/** The schema itself: row types and migrations (which must name the tables they create and move). */
const isSchema = (path: string) =>
  path === 'src/platform/db/tables.ts' || path.startsWith('src/platform/db/migrations/');

describe('one owner per table', () => {
  it('reads the whole tree (the checks below are not vacuous)', () => {
    const files = filesUnder('src');
    expect(files).toContain('src/modules/freshness/data-version.repository.ts');
    expect(files).toContain('src/jobs/refresh/refresher.ts');
    expect(filesUnder('bench')).toContain('bench/pipeline.ts');
  });

  it.each([
    ['data-version', 'sync_state', 'src/modules/freshness/data-version.repository.ts'],
    ['pipeline-state', 'pipeline_state', 'src/jobs/refresh/pipeline-state.repository.ts'],
  ])('no file but the %s repository mentions %s', (_owner, table, file) => {
    expect(mentionsOutside(table, (path) => isSchema(path) || path === file)).toEqual([]);
  });
});
