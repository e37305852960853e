/**
 * Reads of the event log for the change feed. Appends and cursors belong to
 * the log itself (event-log.ts); this file only pages it with filters.
 */
import type { Kysely } from 'kysely';
import type { ListingEventType } from '../../domain/events.ts';
import type { Database } from '../../platform/db/tables.ts';
import { eventFromRow, type ListingEvent } from './event-log.ts';

export interface FeedWindowQuery {
  /** Events with a sequence greater than this… */
  after: number;
  /** …and at most this: the window a single read may scan, so a sparse filter costs a bounded query. */
  upTo: number;
  limit: number;
  /** Only these types; every type when absent or empty. */
  types?: readonly ListingEventType[];
  /** Only events of listings in these areas (already expanded to descendants); every area when absent. */
  areaIds?: readonly number[];
}

/** The matching events of a sequence window, in sequence order. */
export async function readFeedWindow(db: Kysely<Database>, query: FeedWindowQuery): Promise<ListingEvent[]> {
  if (query.upTo <= query.after || query.areaIds?.length === 0) return [];
  let select = db
    .selectFrom('listing_events')
    .selectAll('listing_events')
    .where('listing_events.sequence', '>', query.after)
    .where('listing_events.sequence', '<=', query.upTo)
    .orderBy('listing_events.sequence')
    .limit(query.limit);
  if (query.types && query.types.length > 0) select = select.where('listing_events.type', 'in', query.types);
  if (query.areaIds) {
    const areaIds = query.areaIds;
    // The listing's area as stored now: events carry no area of their own.
    select = select.where((eb) =>
      eb.exists(
        eb
          .selectFrom('listings')
          .select('listings.id')
          .whereRef('listings.id', '=', 'listing_events.listing_id')
          .where('listings.area_id', 'in', areaIds),
      ),
    );
  }
  return (await select.execute()).map(eventFromRow);
}
