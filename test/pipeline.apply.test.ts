import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoMarket } from '../src/demo/market/load.ts';
import { type DemoMarket, marketAt } from '../src/demo/market/market.ts';
import type { ListingEventType } from '../src/domain/events.ts';
import { ListingWriter } from '../src/jobs/refresh/listing-writer.ts';
import { readEvents } from '../src/modules/events/event-log.ts';
import type { Store } from '../src/platform/db/database.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { createTestStore } from './support/store.ts';
import { bundleToUpstream } from './support/upstream.ts';

const DAY = 86_400_000;
const SEED = 11;
const SCALE = 0.01;
const T0 = Date.parse('2026-10-01T00:00:00.000Z');
const DAYS = 4;

/** The events the generator's lifecycle implies for one listing's life events in a window. */
function expectedTypes(kind: string, previousStatus: string): ListingEventType[] {
  switch (kind) {
    case 'LISTED':
      return ['listing.created'];
    case 'PRICE_DECREASE':
      return ['listing.price_decreased'];
    case 'PRICE_INCREASE':
      return ['listing.price_increased'];
    case 'IN_CONTRACT':
      return ['listing.status_changed'];
    case 'RENTED':
      return ['listing.status_changed', 'listing.rented'];
    case 'SOLD':
      return ['listing.status_changed', 'listing.sold'];
    case 'DELISTED':
      return ['listing.status_changed', 'listing.delisted'];
    case 'RELISTED':
      return previousStatus === 'OFF_MARKET' ? ['listing.status_changed'] : [];
    default:
      return [];
  }
}

function bundlesOf(market: DemoMarket) {
  const details = new Map(market.listingDetails.map((d) => [d.listing_id, d]));
  const group = <T extends { listing_id?: string | null }>(rows: readonly T[]) => {
    const out = new Map<string, T[]>();
    for (const row of rows) {
      if (!row.listing_id) continue;
      const list = out.get(row.listing_id) ?? [];
      list.push(row);
      out.set(row.listing_id, list);
    }
    return out;
  };
  const events = group(market.priceEvents);
  const fees = group(market.fees);
  const openHouses = group(market.openHouses);
  const photos = group(market.photos);
  return market.listings.map((listing) => ({
    listing,
    details: details.get(listing.id) ?? null,
    events: events.get(listing.id) ?? [],
    fees: fees.get(listing.id) ?? [],
    openHouses: openHouses.get(listing.id) ?? [],
    photos: photos.get(listing.id) ?? [],
  }));
}

