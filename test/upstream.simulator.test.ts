import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrivalsOn, dayNumber } from '../src/demo/market/lifecycle.ts';
import { DemoMarketGenerator, marketAt } from '../src/demo/market/market.ts';
import { ScaledClock } from '../src/demo/simulator/clock.ts';
import { upstreamListingFromBundle, withoutDetail } from '../src/demo/simulator/observe.ts';
import { type Origin, startOrigin } from '../src/demo/simulator/server.ts';
import type { MarketSimulator } from '../src/demo/simulator/simulator.ts';
import { DAY_MS, HOUR_MS, ManualClock } from '../src/platform/clock.ts';
import { ResoListingSource } from '../src/upstream/reso/source.ts';
import type { UpstreamListing } from '../src/upstream/source.ts';

const SEED = 5;
const SCALE = 0.01;
const T0 = new Date('2026-05-01T12:00:00.000Z');
const T0_MS = T0.getTime();

/** What a store holds for a listing: everything but the ModificationTimestamp. */
function content(x: UpstreamListing) {
  const { modifiedAt: _m, ...rest } = x;
  return rest;
}

/** marketAt(T) as the source model (modifiedAt left out: the generator has no such notion). */
function generatorState(t: number): Map<string, ReturnType<typeof content>> {
  const market = marketAt(SEED, SCALE, new Date(t));
  const out = new Map<string, ReturnType<typeof content>>();
  const generator = new DemoMarketGenerator({ seed: SEED, scale: SCALE, now: new Date(t) });
  for (const bundle of generator.listings())
    out.set(bundle.listing.id, content(upstreamListingFromBundle(bundle, 0)));
  expect(out.size).toBe(market.listings.length);
  return out;
}

/**
 * After `generatorState` held the event loop (seconds at this scale on a busy
 * machine), lets the in-process server close the keep-alive sockets that timed
 * out meanwhile before the client reuses one (else: ECONNRESET, no retries here).
 */
async function afterBlocking(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50));
}

async function pageAll(
  source: ResoListingSource,
  query: Parameters<ResoListingSource['searchListings']>[0],
): Promise<UpstreamListing[]> {
  const out: UpstreamListing[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await source.searchListings({ ...query, cursor });
    out.push(...page.listings);
    cursor = page.next;
    pages++;
    expect(pages).toBeLessThan(10_000);
  } while (cursor !== null);
  return out;
}

