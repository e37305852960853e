import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/tables.ts';
import {
  deleteScopes,
  type StoredScope,
  selectAllScopes,
  selectScope,
  upsertScope,
} from './data-version.repository.ts';

/**
 * The owner of the data version: every write of a scope's time goes through
 * this module (storage in data-version.repository.ts), and every scope is named
 * by its type. Three kinds of scope:
 *
 * - A content scope's time moves when its data changed. The data version (and
 *   so every derived cache) is built from these times, and nothing else.
 * - A confirmation (`refresh:<scope>`) records only that a refresh confirmed
 *   the whole dataset with upstream, changed or not: it feeds `meta.dataAge`
 *   without invalidating caches.
 * - A marker records an event with its detail (the demo market loaded, a demo
 *   load under way, the last scores run); it never moves the version.
 *
 * Write functions take the store's `db` or a transaction, so a writer can
 * record its change in the transaction that makes it.
 */
export const CONTENT_SCOPES = ['search:rental', 'search:sale', 'buildings', 'detail', 'areas'] as const;
export type ContentScope = (typeof CONTENT_SCOPES)[number];

/** Content scopes a refresh confirms as a whole with upstream. */
export type ConfirmableScope = 'search:rental' | 'search:sale' | 'buildings';
export type ConfirmationScope = `refresh:${ConfirmableScope}`;
const CONFIRMATION_SCOPES = [
  'refresh:search:rental',
  'refresh:search:sale',
  'refresh:buildings',
] as const satisfies readonly ConfirmationScope[];

/**
 * - `demo`: the store holds the demo market; detail is its generation record (JSON).
 * - `demo:loading`: a demo load started and has not completed.
 * - `scores`: when building scores were last computed; detail is the run's summary (JSON).
 * - `records`: when single records' headers (`refreshed_at`) last moved outside a
 *   cycle's own confirmation: a live read or a single-record refresh that changed
 *   nothing, or a cycle that failed part way. Readers that keep record headers for
 *   an epoch (`DataVersion.epoch`) read them again.
 */
export const MARKER_SCOPES = ['demo', 'demo:loading', 'scores', 'records'] as const;
export type MarkerScope = (typeof MARKER_SCOPES)[number];

export type SyncScope = ContentScope | ConfirmationScope | MarkerScope;

/** A scope whose time is part of the store's position: what `setScopeTimes` may set. */
export type TimedScope = ContentScope | ConfirmationScope;

const KNOWN_SCOPES: ReadonlySet<string> = new Set<SyncScope>([
  ...CONTENT_SCOPES,
  ...CONFIRMATION_SCOPES,
  ...MARKER_SCOPES,
]);
const CONTENT: ReadonlySet<string> = new Set<ContentScope>(CONTENT_SCOPES);

export interface ScopeRecord {
  scope: SyncScope;
  /** ISO 8601 UTC: when the scope last changed, was confirmed, or its marker was written. */
  at: string;
  detail: string | null;
}

function isSyncScope(scope: string): scope is SyncScope {
  return KNOWN_SCOPES.has(scope);
}

function toRecord(row: StoredScope): ScopeRecord | null {
  return isSyncScope(row.scope) ? { scope: row.scope, at: row.at, detail: row.detail } : null;
}

/** The content scope of a listing type's search data. */
export function searchScopeOf(listingType: 'rental' | 'sale'): ContentScope {
  return listingType === 'rental' ? 'search:rental' : 'search:sale';
}

export function confirmationOf(scope: ConfirmableScope): ConfirmationScope {
  return `refresh:${scope}`;
}

/** Every known scope's record, ordered by scope name (code-unit order, the same in either dialect). */
export async function readScopes(db: Kysely<Database>): Promise<ScopeRecord[]> {
  const records: ScopeRecord[] = [];
  for (const row of await selectAllScopes(db)) {
    const record = toRecord(row);
    if (record) records.push(record);
  }
  return records.sort((a, b) => (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : 0));
}

/** The scope's record; null when it was never written (or was forgotten). */
export async function readScope(db: Kysely<Database>, scope: SyncScope): Promise<ScopeRecord | null> {
  const row = await selectScope(db, scope);
  return row ? toRecord(row) : null;
}

/**
 * Records that a content scope's data changed, moving the data version every
 * derived cache is keyed by. The recorded time is strictly later than the
 * previous one, so two changes within one clock tick (or under a stopped test
 * clock) still invalidate. Returns the time written.
 */
