/**
 * The upstream seam: where listing data comes from.
 *
 * The refresh pipeline (src/jobs/refresh/) talks only to this interface. The
 * production implementation is the RESO Web API source (src/upstream/reso/),
 * which an operator points at a licensed feed and which the demo points at the
 * market simulator (`stoop origin`, src/demo/simulator/) over HTTP, so the
 * real adapter is exercised end to end.
 *
 * Records are already in Stoop's own model (the row shapes of
 * src/platform/db/tables.ts minus bookkeeping the pipeline owns): mapping a
 * feed's vocabulary is the adapter's job, diffing and storing is the pipeline's.
 */
import type {
  BuildingScoresTable,
  ListingRow,
  NewBuilding,
  NewFee,
  NewListingDetails,
  NewOpenHouse,
  NewPhoto,
} from '../platform/db/tables.ts';

/** Closed set of ways an upstream call can fail; anything else is a bug. */
export type UpstreamFailureKind = 'timeout' | 'unavailable' | 'parse_failed' | 'not_found';

export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
    /** HTTP status when the upstream answered, for logs. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }

  /** Whether trying again may succeed (timeouts and 5xx/network errors may; not_found and bad payloads won't). */
  get retryable(): boolean {
    return this.kind === 'timeout' || this.kind === 'unavailable';
  }
}

/**
 * Columns of a listing the pipeline computes or owns itself and therefore does
 * not take from upstream: change bookkeeping (`price_delta` comes from our own
 * diff), our ranking, and our timestamps.
 */
export type PipelineOwnedListingColumn =
  | 'price_delta'
  | 'rank_score'
  | 'refreshed_at'
  | 'created_at'
  | 'updated_at'
  | 'revision'
  | 'detail_hash';

/** One listing as upstream describes it, in Stoop's model. */
export interface UpstreamListing {
  /**
   * Every column of the `listings` row except the pipeline-owned ones. Derived
   * columns (bathrooms, monthly_cost, price_per_sqft, amenity_mask,
   * next_open_house_at, lead_photo_key, detail_scraped) are computed by the
   * adapter from the feed's fields so that every source yields the same shape.
   */
  listing: Omit<ListingRow, PipelineOwnedListingColumn>;
  /** When upstream last changed this listing (RESO `ModificationTimestamp`), ISO 8601 UTC. */
  modifiedAt: string;
  /** When the listing first appeared upstream (RESO `OriginalEntryTimestamp`), ISO 8601 UTC. */
  createdAt: string;
  /**
   * The detail page's contents. Present when fetched in detail (`fetchListing`,
   * or a page query with `expand`); absent otherwise, which means "not fetched",
   * never "empty": the pipeline then leaves stored details as they are.
   */
  detail?: UpstreamListingDetail;
}

export interface UpstreamListingDetail {
  /** The detail record; null when upstream keeps none (e.g. long off market). */
  details: Omit<NewListingDetails, 'listing_id' | 'updated_at'> | null;
  fees: Omit<NewFee, 'listing_id' | 'id'>[];
  /** Open houses as upstream lists them (past ones included while upstream keeps them). */
  openHouses: Omit<NewOpenHouse, 'listing_id'>[];
  /** Photos in display order (`position` 0 is the lead photo). */
  photos: Omit<NewPhoto, 'listing_id' | 'building_id'>[];
}

/** One building as upstream describes it. */
export interface UpstreamBuilding {
  building: Omit<NewBuilding, 'refreshed_at' | 'created_at' | 'updated_at'>;
  /** Scores when the source has them (the demo does); imported open data may replace them. */
  scores: Omit<BuildingScoresTable, 'building_id'> | null;
  photos: Omit<NewPhoto, 'listing_id' | 'building_id'>[];
  modifiedAt: string;
}

export interface ListingPageQuery {
  listingType?: 'rental' | 'sale';
  /** Only listings in these statuses; all statuses when absent. */
  statuses?: readonly ListingRow['status'][];
  /**
   * Replication: only listings whose `modifiedAt` is at or after this instant,
   * ordered by (modifiedAt, id) ascending. Inclusive on purpose: a consumer
   * resumes from the last `modifiedAt` it applied and tolerates re-seeing
   * records at that instant (applying an unchanged record is a no-op), so no
   * change at a shared timestamp is ever skipped.
   */
  modifiedSince?: string;
  /** Include details, fees, open houses and photos (RESO `$expand`); costs more upstream. */
  expand?: boolean;
  /** Page size hint (RESO `$top`); the source may return fewer. */
  pageSize?: number;
  /** Opaque continuation token from the previous page (`@odata.nextLink`). */
  cursor?: string | null;
}

export interface ListingPage {
  listings: UpstreamListing[];
  /** Continuation token for the next page; null on the last page. */
  next: string | null;
}

export interface CallOptions {
  /** Aborts the call (and any retry waits). */
  signal?: AbortSignal;
  /** Overrides the source's per-request timeout (ms), e.g. for a live detail read. */
  timeoutMs?: number;
  /** Overrides the source's retry count (0 = one attempt), e.g. a live read must answer fast. */
  retries?: number;
}

/**
 * A source of listings. Implementations enforce their own timeouts, retry
 * retryable failures with backoff, and throw only `UpstreamError`.
 */
export interface ListingSource {
  /** Short name for logs and `meta`, e.g. `reso:http://127.0.0.1:8081/odata`. */
  readonly name: string;
  /** One page of listings (search or replication, see `ListingPageQuery`). */
  searchListings(query: ListingPageQuery, options?: CallOptions): Promise<ListingPage>;
  /** One listing in full detail; `not_found` when upstream does not know it. */
  fetchListing(id: string, options?: CallOptions): Promise<UpstreamListing>;
  /** One building; `not_found` when upstream does not know it. */
  fetchBuilding(id: string, options?: CallOptions): Promise<UpstreamBuilding>;
  /** One page of buildings changed at or after `modifiedSince` (all when absent). */
  listBuildings(
    query: { modifiedSince?: string; pageSize?: number; cursor?: string | null },
    options?: CallOptions,
  ): Promise<{ buildings: UpstreamBuilding[]; next: string | null }>;
}
