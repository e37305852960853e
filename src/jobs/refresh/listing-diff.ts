/**
 * Change detection: what one refreshed listing means, compared with the stored
 * row. Pure: the writer (listing-writer.ts) applies the result in the same
 * transaction as the row update, so the event log and the data never disagree.
 *
 * Event catalogue (types in src/domain/events.ts, documented in OpenAPI as
 * webhooks by src/modules/events/event-catalogue.ts):
 * - `listing.created`: first time the listing is seen. A listing first seen
 *   already in contract or off market also gets the status events below, as if
 *   from ACTIVE, so every consumer sees one complete lifecycle.
 * - `listing.price_decreased` / `listing.price_increased`: old and new price.
 * - `listing.status_changed`: every status move (ACTIVE / IN_CONTRACT / OFF_MARKET).
 * - `listing.rented` / `listing.sold` / `listing.delisted`: why it went off
 *   market, alongside the `status_changed` to OFF_MARKET.
 * - `listing.open_house_added`: an open house id not seen before (needs the detail page).
 */

import { CLOSE_EVENT_TYPE } from '../../domain/events.ts';
import type { ListingEventInput } from '../../modules/events/event-log.ts';
import { LISTING_COLUMNS, type ListingRow, type NewPriceEvent } from '../../platform/db/tables.ts';
import type { PipelineOwnedListingColumn, UpstreamListing } from '../../upstream/source.ts';

/** The stored state the diff needs: the row and, when a detail page was stored, its open house ids. */
export interface StoredListing {
  row: ListingRow;
  openHouseIds: ReadonlySet<string> | null;
}

export interface ListingDiff {
  /** Whether any upstream-owned column differs (the row must be rewritten). */
  rowChanged: boolean;
  events: ListingEventInput[];
  /** Price history rows to append. */
  priceEvents: NewPriceEvent[];
  /** `price_delta` to store: the last price move, or the stored value when the price did not move. */
  priceDelta: number;
}

const PIPELINE_OWNED: ReadonlySet<string> = new Set<PipelineOwnedListingColumn | 'id'>([
  'id',
  'price_delta',
  'rank_score',
  'refreshed_at',
  'created_at',
  'updated_at',
  'revision',
  'detail_hash',
]);

/** Columns compared to decide whether the stored row is out of date: every one upstream owns. */
const COMPARED = LISTING_COLUMNS.filter(
  (column): column is Exclude<(typeof LISTING_COLUMNS)[number], PipelineOwnedListingColumn | 'id'> =>
    !PIPELINE_OWNED.has(column),
);

function pctChange(from: number, to: number): number | null {
  if (from === 0) return null;
  return Math.round(((to - from) / from) * 10_000) / 100;
}

export function diffListing(stored: StoredListing | null, incoming: UpstreamListing): ListingDiff {
  const next = incoming.listing;
  const base = {
    listingId: next.id,
    buildingId: next.building_id,
    listingType: next.listing_type,
    areaId: next.area_id,
    occurredAt: incoming.modifiedAt,
  };
  const events: ListingEventInput[] = [];
  const priceEvents: NewPriceEvent[] = [];
  const date = incoming.modifiedAt.slice(0, 10);
  const priceEvent = (event: NewPriceEvent['event'], price: number, pct: number | null) =>
    priceEvents.push({ listing_id: next.id, date, price, event, pct_change: pct });

  const statusEvents = (from: ListingRow['status']) => {
    if (from === next.status) return;
    events.push({ ...base, type: 'listing.status_changed', oldValue: from, newValue: next.status });
    if (next.status === 'OFF_MARKET' && next.closed_reason !== null) {
      events.push({
        ...base,
        type: CLOSE_EVENT_TYPE[next.closed_reason],
        oldValue: from,
        newValue: next.price,
      });
      priceEvent(next.closed_reason, next.price, null);
    } else if (next.status === 'IN_CONTRACT') {
      priceEvent('IN_CONTRACT', next.price, null);
    }
  };

  let rowChanged: boolean;
  let priceDelta: number;
  if (stored === null) {
    rowChanged = true;
    priceDelta = 0;
    events.push({
      ...base,
      type: 'listing.created',
      oldValue: null,
      newValue: { status: 'ACTIVE', price: next.price },
    });
    priceEvent('LISTED', next.price, null);
    statusEvents('ACTIVE');
  } else {
    const old = stored.row;
    rowChanged = COMPARED.some((column) => old[column] !== next[column]);
    priceDelta = old.price_delta;
    const relisted = old.status === 'OFF_MARKET' && next.status === 'ACTIVE';
    if (old.price !== next.price) {
      priceDelta = next.price - old.price;
      events.push({
        ...base,
        type: next.price < old.price ? 'listing.price_decreased' : 'listing.price_increased',
        oldValue: old.price,
        newValue: next.price,
      });
      if (!relisted) {
        priceEvent(
          next.price < old.price ? 'PRICE_DECREASE' : 'PRICE_INCREASE',
          next.price,
          pctChange(old.price, next.price),
        );
      }
    }
    if (relisted) {
      events.push({ ...base, type: 'listing.status_changed', oldValue: old.status, newValue: next.status });
      priceEvent('RELISTED', next.price, pctChange(old.price, next.price));
    } else {
      statusEvents(old.status);
    }
  }

  // Open houses can only be compared when the detail page was fetched.
  if (incoming.detail) {
    const known = stored?.openHouseIds ?? null;
    for (const openHouse of incoming.detail.openHouses) {
      if (known?.has(openHouse.id)) continue;
      events.push({
        ...base,
        type: 'listing.open_house_added',
        oldValue: null,
        newValue: { id: openHouse.id, startsAt: openHouse.starts_at, endsAt: openHouse.ends_at },
      });
    }
  }
  return { rowChanged, events, priceEvents, priceDelta };
}
