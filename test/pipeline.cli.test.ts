import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoMarket } from '../src/demo/market/load.ts';
import { marketAt } from '../src/demo/market/market.ts';
import {
  FOLLOW_WAITING,
  PipelineCliError,
  registerPipelineCommands,
} from '../src/jobs/refresh/pipeline.cli.ts';
import { appendEvents, lockEventLog, readEvents } from '../src/modules/events/event-log.ts';
import { ManualClock } from '../src/platform/clock.ts';
import type { Store } from '../src/platform/db/database.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { encodeListing } from '../src/upstream/reso/mapping.ts';
import { createTestStore } from './support/store.ts';
import { bundleToUpstream } from './support/upstream.ts';

const SEED = 4;
const SCALE = 0.005;
const T0 = new Date('2026-09-01T12:00:00.000Z');
const dir = mkdtempSync(join(tmpdir(), 'stoop-ingest-'));

interface Run {
  stdout: string[];
  stderr: string[];
}

describe('pipeline CLI: ingest, events tail, refresh', () => {
  let store: Store;
  const clock = new ManualClock(new Date('2026-09-20T12:00:00.000Z'));

  beforeAll(async () => {
    store = await createTestStore();
    await syncAreas(store);
    await loadDemoMarket(store, { seed: SEED, scale: SCALE, now: T0 });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(...args: string[]): Promise<Run> {
    return runPausing(async () => false, ...args);
  }

  /** `run` whose `--follow` waits call `pause` (resolving false stops following). */
  async function runPausing(pause: () => Promise<boolean>, ...args: string[]): Promise<Run> {
    const out: Run = { stdout: [], stderr: [] };
    const program = new Command('stoop')
      .exitOverride()
      .configureOutput({ writeErr: () => {}, writeOut: () => {} });
    registerPipelineCommands(program, {
      open: async () => ({ store, clock, refresher: null, close: async () => {} }),
      stdout: (text) => out.stdout.push(text),
      stderr: (text) => out.stderr.push(text),
      progress: () => ({ update: () => {}, stop: () => {} }),
      pause,
    });
    await program.parseAsync(['node', 'stoop', ...args]);
    return out;
  }

  it('ingest listings: loads good RESO records with change detection and reports bad rows by line', async () => {
    // The market 19 days later, as a RESO feed would export it: changes and new listings.
    const later = marketAt(SEED, SCALE, clock.now());
    const byId = <T extends { listing_id?: string | null }>(rows: readonly T[]) => {
      const map = new Map<string, T[]>();
      for (const row of rows)
        if (row.listing_id) map.set(row.listing_id, [...(map.get(row.listing_id) ?? []), row]);
      return map;
    };
    const fees = byId(later.fees);
    const openHouses = byId(later.openHouses);
    const photos = byId(later.photos);
    const details = new Map(later.listingDetails.map((d) => [d.listing_id, d]));
    const records = later.listings
      .filter((l) => l.updated_at > T0.toISOString())
      .map((listing) =>
        encodeListing(
          bundleToUpstream({
            listing,
            details: details.get(listing.id) ?? null,
            events: [],
            fees: fees.get(listing.id) ?? [],
            openHouses: openHouses.get(listing.id) ?? [],
            photos: photos.get(listing.id) ?? [],
          }),
        ),
      );
    expect(records.length).toBeGreaterThan(20);
    const lines = records.map((r) => JSON.stringify(r));
    lines.splice(3, 0, '{"ListingKey": "broken"'); // line 4: not JSON
    lines.splice(7, 0, JSON.stringify({ ListingKey: 'x1', ListPrice: 'cheap' })); // line 8: not a valid record
    const file = join(dir, 'feed.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);

    const out = await run('ingest', 'listings', file);
    const report = JSON.parse(out.stdout.at(-1)!) as {
      accepted: number;
      rejected: number;
      events: number;
      withoutBuilding: number;
    };
    expect(report.accepted).toBe(records.length);
    expect(report.rejected).toBe(2);
    expect(report).toMatchObject({ withoutBuilding: 0 });
    expect(out.stderr[0]).toMatch(/^line 4: not valid JSON/);
    expect(out.stderr[1]).toMatch(/^line 8: /);
    expect(report.events).toBeGreaterThan(0);
    const stored = await store.db
      .selectFrom('listings')
      .select(['id', 'price', 'status'])
      .where('id', '=', later.listings.at(-1)!.id)
      .executeTakeFirstOrThrow();
    expect(stored.price).toBe(later.listings.at(-1)!.price);

    // The same file again: nothing changed, nothing logged.
    const again = JSON.parse((await run('ingest', 'listings', file)).stdout.at(-1)!) as { events: number };
    expect(again.events).toBe(0);
  });

  it('ingest listings also reads an OData response document', async () => {
    const later = marketAt(SEED, SCALE, clock.now());
    const record = encodeListing(
      bundleToUpstream(
        { listing: later.listings[0]!, details: null, events: [], fees: [], openHouses: [], photos: [] },
        false,
      ),
    );
    const file = join(dir, 'feed.json');
    writeFileSync(
      file,
      JSON.stringify({ '@odata.context': '$metadata#Property', value: [record, { nope: 1 }] }, null, 2),
    );
    const out = await run('ingest', 'listings', file);
    const report = JSON.parse(out.stdout.at(-1)!) as { accepted: number; rejected: number };
    expect(report).toMatchObject({ accepted: 1, rejected: 1 });
    expect(out.stderr[0]).toMatch(/^line 2: /);
  });

  it('events tail prints the log as JSON lines in order, from a cursor and by type', async () => {
    const all = await readEvents(store.db, { after: 0, limit: 100_000 });
    const out = await run('events', 'tail', '--from', '0', '--limit', '5');
    const printed = out.stdout.map(
      (line) => JSON.parse(line) as { id: string; sequence: number; type: string },
    );
    expect(printed.map((e) => e.sequence)).toEqual(all.slice(0, 5).map((e) => e.sequence));
    expect(printed[0]!.id).toBe(`evt_${all[0]!.sequence}`);

    const last = await run('events', 'tail', '--limit', '3');
    expect(last.stdout.map((l) => (JSON.parse(l) as { sequence: number }).sequence)).toEqual(
      all.slice(-3).map((e) => e.sequence),
    );

    const created = await run('events', 'tail', '--from', '0', '--type', 'listing.created');
    expect(created.stdout.length).toBe(all.filter((e) => e.type === 'listing.created').length);
    for (const line of created.stdout)
      expect((JSON.parse(line) as { type: string }).type).toBe('listing.created');

    // --type with --limit filters first: the last 2 events of a type, however many others follow them.
    // The type whose last event lies furthest from the end of the log (with at least 2 events).
    const byType = new Map<string, typeof all>();
    for (const event of all) byType.set(event.type, [...(byType.get(event.type) ?? []), event]);
    const [type, ofType] = [...byType.entries()]
      .filter(([, events]) => events.length >= 2)
      .sort(([, a], [, b]) => a.at(-1)!.sequence - b.at(-1)!.sequence)[0]!;
    expect(ofType.at(-1)!.sequence).toBeLessThan(all.at(-1)!.sequence - 2);
    const lastOfType = await run('events', 'tail', '--type', type, '--limit', '2');
    expect(lastOfType.stdout.map((l) => (JSON.parse(l) as { sequence: number }).sequence)).toEqual(
      ofType.slice(-2).map((e) => e.sequence),
    );
  });

  it('events tail --follow prints the tail, says once that it waits, then prints events as they are written', async () => {
    const before = await readEvents(store.db, { after: 0, limit: 100_000 });
    const last = before.at(-1)!;
    let waits = 0;
    const appended: number[] = [];
    const out = await runPausing(
      async () => {
        waits++;
        // The second wait: a refresh writes two events; the fourth ends the test's follow.
        if (waits === 2) {
          await store.db.transaction().execute(async (trx) => {
            await lockEventLog(trx, store.dialect);
            const event = { ...last, occurredAt: clock.now().toISOString() };
            await appendEvents(trx, [event, event], clock.now().toISOString());
          });
          const latest = await readEvents(store.db, { after: last.sequence, limit: 10 });
          appended.push(...latest.map((e) => e.sequence));
        }
        return waits < 4;
      },
      'events',
      'tail',
      '--limit',
      '2',
      '--follow',
    );
    const sequences = out.stdout.map((l) => (JSON.parse(l) as { sequence: number }).sequence);
    expect(appended).toHaveLength(2);
    expect(sequences).toEqual([...before.slice(-2).map((e) => e.sequence), ...appended]);
    // Said once, though it waited four times; stdout stays JSON lines only.
    expect(out.stderr).toEqual([FOLLOW_WAITING]);
    expect(FOLLOW_WAITING).toMatch(/refresh:search.*stoop refresh/);
  });

  it('rejects bad arguments and a refresh without an upstream with a clear message', async () => {
    await expect(run('events', 'tail', '--type', 'listing.exploded')).rejects.toThrow(CommanderError);
    await expect(run('events', 'tail', '--from', '-3')).rejects.toThrow(CommanderError);
    await expect(run('refresh', '--listings', '--buildings')).rejects.toThrow(PipelineCliError);
    await expect(run('refresh')).rejects.toThrow(/No upstream is configured/);
    await expect(run('ingest', 'listings', join(dir, 'missing.jsonl'))).rejects.toThrow(
      /Cannot read .*missing\.jsonl: ENOENT/,
    );
  });
});
