/**
 * The refresh pipeline: keeps the store in step with a `ListingSource`.
 *
 * - `replicate()`: the search cycle. Reads every listing upstream changed since
 *   the stored high-water mark (RESO replication by ModificationTimestamp, with
 *   details expanded) and applies it with change detection.
 * - `fullRefresh()`: pages through every listing upstream has on market and
 *   reconciles listings that disappeared (bulk re-sync, and the benchmark).
 * - `refreshBuildings()`: the buildings cycle.
 * - The `RefreshPort` read paths use: background refreshes, single-flight per
 *   target, and the live single-listing read of Business/Internal callers.
 *
 * Single-flight is per process: concurrent requests for one target in this
 * process share one upstream call. Several nodes may each refresh the same
 * target once; applying is idempotent and serialized by the event-log lock, so
 * that costs an upstream call, never a duplicate event.
 */
import type { Logger } from 'pino';
import { knownBuildingIds } from '../../modules/building/building.repository.ts';
import {
  type ContentScope,
  type DataVersion,
  markChanged,
  markConfirmed,
  markRecordsRefreshed,
} from '../../modules/freshness/data-version.ts';
import type {
  LiveOutcome,
  RefreshPort,
  RefreshStatus,
  RefreshTarget,
} from '../../modules/freshness/refresh-port.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Store } from '../../platform/db/database.ts';
import type { NewBuilding, NewPhoto } from '../../platform/db/tables.ts';
import { TaskQueue } from '../../platform/jobs/task-queue.ts';
import {
  type ListingSource,
  type UpstreamBuilding,
  UpstreamError,
  type UpstreamListing,
} from '../../upstream/source.ts';
import { type ApplySummary, addSummary, emptySummary, ListingWriter } from './listing-writer.ts';
import {
  BUILDINGS_HIGH_WATER_MARK,
  type HighWaterMark,
  LISTINGS_HIGH_WATER_MARK,
  readHighWaterMark,
  writeHighWaterMark,
} from './pipeline-state.repository.ts';

/** What a refresh records after writing: a content scope it changed, or `records` (refreshed, unchanged). */
type HeaderChange = ContentScope | 'records';

/** What a buildings cycle wrote, had it ended here: `buildings` for changes, `records` for buildings refreshed unchanged. */
function buildingsWritten(result: BuildingCycleResult): HeaderChange[] {
  const changed = result.created + result.updated;
  const scopes: HeaderChange[] = changed > 0 ? ['buildings'] : [];
  if (result.received > changed) scopes.push('records');
  return scopes;
}

export interface RefresherOptions {
  store: Store;
  source: ListingSource;
  clock: Clock;
  dataVersion: DataVersion;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Listings per replication page. */
  pageSize?: number;
  /**
   * A search refresh requested within this long (clock time) after the last one
   * finished is not started again: the data is as fresh as upstream allows.
   */
  minSearchIntervalMs?: number;
  /** Background listing/building refreshes running at once (the rest wait their turn). */
  maxConcurrentBackground?: number;
  /** Background refreshes waiting at most; past it a request is declined (`refreshTriggered: false`). */
  maxPendingBackground?: number;
  /**
   * Background single-target refreshes that changed data move the data version
   * (which empties caches and rebuilds the search index) at most this often, in
   * real milliseconds: a burst of refreshed listings costs one rebuild, not one each.
   */
  versionBumpDelayMs?: number;
  /** What the upstream is, for health (never its address). */
  upstreamKind?: 'reso' | 'simulator';
  /**
   * Listings per write transaction (default 1000, for bulk tools). A serving
   * process uses a small batch: see ListingWriter.
   */
  writeBatchSize?: number;
  /**
   * Runs the search cycle a read requests elsewhere (the background-jobs
   * worker) instead of in this process; its failure is this refresher's.
   */
  searchCycle?: () => Promise<unknown>;
}

export interface CycleResult extends ApplySummary {
  pages: number;
  /** Listings fetched one by one (reconciliation). */
  fetched: number;
  ms: number;
}

