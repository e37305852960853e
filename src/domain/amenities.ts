/**
 * The closed amenity vocabulary. Each amenity owns one bit of
 * `listings.amenity_mask`, so "must have all of these amenities" is a single
 * indexed-row predicate `(amenity_mask & m) = m` on both SQL dialects.
 *
 * Contract: codes are append-only (a bit is never reused) and stay below 31
 * bits so the mask fits a signed 32-bit integer in PostgreSQL and in JS bitwise
 * arithmetic.
 */
export const AMENITIES = [
  'doorman',
  'elevator',
  'laundry_in_building',
  'washer_dryer',
  'dishwasher',
  'gym',
  'pool',
  'roof_deck',
  'private_outdoor_space',
  'balcony',
  'terrace',
  'garden',
  'parking',
  'storage',
  'bike_room',
  'concierge',
  'live_in_super',
  'central_air',
  'fireplace',
  'furnished',
  'package_room',
  'childrens_playroom',
  'virtual_doorman',
  'wheelchair_access',
  'media_room',
  'cold_storage',
  'green_building',
  'pied_a_terre_allowed',
] as const;

export type Amenity = (typeof AMENITIES)[number];

const BIT: ReadonlyMap<string, number> = new Map(AMENITIES.map((name, index) => [name, 1 << index]));

export function isAmenity(value: string): value is Amenity {
  return BIT.has(value);
}

export function amenityMask(amenities: Iterable<Amenity>): number {
  let mask = 0;
  for (const amenity of amenities) mask |= BIT.get(amenity)!;
  return mask;
}

export function amenitiesFromMask(mask: number): Amenity[] {
  return AMENITIES.filter((name) => (mask & BIT.get(name)!) !== 0);
}
