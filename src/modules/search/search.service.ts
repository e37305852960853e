import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { type Amenity, amenityMask } from '../../domain/amenities.ts';
import type { Freshness } from '../../domain/freshness.ts';
import {
  daysOnMarketValidUntil,
  type ListingStatus,
  type ListingType,
  nyMidnight,
} from '../../domain/listing.ts';
import type { Tier } from '../../domain/tiers.ts';
import { DAY_MS } from '../../domain/time.ts';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Dialect } from '../../platform/db/database.ts';
import type { Database } from '../../platform/db/tables.ts';
import { memberBytes, memberPrefix, writeWithMember } from '../../platform/json-bytes.ts';
import { RebuildPacer } from '../../platform/rebuild-pacer.ts';
import { type CachedJson, VersionedJsonCache } from '../../platform/versioned-json-cache.ts';
import type { AreaTree } from '../../reference/areas.ts';
import { AreaInputMemo, type ResolvedAreaInput, resolveAreaList } from '../areas/area-input.ts';
import type { DataVersion } from '../freshness/data-version.ts';
import type { FreshnessPolicy } from '../freshness/freshness-policy.ts';
import { toListingSummary } from '../listings/listing.mapper.ts';
import { ListingIndex } from './active-index.ts';
import { buildingsPartOf } from './index-columns.ts';
import { geoCriteria } from './search.geo.ts';
import {
  findBuildingScores,
  findSummaryRows,
  type SearchCriteria,
  searchListingIds,
} from './search.repository.ts';
import { DEFAULT_SORT_DIR, type RentalSearchQuery, type SaleSearchQuery } from './search.schema.ts';

export type SearchQuery = RentalSearchQuery & SaleSearchQuery;

/** A search's freshness, with the areas its `areas` parameter resolved to (echoed in `meta.areas`). */
export type SearchFreshness = Freshness & { areas?: ResolvedAreaInput[] };

/**
 * Results a search serves at most (`page × perPage`), as search engines bound
 * their result windows: a deep page of a wide search over closed listings
 * costs the request thread in proportion to its depth, and nobody reads
 * 10,000 results page by page — they narrow the search.
 */
export const MAX_RESULT_WINDOW = 10_000;

/** The content scopes the search index reads (see SearchService.indexVersion). */
const INDEX_SCOPES = ['search:rental', 'search:sale', 'buildings'] as const;

/**
 * Builds the index on another thread (IndexWorkerClient). build() rejects when
 * it could not (logged there); the service then builds in-process.
 */
export interface OffThreadIndexBuilder {
  build(version: string): Promise<ListingIndex>;
  close(): Promise<void>;
}

/** An `areas` parameter resolved: the ids to filter on (with descendants) and what each input named. */
export interface ResolvedAreas {
  ids: number[];
  inputs: ResolvedAreaInput[];
}

export interface SearchPage {
  /**
   * Serialized ListingSummary objects (UTF-8 JSON), in result order; with
   * `near`, each has its `distance`, unless the caller asked for them apart
   * (`distances`).
   */
  items: Buffer[];
  /** With `near`, when the caller passed no memory to splice them in: each item's distance, for it to splice as it writes the body. */
  distances?: number[];
  total: number;
  /** True when every listing on the page has its detail record. */
  allDetailScraped: boolean;
}

function splitList(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : [...new Set(value.split(','))];
}