export interface BuildingCycleResult {
  received: number;
  created: number;
  updated: number;
  ms: number;
}

const quietLog = { info: () => {}, warn: () => {}, error: () => {} };

export class Refresher implements RefreshPort {
  private readonly store: Store;
  private readonly source: ListingSource;
  private readonly clock: Clock;
  private readonly dataVersion: DataVersion;
  private readonly log: Pick<Logger, 'info' | 'warn' | 'error'>;
  private readonly writer: ListingWriter;
  private readonly pageSize: number;
  private readonly minSearchIntervalMs: number;
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly versionBumpDelayMs: number;
  /**
   * Background single-target refreshes, keyed `listing:<id>` / `building:<id>`:
   * at most `maxConcurrentBackground` run at once, so a read burst over many
   * stale listings cannot turn into an upstream storm; past
   * `maxPendingBackground` waiting, requests are declined.
   */
  private readonly background: TaskQueue<string>;
  private readonly pendingScopes = new Set<HeaderChange>();
  private bumpTimer: NodeJS.Timeout | null = null;
  private bumping: Promise<void> | null = null;
  private lastSearchRefreshAt = Number.NEGATIVE_INFINITY;
  private lastSearchFailureAt = Number.NEGATIVE_INFINITY;
  private lastFailure: { at: string; kind: string } | null = null;
  private readonly upstreamKind: 'reso' | 'simulator';
  private readonly searchCycle: (() => Promise<unknown>) | undefined;
  /** Upstream calls made, by kind: observability and the single-flight tests. */
  readonly calls = { pages: 0, listings: 0, buildings: 0 };

  constructor(options: RefresherOptions) {
    this.store = options.store;
    this.source = options.source;
    this.clock = options.clock;
    this.dataVersion = options.dataVersion;
    this.log = options.log ?? quietLog;
    this.writer = new ListingWriter(options.store, options.writeBatchSize);
    this.searchCycle = options.searchCycle;
    this.pageSize = options.pageSize ?? 500;
    this.minSearchIntervalMs = options.minSearchIntervalMs ?? 60_000;
    this.background = new TaskQueue<string>({
      concurrency: options.maxConcurrentBackground ?? 4,
      maxPending: options.maxPendingBackground ?? 200,
      onError: (error, key) => {
        if (!(error instanceof UpstreamError && error.kind === 'not_found')) this.recordFailure(error);
        this.log.warn({ err: error, target: key }, 'background refresh failed');
      },
    });
    this.versionBumpDelayMs = options.versionBumpDelayMs ?? 2_000;
    this.upstreamKind = options.upstreamKind ?? 'reso';
  }

  status(): RefreshStatus {
    return {
      upstream: this.upstreamKind,
      lastFailure: this.lastFailure,
      backgroundPending: this.background.size,
    };
  }

  /** Remembers a failed upstream refresh for health (kind only: messages may carry addresses). */
  recordFailure(error: unknown): void {
    this.lastFailure = {
      at: this.clock.now().toISOString(),
      kind: error instanceof UpstreamError ? error.kind : 'internal',
    };
  }

  /** Records a failure another thread's refresher saw (the background-jobs worker's cycles). */
  noteFailure(failure: { at: string; kind: string }): void {
    if (this.lastFailure === null || failure.at >= this.lastFailure.at) this.lastFailure = { ...failure };
  }

  // ---- RefreshPort -------------------------------------------------------

