/**
 * Applies upstream listings to the store with change detection.
 *
 * Atomicity contract: one batch is one transaction holding the event-log lock
 * (events.lockEventLog): the stored rows it diffs against are read inside it,
 * and each listing's row, detail rows, price history and events are written
 * together or not at all. A crash (even kill -9) mid-refresh leaves every
 * listing either as it was or fully updated, never half-written; the next
 * refresh picks up where the crash left off, and re-applying an unchanged
 * record is a no-op (no duplicate events).
 */
import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { rank } from '../../domain/ranking.ts';
import { appendEvents, type ListingEventInput, lockEventLog } from '../../modules/events/event-log.ts';
import { highestListingRevision } from '../../modules/listings/listing-revision.ts';
import { chunks } from '../../platform/db/batches.ts';
import type { Store } from '../../platform/db/database.ts';
import {
  type Database,
  LISTING_COLUMNS,
  type ListingRow,
  type NewFee,
  type NewListing,
  type NewListingDetails,
  type NewOpenHouse,
  type NewPhoto,
  type NewPriceEvent,
} from '../../platform/db/tables.ts';
import { yieldToEventLoop } from '../../platform/yield.ts';
import type { UpstreamListing } from '../../upstream/source.ts';
import { diffListing, type StoredListing } from './listing-diff.ts';

const DAY_MS = 86_400_000;
/** Rows per multi-row statement: 48 listing columns × 500 stays under SQLite's 32,766 bind limit. */
const ROWS_PER_STATEMENT = 500;

export interface ApplySummary {
  received: number;
  created: number;
  updated: number;
  unchanged: number;
  /** Listings whose detail rows (details, fees, open houses, photos) were rewritten. */
  detailsWritten: number;
  events: number;
  /** Listing types with at least one created or changed listing. */
  changedTypes: Set<'rental' | 'sale'>;
}

export function emptySummary(): ApplySummary {
  return {
    received: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    detailsWritten: 0,
    events: 0,
    changedTypes: new Set(),
  };
}

export function addSummary(total: ApplySummary, part: ApplySummary): void {
  total.received += part.received;
  total.created += part.created;
  total.updated += part.updated;
  total.unchanged += part.unchanged;
  total.detailsWritten += part.detailsWritten;
  total.events += part.events;
  for (const type of part.changedTypes) total.changedTypes.add(type);
}

/** Stable hash of a detail payload: rewriting detail rows is skipped when it matches. */
function detailHash(detail: NonNullable<UpstreamListing['detail']>): string {
  return createHash('sha1').update(JSON.stringify(detail)).digest('base64url');
}

/** Our recommended-order rank for a refreshed listing (see `rank` for the formula). */
function rankOf(incoming: UpstreamListing, now: number, stored: ListingRow | null): number {
  const l = incoming.listing;
  if (!incoming.detail && stored) return stored.rank_score;
  const listedAt = l.listed_at === null ? now : Date.parse(l.listed_at);
  return rank({
    photoCount: incoming.detail?.photos.length ?? 0,
    daysActive: Math.max(0, (now - listedAt) / DAY_MS),
    has3d: l.has_3d_tour === 1,
    promoted: l.listing_type === 'rental' ? l.no_fee === 1 : l.next_open_house_at !== null,
    price: l.price,
    // No area price model here: the value term is neutral for refreshed listings.
    expected: l.price,
    hasSqft: l.sqft !== null,
    scraped: l.detail_scraped === 1,
  });
}

/** Listings per transaction for bulk tools (`stoop refresh`), where nothing else waits. */
export const DEFAULT_BATCH_SIZE = 1000;
/**
 * Listings per transaction in a serving process: a few milliseconds of write
 * lock, so requests' own writes (and, in-process, the event loop) never wait long.
 */
export const SERVING_BATCH_SIZE = 100;

export class ListingWriter {
  /**
   * `batchSize`: listings per transaction. A serving process keeps it small: on
   * SQLite a transaction holds the write lock (and, in-process, the event loop)
   * for its whole length, and every other writer waits for it.
   */
  constructor(
    private readonly store: Store,
    private readonly batchSize = DEFAULT_BATCH_SIZE,
  ) {}

  /**
   * Applies listings in transactions of up to `batchSize`, in input order,
   * yielding to the event loop between transactions. Duplicate ids in the
   * input keep the last occurrence (replication pages may overlap).
   */
  async apply(
    listings: readonly UpstreamListing[],
    now: Date,
    batchSize = this.batchSize,
  ): Promise<ApplySummary> {
    const total = emptySummary();
    const unique = new Map<string, UpstreamListing>();
    for (const l of listings) unique.set(l.listing.id, l);
    const all = [...unique.values()];
    for (let i = 0; i < all.length; i += batchSize) {
      if (i > 0) await yieldToEventLoop();
      addSummary(total, await this.applyBatch(all.slice(i, i + batchSize), now));
    }
    return total;
  }

