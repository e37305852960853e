import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAreas, GROUPING_AREA_IDS } from '../src/demo/market/geography.ts';
import { hasDemoMarket, isStoreEmpty, loadDemoMarket } from '../src/demo/market/load.ts';
import { type DemoMarket, marketAt } from '../src/demo/market/market.ts';
import { ARCHITECTS, DEVELOPERS, firmFits } from '../src/demo/market/names.ts';
import { haversineMeters } from '../src/domain/geo.ts';
import { readScopes } from '../src/modules/freshness/data-version.ts';
import { DAY_MS } from '../src/platform/clock.ts';
import type { Store } from '../src/platform/db/database.ts';
import type { ListingRow, NewPriceEvent } from '../src/platform/db/tables.ts';
import { readAreaRecords } from '../src/reference/areas.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { createTestStore } from './support/store.ts';

const T = new Date('2026-11-01T15:00:00.000Z');
const SEED = 7;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function eventsByListing(events: readonly NewPriceEvent[]): Map<string, NewPriceEvent[]> {
  const out = new Map<string, NewPriceEvent[]>();
  for (const e of events) {
    const list = out.get(e.listing_id) ?? [];
    list.push(e);
    out.set(e.listing_id, list);
  }
  return out;
}

describe('demo market generator', () => {
  let small: DemoMarket;
  let moderate: DemoMarket;

  beforeAll(() => {
    small = marketAt(SEED, 0.02, T);
    moderate = marketAt(SEED, 0.06, T);
  });

  it('is a pure function of seed, scale and time', () => {
    const again = marketAt(SEED, 0.02, T);
    expect(again).toEqual(small);
    const otherSeed = marketAt(SEED + 1, 0.02, T);
    expect(otherSeed.listings.map((l) => l.price)).not.toEqual(small.listings.map((l) => l.price));
  });

  it('advancing time reveals more of the same lifecycles', () => {
    const later = marketAt(SEED, 0.02, new Date(T.getTime() + 10 * DAY_MS));
    const before = new Map(small.listings.map((l) => [l.id, l]));
    const beforeEvents = eventsByListing(small.priceEvents);
    const laterEvents = eventsByListing(later.priceEvents);
    let shared = 0;
    let changed = 0;
    for (const listing of later.listings) {
      const old = before.get(listing.id);
      if (!old) continue;
      shared++;
      expect(listing.building_id).toBe(old.building_id);
      expect(listing.bedroom_count).toBe(old.bedroom_count);
      expect(listing.listed_at).toBe(old.listed_at);
      // The earlier history is a prefix of the later one.
      const prefix = beforeEvents.get(listing.id)!;
      expect(laterEvents.get(listing.id)!.slice(0, prefix.length)).toEqual(prefix);
      if (listing.status !== old.status) changed++;
    }
    expect(shared).toBeGreaterThan(small.listings.length * 0.9);
    expect(changed).toBeGreaterThan(0);
    // New arrivals in the ten days: listing ids increase with the arrival day.
    const newest = later.listings.filter((l) => !before.has(l.id));
    expect(newest.length).toBeGreaterThan(20);
  });

  it('produces every status, closing reason and both listing types at a small scale', () => {
    const seen = new Set(small.listings.map((l) => `${l.listing_type}:${l.status}`));
    for (const type of ['rental', 'sale']) {
      for (const status of ['ACTIVE', 'IN_CONTRACT', 'OFF_MARKET'])
        expect(seen).toContain(`${type}:${status}`);
    }
    const reasons = new Set(small.listings.map((l) => `${l.listing_type}:${l.closed_reason}`));
    for (const reason of ['rental:RENTED', 'rental:DELISTED', 'sale:SOLD', 'sale:DELISTED'])
      expect(reasons).toContain(reason);
    const active = small.listings.filter((l) => l.status === 'ACTIVE');
    expect(active.filter((l) => l.listing_type === 'rental').length).toBeGreaterThan(300);
    expect(active.filter((l) => l.listing_type === 'sale').length).toBeGreaterThan(100);
    expect(small.buildings.length).toBe(240);
  });

  it('credits architects and developers only on buildings of their era (a pre-war building gets a pre-war architect or none)', () => {
    const periods = new Map([...ARCHITECTS, ...DEVELOPERS].map((f) => [f.name, f]));
    let credited = 0;
    let preWarCredited = 0;
    for (const b of moderate.buildings) {
      // A building whose year is not published (3%) cannot be judged.
      const year = b.year_built;
      if (year === null || year === undefined) continue;
      for (const name of [b.architect, b.developer]) {
        if (name === null || name === undefined) continue;
        const firm = periods.get(name);
        expect(firm, name).toBeDefined();
        expect(
          firmFits(firm!, year),
          `${name} (${firm!.from}–${firm!.to ?? 'now'}) on a ${year} building`,
        ).toBe(true);
        credited++;
        if (year < 1940) preWarCredited++;
      }
    }
    // Not vacuous: modern and pre-war buildings both carry credits.
    expect(credited).toBeGreaterThan(100);
    expect(preWarCredited).toBeGreaterThan(5);
  });

  it('places listings only in real, non-grouping areas, near the area centre', () => {
    const records = new Map(readAreaRecords().map((r) => [r.id, r]));
    const centres = new Map(demoAreas().areas.map((a) => [a.id, a]));
    for (const listing of moderate.listings) {
      expect(records.has(listing.area_id)).toBe(true);
      expect(GROUPING_AREA_IDS.has(listing.area_id)).toBe(false);
      const centre = centres.get(listing.area_id)!;
      expect(haversineMeters(listing, centre)).toBeLessThan(2000);
      const reference = records.get(listing.area_id)!;
      if (reference.centroidMatch === 'exact') {
        expect(
          haversineMeters(listing, { latitude: reference.latitude!, longitude: reference.longitude! }),
        ).toBeLessThan(2000);
      }
    }
    for (const id of [1, 9999999, 100, 102, 119, 135, 139, 144, 477, 501]) {
      expect(moderate.listings.some((l) => l.area_id === id)).toBe(false);
    }
    // Spread over the city, not piled in a few areas.
    expect(new Set(moderate.listings.map((l) => l.area_id)).size).toBeGreaterThan(150);
  });

  it('prices neighborhoods the way the city does', () => {
    const tree = demoAreas().tree;
    const boroughOf = (l: ListingRow) => tree.borough(l.area_id)!.id;
    const oneBedRents = (pick: (l: ListingRow) => boolean) =>
      moderate.listings
        .filter((l) => l.listing_type === 'rental' && l.bedroom_count === 1 && pick(l))
        .map((l) => l.price);
    const prime = median(oneBedRents((l) => [105, 107, 157, 166].includes(l.area_id)));
    const manhattan = median(oneBedRents((l) => boroughOf(l) === 100));
    const brooklyn = median(oneBedRents((l) => boroughOf(l) === 300));
    const bronx = median(oneBedRents((l) => boroughOf(l) === 200));
    const statenIsland = median(oneBedRents((l) => boroughOf(l) === 500));
    expect(prime).toBeGreaterThan(manhattan * 1.2);
    expect(manhattan).toBeGreaterThan(3800);
    expect(manhattan).toBeLessThan(5200);
    expect(manhattan).toBeGreaterThan(brooklyn);
    expect(brooklyn).toBeGreaterThan(bronx);
    expect(bronx).toBeGreaterThan(1700);
    expect(bronx).toBeLessThan(2700);
    expect(statenIsland).toBeLessThan(brooklyn);

    const condoPpsf = (borough: number) =>
      median(
        moderate.listings
          .filter(
            (l) =>
              l.listing_type === 'sale' &&
              l.building_type === 'CONDO' &&
              l.price_per_sqft &&
              boroughOf(l) === borough,
          )
          .map((l) => l.price_per_sqft!),
      );
    expect(condoPpsf(100)).toBeGreaterThan(2 * condoPpsf(200));
    // Co-ops dominate Upper East/West Side sales.
    const uptown = moderate.listings.filter(
      (l) => l.listing_type === 'sale' && [137, 140, 141, 142, 143].includes(l.area_id),
    );
    const coops = uptown.filter((l) => l.building_type === 'COOP').length;
    expect(coops / uptown.length).toBeGreaterThan(0.45);
    // Rentals are mostly in rental buildings.
    const rentals = moderate.listings.filter((l) => l.listing_type === 'rental');
    expect(rentals.filter((l) => l.building_type === 'RENTAL').length / rentals.length).toBeGreaterThan(0.5);
  });

  it('keeps rental days on market realistic', () => {
    const days = moderate.listings
      .filter((l) => l.listing_type === 'rental' && l.closed_reason === 'RENTED' && l.listed_at)
      .map((l) => (Date.parse(l.off_market_at!) - Date.parse(l.listed_at!)) / DAY_MS);
    expect(median(days)).toBeGreaterThan(20);
    expect(median(days)).toBeLessThan(45);
    // A realistic tail: the 90th percentile two to three months, no rental past a
    // year on the market since its last listing or relisting (rented, taken down or still up).
    const p90 = [...days].sort((a, b) => a - b)[Math.floor(days.length * 0.9)]!;
    expect(p90).toBeGreaterThanOrEqual(60);
    expect(p90).toBeLessThanOrEqual(90);
    const history = eventsByListing(moderate.priceEvents);
    let longest = 0;
    for (const l of moderate.listings) {
      if (l.listing_type !== 'rental') continue;
      const since = history
        .get(l.id)!
        .filter((e) => e.event === 'LISTED' || e.event === 'RELISTED')
        .at(-1)!.date;
      const end = l.off_market_at ?? T.toISOString();
      longest = Math.max(longest, (Date.parse(end) - Date.parse(since)) / DAY_MS);
    }
    expect(longest).toBeLessThanOrEqual(365);
    expect(longest).toBeGreaterThan(120);
    const saleDays = moderate.listings
      .filter((l) => l.closed_reason === 'SOLD' && l.listed_at)
      .map((l) => (Date.parse(l.contract_at!) - Date.parse(l.listed_at!)) / DAY_MS);
    expect(median(saleDays)).toBeGreaterThan(70);
    expect(median(saleDays)).toBeLessThan(140);
  });

  it('writes consistent price histories and derived columns', () => {
    const history = eventsByListing(small.priceEvents);
    const urlPaths = new Set<string>();
    for (const listing of small.listings) {
      const events = history.get(listing.id)!;
      expect(events[0]!.event).toBe('LISTED');
      expect(events[0]!.pct_change).toBeNull();
      for (let i = 1; i < events.length; i++) {
        expect(events[i]!.date >= events[i - 1]!.date).toBe(true);
        if (events[i]!.event === 'PRICE_DECREASE') expect(events[i]!.pct_change!).toBeLessThan(0);
        if (events[i]!.event === 'PRICE_INCREASE') expect(events[i]!.pct_change!).toBeGreaterThan(0);
      }
      const asks = events.filter((e) =>
        ['LISTED', 'PRICE_DECREASE', 'PRICE_INCREASE', 'RELISTED'].includes(e.event),
      );
      expect(listing.price).toBe(asks.at(-1)!.price);
      expect(listing.price_delta).toBe(asks.length > 1 ? asks.at(-1)!.price - asks.at(-2)!.price : 0);
      expect(listing.bathrooms).toBe(listing.full_bathroom_count + 0.5 * listing.half_bathroom_count);
      expect(listing.url_path).toBe(`/${listing.listing_type}/${listing.id}`);
      expect(urlPaths.has(listing.url_path)).toBe(false);
      urlPaths.add(listing.url_path);
      if (listing.sqft === null) expect(listing.price_per_sqft).toBeNull();
      else expect(listing.price_per_sqft).toBeCloseTo(listing.price / listing.sqft, 1);
      if (listing.listing_type === 'rental') {
        expect(listing.net_effective!).toBeLessThanOrEqual(listing.price);
        expect(listing.monthly_cost).toBe(listing.price + listing.monthly_fees);
        expect(listing.sale_type).toBeNull();
      } else {
        expect(listing.net_effective).toBeNull();
        expect(listing.monthly_cost).toBe(listing.monthly_fees);
        expect(listing.monthly_fees).toBeGreaterThan(0);
      }
      if (listing.status === 'OFF_MARKET') expect(listing.off_market_at).not.toBeNull();
      else expect(listing.off_market_at).toBeNull();
      if (listing.status === 'IN_CONTRACT' || listing.closed_reason === 'SOLD')
        expect(listing.contract_at).not.toBeNull();
      if (listing.next_open_house_at !== null)
        expect(listing.next_open_house_at >= T.toISOString()).toBe(true);
    }
    const concessions = moderate.listings.filter((l) => (l.months_free ?? 0) > 0);
    expect(concessions.length).toBeGreaterThan(0);
    for (const l of concessions) expect(l.net_effective!).toBeLessThan(l.price);
  });

  it('gives detail pages, photos, fees and open houses to current listings only', () => {
    const detailIds = new Set(small.listingDetails.map((d) => d.listing_id));
    const photoKeys = new Set(small.photos.map((p) => p.key));
    expect(photoKeys.size).toBe(small.photos.length);
    for (const listing of small.listings) {
      if (listing.status !== 'OFF_MARKET') expect(detailIds.has(listing.id)).toBe(true);
      expect(detailIds.has(listing.id)).toBe(listing.detail_scraped === 1);
      if (listing.lead_photo_key !== null) {
        expect(listing.lead_photo_key).toMatch(/^[0-9a-f]{32}$/);
        expect(photoKeys.has(listing.lead_photo_key)).toBe(true);
      }
    }
    expect(small.openHouses.some((o) => o.starts_at > T.toISOString())).toBe(true);
    expect(small.openHouses.some((o) => o.starts_at < T.toISOString())).toBe(true);
    const rentalFees = small.fees.filter((f) => f.type_label === 'Application fee');
    expect(rentalFees.length).toBeGreaterThan(0);
  });
});

