import type { Kysely } from 'kysely';
import { type Amenity, amenityMask } from '../../domain/amenities.ts';
import type { Freshness } from '../../domain/freshness.ts';
import { daysOnMarketValidUntil, type ListingStatus, type ListingType } from '../../domain/listing.ts';
import type { Tier } from '../../domain/tiers.ts';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Dialect } from '../../platform/db/database.ts';
import type { Database } from '../../platform/db/tables.ts';
import { type CachedJson, VersionedJsonCache } from '../../platform/versioned-json-cache.ts';
import type { AreaTree } from '../../reference/areas.ts';
import type { DataVersion } from '../freshness/data-version.ts';
import type { FreshnessPolicy } from '../freshness/freshness-policy.ts';
import { toListingSummary } from '../listings/listing.mapper.ts';
import { ActiveListingIndex } from './active-index.ts';
import {
  findBuildingScores,
  findSummaryRows,
  type IdPage,
  type SearchCriteria,
  searchListingIds,
} from './search.repository.ts';
import { DEFAULT_SORT_DIR, type RentalSearchQuery, type SaleSearchQuery } from './search.schema.ts';

export type SearchQuery = RentalSearchQuery & SaleSearchQuery;

export interface SearchPage {
  /** Serialized ListingSummary objects (UTF-8 JSON), in result order. */
  items: Buffer[];
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

/** Inclusive instant bounds from a date or date-time parameter. */
function instantBound(name: string, value: string | undefined, edge: 'start' | 'end'): string | undefined {
  if (value === undefined) return undefined;
  let instant: number;
  if (DATE_ONLY.test(value)) {
    const start = Date.parse(`${value}T00:00:00.000Z`);
    // A date must exist in the calendar: 2026-02-30 is rejected, not rolled over.
    if (Number.isNaN(start) || new Date(start).toISOString().slice(0, 10) !== value) instant = Number.NaN;
    else instant = edge === 'start' ? start : start + 86_400_000 - 1;
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
    /** Answer ACTIVE-only searches from the in-memory index (SQL otherwise, and while it rebuilds). */
    private readonly useIndex = true,
    private readonly cache = new VersionedJsonCache(),
  ) {}

  private index: ActiveListingIndex | null = null;
  private indexBuild: { version: string; done: Promise<void> } | null = null;
  /** The data version most recently asked for. */
  private latestVersion: string | null = null;

  /** Area ids to filter on: each requested area and all its descendants. */
  resolveAreas(areas: string | undefined): number[] | null {
    if (areas === undefined) return null;
    const ids = new Set<number>();
    for (const part of areas.split(',')) {
      const id = Number(part);
      if (!this.areaTree.has(id)) {
        throw ApiError.invalidParam({
          parameter: 'areas',
          rule: 'unknown_area',
          message: `no area has id ${part}`,
        });
      }
      for (const descendant of this.areaTree.descendantsAndSelf(id)) ids.add(descendant);
    }
    return [...ids].sort((a, b) => a - b);
  }

  toCriteria(listingType: ListingType, q: SearchQuery): SearchCriteria {
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
    const sort = q.sort ?? 'RECOMMENDED';
    const amenities = splitList(q.amenities) as Amenity[] | undefined;
    return {
      listingType,
      statuses: (splitList(q.status) as ListingStatus[] | undefined) ?? ['ACTIVE'],
      areaIds: this.resolveAreas(q.areas),
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
  ): Promise<SearchPage & { meta: Freshness }> {
    const criteria = this.toCriteria(listingType, query);
    const result = await this.search(criteria, page.page, page.perPage, await this.dataVersion.version());
    return { ...result, meta: await this.freshness.ofSearch(tier, listingType, result.allDetailScraped) };
  }

  /** Builds the index for the current data version (boot). */
  async warm(): Promise<void> {
    await this.prepareIndex(await this.dataVersion.version());
  }

  /**
   * Builds the in-memory active-listing index for a data version (at boot, and
   * again in the background whenever the version moves). Single-flight.
   */
  prepareIndex(version: string): Promise<void> {
    if (!this.useIndex || this.index?.version === version) return Promise.resolve();
    this.latestVersion = version;
    if (this.indexBuild?.version === version) return this.indexBuild.done;
    const done = ActiveListingIndex.build(this.db, version)
      .then((index) => {
        // Only the newest requested version is installed: a slow build for an
        // older version must not replace a newer index.
        if (this.latestVersion === version) this.index = index;
      })
      .catch(() => {
        // Searches keep using SQL; the next version change tries again.
      })
      .finally(() => {
        if (this.indexBuild?.version === version) this.indexBuild = null;
      });
    this.indexBuild = { version, done };
    return done;
  }

  private idPage(
    criteria: SearchCriteria,
    limit: number,
    offset: number,
    version: string,
  ): Promise<IdPage> | IdPage {
    if (this.useIndex && ActiveListingIndex.handles(criteria)) {
      if (this.index?.version === version) return this.index.search(criteria, limit, offset);
      void this.prepareIndex(version);
    }
    return searchListingIds(this.db, this.dialect, criteria, limit, offset);
  }

  async search(
    criteria: SearchCriteria,
    page: number,
    perPage: number,
    dataVersion: string,
  ): Promise<SearchPage> {
    const { ids, total, rows, summaries } = await this.idPage(
      criteria,
      perPage,
      (page - 1) * perPage,
      dataVersion,
    );
    const nowMs = criteria.now.getTime();
    this.cache.useVersion(dataVersion);
    // Index pages look summaries up by row (an array read); others by id.
    const found = ids.map((id, i) => {
      const slot = rows && summaries ? summaries[rows[i]!] : undefined;
      return slot && slot.validUntil > nowMs ? slot : this.cache.get(id, nowMs);
    });
    const missing = ids.filter((_, i) => found[i] === undefined);
    if (missing.length > 0) {
      const rows = await findSummaryRows(this.db, missing);
      const scores = await findBuildingScores(
        this.db,
        rows.map((r) => r.building_id),
      );
      const fresh = new Map<string, CachedJson>();
      for (const row of rows) {
        const summary = toListingSummary(
          row,
          this.areaTree.get(row.area_id)?.name ?? 'Unassigned',
          scores.get(row.building_id),
          criteria.now,
        );
        const entry = {
          json: Buffer.from(JSON.stringify(summary)),
          detailScraped: summary.detailScraped,
          validUntil: daysOnMarketValidUntil(row, criteria.now),
        };
        this.cache.set(row.id, entry, dataVersion);
        fresh.set(row.id, entry);
      }
      ids.forEach((id, i) => {
        found[i] ??= fresh.get(id);
      });
    }
    if (rows && summaries && this.index?.version === dataVersion) {
      found.forEach((entry, i) => {
        if (entry) summaries[rows[i]!] = entry;
      });
    }
    const items: Buffer[] = [];
    let allDetailScraped = ids.length > 0;
    for (const entry of found) {
      // Missing only if the listing vanished between the two queries.
      if (!entry) continue;
      items.push(entry.json);
      allDetailScraped &&= entry.detailScraped;
    }
    return { items, total, allDetailScraped };
  }
}