describe('pipeline: applying upstream listings with change detection', () => {
  let store: Store;
  let writer: ListingWriter;

  beforeAll(async () => {
    store = await createTestStore();
    await syncAreas(store);
    await loadDemoMarket(store, { seed: SEED, scale: SCALE, now: new Date(T0) });
    writer = new ListingWriter(store);
  });
  afterAll(async () => {
    await store.close();
  });

  it('turns a day-by-day replay of the generator into exactly its lifecycle events', async () => {
    const start = new Map(
      (await store.db.selectFrom('listings').select(['id', 'status', 'price']).execute()).map((r) => [
        r.id,
        r,
      ]),
    );
    for (let day = 1; day <= DAYS; day++) {
      const at = new Date(T0 + day * DAY);
      // Everything upstream has, every day: unchanged records must be no-ops.
      await writer.apply(
        bundlesOf(marketAt(SEED, SCALE, at)).map((b) => bundleToUpstream(b)),
        at,
      );
    }
    const final = bundlesOf(marketAt(SEED, SCALE, new Date(T0 + DAYS * DAY)));
    const log = await readEvents(store.db, { after: 0, limit: 1_000_000 });

    const t0Date = new Date(T0).toISOString().slice(0, 10);
    let compared = 0;
    for (const bundle of final) {
      const inWindow = bundle.events.filter((e) => e.date >= t0Date);
      if (inWindow.length === 0) continue;
      // Two changes on one day reach the pipeline as one net change: skip those listings.
      const dates = inWindow.map((e) => e.date);
      if (new Set(dates).size !== dates.length) continue;
      let status = start.get(bundle.listing.id)?.status ?? 'ACTIVE';
      const expected: ListingEventType[] = [];
      for (const e of inWindow) {
        expected.push(...expectedTypes(e.event, status));
        if (e.event === 'IN_CONTRACT') status = 'IN_CONTRACT';
        else if (['RENTED', 'SOLD', 'DELISTED'].includes(e.event)) status = 'OFF_MARKET';
        else if (e.event === 'RELISTED' || e.event === 'LISTED') status = 'ACTIVE';
      }
      const actual = log
        .filter((e) => e.listingId === bundle.listing.id && e.type !== 'listing.open_house_added')
        .map((e) => e.type);
      // A relist at a new price also reports the price move.
      const relistPrice = inWindow.some((e) => e.event === 'RELISTED' && e.pct_change !== 0);
      const filtered = relistPrice
        ? actual.filter((t) => t !== 'listing.price_decreased' && t !== 'listing.price_increased')
        : actual;
      expect(filtered.sort(), bundle.listing.id).toEqual(expected.sort());
      compared++;
    }
    expect(compared).toBeGreaterThan(20);

    // Sequences strictly increase; nothing is logged twice.
    for (let i = 1; i < log.length; i++) expect(log[i]!.sequence).toBeGreaterThan(log[i - 1]!.sequence);
    const keys = log.map((e) => `${e.type}|${e.listingId}|${JSON.stringify(e.newValue)}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('stores rows equal to upstream and keeps price history and priceDelta in step', async () => {
    const final = bundlesOf(marketAt(SEED, SCALE, new Date(T0 + DAYS * DAY)));
    const rows = new Map((await store.db.selectFrom('listings').selectAll().execute()).map((r) => [r.id, r]));
    const t0Date = new Date(T0).toISOString().slice(0, 10);
    let priceMoves = 0;
    for (const bundle of final) {
      const row = rows.get(bundle.listing.id);
      expect(row, bundle.listing.id).toBeDefined();
      if (bundle.listing.updated_at <= new Date(T0).toISOString()) continue;
      expect(row!.status).toBe(bundle.listing.status);
      expect(row!.price).toBe(bundle.listing.price);
      expect(row!.closed_reason).toBe(bundle.listing.closed_reason);
      const cut = bundle.events.filter((e) => e.date >= t0Date && e.event === 'PRICE_DECREASE').at(-1);
      if (cut && bundle.events.at(-1) === cut) {
        priceMoves++;
        const history = await store.db
          .selectFrom('price_events')
          .selectAll()
          .where('listing_id', '=', bundle.listing.id)
          .orderBy('id')
          .execute();
        const last = history.at(-1)!;
        expect(last.event).toBe('PRICE_DECREASE');
        expect(last.price).toBe(bundle.listing.price);
        expect(last.pct_change).toBeLessThan(0);
        expect(row!.price_delta).toBeLessThan(0);
      }
    }
    expect(priceMoves).toBeGreaterThan(0);
  });

  it('is idempotent: applying the same records again writes no event', async () => {
    const at = new Date(T0 + DAYS * DAY);
    const before = (await readEvents(store.db, { after: 0, limit: 1_000_000 })).length;
    const summary = await writer.apply(
      bundlesOf(marketAt(SEED, SCALE, at)).map((b) => bundleToUpstream(b)),
      at,
    );
    expect(summary.events).toBe(0);
    expect(summary.created).toBe(0);
    expect((await readEvents(store.db, { after: 0, limit: 1_000_000 })).length).toBe(before);
    // And once the details are as upstream sends them, a second pass rewrites nothing —
    // listings whose detail carries no details record (not scraped) included.
    const again = await writer.apply(
      bundlesOf(marketAt(SEED, SCALE, at)).map((b) => bundleToUpstream(b)),
      at,
    );
    const withoutDetails = bundlesOf(marketAt(SEED, SCALE, at)).filter((b) => b.details === null).length;
    expect(withoutDetails).toBeGreaterThan(0);
    expect({ updated: again.updated, detailsWritten: again.detailsWritten }).toEqual({
      updated: 0,
      detailsWritten: 0,
    });
  });

  it('moves the revision of exactly the listings it changes, above every earlier one', async () => {
    const revisions = async () =>
      new Map(
        (await store.db.selectFrom('listings').select(['id', 'revision']).execute()).map((r) => [
          r.id,
          r.revision,
        ]),
      );
    const before = await revisions();
    const highest = Math.max(...before.values());
    const logged = (await readEvents(store.db, { after: 0, limit: 1_000_000 })).length;
    const at = new Date(T0 + (DAYS + 2) * DAY);
    const bundles = bundlesOf(marketAt(SEED, SCALE, at));
    const summary = await writer.apply(
      bundles.map((b) => bundleToUpstream(b)),
      at,
    );
    expect(summary.updated + summary.created).toBeGreaterThan(0);
    const after = await revisions();
    let moved = 0;
    for (const [id, revision] of after) {
      const previous = before.get(id);
      if (previous === undefined || revision !== previous) {
        moved++;
        expect(revision, id).toBeGreaterThan(highest);
      }
    }
    expect(moved).toBe(summary.updated + summary.created);
    // Every event carries the listing's area as detected (webhook payloads and the feed serve it).
    const areas = new Map(
      (await store.db.selectFrom('listings').select(['id', 'area_id']).execute()).map((r) => [
        r.id,
        r.area_id,
      ]),
    );
    const events = await readEvents(store.db, { after: 0, limit: 1_000_000 });
    expect(events.length).toBeGreaterThan(logged);
    for (const event of events.slice(logged))
      expect(event.areaId, event.listingId).toBe(areas.get(event.listingId));
    // Applying the same records again changes nothing, so no revision moves: neither the
    // listing records alone nor with their details.
    for (const expand of [false, true]) {
      await writer.apply(
        bundles.map((b) => bundleToUpstream(b, expand)),
        at,
      );
      expect(await revisions()).toEqual(after);
    }
  });

  it('reports new open houses once, with the listing and building they belong to', async () => {
    const log = await readEvents(store.db, {
      after: 0,
      limit: 1_000_000,
      types: ['listing.open_house_added'],
    });
    expect(log.length).toBeGreaterThan(0);
    const ids = log.map((e) => (e.newValue as { id: string }).id);
    expect(new Set(ids).size).toBe(ids.length);
    const listing = await store.db
      .selectFrom('listings')
      .select(['building_id'])
      .where('id', '=', log[0]!.listingId)
      .executeTakeFirstOrThrow();
    expect(log[0]!.buildingId).toBe(listing.building_id);
  });
});
