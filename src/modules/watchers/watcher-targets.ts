/**
 * Reads a watcher's target the way a Business caller's read would: a listing
 * fetched live through the refresh pipeline (the live path of Business reads
 * of `GET /property/{id}`), a building's record and on-market listings and a
 * search's first results through their services at the Business tier, which
 * start a background refresh when the data is older than the Business
 * threshold (SPEC "Data freshness rules").
 */
import type { Kysely } from 'kysely';
import type { ListingType } from '../../domain/listing.ts';
import { ApiError } from '../../http/errors.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { BuildingService } from '../building/building.service.ts';
import type { RefreshPort } from '../freshness/refresh-port.ts';
import type { SearchQuery, SearchService } from '../search/search.service.ts';
import type { WatchTarget } from './watcher.mapper.ts';
import type { ListedState, Snapshot } from './watcher-snapshot.ts';
import { findWatchedListing } from './watchers.repository.ts';
import type { SearchFilters } from './watchers.schema.ts';

/** Results of a search watcher compared between polls (the most a search page holds). */
export const SEARCH_WATCH_LIMIT = 500;
/** Listings of a building compared between polls. */
export const BUILDING_WATCH_LIMIT = 500;

export interface TargetRead {
  snapshot: Snapshot;
  /** The live read failed: the snapshot is the stored copy, and streams are told why. */
  warning?: { code: 'fetch_failed'; message: string };
}

export interface WatcherTargetsOptions {
  db: Kysely<Database>;
  refresher: RefreshPort;
  /** Asked at each read: the composition root builds it alongside the other read services. */
  building: () => Pick<BuildingService, 'detail' | 'listings'>;
  search: SearchService;
  liveTimeoutMs: number;
}

/** A search watcher's filters as the search service takes them (without `listingType`). */
export function searchQueryOf(filters: SearchFilters): { listingType: ListingType; query: SearchQuery } {
  const { listingType, ...query } = filters;
  return { listingType, query: query as SearchQuery };
}

export class WatcherTargets {
  constructor(private readonly options: WatcherTargetsOptions) {}

  /** What the target looks like now. Throws only when the store cannot be read. */
  async read(target: WatchTarget): Promise<TargetRead> {
    switch (target.watchType) {
      case 'listing':
        return this.listing(target.listingId);
      case 'building':
        return { snapshot: await this.buildingState(target.buildingId) };
      case 'search':
        return { snapshot: await this.searchState(target.searchFilters) };
    }
  }

  private async listing(id: string): Promise<TargetRead> {
    const { refresher, liveTimeoutMs } = this.options;
    // Without an upstream the store is as fresh as the listing gets: nothing to fetch.
    const outcome =
      refresher.status().upstream === null ? null : await refresher.refreshListingNow(id, liveTimeoutMs);
    const snapshot = await this.listingState(id, outcome === 'not_found');
    if (outcome === 'failed') {
      return {
        snapshot,
        warning: {
          code: 'fetch_failed',
          message: 'The live fetch from upstream failed; the stored listing was compared',
        },
      };
    }
    return { snapshot };
  }

  /** The stored listing's watched fields; `gone`: upstream no longer has it. */
  async listingState(id: string, gone = false): Promise<Snapshot> {
    const row = await findWatchedListing(this.options.db, id);
    if (!row || gone) return { present: false };
    return {
      present: true,
      fields: {
        status: row.status,
        closedReason: row.closed_reason,
        price: row.price,
        netEffective: row.net_effective,
        monthsFree: row.months_free,
        monthlyCost: row.monthly_cost,
        noFee: row.no_fee === 1,
        bedroomCount: row.bedroom_count,
        bathrooms: row.bathrooms,
        sqft: row.sqft,
        availableAt: row.available_at,
        nextOpenHouseAt: row.next_open_house_at,
        contractAt: row.contract_at,
        offMarketAt: row.off_market_at,
      },
    };
  }

  async buildingState(id: string): Promise<Snapshot> {
    const building = this.options.building();
    let fields: Record<string, unknown>;
    try {
      const detail = await building.detail(id, 'BUSINESS');
      fields = JSON.parse(detail.json.toString('utf8')) as Record<string, unknown>;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return { present: false };
      throw error;
    }
    const page = await building.listings(
      id,
      'BUSINESS',
      { statuses: ['ACTIVE', 'IN_CONTRACT'], listingType: undefined },
      1,
      BUILDING_WATCH_LIMIT,
    );
    const listings: Record<string, ListedState> = {};
    for (const item of page.items) listings[item.id] = { price: item.price, status: item.status };
    return { present: true, fields, listings };
  }

  async searchState(filters: SearchFilters): Promise<Snapshot> {
    const { listingType, query } = searchQueryOf(filters);
    const page = await this.options.search.find(
      listingType,
      query,
      { page: 1, perPage: SEARCH_WATCH_LIMIT },
      'BUSINESS',
    );
    const listings: Record<string, ListedState> = {};
    for (const item of page.items) {
      const summary = JSON.parse(item.toString('utf8')) as { id: string; price: number; status: string };
      listings[summary.id] = { price: summary.price, status: summary.status };
    }
    return { present: true, listings, total: page.total };
  }
}
