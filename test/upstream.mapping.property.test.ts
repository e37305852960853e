import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arrivalsOn, dayNumber, HISTORY_DAYS } from '../src/demo/market/lifecycle.ts';
import { DemoMarketGenerator } from '../src/demo/market/market.ts';
import { upstreamBuilding, upstreamListingFromBundle, withoutDetail } from '../src/demo/simulator/observe.ts';
import { DAY_MS, HOUR_MS } from '../src/platform/clock.ts';
import {
  decodeBuilding,
  decodeListing,
  encodeBuilding,
  encodeListing,
} from '../src/upstream/reso/mapping.ts';
import { PROPERTY_SUMMARY_FIELDS } from '../src/upstream/reso/resources.ts';
import { UpstreamError } from '../src/upstream/source.ts';

const SEED = 11;
const SCALE = 0.02;
const T0 = Date.UTC(2026, 4, 1, 12);
const generator = new DemoMarketGenerator({ seed: SEED, scale: SCALE, now: new Date(T0) });

/** Latest change instant at or before t: the simulator's ModificationTimestamp. */
function modifiedAt(changes: readonly number[], t: number): number {
  let out = changes[0]!;
  for (const c of changes) if (c <= t) out = c;
  return out;
}

/** Wire round trip: encode, serialize, parse, decode. */
function roundTrip(record: unknown): ReturnType<typeof decodeListing> {
  return decodeListing(JSON.parse(JSON.stringify(record)));
}

const listingArb = fc
  .record({
    kind: fc.constantFrom('rental' as const, 'sale' as const),
    // Arrival up to 300 days before T0, observed from T0 to 20 days later.
    daysBack: fc.integer({ min: 0, max: 300 }),
    slot: fc.nat(),
    observedHours: fc.integer({ min: 0, max: 20 * 24 }),
  })
  .map(({ kind, daysBack, slot, observedHours }) => {
    const day = dayNumber(T0) - daysBack;
    const n = arrivalsOn(SEED, SCALE, kind, day);
    return { kind, day, index: n === 0 ? -1 : slot % n, at: T0 + observedHours * HOUR_MS };
  })
  .filter(({ index }) => index >= 0);

function observed(kind: 'rental' | 'sale', day: number, index: number, at: number) {
  const bundle = generator.listingAt(kind, day, index, at);
  if (!bundle) return null;
  const timeline = generator.timeline(kind, day, index);
  return upstreamListingFromBundle(bundle, modifiedAt(timeline.changes, at));
}