describe('market simulator state', () => {
  let clock: ManualClock;
  let origin: Origin;
  let simulator: MarketSimulator;
  let source: ResoListingSource;

  beforeAll(async () => {
    clock = new ManualClock(T0);
    origin = await startOrigin({ seed: SEED, scale: SCALE, start: T0, clock, latency: false });
    simulator = origin.simulator;
    source = new ResoListingSource({ url: origin.url, retries: 0 });
  });
  afterAll(async () => {
    await origin?.close();
  });

  it('at several instants over four simulated days equals marketAt, served over HTTP', async () => {
    for (const hours of [0, 7, 30, 55, 96]) {
      const t = T0_MS + hours * HOUR_MS;
      clock.set(t);
      const served = await pageAll(source, { expand: true, pageSize: 400 });
      const expected = generatorState(t);
      await afterBlocking();
      expect(served.length).toBe(expected.size);
      for (const listing of served) {
        expect(content(listing)).toEqual(expected.get(listing.listing.id));
        expect(Date.parse(listing.modifiedAt)).toBeLessThanOrEqual(t);
      }
    }
  });

  it('pages come in (ModificationTimestamp, ListingKey) order, each listing once', async () => {
    clock.set(T0_MS + 2 * DAY_MS);
    const all = await pageAll(source, { pageSize: 37 });
    const keys = all.map((l) => `${l.modifiedAt}|${l.listing.id}`);
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(all.map((l) => l.listing.id)).size).toBe(all.length);
    expect(all.every((l) => l.detail === undefined)).toBe(true);
  });

  it('filters by status and type the way the source asks', async () => {
    clock.set(T0_MS + 3 * DAY_MS);
    const active = await pageAll(source, {
      statuses: ['ACTIVE', 'IN_CONTRACT'],
      listingType: 'sale',
      pageSize: 100,
    });
    const expected = [...generatorState(T0_MS + 3 * DAY_MS).values()].filter(
      (x) => x.listing.listing_type === 'sale' && x.listing.status !== 'OFF_MARKET',
    );
    expect(active.map((l) => l.listing.id).sort()).toEqual(expected.map((x) => x.listing.id).sort());
  });

  it('replication: ModificationTimestamp ge X is inclusive and ordered', async () => {
    clock.set(T0_MS + 2 * DAY_MS);
    const all = await pageAll(source, { pageSize: 500 });
    const pivot = all[Math.floor(all.length * 0.9)]!;
    const since = await pageAll(source, { modifiedSince: pivot.modifiedAt, pageSize: 25 });
    expect(since.map((l) => l.listing.id)).toContain(pivot.listing.id);
    expect(since.every((l) => l.modifiedAt >= pivot.modifiedAt)).toBe(true);
    const expected = all.filter((l) => l.modifiedAt >= pivot.modifiedAt).map((l) => l.listing.id);
    expect(since.map((l) => l.listing.id)).toEqual(expected);
  });

  it('a store loaded at T0 and kept in sync by replication equals the simulator', async () => {
    // The store: the demo load at T0.
    const store = generatorState(T0_MS);
    await afterBlocking();
    let highWater = new Date(T0_MS).toISOString();
    for (const hours of [3, 10, 26, 50, 75]) {
      const t = T0_MS + hours * HOUR_MS;
      clock.set(t);
      const changed = await pageAll(source, { modifiedSince: highWater, expand: true, pageSize: 50 });
      for (const listing of changed) {
        store.set(listing.listing.id, content(listing));
        if (listing.modifiedAt > highWater) highWater = listing.modifiedAt;
      }
      const truth = generatorState(t);
      await afterBlocking();
      for (const [id, expected] of truth) expect(store.get(id)).toEqual(expected);
      // Anything else aged out of the feed, long off market.
      for (const [id, held] of store) if (!truth.has(id)) expect(held.listing.status).toBe('OFF_MARKET');
    }
  });

  it('change instants are exact: the observation is constant between them and differs across them', () => {
    const generator = simulator.generator;
    let checked = 0;
    const day0 = dayNumber(T0_MS);
    for (let day = day0 - 90; day <= day0; day += 7) {
      for (let index = 0; index < arrivalsOn(SEED, SCALE, 'sale', day); index++) {
        const timeline = generator.timeline('sale', day, index);
        const view = (t: number) => {
          const bundle = generator.listingAt('sale', day, index, t);
          return bundle ? content(upstreamListingFromBundle(bundle, 0)) : null;
        };
        const changes = timeline.changes.filter((c) => c > T0_MS - 60 * DAY_MS && c < T0_MS + 60 * DAY_MS);
        for (let i = 1; i < changes.length; i++) {
          const [a, b] = [changes[i - 1]!, changes[i]!];
          expect(view(b - 1)).toEqual(view(a));
          expect(view(b)).not.toEqual(view(b - 1));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it('a single listing reads in full; an unknown one is not_found', async () => {
    clock.set(T0_MS + DAY_MS);
    const [first] = await pageAll(source, { statuses: ['ACTIVE'], pageSize: 1000 });
    const one = await source.fetchListing(first!.listing.id);
    expect(withoutDetail(one)).toEqual(first);
    expect(one.detail?.details).not.toBeNull();
    await expect(source.fetchListing('424242424242')).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('buildings: a fixed stock modified at the start instant', async () => {
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await source.listBuildings({ pageSize: 50, cursor });
      all.push(...page.buildings.map((b) => b.building.id));
      for (const b of page.buildings) expect(b.modifiedAt).toBe(T0.toISOString());
      cursor = page.next;
    } while (cursor);
    expect(all).toEqual(simulator.buildings().map((b) => b.building.id));
    const later = await source.listBuildings({ modifiedSince: new Date(T0_MS + 1).toISOString() });
    expect(later.buildings).toEqual([]);
    const one = await source.fetchBuilding(all[3]!);
    expect(one).toEqual(simulator.buildings()[3]);
  });
});

describe('simulator change log', () => {
  let clock: ManualClock;
  let origin: Origin;

  beforeAll(async () => {
    clock = new ManualClock(T0);
    origin = await startOrigin({ seed: SEED, scale: SCALE, start: T0, clock, latency: false });
  });
  afterAll(async () => {
    await origin?.close();
  });

  it.each([
    [0, 6],
    [6, 30],
    [30, 80],
  ])('events between +%ih and +%ih explain the state difference', (fromH, toH) => {
    const from = T0_MS + fromH * HOUR_MS;
    const to = T0_MS + toH * HOUR_MS;
    const before = new Map(origin.simulator.snapshot(from).map((x) => [x.listing.id, x]));
    const after = new Map(origin.simulator.snapshot(to).map((x) => [x.listing.id, x]));
    const events = origin.simulator.changesBetween(from, to);
    expect(events.length).toBeGreaterThan(0);
    const byListing = new Map<string, typeof events>();
    for (const e of events) byListing.set(e.listingId, [...(byListing.get(e.listingId) ?? []), e]);
    for (const e of events) {
      const at = Date.parse(e.occurredAt);
      expect(at).toBeGreaterThan(from);
      expect(at).toBeLessThanOrEqual(to);
    }
    for (const [id, now] of after) {
      const was = before.get(id);
      const mine = byListing.get(id) ?? [];
      const types = mine.map((e) => e.type);
      if (!was) {
        expect(types[0]).toBe('listing.created');
        continue;
      }
      expect(types).not.toContain('listing.created');
      // Status: the chain of status_changed events leads from the old status to the new one.
      const statuses = mine.filter((e) => e.type === 'listing.status_changed');
      if (was.listing.status === now.listing.status)
        expect(statuses.length % 2 === 0 || statuses.length === 0).toBe(true);
      if (statuses.length > 0) {
        expect(statuses[0]!.oldValue).toBe(was.listing.status);
        expect(statuses.at(-1)!.newValue).toBe(now.listing.status);
      } else expect(now.listing.status).toBe(was.listing.status);
      // Price: the last price event lands on the new price.
      const prices = mine.filter(
        (e) => e.type === 'listing.price_decreased' || e.type === 'listing.price_increased',
      );
      if (prices.length > 0) {
        expect(prices[0]!.oldValue).toBe(was.listing.price);
        expect(prices.at(-1)!.newValue).toBe(now.listing.price);
      } else expect(now.listing.price).toBe(was.listing.price);
      // Closing reasons come with their status change.
      if (now.listing.status === 'OFF_MARKET' && was.listing.status !== 'OFF_MARKET') {
        const reason = now.listing.closed_reason!.toLowerCase();
        expect(types).toContain(`listing.${reason}`);
      }
      // Open houses that appeared have an event; none is reported for one already shown.
      const shownBefore = new Set(was.detail!.openHouses.map((o) => o.id));
      const added = new Set(
        mine
          .filter((e) => e.type === 'listing.open_house_added')
          .map((e) => (e.newValue as { id: string }).id),
      );
      for (const oh of now.detail!.openHouses) if (!shownBefore.has(oh.id)) expect(added).toContain(oh.id);
      for (const id of added) expect(shownBefore.has(id)).toBe(false);
      // Any event means a newer ModificationTimestamp.
      if (mine.length > 0) expect(Date.parse(now.modifiedAt)).toBeGreaterThan(from);
    }
    // Every event belongs to a listing of the later state or one that aged out.
    for (const id of byListing.keys()) expect(after.has(id) || before.has(id)).toBe(true);
  });

  it('created events carry status and price; closing events the prior status and price', () => {
    const events = origin.simulator.changesBetween(T0_MS, T0_MS + 3 * DAY_MS);
    const created = events.find((e) => e.type === 'listing.created')!;
    expect(created.oldValue).toBeNull();
    expect(created.newValue).toMatchObject({ status: 'ACTIVE', price: expect.any(Number) });
    const closed = events.find((e) => e.type === 'listing.rented' || e.type === 'listing.sold')!;
    expect(['ACTIVE', 'IN_CONTRACT']).toContain(closed.oldValue);
    expect(typeof closed.newValue).toBe('number');
    const ordered = events.map((e) => `${e.occurredAt}|${e.listingId}`);
    expect([...ordered].sort()).toEqual(ordered);
  });
});

describe('scaled clock', () => {
  it('runs from the anchor at the given speed over the real clock', () => {
    const real = new ManualClock('2030-01-01T00:00:00Z');
    const clock = new ScaledClock({ anchor: T0, speed: 60, real });
    expect(clock.now().toISOString()).toBe(T0.toISOString());
    real.advance(1000);
    expect(clock.now().getTime()).toBe(T0_MS + 60_000);
    expect(clock.realDelayUntil(T0_MS + 120_000)).toBe(1000);
    expect(() => new ScaledClock({ anchor: T0, speed: 0 })).toThrow(RangeError);
  });
});
