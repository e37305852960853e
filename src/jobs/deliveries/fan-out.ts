/**
 * The webhook outbox's producer: reads the event log through its own durable
 * cursor (`event_cursors` row `webhooks`) and, in ONE transaction, inserts a
 * delivery for every active subscription an event matches and advances the
 * cursor. The events themselves were written in the writer's transaction, so
 * together: an event is never lost (the cursor moves only with its
 * deliveries) and never fanned out twice (a rolled-back batch is read again;
 * the unique (subscription, event) pair absorbs any repeat).
 */
import { type Kysely, sql } from 'kysely';
import { toEventPayload } from '../../modules/events/event-catalogue.ts';
import { commitCursor, type ListingEvent, readCursor, readEvents } from '../../modules/events/event-log.ts';
import { subscriptionFromRow } from '../../modules/webhooks/webhook.mapper.ts';
import { compileFilter, type ListingFacts } from '../../modules/webhooks/webhook-filters.ts';
import {
  activeSubscriptions,
  insertDeliveries,
  pendingDelivery,
} from '../../modules/webhooks/webhooks.repository.ts';
import { newDeliveryId, WEBHOOK_CURSOR } from '../../modules/webhooks/webhooks.service.ts';
import type { Dialect } from '../../platform/db/database.ts';
import type { Database, NewWebhookDelivery } from '../../platform/db/tables.ts';
import type { AreaTree } from '../../reference/areas.ts';

export const FAN_OUT_BATCH = 500;
/**
 * Deliveries one transaction writes at most (events × matching subscriptions):
 * a batch stops after the event that reaches it, so a burst never becomes
 * one long transaction holding the SQLite writer (or the request thread).
 */
export const MAX_DELIVERIES_PER_BATCH = 1000;

/** The listing facts filters look at, for the events' listings. */
async function listingFacts(
  db: Kysely<Database>,
  events: readonly ListingEvent[],
): Promise<Map<string, { areaId: number; price: number; bedrooms: number }>> {
  const ids = [...new Set(events.map((e) => e.listingId))];
  const facts = new Map<string, { areaId: number; price: number; bedrooms: number }>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('listings')
      .select(['id', 'area_id', 'price', 'bedroom_count'])
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const r of rows) facts.set(r.id, { areaId: r.area_id, price: r.price, bedrooms: r.bedroom_count });
  }
  return facts;
}

const PRICE_EVENTS = new Set(['listing.price_decreased', 'listing.price_increased']);

/**
 * Fans out at most one batch of events; returns how many events it consumed
 * (a full batch means more may be waiting). `now` stamps the new deliveries,
 * due at once.
 */
export async function fanOutBatch(
  db: Kysely<Database>,
  dialect: Dialect,
  areaTree: AreaTree,
  now: string,
  batch = FAN_OUT_BATCH,
): Promise<number> {
  // Cheap checks outside a transaction: most passes find nothing to do.
  const seen = await readCursor(db, WEBHOOK_CURSOR);
  if (seen === null) return 0; // no subscription was ever made
  if ((await readEvents(db, { after: seen, limit: 1 })).length === 0) return 0;

  return db.transaction().execute(async (trx) => {
    // Several dispatchers (PostgreSQL, several processes) take turns on the
    // cursor row; SQLite's transactions take the write lock at BEGIN.
    const locked =
      dialect === 'postgres'
        ? await sql<{
            sequence: number;
          }>`select sequence from event_cursors where consumer = ${WEBHOOK_CURSOR} for update`
            .execute(trx)
            .then((r) => (r.rows[0] ? Number(r.rows[0].sequence) : null))
        : await readCursor(trx, WEBHOOK_CURSOR);
    if (locked === null) return 0;
    const events = await readEvents(trx, { after: locked, limit: batch });
    if (events.length === 0) return 0;
    const subscriptions = (await activeSubscriptions(trx)).map((row) => {
      const s = subscriptionFromRow(row);
      return { ...s, matches: compileFilter(s.filters, areaTree), types: new Set<string>(s.events) };
    });
    const rows: NewWebhookDelivery[] = [];
    let consumed = events.length;
    if (subscriptions.length > 0) {
      const facts = await listingFacts(trx, events);
      for (const [index, event] of events.entries()) {
        if (rows.length >= MAX_DELIVERIES_PER_BATCH) {
          consumed = index;
          break;
        }
        const interested = subscriptions.filter(
          (s) => s.types.has(event.type) && event.sequence > s.afterSequence,
        );
        if (interested.length === 0) continue;
        const listing = facts.get(event.listingId);
        const eventFacts: ListingFacts = {
          listingType: event.listingType,
          areaId: listing?.areaId ?? null,
          price:
            PRICE_EVENTS.has(event.type) && typeof event.newValue === 'number'
              ? event.newValue
              : (listing?.price ?? null),
          bedrooms: listing?.bedrooms ?? null,
        };
        let payload: string | undefined;
        for (const s of interested) {
          if (!s.matches(eventFacts)) continue;
          payload ??= JSON.stringify(toEventPayload(event));
          rows.push(
            pendingDelivery({
              id: newDeliveryId(),
              subscriptionId: s.id,
              eventId: `evt_${event.sequence}`,
              eventType: event.type,
              payload,
              now,
            }),
          );
        }
      }
      await insertDeliveries(trx, rows);
    }
    await commitCursor(trx, WEBHOOK_CURSOR, events[consumed - 1]!.sequence, now);
    return consumed;
  });
}
