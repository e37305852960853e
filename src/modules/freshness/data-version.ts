import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/tables.ts';

/**
 * Dataset scopes tracked in `sync_state`.
 *
 * A plain scope's time moves when its data changed: the data version (and so
 * every derived cache) is built from those. A `refresh:` scope records only that
 * a refresh confirmed the data with upstream, changed or not: it feeds
 * `meta.dataAge` without invalidating caches.
 */
export type ContentScope = 'search:rental' | 'search:sale' | 'buildings' | 'detail' | 'areas' | 'demo';
export type SyncScope = ContentScope | `refresh:${'search:rental' | 'search:sale' | 'buildings'}`;
const REFRESH_PREFIX = 'refresh:';

export async function readSyncStates(db: Kysely<Database>): Promise<Map<string, string>> {
  const rows = await db.selectFrom('sync_state').select(['scope', 'refreshed_at']).execute();
  return new Map(rows.map((r) => [r.scope, r.refreshed_at]));
}

export async function writeSyncState(
  db: Kysely<Database>,
  scope: SyncScope,
  refreshedAt: string,
  detail: string | null = null,
): Promise<void> {
  await db
    .insertInto('sync_state')
    .values({ scope, refreshed_at: refreshedAt, detail })
    .onConflict((oc) => oc.column('scope').doUpdateSet({ refreshed_at: refreshedAt, detail }))
    .execute();
}

/**
 * Records that a content scope's data changed, moving the data version every
 * derived cache is keyed by. The recorded time is strictly later than the
 * previous one, so two changes within one clock tick (or under a stopped test
 * clock) still invalidate. Returns the time written.
 */
export async function markScopeChanged(
  db: Kysely<Database>,
  scope: ContentScope,
  now: Date,
  detail: string | null = null,
): Promise<string> {
  const current = await db
    .selectFrom('sync_state')
    .select('refreshed_at')
    .where('scope', '=', scope)
    .executeTakeFirst();
  let at = now.getTime();
  if (current) at = Math.max(at, Date.parse(current.refreshed_at) + 1);
  const iso = new Date(at).toISOString();
  await writeSyncState(db, scope, iso, detail);
  return iso;
}

/**
 * When each scope was last refreshed, read through a one-second cache so hot
 * read paths do not add a query per request; a refresh shows within a second.
 */
interface Snapshot {
  at: number;
  states: Map<string, string>;
  /** Changes whenever any scope's refresh time changes. */
  version: string;
}

export class DataVersion {
  private cached: Snapshot | null = null;
  private pending: Promise<Map<string, string>> | null = null;

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
    const states = (await this.snapshot()).states;
    return states.get(`${REFRESH_PREFIX}${scope}`) ?? states.get(scope) ?? null;
  }

  /** When the scope's data last changed (its part of the data version): a cache key, not an age. */
  async changedAt(scope: ContentScope): Promise<string | null> {
    return (await this.snapshot()).states.get(scope) ?? null;
  }

  /**
   * A token that changes whenever any scope is refreshed: caches of derived data
   * (serialized listings, the search index) are valid only while it stays the same.
   */
  async version(): Promise<string> {
    return (await this.snapshot()).version;
  }

  private async snapshot(): Promise<Snapshot> {
    const now = this.clock.now().getTime();
    if (this.cached && now - this.cached.at < this.ttlMs) return this.cached;
    if (!this.pending) {
      this.pending = readSyncStates(this.db).finally(() => {
        this.pending = null;
      });
    }
    const states = await this.pending;
    const version = [...states.entries()]
      .filter(([scope]) => !scope.startsWith(REFRESH_PREFIX))
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([scope, at]) => `${scope}=${at}`)
      .join(';');
    const snapshot = { at: now, states, version };
    this.cached = snapshot;
    return snapshot;
  }

  invalidate(): void {
    this.cached = null;
  }
}
