import type { ListingBundle } from '../../src/demo/market/market.ts';
import type { UpstreamListing } from '../../src/upstream/source.ts';

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