  requestRefresh(target: RefreshTarget): boolean {
    switch (target.kind) {
      case 'search': {
        if (this.inFlight.has('search')) return true;
        // Also after a failed attempt: a feed that is down is not retried by every read.
        const last = Math.max(this.lastSearchRefreshAt, this.lastSearchFailureAt);
        if (this.clock.now().getTime() - last < this.minSearchIntervalMs) return false;
        // replicate() is itself single-flight under the 'search' key.
        const cycle = this.searchCycle
          ? this.singleFlight('search', this.searchCycle).then(() => {
              this.lastSearchRefreshAt = this.clock.now().getTime();
              this.dataVersion.invalidate();
            })
          : this.replicate();
        cycle.catch((error: unknown) => {
          this.lastSearchFailureAt = this.clock.now().getTime();
          this.recordFailure(error);
          this.log.warn({ err: error }, 'background search refresh failed');
        });
        return true;
      }
      case 'listing':
        return this.background.add(`listing:${target.id}`, () =>
          this.refreshListing(target.id, {}, 'deferred'),
        );
      case 'building':
        return this.background.add(`building:${target.id}`, () =>
          this.refreshBuilding(target.id, 'deferred'),
        );
    }
  }

  /**
   * `timeoutMs` bounds the whole live read — fetch, missing building, write —
   * not only the upstream request: past it the caller gets `failed` (and serves
   * its stored copy) while the refresh may still finish and store its result.
   */
  async refreshListingNow(id: string, timeoutMs?: number): Promise<LiveOutcome> {
    const outcome = this.singleFlight(`live:${id}`, () =>
      this.refreshListing(id, { retries: 0, ...(timeoutMs === undefined ? {} : { timeoutMs }) }),
    ).then(
      (): LiveOutcome => 'refreshed',
      (error: unknown): LiveOutcome => {
        if (error instanceof UpstreamError && error.kind === 'not_found') return 'not_found';
        this.recordFailure(error);
        this.log.warn({ err: error, listingId: id }, 'live listing refresh failed');
        return 'failed';
      },
    );
    if (timeoutMs === undefined) return outcome;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<LiveOutcome>((resolve) => {
      timer = setTimeout(() => resolve('failed'), timeoutMs);
    });
    try {
      return await Promise.race([outcome, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Resolves when every background refresh requested so far has settled and
   * its version change is written (tests, shutdown).
   */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0 || this.background.size > 0) {
      await Promise.allSettled([...this.inFlight.values()]);
      await this.background.idle();
    }
    await this.flushVersionBump();
  }

  // ---- cycles ------------------------------------------------------------

  /**
   * The search cycle: applies every listing changed upstream since the
   * high-water mark. Paging is keyset on the modification time (each request
   * starts at the last applied instant), not offsets: a listing modified while
   * we page moves to the end of upstream's order, and an offset would then skip
   * an unchanged neighbour for good. Within one instant shared by a whole page,
   * the source's continuation token is followed instead.
   */
  replicate(): Promise<CycleResult> {
    return this.singleFlight('search', async () => {
      const started = performance.now();
      const result: CycleResult = { ...emptySummary(), pages: 0, fetched: 0, ms: 0 };
      let since = await this.highWaterMark(LISTINGS_HIGH_WATER_MARK);
      let cursor: string | null = null;
      await this.recordingPartial(
        () => this.listingsWritten(result),
        async () => {
          for (;;) {
            const page = await this.source.searchListings({
              ...(since === null ? {} : { modifiedSince: since }),
              expand: true,
              pageSize: this.pageSize,
              cursor,
            });
            this.calls.pages++;
            result.pages++;
            if (page.listings.length === 0) break;
            await this.ensureBuildings(page.listings);
            addSummary(result, await this.writer.apply(page.listings, this.clock.now()));
            const last = maxModifiedAt(page.listings);
            if (since === null || last > since) {
              since = last;
              await this.setHighWaterMark(LISTINGS_HIGH_WATER_MARK, last);
              if (page.next === null) break;
              cursor = null;
            } else {
              // The whole page shares the instant we started from: page within it.
              if (page.next === null) break;
              cursor = page.next;
            }
          }
        },
      );
      await this.finishSearchCycle(result);
      result.ms = Math.round(performance.now() - started);
      return result;
    });
  }

  /**
   * Pages through every on-market listing (ACTIVE and IN_CONTRACT) without
   * details, then fetches, one by one, stored on-market listings upstream no
   * longer lists, to learn how they left the market.
   */
  fullRefresh(listingType?: 'rental' | 'sale'): Promise<CycleResult> {
    return this.singleFlight('search', async () => {
      const started = performance.now();
      const result: CycleResult = { ...emptySummary(), pages: 0, fetched: 0, ms: 0 };
      const seen = new Set<string>();
      let cursor: string | null = null;
      await this.recordingPartial(
        () => this.listingsWritten(result),
        async () => {
          do {
            const page = await this.source.searchListings({
              ...(listingType ? { listingType } : {}),
              statuses: ['ACTIVE', 'IN_CONTRACT'],
              expand: false,
              pageSize: this.pageSize,
              cursor,
            });
            this.calls.pages++;
            result.pages++;
            for (const l of page.listings) seen.add(l.listing.id);
            if (page.listings.length > 0) {
              await this.ensureBuildings(page.listings);
              addSummary(result, await this.writer.apply(page.listings, this.clock.now()));
            }
            cursor = page.next;
          } while (cursor !== null);

          let query = this.store.db
            .selectFrom('listings')
            .select('id')
            .where('status', 'in', ['ACTIVE', 'IN_CONTRACT']);
          if (listingType) query = query.where('listing_type', '=', listingType);
          const missing = (await query.execute()).map((r) => r.id).filter((id) => !seen.has(id));
          for (const id of missing) {
            try {
              const listing = await this.source.fetchListing(id);
              this.calls.listings++;
              result.fetched++;
              addSummary(result, await this.writer.apply([listing], this.clock.now()));
            } catch (error) {
              if (!(error instanceof UpstreamError && error.kind === 'not_found')) throw error;
              this.log.warn(
                { listingId: id },
                'listing vanished upstream without a final state; left as stored',
              );
            }
          }
        },
      );
      await this.finishSearchCycle(result);
      result.ms = Math.round(performance.now() - started);
      return result;
    });
  }

  /** The buildings cycle: buildings changed upstream since the buildings high-water mark. */
  refreshBuildings(): Promise<BuildingCycleResult> {
    return this.singleFlight('buildings', async () => {
      const started = performance.now();
      const result: BuildingCycleResult = { received: 0, created: 0, updated: 0, ms: 0 };
      const since = await this.highWaterMark(BUILDINGS_HIGH_WATER_MARK);
      let cursor: string | null = null;
      let latest = since;
      await this.recordingPartial(
        () => buildingsWritten(result),
        async () => {
          do {
            const page = await this.source.listBuildings({
              ...(since === null ? {} : { modifiedSince: since }),
              pageSize: this.pageSize,
              cursor,
            });
            this.calls.pages++;
            for (const b of page.buildings) {
              const outcome = await this.writeBuilding(b);
              result.received++;
              if (outcome === 'created') result.created++;
              else if (outcome === 'updated') result.updated++;
              if (latest === null || b.modifiedAt > latest) latest = b.modifiedAt;
            }
            cursor = page.next;
          } while (cursor !== null);
        },
      );
      const now = this.clock.now();
      if (latest !== null && latest !== since) await this.setHighWaterMark(BUILDINGS_HIGH_WATER_MARK, latest);
      if (result.created + result.updated > 0) await this.markChanged(['buildings']);
      await markConfirmed(this.store.db, ['buildings'], now);
      this.dataVersion.invalidate();
      result.ms = Math.round(performance.now() - started);
      return result;
    });
  }

  /**
   * One listing from upstream, applied with change detection. A live read
   * (`immediate`) moves the data version at once, so the caller's next read of
   * the store serves the change; background refreshes coalesce theirs.
   */
  async refreshListing(
    id: string,
    options: { timeoutMs?: number; retries?: number } = {},
    versionChange: 'immediate' | 'deferred' = 'immediate',
  ): Promise<ApplySummary> {
    const listing = await this.source.fetchListing(id, options);
    this.calls.listings++;
    await this.ensureBuildings([listing]);
    const summary = await this.writer.apply([listing], this.clock.now());
    // Unchanged, the listing's refreshed_at still moved: recorded too (see markRecordsRefreshed).
    const scopes: HeaderChange[] =
      summary.created + summary.updated > 0 ? this.changedScopes(summary, ['detail']) : ['records'];
    if (versionChange === 'immediate') await this.markChanged(scopes);
    else this.deferVersionBump(scopes);
    return summary;
  }

  async refreshBuilding(id: string, versionChange: 'immediate' | 'deferred' = 'immediate'): Promise<void> {
    const building = await this.source.fetchBuilding(id);
    this.calls.buildings++;
    const scopes: HeaderChange[] =
      (await this.writeBuilding(building)) === 'unchanged' ? ['records'] : ['buildings'];
    if (versionChange === 'immediate') await this.markChanged(scopes);
    else this.deferVersionBump(scopes);
  }

  // ---- internals ---------------------------------------------------------

  private deferVersionBump(scopes: readonly HeaderChange[]): void {
    for (const scope of scopes) this.pendingScopes.add(scope);
    if (this.bumpTimer) return;
    this.bumpTimer = setTimeout(() => {
      this.bumpTimer = null;
      void this.flushVersionBump();
    }, this.versionBumpDelayMs);
    this.bumpTimer.unref();
  }

  private async flushVersionBump(): Promise<void> {
    if (this.bumpTimer) {
      clearTimeout(this.bumpTimer);
      this.bumpTimer = null;
    }
    await this.bumping;
    if (this.pendingScopes.size === 0) return;
    const scopes = [...this.pendingScopes];
    this.pendingScopes.clear();
    this.bumping = this.markChanged(scopes).catch((error: unknown) => {
      this.log.error({ err: error }, 'could not record a data change; caches may serve old data');
    });
    await this.bumping;
  }

  private singleFlight<T>(key: string, run: () => Promise<T>): Promise<T> {
    const running = this.inFlight.get(key);
    if (running) return running as Promise<T>;
    const promise = run().finally(() => {
      this.inFlight.delete(key);
    });
    this.inFlight.set(key, promise);
    return promise;
  }

  private async finishSearchCycle(result: CycleResult): Promise<void> {
    await this.markChanged(this.cycleChanges(result));
    const now = this.clock.now();
    await markConfirmed(this.store.db, ['search:rental', 'search:sale'], now);
    this.dataVersion.invalidate();
    this.lastSearchRefreshAt = now.getTime();
    this.log.info(
      {
        received: result.received,
        created: result.created,
        updated: result.updated,
        events: result.events,
        pages: result.pages,
      },
      'search refresh finished',
    );
  }

  /** The content scopes a change touched: the listing types it changed, plus `extra`. */
  private changedScopes(summary: ApplySummary, extra: readonly ContentScope[]): ContentScope[] {
    const all = new Set<ContentScope>(extra);
    for (const type of summary.changedTypes) all.add(type === 'rental' ? 'search:rental' : 'search:sale');
    return [...all];
  }

  /**
   * Moves the data version (caches and the search index rebuild) for the scopes
   * that changed, and records single records refreshed without a change.
   */
  private async markChanged(scopes: readonly HeaderChange[]): Promise<void> {
    if (scopes.length === 0) return;
    const now = this.clock.now();
    for (const scope of scopes) {
      if (scope === 'records') await markRecordsRefreshed(this.store.db, now);
      else await markChanged(this.store.db, scope, now);
    }
    this.dataVersion.invalidate();
  }

  /**
   * Runs a cycle's writing part; when it fails, what it wrote before failing
   * is recorded as a completed cycle records it (`written`: its changes move
   * the data version, its unchanged records' refreshed_at is signalled), so
   * caches never keep serving what the store no longer holds. The cycle's
   * error is rethrown.
   */
  private async recordingPartial(written: () => HeaderChange[], write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      await this.markChanged(written()).catch((markError: unknown) => {
        this.log.error(
          { err: markError },
          "could not record a failed cycle's writes; caches may serve old data",
        );
      });
      throw error;
    }
  }

  /** What a listings cycle wrote, had it ended here: the scopes it changed, and `records` for listings it refreshed unchanged. */
  private listingsWritten(result: ApplySummary): HeaderChange[] {
    const scopes: HeaderChange[] = this.cycleChanges(result);
    if (result.unchanged > 0) scopes.push('records');
    return scopes;
  }

  /** The content scopes a listings cycle changed (`detail` when it wrote details). */
  private cycleChanges(result: ApplySummary): ContentScope[] {
    return this.changedScopes(result, result.detailsWritten > 0 ? ['detail'] : []);
  }

  /** Fetches buildings that listings refer to but the store does not have yet. */
  private async ensureBuildings(listings: readonly UpstreamListing[]): Promise<void> {
    const ids = [...new Set(listings.map((l) => l.listing.building_id))];
    const known = await knownBuildingIds(this.store.db, ids);
    for (const id of ids) {
      if (known.has(id)) continue;
      const building = await this.source.fetchBuilding(id);
      this.calls.buildings++;
      await this.writeBuilding(building);
    }
  }

  /**
   * Inserts a new building whole. For a known building only the descriptive
   * columns upstream owns are updated: location, BBL, NYC data, broadband and
   * scores may come from imported open data (`stoop import`) and are not
   * overwritten by a feed that lacks them.
   */
  private async writeBuilding(b: UpstreamBuilding): Promise<'created' | 'updated' | 'unchanged'> {
    const now = this.clock.now().toISOString();
    return this.store.db.transaction().execute(async (trx) => {
      const stored = await trx
        .selectFrom('buildings')
        .selectAll()
        .where('id', '=', b.building.id)
        .executeTakeFirst();
      if (!stored) {
        const row: NewBuilding = {
          ...b.building,
          refreshed_at: now,
          created_at: now,
          updated_at: b.modifiedAt,
        };
        await trx.insertInto('buildings').values(row).execute();
        if (b.scores)
          await trx
            .insertInto('building_scores')
            .values({ ...b.scores, building_id: b.building.id })
            .execute();
        const photos: NewPhoto[] = b.photos.map((p) => ({
          ...p,
          listing_id: null,
          building_id: b.building.id,
        }));
        if (photos.length > 0) await trx.insertInto('photos').values(photos).execute();
        return 'created';
      }
      const update = {
        slug: b.building.slug,
        name: b.building.name,
        address_street: b.building.address_street,
        building_type: b.building.building_type,
        year_renovated: b.building.year_renovated ?? null,
        management_company: b.building.management_company ?? null,
        developer: b.building.developer ?? null,
        architect: b.building.architect ?? null,
        tax_abatement_status: b.building.tax_abatement_status ?? null,
        tax_abatement_years_remaining: b.building.tax_abatement_years_remaining ?? null,
        amenities_json: b.building.amenities_json,
        policies_json: b.building.policies_json,
        additional_details_json: b.building.additional_details_json,
        pets_allowed: b.building.pets_allowed,
      };
      const changed = (Object.keys(update) as (keyof typeof update)[]).some((k) => stored[k] !== update[k]);
      await trx
        .updateTable('buildings')
        .set(changed ? { ...update, refreshed_at: now, updated_at: b.modifiedAt } : { refreshed_at: now })
        .where('id', '=', b.building.id)
        .execute();
      return changed ? 'updated' : 'unchanged';
    });
  }

  /**
   * Where replication of the dataset resumes; null replicates from the start.
   * A store loaded as of an instant (the demo market) has its marks set to it by the load.
   */
  private highWaterMark(name: HighWaterMark): Promise<string | null> {
    return readHighWaterMark(this.store.db, name);
  }

  private setHighWaterMark(name: HighWaterMark, value: string): Promise<void> {
    return writeHighWaterMark(this.store.db, name, value, this.clock.now());
  }
}

function maxModifiedAt(listings: readonly UpstreamListing[]): string {
  let max = listings[0]!.modifiedAt;
  for (const l of listings) if (l.modifiedAt > max) max = l.modifiedAt;
  return max;
}
