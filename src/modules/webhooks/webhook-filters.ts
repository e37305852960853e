/**
 * Subscription filters, compiled once per fan-out batch: areas expand to
 * their descendants through the area tree, so a match is a set lookup.
 */
import type { AreaTree } from '../../reference/areas.ts';
import type { WebhookFilters } from './webhooks.schema.ts';

/** What a filter looks at: the event's listing as the fan-out sees it. */
export interface ListingFacts {
  listingType: 'rental' | 'sale';
  /** Null when the listing row is gone (then area, price and bedroom filters do not match). */
  areaId: number | null;
  price: number | null;
  bedrooms: number | null;
}

export type CompiledFilter = (facts: ListingFacts) => boolean;

export function compileFilter(filters: WebhookFilters | null, areaTree: AreaTree): CompiledFilter {
  if (filters === null) return () => true;
  const areas = filters.areas
    ? new Set(filters.areas.flatMap((id) => [...areaTree.descendantsAndSelf(id)]))
    : null;
  const { listingType, minPrice, maxPrice, minBeds, maxBeds } = filters;
  return (facts) => {
    if (listingType !== undefined && facts.listingType !== listingType) return false;
    if (areas && (facts.areaId === null || !areas.has(facts.areaId))) return false;
    if (minPrice !== undefined || maxPrice !== undefined) {
      if (facts.price === null) return false;
      if (minPrice !== undefined && facts.price < minPrice) return false;
      if (maxPrice !== undefined && facts.price > maxPrice) return false;
    }
    if (minBeds !== undefined || maxBeds !== undefined) {
      if (facts.bedrooms === null) return false;
      if (minBeds !== undefined && facts.bedrooms < minBeds) return false;
      if (maxBeds !== undefined && facts.bedrooms > maxBeds) return false;
    }
    return true;
  };
}