describe('RESO mapping round trip', () => {
  it('decode(encode(x)) equals x for demo listings with their detail page', () => {
    fc.assert(
      fc.property(listingArb, ({ kind, day, index, at }) => {
        const x = observed(kind, day, index, at);
        if (!x) return;
        expect(roundTrip(encodeListing(x))).toEqual(x);
      }),
      { numRuns: 400 },
    );
  });

  it('summary records (no detail page) round trip to the listing without detail', () => {
    fc.assert(
      fc.property(listingArb, ({ kind, day, index, at }) => {
        const x = observed(kind, day, index, at);
        if (!x) return;
        // As the simulator serves it: the full record projected on the summary $select.
        const full = encodeListing(x) as unknown as Record<string, unknown>;
        const summary = Object.fromEntries(PROPERTY_SUMMARY_FIELDS.map((f) => [f, full[f]]));
        expect(roundTrip(summary)).toEqual(withoutDetail(x));
        // And encoded from the summary model alone.
        expect(roundTrip(encodeListing(withoutDetail(x)))).toEqual(withoutDetail(x));
      }),
      { numRuns: 300 },
    );
  });

  it('covers every status, both types, approximate and unknown listing dates and open houses', () => {
    const seen = new Set<string>();
    const days = dayNumber(T0);
    for (let day = days - HISTORY_DAYS + 1; day <= days; day += 3) {
      for (const kind of ['rental', 'sale'] as const) {
        for (let index = 0; index < arrivalsOn(SEED, SCALE, kind, day); index++) {
          const x = observed(kind, day, index, T0);
          if (!x) continue;
          expect(roundTrip(encodeListing(x))).toEqual(x);
          const l = x.listing;
          seen.add(`${l.listing_type}:${l.status}:${l.closed_reason}`);
          if (l.listed_at_is_approximate) seen.add('approximate');
          if (l.listed_at === null) seen.add('unknown-listed');
          if (l.next_open_house_at) seen.add('next-open-house');
          if (x.detail?.details?.floor_plan_key) seen.add('floor-plan');
          if (x.detail?.openHouses.some((oh) => oh.kind === 'VIRTUAL')) seen.add('virtual');
        }
      }
    }
    for (const label of [
      'rental:ACTIVE:null',
      'rental:IN_CONTRACT:null',
      'rental:OFF_MARKET:RENTED',
      'rental:OFF_MARKET:DELISTED',
      'sale:ACTIVE:null',
      'sale:IN_CONTRACT:null',
      'sale:OFF_MARKET:SOLD',
      'sale:OFF_MARKET:DELISTED',
      'approximate',
      'unknown-listed',
      'next-open-house',
      'floor-plan',
      'virtual',
    ]) {
      expect(seen).toContain(label);
    }
  });

  it('next_open_house_at is the earliest open house at or after the record modification', () => {
    // A listing whose next open house is announced: decoding at the start instant
    // must still find it, and after it started (+1 ms) the next one or none.
    let checked = 0;
    for (let back = 1; back < 40 && checked < 20; back++) {
      const day = dayNumber(T0) - back;
      for (let index = 0; index < arrivalsOn(SEED, SCALE, 'sale', day) && checked < 20; index++) {
        const timeline = generator.timeline('sale', day, index);
        const oh = timeline.openHouses.find((o) => o.start > T0 && timeline.changes.includes(o.start + 1));
        if (!oh) continue;
        const before = observed('sale', day, index, oh.start)!;
        const after = observed('sale', day, index, oh.start + 1)!;
        expect(before.listing.next_open_house_at).toBe(new Date(oh.start).toISOString());
        expect(after.listing.next_open_house_at).not.toBe(new Date(oh.start).toISOString());
        expect(roundTrip(encodeListing(before))).toEqual(before);
        expect(roundTrip(encodeListing(after))).toEqual(after);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('buildings round trip', () => {
    for (const b of generator.buildings) {
      const x = upstreamBuilding(b, new Date(T0).toISOString());
      expect(decodeBuilding(JSON.parse(JSON.stringify(encodeBuilding(x))))).toEqual(x);
    }
  });
});

describe('RESO decoding of other feeds', () => {
  const base = () => {
    const x = observed('rental', dayNumber(T0) - 2, 0, T0)!;
    return encodeListing(x) as unknown as Record<string, unknown>;
  };

  it('accepts display-form enumerations and timestamps with offsets', () => {
    const record = base();
    record.StandardStatus = 'Active Under Contract';
    record.ModificationTimestamp = '2026-05-01T08:00:00-04:00';
    const decoded = decodeListing(record);
    expect(decoded.listing.status).toBe('IN_CONTRACT');
    expect(decoded.modifiedAt).toBe('2026-05-01T12:00:00.000Z');
  });

  it('maps Closed by property type and every withdrawal status to DELISTED', () => {
    const record = base();
    record.StandardStatus = 'Closed';
    expect(decodeListing(record).listing.closed_reason).toBe('RENTED');
    record.PropertyType = 'Residential';
    expect(decodeListing(record).listing.closed_reason).toBe('SOLD');
    for (const status of ['Withdrawn', 'Canceled', 'Expired', 'Hold', 'Delete']) {
      record.StandardStatus = status;
      expect(decodeListing(record).listing).toMatchObject({
        status: 'OFF_MARKET',
        closed_reason: 'DELISTED',
      });
    }
  });

  it('falls back to dates when timestamps are missing', () => {
    const record = base();
    record.StandardStatus = 'Closed';
    record.OffMarketTimestamp = null;
    record.OffMarketDate = '2026-04-20';
    expect(decodeListing(record).listing.off_market_at).toBe('2026-04-20T00:00:00.000Z');
  });

  it.each([
    ['ListPrice', 'abc', 'ListPrice'],
    ['StandardStatus', 'ComingSoon', 'StandardStatus'],
    ['PropertyType', 'Land', 'PropertyType'],
    ['STOOP_AreaId', undefined, 'STOOP_AreaId'],
    ['ModificationTimestamp', 'yesterday', 'ModificationTimestamp'],
    ['STOOP_BuildingType', 'CASTLE', 'STOOP_BuildingType'],
    ['Media', [{ MediaKey: 'k', MediaCategory: 'Photo', Order: 0 }], 'Media.0'],
  ])('a bad %s is parse_failed naming the field', (field, value, named) => {
    const record = base();
    if (value === undefined) delete record[field];
    else record[field] = value;
    let error: unknown;
    try {
      decodeListing(record);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).kind).toBe('parse_failed');
    expect((error as UpstreamError).message).toContain(named);
  });

  it('rejects a record that is not an object', () => {
    expect(() => decodeListing([1, 2])).toThrow(UpstreamError);
    expect(() => decodeListing(null)).toThrow(/not a JSON object/);
  });

  it('spans the week after the start without surprises', () => {
    // Observation instants later than the start keep the stock's buildings.
    const x = observed('rental', dayNumber(T0 + 5 * DAY_MS), 0, T0 + 6 * DAY_MS);
    if (x) expect(roundTrip(encodeListing(x))).toEqual(x);
  });
});