  private async applyBatch(batch: readonly UpstreamListing[], now: Date): Promise<ApplySummary> {
    const summary = emptySummary();
    summary.received = batch.length;
    const nowIso = now.toISOString();
    const nowMs = now.getTime();
    await this.store.db.transaction().execute(async (trx) => {
      await lockEventLog(trx, this.store.dialect);
      // Under the event-log lock, so revisions follow commit order.
      const revision = await nextListingRevision(trx);
      const stored = await readStored(
        trx,
        batch.map((l) => l.listing.id),
        batch.filter((l) => l.detail).map((l) => l.listing.id),
      );
      const rows: NewListing[] = [];
      const unchangedIds: string[] = [];
      const detailIds: string[] = [];
      const details: NewListingDetails[] = [];
      const fees: NewFee[] = [];
      const openHouses: NewOpenHouse[] = [];
      const photos: NewPhoto[] = [];
      const priceEvents: NewPriceEvent[] = [];
      const events: ListingEventInput[] = [];

      for (const incoming of batch) {
        const id = incoming.listing.id;
        const previous = stored.rows.get(id) ?? null;
        const storedListing: StoredListing | null = previous
          ? { row: previous, openHouseIds: stored.openHouseIds.get(id) ?? new Set() }
          : null;
        const diff = diffListing(storedListing, incoming);
        const hash = incoming.detail ? detailHash(incoming.detail) : null;
        // Kept on the listing row, so a detail without a details record is recognised too.
        const detailChanged = hash !== null && previous?.detail_hash !== hash;

        if (diff.rowChanged || detailChanged || previous === null) {
          rows.push({
            ...incoming.listing,
            price_delta: diff.priceDelta,
            rank_score: rankOf(incoming, nowMs, previous),
            refreshed_at: nowIso,
            created_at: previous?.created_at ?? incoming.createdAt,
            updated_at: incoming.modifiedAt,
            revision,
            detail_hash: hash ?? previous?.detail_hash ?? null,
          });
          if (previous === null) summary.created++;
          else summary.updated++;
          summary.changedTypes.add(incoming.listing.listing_type);
        } else {
          unchangedIds.push(id);
          summary.unchanged++;
        }

        if (incoming.detail && detailChanged) {
          summary.detailsWritten++;
          detailIds.push(id);
          const d = incoming.detail;
          if (d.details) details.push({ ...d.details, listing_id: id, updated_at: nowIso });
          for (const fee of d.fees) fees.push({ ...fee, listing_id: id });
          for (const oh of d.openHouses) openHouses.push({ ...oh, listing_id: id });
          for (const photo of d.photos) photos.push({ ...photo, listing_id: id, building_id: null });
        }
        priceEvents.push(...diff.priceEvents);
        events.push(...diff.events);
      }

      await upsertListings(trx, rows);
      for (const ids of chunks(unchangedIds, ROWS_PER_STATEMENT)) {
        await trx.updateTable('listings').set({ refreshed_at: nowIso }).where('id', 'in', ids).execute();
      }
      for (const ids of chunks(detailIds, ROWS_PER_STATEMENT)) {
        await trx.deleteFrom('listing_details').where('listing_id', 'in', ids).execute();
        await trx.deleteFrom('fees').where('listing_id', 'in', ids).execute();
        await trx.deleteFrom('open_houses').where('listing_id', 'in', ids).execute();
        await trx.deleteFrom('photos').where('listing_id', 'in', ids).execute();
      }
      await insertAll(trx, 'listing_details', details);
      await insertAll(trx, 'fees', fees);
      await insertAll(trx, 'open_houses', openHouses);
      await insertAll(trx, 'photos', photos);
      await insertAll(trx, 'price_events', priceEvents);
      await appendEvents(trx, events, nowIso);
      summary.events = events.length;
    });
    return summary;
  }
}

interface StoredState {
  rows: Map<string, ListingRow>;
  openHouseIds: Map<string, Set<string>>;
}

async function readStored(
  trx: Kysely<Database>,
  ids: readonly string[],
  detailIds: readonly string[],
): Promise<StoredState> {
  const state: StoredState = { rows: new Map(), openHouseIds: new Map() };
  for (const part of chunks(ids, ROWS_PER_STATEMENT)) {
    for (const row of await trx.selectFrom('listings').selectAll().where('id', 'in', part).execute()) {
      state.rows.set(row.id, row);
    }
  }
  for (const part of chunks(detailIds, ROWS_PER_STATEMENT)) {
    const openHouses = await trx
      .selectFrom('open_houses')
      .select(['listing_id', 'id'])
      .where('listing_id', 'in', part)
      .execute();
    for (const oh of openHouses) {
      const set = state.openHouseIds.get(oh.listing_id) ?? new Set<string>();
      state.openHouseIds.set(oh.listing_id, set);
      set.add(oh.id);
    }
  }
  return state;
}

/** Every `listings` column but the key, and the bookkeeping: what an upsert overwrites. */
const UPDATABLE_LISTING_COLUMNS = [
  ...LISTING_COLUMNS.filter((column) => column !== 'id'),
  'revision',
  'detail_hash',
] as const;

/** The revision the next change to listings gets: one above any stored. */
async function nextListingRevision(trx: Kysely<Database>): Promise<number> {
  return (await highestListingRevision(trx)) + 1;
}

async function upsertListings(trx: Kysely<Database>, rows: readonly NewListing[]): Promise<void> {
  for (const part of chunks(rows, ROWS_PER_STATEMENT)) {
    await trx
      .insertInto('listings')
      .values(part)
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet(
            Object.fromEntries(
              UPDATABLE_LISTING_COLUMNS.map((column) => [
                column,
                sql<never>`${sql.ref(`excluded.${column}`)}`,
              ]),
            ),
          ),
      )
      .execute();
  }
}

type ChildTable = 'listing_details' | 'fees' | 'open_houses' | 'photos' | 'price_events';

async function insertAll<T extends ChildTable>(
  trx: Kysely<Database>,
  table: T,
  rows: readonly object[],
): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!).length;
  const perStatement = Math.max(1, Math.floor(30_000 / columns));
  for (const part of chunks(rows, perStatement)) {
    // Rows were built from this table's Insertable types above.
    await trx
      .insertInto(table)
      .values(part as never)
      .execute();
  }
}