function assertRange(
  minName: string,
  min: number | undefined,
  maxName: string,
  max: number | undefined,
): void {
  if (min !== undefined && max !== undefined && min > max) {
    throw ApiError.invalidParam({
      parameter: minName,
      rule: 'range',
      message: `must not be greater than ${maxName} (${min} > ${max})`,
    });
  }
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** Inclusive instant bounds from a date (New York's calendar day) or date-time parameter. */
function instantBound(name: string, value: string | undefined, edge: 'start' | 'end'): string | undefined {
  if (value === undefined) return undefined;
  let instant: number;
  if (DATE_ONLY.test(value)) {
    const utcStart = Date.parse(`${value}T00:00:00.000Z`);
    // A date must exist in the calendar: 2026-02-30 is rejected, not rolled over.
    if (Number.isNaN(utcStart) || new Date(utcStart).toISOString().slice(0, 10) !== value) {
      instant = Number.NaN;
    } else {
      // A date is New York's calendar day, the calendar `listedAt` and days on market use.
      const day = utcStart / DAY_MS;
      instant = edge === 'start' ? nyMidnight(day) : nyMidnight(day + 1) - 1;
    }
  } else {
    instant = Date.parse(value);
  }
  if (Number.isNaN(instant)) {
    throw ApiError.invalidParam({
      parameter: name,
      rule: 'format',
      message: `"${value}" is not a valid date`,
    });
  }
  return new Date(instant).toISOString();
}

/** Lists this long or shorter are merged by insertion; longer ones through a Set and a sort. */
const SHORT_UNION = 32;

/**
 * The ids of ascending lists (each area's descendants and itself), ascending,
 * each once: an area named beside one of its ancestors comes twice. Searches
 * name a few neighborhoods, so the common case is a handful of one-id lists,
 * merged in place without a Set, a spread and a sort with a comparator
 * (micro-bench: a new list of five neighborhoods resolved in ~1.05 µs instead of ~1.4).
 */
export function unionAscending(lists: readonly (readonly number[])[]): number[] {
  let length = 0;
  for (const list of lists) length += list.length;
  if (length > SHORT_UNION) {
    const ids = new Set<number>();
    for (const list of lists) for (const id of list) ids.add(id);
    return [...ids].sort((a, b) => a - b);
  }
  const out: number[] = [];
  for (const list of lists) {
    for (const id of list) {
      let at = out.length;
      while (at > 0 && out[at - 1]! > id) at--;
      if (at > 0 && out[at - 1] === id) continue;
      out.splice(at, 0, id);
    }
  }
  return out;
}

/**
 * Where a search writes the page's summaries when it has to copy them (a geo
 * search adds each result's `distance`): `size` uninitialized bytes that
 * stay untouched for as long as the page is used. An export passes memory
 * that lives as long as its response (src/http/response-slabs.ts); a caller
 * that splices the distances itself as it writes the body passes null instead
 * (`SearchPage.distances`).
 */
export type PageMemory = (size: number) => Buffer;

/** `,"distance":` — what comes before each result's distance. */
export const DISTANCE_MEMBER = memberPrefix('distance');

/**
 * Cached summaries with the search's `distance` added as their last member:
 * a summary is cached without it (it depends on the query), so it is spliced
 * in rather than re-serializing the object. All of a page's summaries go into
 * one buffer (each result a slice of it): a buffer and a string per result
 * cost a sixth of a geo search's time. The JSON route does not call this: it
 * splices the distances while writing the body (`listBodyFromFragments`).
 */
function withDistances(
  summaries: readonly Buffer[],
  distances: readonly number[],
  memory: PageMemory,
): Buffer[] {
  let size = 0;
  for (let i = 0; i < summaries.length; i++)
    size += summaries[i]!.length + memberBytes(DISTANCE_MEMBER, distances[i]!);
  const page = memory(size);
  const out: Buffer[] = [];
  let at = 0;
  for (let i = 0; i < summaries.length; i++) {
    const start = at;
    at = writeWithMember(page, at, summaries[i]!, DISTANCE_MEMBER, distances[i]!);
    out.push(page.subarray(start, at));
  }
  return out;
}

/**
 * Listing search. Translates API parameters into storage criteria, rejecting
 * contradictory or unknown values with a 400 that names the parameter.
 */
export class SearchService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly areaTree: AreaTree,
    private readonly clock: Clock,
    private readonly dataVersion: DataVersion,
    private readonly freshness: FreshnessPolicy,
    /** Answer searches from the in-memory read model (SQL only when false, or before the first build). */
    private readonly useIndex = true,
    /** Where index builds run when the store can be opened by another thread; null: in-process. */
    private readonly offThread: OffThreadIndexBuilder | null = null,
    private readonly cache = new VersionedJsonCache(),
  ) {}

  private closed = false;

  /** The read model answering searches; possibly one data version old while its successor builds. */
  private index: ListingIndex | null = null;
  /** Serialized summaries by row, kept with the index that listed them (see `search`). */
  private readonly summaryMemos = new WeakMap<ListingIndex, SummaryMemo>();
  /** The same summaries by listing id and revision, for the next index to take over (see `search`). */
  private carried: CarriedSummaries = { buildings: null, byId: new Map() };
  /** The index `carried` was last checked against (the check runs once per index). */
  private carriedIndex: ListingIndex | null = null;
  /**
   * Spaces index rebuilds (see RebuildPacer): while refresh cycles change the
   * data every second, searches see an index at most one build plus one gap
   * old (seconds at the demo's full scale) instead of the index worker
   * rebuilding without pause on a core that requests need.
   */
  private readonly pacer = new RebuildPacer();
  /** The index version text of the last data-version epoch it was read at (see indexVersion). */
  private indexVersionOf: { epoch: object; version: string } | null = null;
  /** The running build loop (single-flight), until the index matches `latestVersion`. */
  private building: Promise<void> | null = null;
  /** The data version most recently asked for. */
  private latestVersion: string | null = null;

  /** The summary warm-up in progress (see `warmSummaries`), the index it last completed, and how far it got. */
  private warming: Promise<void> | null = null;
  private warmedIndex: ListingIndex | null = null;
  private warmProgress: Omit<SummaryWarmStatus, 'running'> = { warmed: 0, of: 0, lastWarmedAt: null };

  /** Area inputs resolved before (the area tree is fixed for the process). */
  private readonly areaInputs = new AreaInputMemo();
  /**
   * Resolved `areas` parameters, bounded. Besides sparing the work, the same
   * value gets the same `ids` array, which the index keys what it derives
   * from an area list by (see ListingIndex.areaList).
   */
  private readonly resolvedAreas = new Map<string, ResolvedAreas>();

  /**
   * Area ids to filter on (each requested area, by id, slug, name or alias,
   * and all its descendants, ascending) and what each input resolved to.
   */
  resolveAreas(areas: string | undefined): ResolvedAreas | null {
    if (areas === undefined) return null;
    const cached = this.resolvedAreas.get(areas);
    if (cached) return cached;
    const inputs = resolveAreaList(this.areaTree, 'areas', areas, Number.POSITIVE_INFINITY, this.areaInputs);
    const resolved = {
      ids: unionAscending(inputs.map((area) => this.areaTree.descendantsAndSelf(area.id))),
      inputs,
    };
    if (this.resolvedAreas.size >= 10_000) this.resolvedAreas.clear();
    this.resolvedAreas.set(areas, resolved);
    return resolved;
  }

  /** `resolved`: the query's `areas` already resolved (`resolveAreas`), so a search resolves them once. */
  toCriteria(
    listingType: ListingType,
    q: SearchQuery,
    resolved: ResolvedAreas | null = this.resolveAreas(q.areas),
  ): SearchCriteria {
    assertRange('minPrice', q.minPrice, 'maxPrice', q.maxPrice);
    assertRange('minBeds', q.minBeds, 'maxBeds', q.maxBeds);
    assertRange('minBaths', q.minBaths, 'maxBaths', q.maxBaths);
    assertRange('minSqft', q.minSqft, 'maxSqft', q.maxSqft);
    assertRange('minDaysOnMarket', q.minDaysOnMarket, 'maxDaysOnMarket', q.maxDaysOnMarket);
    const listedFrom = instantBound('listedAfter', q.listedAfter, 'start');
    const listedTo = instantBound('listedBefore', q.listedBefore, 'end');
    if (listedFrom !== undefined && listedTo !== undefined && listedFrom > listedTo) {
      throw ApiError.invalidParam({
        parameter: 'listedAfter',
        rule: 'range',
        message: `must not be later than listedBefore (${q.listedAfter} > ${q.listedBefore})`,
      });
    }
    const geo = geoCriteria(q);
    const sort = q.sort ?? 'RECOMMENDED';
    const amenities = splitList(q.amenities) as Amenity[] | undefined;
    return {
      listingType,
      statuses: (splitList(q.status) as ListingStatus[] | undefined) ?? ['ACTIVE'],
      areaIds: resolved?.ids ?? null,
      minPrice: q.minPrice,
      maxPrice: q.maxPrice,
      minBeds: q.minBeds,
      maxBeds: q.maxBeds,
      minBaths: q.minBaths,
      maxBaths: q.maxBaths,
      buildingTypes: splitList(q.buildingType),
      saleTypes: listingType === 'sale' ? splitList(q.saleType) : undefined,
      noFee: listingType === 'rental' ? q.noFee : undefined,
      minDaysOnMarket: q.minDaysOnMarket,
      maxDaysOnMarket: q.maxDaysOnMarket,
      listedFrom,
      listedTo,
      hasOpenHouse: q.hasOpenHouse,
      has3dTour: q.has3dTour,
      minSqft: q.minSqft,
      maxSqft: q.maxSqft,
      petsAllowed: q.petsAllowed,
      amenityMask: amenities ? amenityMask(amenities) : undefined,
      maxMonthlyCost: q.maxMonthlyCost,
      minTransitScore: q.minTransitScore,
      fiberOnly: q.fiberOnly,
      minDownloadMbps: q.minDownloadMbps,
      geo,
      sort,
      sortDir: q.sortDir ?? DEFAULT_SORT_DIR[sort],
      now: this.clock.now(),
    };
  }

  /**
   * One search as the API answers it: criteria from the query (a 400 naming
   * the parameter when they are invalid), the page, and the freshness of the
   * listing type's data for the caller's tier.
   */
  async find(
    listingType: ListingType,
    query: SearchQuery,
    page: { page: number; perPage: number },
    tier: Tier,
    memory: PageMemory | null = Buffer.allocUnsafe,
  ): Promise<SearchPage & { meta: SearchFreshness }> {
    if (page.page * page.perPage > MAX_RESULT_WINDOW) {
      throw ApiError.invalidParam({
        parameter: 'page',
        rule: 'result_window',
        message: `only the first ${MAX_RESULT_WINDOW} results of a search are served (page ${page.page} × perPage ${page.perPage} = ${page.page * page.perPage}): narrow the search (areas, price, listedAfter/listedBefore) to reach later listings`,
      });
    }
    const areas = this.resolveAreas(query.areas);
    const criteria = this.toCriteria(listingType, query, areas);
    const result = await this.search(criteria, page.page, page.perPage, undefined, memory);
    const known = this.freshness.ofSearch(tier, listingType, result.allDetailScraped);
    const freshness = known instanceof Promise ? await known : known;
    // `meta.areas` echoes the resolved areas (listMetaFrom copies them into the list's meta).
    return { ...result, meta: areas ? { ...freshness, areas: areas.inputs } : freshness };
  }

  /** Builds the index for the current data version (boot). */
  async warm(): Promise<void> {
    await this.prepareIndex(await this.indexVersion());
  }

  /**
   * For readiness: `ready` once any index is built — while the data version
   * moves, the previous index keeps answering (a version old) until its
   * successor is swapped in, so readiness does not flap on every refresh.
   * `version` is the index version (its scopes' change times, see
   * `indexVersion`) the serving index was read at; `building`
   * is true while a newer one is being built.
   */
  indexStatus(): { ready: boolean; version: string | null; building: boolean } {
    return {
      // With the index turned off (SEARCH_INDEX=false) every search is SQL: nothing to wait for.
      ready: !this.useIndex || this.index !== null,
      version: this.index?.version ?? null,
      building: this.building !== null,
    };
  }

  /** The id of the thread that built the serving index (this one's, or the index worker's); null before the first. */
  indexBuiltOnThread(): number | null {
    return this.index?.builtOnThread ?? null;
  }

  /**
   * Builds the in-memory index for a data version (at boot, and again in the
   * background whenever the version moves). The build runs on the index
   * worker when the store can be opened by another thread (file SQLite,
   * PostgreSQL: see IndexWorkerClient), else in slices that yield to the
   * event loop (ListingIndex.build); either way beside the index in use:
   * searches keep reading the old index meanwhile, so for the build's
   * duration (several seconds at the demo's full scale) answers are one data
   * version old — the same staleness a search already has when data changes
   * right after it was answered, and far better than stalling every request
   * or sending them to SQL. Single-flight: one build at a time; when the
   * version moved during a build, the (already newer) result is installed and
   * another build follows for the latest version.
   */
  prepareIndex(version: string): Promise<void> {
    if (!this.useIndex || this.closed || this.index?.version === version) return Promise.resolve();
    this.latestVersion = version;
    this.building ??= this.buildUntilCurrent().finally(() => {
      this.building = null;
    });
    return this.building;
  }

  private async buildUntilCurrent(): Promise<void> {
    while (this.latestVersion !== null && this.index?.version !== this.latestVersion) {
      // Only rebuilds are paced: the first index is wanted as soon as possible.
      if (this.index !== null) await this.pacer.wait();
      const version = this.latestVersion;
      if (version === null || this.closed) return;
      const started = performance.now();
      try {
        const previous = this.index;
        this.index = await this.buildIndex(version);
        this.takeOverSummaries(previous, this.index);
        this.warmSummaries();
      } catch {
        // Searches keep the index they have (or SQL before the first); the next version change tries again.
        return;
      } finally {
        this.pacer.finished(started);
      }
    }
  }

  /**
   * On the worker when there is one; in slices on this thread otherwise, and
   * for this version when the worker failed (the next version tries the
   * worker again: a dead one is replaced).
   */
  private async buildIndex(version: string): Promise<ListingIndex> {
    if (this.offThread) {
      try {
        return await this.offThread.build(version);
      } catch (error) {
        if (this.closed) throw error;
      }
    }
    return ListingIndex.build(this.db, version);
  }

  /** Ends the index worker; builds stop (searches keep the index they have). */
  async close(): Promise<void> {
    this.closed = true;
    this.latestVersion = null;
    await this.offThread?.close();
    // At most the batch in hand: the warm-up stops between batches once closed.
    await this.warming;
  }

  /** The summary warm-up, for health's background work (`search-summaries`). */
  summaryWarmStatus(): SummaryWarmStatus {
    return { running: this.warming !== null, ...this.warmProgress };
  }

  /**
   * Renders the summaries of every ACTIVE listing of the serving index ahead
   * of the searches that would read them (`summariesAt`): after a start, and
   * after a move of the buildings data dropped every summary the next index
   * could take over. Without it a search reads and renders up to a page of
   * them on the request thread (~45 µs a search on average in the first
   * seconds after a start, against ~8 once warm). A small batch at a time,
   * paced, with the event loop free between batches (WARM_BATCH_ROWS);
   * summaries already held or taken over cost a lookup. Single-flight: an
   * index swapped in meanwhile is warmed next. A failed read ends it
   * (searches render what they lack, as without it); the next index tries again.
   * At most half the memo's capacity is warmed (all of the demo's ~43k active
   * listings; a larger feed warms its cheapest rentals, then sales, up to that).
   */
  private warmSummaries(): void {
    if (this.warming !== null || this.closed) return;
    this.warming = this.warmUntilCurrent().finally(() => {
      this.warming = null;
    });
  }

  private async warmUntilCurrent(): Promise<void> {
    for (let index = this.index; index !== null && index !== this.warmedIndex; index = this.index) {
      if (this.closed) return;
      try {
        await this.warmIndex(index);
      } catch {
        return;
      }
    }
  }

  private async warmIndex(index: ListingIndex): Promise<void> {
    const types: ListingType[] = ['rental', 'sale'];
    // Within half the summaries a memo may hold: searches keep what they add, and a full memo starts over.
    let budget = Math.floor(this.cache.capacity / 2);
    const spans = types.map((listingType) => {
      const { from, to } = index.activeRows(listingType);
      const end = Math.min(to, from + budget);
      budget -= end - from;
      return { listingType, from, end };
    });
    const of = spans.reduce((sum, span) => sum + span.end - span.from, 0);
    this.warmProgress = { ...this.warmProgress, warmed: 0, of };
    for (const { listingType, from, end } of spans) {
      for (let at = from; at < end; at += WARM_BATCH_ROWS) {
        if (this.index !== index || this.closed) return;
        const rows = Array.from({ length: Math.min(WARM_BATCH_ROWS, end - at) }, (_, i) => at + i);
        const started = performance.now();
        await this.summariesAt(index, listingType, rows, this.clock.now());
        this.warmProgress.warmed += rows.length;
        // Paced to about a quarter of the thread: the summaries it keeps survive every young-generation
        // collection, so at full speed it also made those collections long (see WARM_BATCH_ROWS).
        await sleep(Math.max(1, WARM_PACE * (performance.now() - started)));
      }
    }
    this.warmedIndex = index;
    this.warmProgress.lastWarmedAt = this.clock.now().toISOString();
  }

  /**
   * The part of the data version the index is read from: listings of both
   * types and buildings (with their scores). Other scopes (detail, areas) do
   * not touch its columns, so they do not cost a rebuild (a detail write also
   * rewrites the listing row, moving its search scope).
   */
  private async indexVersion(): Promise<string> {
    // Every search asks: the text is built once per data-version epoch (a re-read of the scopes, at most
    // one a second, or an invalidation), not per request.
    const epoch = this.dataVersion.epochIfFresh() ?? (await this.dataVersion.epoch());
    if (this.indexVersionOf?.epoch === epoch) return this.indexVersionOf.version;
    const times = await Promise.all(INDEX_SCOPES.map((scope) => this.dataVersion.changedAt(scope)));
    const version = INDEX_SCOPES.map((scope, i) => `${scope}=${times[i]}`).join(';');
    // Read after `epoch`, so at least as new as it: a later epoch reads the version again.
    this.indexVersionOf = { epoch, version };
    return version;
  }

  /**
   * The serving index without waiting, while the data version's snapshot is
   * fresh and the index was read at the version it names (every search asks);
   * undefined: ask `servingIndex`.
   */
  private currentIndex(): ListingIndex | undefined {
    const index = this.index;
    const known = this.indexVersionOf;
    if (index === null || known === null || index.version !== known.version) return undefined;
    return this.dataVersion.epochIfFresh() === known.epoch ? index : undefined;
  }

  /** The index to answer from (starting a build when the version moved), or null: SQL answers. */
  private async servingIndex(): Promise<ListingIndex | null> {
    if (!this.useIndex) return null;
    const version = await this.indexVersion();
    if (this.index?.version !== version) void this.prepareIndex(version);
    return this.index;
  }

  /**
   * Serialized summaries are cached for the snapshot the ids came from: an
   * index answers with the listings as they were when it was read, so their
   * summaries are kept with that index — by row, for as long as it serves —
   * until the next index is swapped in (paced, see RebuildPacer) rather than
   * dropped at every data-version move: a refresh cycle a second would
   * otherwise empty the cache as fast as searches fill it. A summary is at
   * least as new as the index that listed it (it is read after), and a change
   * to any column it shows moves a search scope (detail writes rewrite the
   * listing row), hence the index version. A new index takes over the
   * summaries of listings whose revision it reads unchanged (`carriedFor`),
   * so a swap costs reads only for what changed. Without an index (none built yet,
   * or SEARCH_INDEX=false) SQL answers and summaries are cached by id for the
   * data version.
   */
  async search(
    criteria: SearchCriteria,
    page: number,
    perPage: number,
    /** The data version the SQL path caches summaries for; read when needed if not given. */
    dataVersion: string | undefined,
    memory: PageMemory | null = Buffer.allocUnsafe,
  ): Promise<SearchPage> {
    const offset = (page - 1) * perPage;
    const nowMs = criteria.now.getTime();
    const index = (this.useIndex && this.currentIndex()) || (await this.servingIndex());
    if (index) {
      const { rows, total, distances } = index.searchRows(criteria, perPage, offset);
      const kept = this.summariesAt(index, criteria.listingType, rows, criteria.now);
      const found = kept instanceof Promise ? await kept : kept;
      return pageOf(found, total, distances, memory);
    }
    const { ids, total, distances } = await searchListingIds(
      this.db,
      this.dialect,
      criteria,
      perPage,
      offset,
    );
    const snapshot = `data:${dataVersion ?? (await this.dataVersion.version())}`;
    this.cache.useVersion(snapshot);
    const found = ids.map((id) => this.cache.get(id, nowMs));
    const missing = ids.filter((_, i) => found[i] === undefined);
    if (missing.length > 0) {
      const fresh = await this.renderSummaries(missing, criteria.now);
      for (const [id, entry] of fresh) this.cache.set(id, entry, snapshot);
      ids.forEach((id, i) => {
        found[i] ??= fresh.get(id);
      });
    }
    return pageOf(found, total, distances, memory);
  }

  /**
   * The serialized summaries of these rows of the index, in order: kept with
   * the index, else taken over from the index before it (same revision), else
   * read and rendered now (and kept); a listing gone since the index read it
   * is `undefined`.
   */
  private summariesAt(
    index: ListingIndex,
    listingType: ListingType,
    rows: readonly number[],
    now: Date,
  ): Summaries | Promise<Summaries> {
    const nowMs = now.getTime();
    const memo = this.summariesOf(index);
    const found: Summaries = new Array(rows.length);
    let complete = true;
    for (let i = 0; i < rows.length; i++) {
      const entry = keptAt(memo, listingType, rows[i]!);
      if (entry !== undefined && entry.validUntil > nowMs) found[i] = entry;
      else complete = false;
    }
    // The commonest case once warm: every summary kept, answered without a promise.
    if (complete) return found;
    return this.completeSummaries(index, listingType, rows, now, found);
  }

  /** `summariesAt` for the rows it lacks: taken over from the previous index, else read and rendered. */
  private async completeSummaries(
    index: ListingIndex,
    listingType: ListingType,
    rows: readonly number[],
    now: Date,
    found: Summaries,
  ): Promise<Summaries> {
    const nowMs = now.getTime();
    const memo = this.summariesOf(index);
    const kept = memo[listingType];
    const carried = this.carriedFor(index);
    const missing: string[] = [];
    const missingRows: number[] = [];
    for (let i = 0; i < rows.length; i++) {
      if (found[i]) continue;
      const row = rows[i]!;
      const id = index.idAt(listingType, row);
      const previous = carried.byId.get(id);
      if (
        previous !== undefined &&
        previous.revision === index.revisionAt(listingType, row) &&
        previous.entry.validUntil > nowMs
      ) {
        found[i] = previous.entry;
        if (kept[row] === undefined) memo.size++;
        kept[row] = previous.entry;
        continue;
      }
      missing.push(id);
      missingRows.push(i);
    }
    if (missing.length === 0) return found;
    const fresh = await this.renderSummaries(missing, now);
    missing.forEach((id, m) => {
      const i = missingRows[m]!;
      const row = rows[i]!;
      // A render that finished first (a search or the warm-up, reading the same index) is kept: every reader of
      // a row then shares one summary, and the ones kept for the next index are the ones already served.
      const first = kept[row];
      if (first !== undefined && first.validUntil > nowMs) {
        found[i] = first;
        return;
      }
      const entry = fresh.get(id);
      if (!entry) return;
      found[i] = entry;
      if (kept[row] === undefined) memo.size++;
      kept[row] = entry;
      // Rendered after the index was read, so at least as new as the revision recorded with it.
      carried.byId.set(id, { entry, revision: index.revisionAt(listingType, row) });
    });
    // The same bound as the cache by id: when full, start over (a working set refills in a few requests).
    if (memo.size > this.cache.capacity) this.summaryMemos.delete(index);
    if (carried.byId.size > this.cache.capacity) carried.byId.clear();
    return found;
  }

  /**
   * The summaries a new index may take over from the ones before it, by
   * listing id: one is reused while the listing's revision is the one it was
   * rendered at (every write of a listing row or its detail moves it), and
   * all are dropped when the buildings part of the index version moves (a
   * summary shows its building's scores; a demo load moves it too). A
   * refresh cycle that changed a few listings then costs the next searches
   * those few reads, not a page of reads per search until the memo refills.
   */
  private carriedFor(index: ListingIndex): CarriedSummaries {
    if (this.carriedIndex === index) return this.carried;
    this.carriedIndex = index;
    const buildings = buildingsPartOf(index.version);
    if (this.carried.buildings !== buildings) this.carried = { buildings, byId: new Map() };
    return this.carried;
  }

  /**
   * Lets the successor of the index being replaced read the summaries kept
   * with it, row for row, when the index worker mapped the successor's rows to
   * that index's (same listing, same revision: see CarriedFrom) and the
   * buildings part of the version stands (a summary shows its building's
   * scores). Nothing is copied at the swap — copying ~43k entries out of a
   * memo filled in search order took 12 ms on the request thread — a row is
   * taken over when a search or the warm-up first reads it (`keptAt`). One
   * level only: the replaced memo stops reading from its own predecessor, so
   * memos never chain. Without it, after every swap a search over random
   * neighborhoods looked each of its rows up by id until the warm-up had
   * walked the market again. The lookup by id remains for whatever this
   * leaves out (an in-process build, a restarted worker, changed listings).
   */
  private takeOverSummaries(previous: ListingIndex | null, next: ListingIndex): void {
    const carried = next.carriedFrom;
    if (previous === null || carried === null || carried.build !== previous.build) return;
    if (buildingsPartOf(previous.version) !== buildingsPartOf(next.version)) return;
    const before = this.summaryMemos.get(previous);
    if (before === undefined) return;
    before.inherited = null;
    this.summariesOf(next).inherited = { rows: carried.rows, from: before };
  }

  /** The summaries kept with an index, by row of each listing type's partition (see `search`). */
  private summariesOf(index: ListingIndex): SummaryMemo {
    let memo = this.summaryMemos.get(index);
    if (!memo) {
      memo = { rental: [], sale: [], size: 0, inherited: null };
      this.summaryMemos.set(index, memo);
    }
    return memo;
  }

  /** Reads and serializes the summaries of these listings (those that still exist), by id. */
  private async renderSummaries(ids: string[], now: Date): Promise<Map<string, CachedJson>> {
    const rows = await findSummaryRows(this.db, ids);
    const scores = await findBuildingScores(
      this.db,
      rows.map((r) => r.building_id),
    );
    const rendered = new Map<string, CachedJson>();
    for (const row of rows) {
      const summary = toListingSummary(
        row,
        this.areaTree.get(row.area_id)?.name ?? 'Unassigned',
        scores.get(row.building_id),
        now,
      );
      rendered.set(row.id, {
        json: Buffer.from(JSON.stringify(summary)),
        detailScraped: summary.detailScraped,
        validUntil: daysOnMarketValidUntil(row, now),
      });
    }
    return rendered;
  }
}