export async function markChanged(
  db: Kysely<Database>,
  scope: ContentScope,
  now: Date,
  detail: string | null = null,
): Promise<string> {
  return writeStrictlyLater(db, scope, now, detail);
}

/**
 * Records that single records' `refreshed_at` moved without a change or a
 * cycle's confirmation (the `records` marker): every writer of record headers
 * does, so that readers keeping headers for an epoch see it. Strictly later
 * than the previous one, like `markChanged`.
 */
export async function markRecordsRefreshed(db: Kysely<Database>, now: Date): Promise<void> {
  await writeStrictlyLater(db, 'records', now, null);
}

async function writeStrictlyLater(
  db: Kysely<Database>,
  scope: SyncScope,
  now: Date,
  detail: string | null,
): Promise<string> {
  const current = await selectScope(db, scope);
  let at = now.getTime();
  if (current) at = Math.max(at, Date.parse(current.at) + 1);
  const iso = new Date(at).toISOString();
  await upsertScope(db, scope, iso, detail);
  return iso;
}

/**
 * Records that a refresh confirmed the datasets with upstream at `at`
 * (`meta.dataAge` moves); the data version does not.
 */
export async function markConfirmed(
  db: Kysely<Database>,
  scopes: readonly ConfirmableScope[],
  at: Date,
): Promise<void> {
  const iso = at.toISOString();
  for (const scope of scopes) await upsertScope(db, confirmationOf(scope), iso, null);
}

/**
 * Sets the scopes' times to exactly `at`, earlier or later than recorded (detail
 * cleared). For a store loaded as of an instant (the demo market: in step with
 * upstream up to then), and for tests that put a version in place and restore
 * it. Writers of changes use `markChanged`, which never goes back.
 */
export async function setScopeTimes(
  db: Kysely<Database>,
  scopes: readonly TimedScope[],
  at: Date,
): Promise<void> {
  const iso = at.toISOString();
  for (const scope of scopes) await upsertScope(db, scope, iso, null);
}

/** Writes a marker with its time and detail (replacing an earlier one). */
export async function writeMarker(
  db: Kysely<Database>,
  scope: MarkerScope,
  at: Date,
  detail: string | null = null,
): Promise<void> {
  await upsertScope(db, scope, at.toISOString(), detail);
}

/** Removes the scopes' records (a cleared market, a completed demo load's marker). */
export async function forgetScopes(db: Kysely<Database>, scopes: readonly SyncScope[]): Promise<void> {
  await deleteScopes(db, scopes);
}

/**
 * When each scope was last written, read through a one-second cache so hot
 * read paths do not add a query per request; a change shows within a second
 * (at once in the process that calls `invalidate()` after writing).
 */
interface Snapshot {
  at: number;
  states: Map<SyncScope, string>;
  /** Changes whenever any content scope's time changes. */
  version: string;
  /** Every scope's record as read: two snapshots alike in this saw no write between them. */
  signature: string;
  /** See `DataVersion.epoch`. */
  epoch: object;
  /** `DataVersion.generation` when the read began. */
  generation: number;
}

