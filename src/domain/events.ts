/**
 * The listing event vocabulary: the one list of event types the refresh
 * pipeline writes to the event log, the simulator replays, the events table
 * stores, the catalogue documents (src/modules/events/event-catalogue.ts) and
 * the CLI filters by. Adding a type here makes the compiler ask for its
 * documentation in the catalogue.
 */

export const LISTING_EVENT_TYPES = [
  'listing.created',
  'listing.price_decreased',
  'listing.price_increased',
  'listing.status_changed',
  'listing.delisted',
  'listing.rented',
  'listing.sold',
  'listing.open_house_added',
] as const;
export type ListingEventType = (typeof LISTING_EVENT_TYPES)[number];

export function isListingEventType(value: string): value is ListingEventType {
  return (LISTING_EVENT_TYPES as readonly string[]).includes(value);
}

/**
 * What a webhook subscription may ask for: every listing event (matched
 * citywide, narrowed by the subscription's filters) and `watcher.change`, the
 * changes the subscribing account's own watchers detect.
 */
export const WEBHOOK_EVENT_TYPES = [...LISTING_EVENT_TYPES, 'watcher.change'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

/** Why a listing went off market, as upstream reports it (`listings.closed_reason`). */
export type ClosedReason = 'RENTED' | 'SOLD' | 'DELISTED';

/**
 * The event that says why a listing went off market; it accompanies the
 * `listing.status_changed` to OFF_MARKET.
 */
export const CLOSE_EVENT_TYPE: Readonly<Record<ClosedReason, ListingEventType>> = {
  RENTED: 'listing.rented',
  SOLD: 'listing.sold',
  DELISTED: 'listing.delisted',
};