/**
 * Rows a step of the summary warm-up renders, and the pause after a step (as a
 * multiple of its time). Measured at the demo's full scale on a slow VM while
 * requests ran: 50 rows took 2.2 ms on average and 223 of 867 steps took over
 * 2 ms; 16 rows take ~0.9 ms, and with the pause ~20 of 2,709 steps take over
 * 2 ms (the first step, which prepares its statement, and steps a
 * young-generation collection lands in: up to ~20 ms, as it would under the
 * searches that rendered the same summaries lazily). The warm-up then takes ~10 s.
 */
const WARM_BATCH_ROWS = 16;
const WARM_PACE = 3;

/** How the summary warm-up stands (`SearchService.summaryWarmStatus`). */
export interface SummaryWarmStatus {
  running: boolean;
  /** Active listings of the index being warmed (or last warmed) looked at so far, of `of`. */
  warmed: number;
  of: number;
  /** When a warm-up last completed (market clock), null before the first. */
  lastWarmedAt: string | null;
}

/** Summaries by listing id with the revision each was rendered at, valid while `buildings` stands. */
interface CarriedSummaries {
  buildings: string | null;
  byId: Map<string, { entry: CachedJson; revision: number }>;
}

/** A page's serialized summaries in row order; `undefined` for a listing gone since the index read it. */
type Summaries = (CachedJson | undefined)[];