export class DataVersion {
  private cached: Snapshot | null = null;
  /** The last snapshot read, kept past its time to live: a re-read that finds it unchanged keeps its epoch. */
  private last: Snapshot | null = null;
  /** Moved by `invalidate()`: a read begun before is not cached, and the next snapshot starts a new epoch. */
  private generation = 0;
  private pending: Promise<Snapshot> | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly ttlMs = 1000,
  ) {}

  /**
   * When the scope's data was last confirmed with upstream (`meta.dataAge`): the
   * last refresh of the whole scope. A store no refresh has touched yet (just
   * loaded) falls back to when its data was written. Single-listing changes
   * move only the content time, so they never make a whole dataset look fresh.
   */
  async refreshedAt(scope: ContentScope): Promise<string | null> {
    return refreshedAtIn(await this.snapshot(), scope);
  }

  /**
   * `refreshedAt` without waiting, when the snapshot is fresh (read less than
   * `ttlMs` ago, not invalidated since); undefined otherwise (call `refreshedAt`).
   * Hot read paths skip a promise and a microtask per read with it.
   */
  refreshedAtIfFresh(scope: ContentScope): string | null | undefined {
    const snapshot = this.freshSnapshot();
    return snapshot === null ? undefined : refreshedAtIn(snapshot, scope);
  }

  /** `epoch` without waiting, when the snapshot is fresh (see `refreshedAtIfFresh`); null otherwise. */
  epochIfFresh(): object | null {
    return this.freshSnapshot()?.epoch ?? null;
  }

  /** When the scope's data last changed (its part of the data version): a cache key, not an age. */
  async changedAt(scope: ContentScope): Promise<string | null> {
    return (await this.snapshot()).states.get(scope) ?? null;
  }

  /**
   * A token that changes whenever any content scope changes: caches of derived
   * data (serialized listings, the search index) are valid only while it stays
   * the same. Confirmations and markers do not move it.
   */
  async version(): Promise<string> {
    return (await this.snapshot()).version;
  }

  /**
   * An opaque token that is replaced at every `invalidate()` and whenever a
   * re-read of the scopes (at most `ttlMs` apart while it is asked) finds any
   * scope written since the last read: a content change, a confirmation (a
   * refresh that changed nothing moves no version, but does replace the token)
   * or a marker. A value read from the store while the token stays the same
   * may be reused with the staleness the data version itself allows — changes
   * made here show at once, changes made elsewhere within `ttlMs` of their
   * writer recording them. Every writer of what such values hold (record
   * headers: `refreshed_at`, revisions, scores) records a scope after writing
   * (`markChanged`, `markConfirmed`, `markRecordsRefreshed`, the scores
   * marker), so while nothing is written anywhere the token lives on and those
   * values are not read again.
   */
  async epoch(): Promise<object> {
    return (await this.snapshot()).epoch;
  }

  /**
   * Drops the cached snapshot: the next read sees a write this process (or its
   * background-jobs worker) just made. Listeners hear of it, so derived caches
   * can rebuild beside the old ones before a request asks.
   */
  invalidate(): void {
    this.cached = null;
    this.pending = null;
    this.generation++;
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // A failing listener must not fail the writer that moved the version.
      }
    }
  }

  /**
   * Calls `listener` (synchronously; it must only schedule work) after every
   * `invalidate()`. Returns the unsubscribe function.
   */
  onInvalidate(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private freshSnapshot(): Snapshot | null {
    const cached = this.cached;
    return cached !== null && this.clock.now().getTime() - cached.at < this.ttlMs ? cached : null;
  }

  private async snapshot(): Promise<Snapshot> {
    const now = this.clock.now().getTime();
    if (this.cached && now - this.cached.at < this.ttlMs) return this.cached;
    if (!this.pending) {
      // One read, one snapshot (one epoch object) for every caller that waits on it.
      const generation = this.generation;
      const pending: Promise<Snapshot> = readScopes(this.db)
        .then((records) => this.adopt(records, now, generation))
        .finally(() => {
          if (this.pending === pending) this.pending = null;
        });
      this.pending = pending;
    }
    return this.pending;
  }

  private adopt(records: readonly ScopeRecord[], at: number, generation: number): Snapshot {
    const states = new Map(records.map((r) => [r.scope, r.at]));
    // readScopes orders by scope, so neither token depends on row order.
    const version = records
      .filter((r) => CONTENT.has(r.scope))
      .map((r) => `${r.scope}=${r.at}`)
      .join(';');
    const signature = records.map((r) => `${r.scope}=${r.at}=${r.detail ?? ''}`).join('\n');
    const last = this.last;
    const keepsEpoch = last !== null && last.generation === generation && last.signature === signature;
    const snapshot = { at, states, version, signature, generation, epoch: keepsEpoch ? last.epoch : {} };
    if (last === null || generation >= last.generation) this.last = snapshot;
    // A read begun before an invalidate() may have missed the write it signals: used once, not kept.
    if (generation === this.generation) this.cached = snapshot;
    return snapshot;
  }
}

/** When the scope was last confirmed with upstream, else last written (see `DataVersion.refreshedAt`). */
function refreshedAtIn(snapshot: Snapshot, scope: ContentScope): string | null {
  const confirmed = isConfirmable(scope) ? snapshot.states.get(confirmationOf(scope)) : undefined;
  return confirmed ?? snapshot.states.get(scope) ?? null;
}

function isConfirmable(scope: ContentScope): scope is ConfirmableScope {
  return scope === 'search:rental' || scope === 'search:sale' || scope === 'buildings';
}
