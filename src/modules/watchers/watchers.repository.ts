/** Watcher storage: every query of the watcher module and its poller. */
import type { Kysely, Updateable } from 'kysely';
import type { Tier } from '../../domain/tiers.ts';
import type {
  Database,
  NewWatcher,
  WatcherChangeRow,
  WatcherRow,
  WatchersTable,
} from '../../platform/db/tables.ts';

export async function insertWatcher(db: Kysely<Database>, row: NewWatcher): Promise<void> {
  await db.insertInto('watchers').values(row).execute();
}

export async function countWatchers(db: Kysely<Database>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('watchers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** An account's watchers, oldest first (then by id, so pages are stable). */
export function listWatchers(
  db: Kysely<Database>,
  accountId: string,
  offset: number,
  limit: number,
): Promise<WatcherRow[]> {
  return db
    .selectFrom('watchers')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute();
}

/** By (account, id): another account's watcher is not found. */
export function findOwnedWatcher(
  db: Kysely<Database>,
  accountId: string,
  id: string,
): Promise<WatcherRow | undefined> {
  return db
    .selectFrom('watchers')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export function findWatcher(db: Kysely<Database>, id: string): Promise<WatcherRow | undefined> {
  return db.selectFrom('watchers').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateWatcher(
  db: Kysely<Database>,
  id: string,
  changes: Updateable<WatchersTable>,
): Promise<boolean> {
  const result = await db.updateTable('watchers').set(changes).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Removes a watcher and the changes it kept. The watcher row goes first: a
 * poll recording a change holds that row (recordPoll), so the delete waits
 * for it and then removes its change too, or the poll finds the row gone.
 */
export async function deleteWatcher(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('watchers').where('id', '=', id).execute();
  await db.deleteFrom('watcher_changes').where('watcher_id', '=', id).execute();
}

/**
 * Stores a poll's outcome if no other record moved the watcher's sequence
 * since it was read (compare-and-set on `last_sequence`); false when the
 * watcher is gone or another record won.
 */
export async function storePoll(
  db: Kysely<Database>,
  id: string,
  seenSequence: number,
  changes: Updateable<WatchersTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('watchers')
    .set(changes)
    .where('id', '=', id)
    .where('last_sequence', '=', seenSequence)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Active watchers whose poll is due, earliest first. */
export function dueWatchers(
  db: Kysely<Database>,
  now: string,
  limit: number,
): Promise<Pick<WatcherRow, 'id' | 'next_poll_at' | 'poll_interval_s'>[]> {
  return db
    .selectFrom('watchers')
    .select(['id', 'next_poll_at', 'poll_interval_s'])
    .where('status', '=', 'active')
    .where('next_poll_at', '<=', now)
    .orderBy('next_poll_at')
    .limit(limit)
    .execute();
}

/**
 * Claims one due poll: moves `next_poll_at` from the value the claimant read
 * to `next`. A compare-and-set on both dialects: of several processes that
 * read the same due row, exactly one updates it (PostgreSQL re-checks the
 * condition after a concurrent update commits), so a watcher is polled once
 * per interval however many pollers run.
 */
export async function claimPoll(
  db: Kysely<Database>,
  id: string,
  seenNextPollAt: string,
  next: string,
): Promise<boolean> {
  const result = await db
    .updateTable('watchers')
    .set({ next_poll_at: next })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .where('next_poll_at', '=', seenNextPollAt)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export async function insertChange(
  db: Kysely<Database>,
  row: { watcher_id: string; sequence: number; occurred_at: string; payload: string },
): Promise<void> {
  await db.insertInto('watcher_changes').values(row).execute();
}

/** Drops a watcher's changes at or below a sequence (the oldest, past retention). */
export async function pruneChanges(db: Kysely<Database>, watcherId: string, upTo: number): Promise<void> {
  await db
    .deleteFrom('watcher_changes')
    .where('watcher_id', '=', watcherId)
    .where('sequence', '<=', upTo)
    .execute();
}

/** A watcher's changes after a sequence, in order. */
export function readChanges(
  db: Kysely<Database>,
  watcherId: string,
  after: number,
  limit: number,
): Promise<WatcherChangeRow[]> {
  return db
    .selectFrom('watcher_changes')
    .selectAll()
    .where('watcher_id', '=', watcherId)
    .where('sequence', '>', after)
    .orderBy('sequence')
    .limit(limit)
    .execute();
}

/** The tiers of an account's usable keys now (active, subscription not ended). */
export async function accountKeyTiers(db: Kysely<Database>, accountId: string, now: string): Promise<Tier[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select('tier')
    .where('account_id', '=', accountId)
    .where('status', '=', 'active')
    .where((eb) => eb.or([eb('subscription_ends_at', 'is', null), eb('subscription_ends_at', '>', now)]))
    .execute();
  return rows.map((r) => r.tier);
}

export async function listingExists(db: Kysely<Database>, id: string): Promise<boolean> {
  return (await db.selectFrom('listings').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

export async function buildingExists(db: Kysely<Database>, id: string): Promise<boolean> {
  return (
    (await db.selectFrom('buildings').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
  );
}

/** The fields of a listing a listing watcher compares between polls. */
export function findWatchedListing(db: Kysely<Database>, id: string) {
  return db
    .selectFrom('listings')
    .select([
      'status',
      'closed_reason',
      'price',
      'net_effective',
      'months_free',
      'monthly_cost',
      'no_fee',
      'bedroom_count',
      'bathrooms',
      'sqft',
      'available_at',
      'next_open_house_at',
      'contract_at',
      'off_market_at',
    ])
    .where('id', '=', id)
    .executeTakeFirst();
}
