import { describe, expect, it } from 'vitest';
import { CLOSE_EVENT_TYPE, isListingEventType, LISTING_EVENT_TYPES } from '../src/domain/events.ts';
import { haversineMeters } from '../src/domain/geo.ts';
import { eventWebhooks } from '../src/modules/events/event-catalogue.ts';

describe('listing event types', () => {
  it('are documented once each in the catalogue, in list order', () => {
    expect(Object.keys(eventWebhooks())).toEqual([...LISTING_EVENT_TYPES]);
  });

  it('name a close reason by an event type of the list', () => {
    for (const type of Object.values(CLOSE_EVENT_TYPE)) expect(LISTING_EVENT_TYPES).toContain(type);
    expect(isListingEventType('listing.sold')).toBe(true);
    expect(isListingEventType('listing.deleted')).toBe(false);
  });
});

describe('haversineMeters', () => {
  it('measures great-circle distance on the IUGG mean sphere', () => {
    const origin = { latitude: 0, longitude: 0 };
    // A quarter of the equator: π/2 × 6,371,008.8 m.
    expect(haversineMeters(origin, { latitude: 0, longitude: 90 })).toBeCloseTo(
      (Math.PI / 2) * 6_371_008.8,
      3,
    );
    expect(haversineMeters(origin, { latitude: 0, longitude: 180 })).toBeCloseTo(Math.PI * 6_371_008.8, 3);
    expect(haversineMeters(origin, origin)).toBe(0);
  });

  it('is symmetric, and about 111.2 km per degree of latitude', () => {
    const empireState = { latitude: 40.748_44, longitude: -73.985_66 };
    const wallStreet = { latitude: 40.706_08, longitude: -74.008_58 };
    expect(haversineMeters(empireState, wallStreet)).toBe(haversineMeters(wallStreet, empireState));
    expect(haversineMeters(empireState, wallStreet)).toBeGreaterThan(5_000);
    expect(haversineMeters(empireState, wallStreet)).toBeLessThan(5_200);
    expect(haversineMeters({ latitude: 40, longitude: -74 }, { latitude: 41, longitude: -74 })).toBeCloseTo(
      111_195,
      -1,
    );
  });
});
