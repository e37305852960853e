/**
 * The durable listing event log: append inside the transaction that changes the
 * data, read from a cursor by any number of independent consumers.
 *
 * Ordering contract: a consumer that has read up to sequence N will never later
 * find an event with a sequence ≤ N. Sequences come from the table's identity,
 * and appends are serialized (SQLite has one writer; on PostgreSQL the append
 * takes a transaction-scoped advisory lock held until commit), so sequences
 * become visible in order. Gaps are possible (a rolled-back transaction) and
 * harmless.
 */
import { type Kysely, sql } from 'kysely';
import type { ListingEventType } from '../../domain/events.ts';
import type { Dialect } from '../../platform/db/database.ts';
import type { Database, ListingEventRow, NewListingEvent } from '../../platform/db/tables.ts';

/** Any fixed 64-bit number, unique to this lock within the database. */
const APPEND_LOCK_KEY = 7_305_551_234;

/** An event as the pipeline produces it (before the log assigns a sequence). */
export interface ListingEventInput {
  type: ListingEventType;
  listingId: string;
  buildingId: string;
  listingType: 'rental' | 'sale';
  /** The listing's area when the change was detected (null only for events logged before areas were). */
  areaId: number | null;
  oldValue: unknown;
  newValue: unknown;
  occurredAt: string;
}

/** An event as consumers read it. */
export interface ListingEvent extends ListingEventInput {
  sequence: number;
  recordedAt: string;
}

/**
 * Serializes appenders until the surrounding transaction ends. Call it first in
 * a transaction that will append, before reading the rows it diffs: two
 * refreshes of one listing then cannot both see the old state.
 */
export async function lockEventLog(trx: Kysely<Database>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${APPEND_LOCK_KEY})`.execute(trx);
}

/** Appends events in order; the caller holds the lock (`lockEventLog`) in the same transaction. */
export async function appendEvents(
  trx: Kysely<Database>,
  events: readonly ListingEventInput[],
  recordedAt: string,
): Promise<void> {
  const CHUNK = 500;
  for (let i = 0; i < events.length; i += CHUNK) {
    const rows: NewListingEvent[] = events.slice(i, i + CHUNK).map((e) => ({
      type: e.type,
      listing_id: e.listingId,
      building_id: e.buildingId,
      listing_type: e.listingType,
      area_id: e.areaId,
      old_value: e.oldValue === null || e.oldValue === undefined ? null : JSON.stringify(e.oldValue),
      new_value: e.newValue === null || e.newValue === undefined ? null : JSON.stringify(e.newValue),
      occurred_at: e.occurredAt,
      recorded_at: recordedAt,
    }));
    await trx.insertInto('listing_events').values(rows).execute();
  }
}

export function eventFromRow(row: ListingEventRow): ListingEvent {
  return {
    sequence: Number(row.sequence),
    type: row.type,
    listingId: row.listing_id,
    buildingId: row.building_id,
    listingType: row.listing_type,
    areaId: row.area_id,
    oldValue: row.old_value === null ? null : JSON.parse(row.old_value),
    newValue: row.new_value === null ? null : JSON.parse(row.new_value),
    occurredAt: row.occurred_at,
    recordedAt: row.recorded_at,
  };
}

export interface ReadEventsOptions {
  /** Read events with a sequence greater than this (0 = from the start). */
  after: number;
  limit: number;
  types?: readonly ListingEventType[];
  listingId?: string;
}

/** Events after a cursor, in sequence order. */
export async function readEvents(db: Kysely<Database>, options: ReadEventsOptions): Promise<ListingEvent[]> {
  let query = db
    .selectFrom('listing_events')
    .selectAll()
    .where('sequence', '>', options.after)
    .orderBy('sequence')
    .limit(options.limit);
  if (options.types && options.types.length > 0) query = query.where('type', 'in', options.types);
  if (options.listingId !== undefined) query = query.where('listing_id', '=', options.listingId);
  return (await query.execute()).map(eventFromRow);
}

/**
 * The sequence after which the last `count` events — of `types`, when given —
 * begin (0 when there are fewer): where a tail of the log starts, so a filtered
 * tail still prints its last `count` matches however many other events follow.
 */
export async function sequenceBeforeLast(
  db: Kysely<Database>,
  count: number,
  types?: readonly ListingEventType[],
): Promise<number> {
  let query = db
    .selectFrom('listing_events')
    .select('sequence')
    .orderBy('sequence', 'desc')
    .limit(1)
    .offset(count - 1);
  if (types && types.length > 0) query = query.where('type', 'in', types);
  const row = await query.executeTakeFirst();
  return row ? Number(row.sequence) - 1 : 0;
}

/** The highest sequence written so far (0 when the log is empty). */
export async function latestSequence(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('listing_events')
    .select((eb) => eb.fn.max('sequence').as('max'))
    .executeTakeFirst();
  return row?.max === null || row?.max === undefined ? 0 : Number(row.max);
}

/** Where a named consumer has got to; 0 for a new consumer (or `startAt` when given). */
export async function readCursor(db: Kysely<Database>, consumer: string): Promise<number | null> {
  const row = await db
    .selectFrom('event_cursors')
    .select('sequence')
    .where('consumer', '=', consumer)
    .executeTakeFirst();
  return row ? Number(row.sequence) : null;
}

/**
 * Records that `consumer` has handled everything up to `sequence`. Never moves a
 * cursor backwards, so a slow duplicate commit cannot replay events.
 */
export async function commitCursor(
  db: Kysely<Database>,
  consumer: string,
  sequence: number,
  at: string,
): Promise<void> {
  await db
    .insertInto('event_cursors')
    .values({ consumer, sequence, updated_at: at })
    .onConflict((oc) =>
      oc
        .column('consumer')
        .doUpdateSet({ sequence, updated_at: at })
        .where('event_cursors.sequence', '<', sequence),
    )
    .execute();
}