/** Serialized summaries by partition row, and how many are held. */
interface SummaryMemo {
  rental: (CachedJson | undefined)[];
  sale: (CachedJson | undefined)[];
  size: number;
  /** The replaced index's memo, and which of its rows each row of this index may take (see takeOverSummaries). */
  inherited: { rows: Record<ListingType, Int32Array>; from: SummaryMemo } | null;
}

/**
 * The summary kept for `row`, taking it over from the inherited memo (and
 * keeping it) when this memo has none yet; undefined when neither has one.
 */
function keptAt(memo: SummaryMemo, listingType: ListingType, row: number): CachedJson | undefined {
  const kept = memo[listingType];
  const entry = kept[row];
  if (entry !== undefined || memo.inherited === null) return entry;
  const previousRow = memo.inherited.rows[listingType][row]!;
  if (previousRow < 0) return undefined;
  const inherited = memo.inherited.from[listingType][previousRow];
  if (inherited !== undefined) {
    kept[row] = inherited;
    memo.size++;
  }
  return inherited;
}

/** The page's serialized summaries in result order; a listing gone between the two reads is left out. */
function pageOf(
  found: (CachedJson | undefined)[],
  total: number,
  distances: number[] | undefined,
  /** Where distances are spliced into the items; null leaves them apart (`SearchPage.distances`). */
  memory: PageMemory | null,
): SearchPage {
  const items: Buffer[] = [];
  const kept: number[] = [];
  let allDetailScraped = found.length > 0;
  for (let i = 0; i < found.length; i++) {
    const entry = found[i];
    if (!entry) continue;
    items.push(entry.json);
    if (distances) kept.push(distances[i]!);
    allDetailScraped &&= entry.detailScraped;
  }
  if (!distances) return { items, total, allDetailScraped };
  if (memory === null) return { items, distances: kept, total, allDetailScraped };
  return { items: withDistances(items, kept, memory), total, allDetailScraped };
}