describe('demo market loader', () => {
  let store: Store;

  beforeAll(async () => {
    store = await createTestStore();
    await syncAreas(store);
    await syncAreas(store);
  });

  afterAll(async () => {
    await store.close();
  });

  it('loads the market and its sync state, and refuses to load twice', async () => {
    expect(await isStoreEmpty(store)).toBe(true);
    expect(await hasDemoMarket(store)).toBe(false);
    const areas = await store.db
      .selectFrom('areas')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(areas.n)).toBe(readAreaRecords().length);

    const phases = new Set<string>();
    const result = await loadDemoMarket(store, {
      seed: SEED,
      scale: 0.05,
      now: T,
      onProgress: (_done, _total, phase) => phases.add(phase),
    });
    const expected = marketAt(SEED, 0.05, T);
    expect(result.listings).toBe(expected.listings.length);
    expect(result.buildings).toBe(expected.buildings.length);
    expect(result.priceEvents).toBe(expected.priceEvents.length);
    expect(phases).toContain('listings');

    const count = async (
      table:
        | 'listings'
        | 'buildings'
        | 'price_events'
        | 'photos'
        | 'fees'
        | 'open_houses'
        | 'listing_details'
        | 'building_scores',
    ) => {
      const row = await store.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    expect(await count('listings')).toBe(expected.listings.length);
    expect(await count('buildings')).toBe(expected.buildings.length);
    expect(await count('building_scores')).toBe(expected.buildings.length);
    expect(await count('price_events')).toBe(expected.priceEvents.length);
    expect(await count('photos')).toBe(expected.photos.length);
    expect(await count('fees')).toBe(expected.fees.length);
    expect(await count('open_houses')).toBe(expected.openHouses.length);
    expect(await count('listing_details')).toBe(expected.listingDetails.length);

    const sample = expected.listings[Math.floor(expected.listings.length / 2)]!;
    const stored = await store.db
      .selectFrom('listings')
      .selectAll()
      .where('id', '=', sample.id)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual(sample);

    // The `areas` scope belongs to the area sync, not to the market load.
    const scopes = (await readScopes(store.db)).filter((s) => s.scope !== 'areas');
    expect(scopes.map((s) => s.scope)).toEqual([
      'buildings',
      'demo',
      'detail',
      'refresh:buildings',
      'refresh:search:rental',
      'refresh:search:sale',
      'search:rental',
      'search:sale',
    ]);
    expect(scopes.every((s) => s.at === T.toISOString())).toBe(true);
    expect(JSON.parse(scopes.find((s) => s.scope === 'demo')!.detail!)).toEqual({
      seed: SEED,
      scale: 0.05,
      generatedAt: T.toISOString(),
    });
    expect(await hasDemoMarket(store)).toBe(true);

    await expect(loadDemoMarket(store, { seed: SEED, scale: 0.01, now: T })).rejects.toThrow(/already holds/);
    const replaced = await loadDemoMarket(store, { seed: SEED, scale: 0.01, now: T, replace: true });
    expect(await count('listings')).toBe(replaced.listings);
  });
});
