import { type ListingBundle, marketAt } from '../../src/demo/market/market.ts';
import {
  type CallOptions,
  type ListingPage,
  type ListingPageQuery,
  type ListingSource,
  type UpstreamBuilding,
  UpstreamError,
  type UpstreamListing,
} from '../../src/upstream/source.ts';

/**
 * A demo generator bundle as a source would deliver it (with details expanded):
 * the shape the pipeline applies, without going through a wire format.
 */
export function bundleToUpstream(bundle: ListingBundle, expand = true): UpstreamListing {
  const {
    price_delta: _delta,
    rank_score: _rank,
    refreshed_at: _refreshed,
    revision: _revision,
    detail_hash: _detailHash,
    created_at,
    updated_at,
    ...listing
  } = bundle.listing;
  const upstream: UpstreamListing = { listing, modifiedAt: updated_at, createdAt: created_at };
  if (expand) {
    upstream.detail = {
      details: bundle.details
        ? (({ listing_id: _l, updated_at: _u, ...rest }) => rest)(bundle.details)
        : null,
      fees: bundle.fees.map(({ listing_id: _l, id: _i, ...rest }) => rest),
      openHouses: bundle.openHouses.map(({ listing_id: _l, ...rest }) => rest),
      photos: bundle.photos.map(({ listing_id: _l, building_id: _b, ...rest }) => rest),
    };
  }
  return upstream;
}

/** The demo market as of `at`, as a source lists it (no details), in upstream's order: oldest change first. */
export function demoUpstreamListings(seed: number, scale: number, at: Date): UpstreamListing[] {
  return marketAt(seed, scale, at)
    .listings.map((listing) =>
      bundleToUpstream({ listing, details: null, events: [], fees: [], openHouses: [], photos: [] }, false),
    )
    .sort((a, b) => (a.modifiedAt < b.modifiedAt ? -1 : a.modifiedAt > b.modifiedAt ? 1 : 0));
}

/**
 * An upstream at the edge of a test of listing refreshes: it knows no
 * buildings (a fetch is `not_found`, the list is empty) and, unless a test
 * says otherwise, lists no listings. Fakes extend it with the listing calls
 * they exercise.
 */
export abstract class ListingOnlySource implements ListingSource {
  abstract readonly name: string;
  abstract fetchListing(id: string, options?: CallOptions): Promise<UpstreamListing>;

  async searchListings(_query: ListingPageQuery, _options?: CallOptions): Promise<ListingPage> {
    return { listings: [], next: null };
  }

  async fetchBuilding(id: string): Promise<UpstreamBuilding> {
    throw new UpstreamError('not_found', `no building ${id}`, 404);
  }

  async listBuildings(): Promise<{ buildings: UpstreamBuilding[]; next: string | null }> {
    return { buildings: [], next: null };
  }
}
