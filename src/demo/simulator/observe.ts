/**
 * Demo generator rows as the `ListingSource` model: what an upstream that
 * serves the demo market delivers. Pipeline-owned columns (price_delta,
 * rank_score, refreshed_at, created_at, updated_at) are dropped; `createdAt`
 * is the listing's arrival and `modifiedAt` is given by the caller (the
 * simulator's ModificationTimestamp).
 */

import type { UpstreamBuilding, UpstreamListing } from '../../upstream/source.ts';
import type { DemoBuilding } from '../market/buildings.ts';
import type { ListingBundle } from '../market/market.ts';

export function upstreamListingFromBundle(bundle: ListingBundle, modifiedAt: number): UpstreamListing {
  const {
    price_delta: _delta,
    rank_score: _rank,
    refreshed_at: _refreshed,
    revision: _revision,
    detail_hash: _detailHash,
    created_at,
    updated_at: _updated,
    ...listing
  } = bundle.listing;
  const details = bundle.details
    ? (({ listing_id: _l, updated_at: _u, ...rest }) => rest)(bundle.details)
    : null;
  return {
    listing,
    modifiedAt: new Date(modifiedAt).toISOString(),
    createdAt: created_at,
    detail: {
      details,
      fees: bundle.fees.map(({ listing_id: _l, id: _i, ...rest }) => rest),
      openHouses: bundle.openHouses.map(({ listing_id: _l, ...rest }) => rest),
      photos: bundle.photos.map(({ listing_id: _l, building_id: _b, ...rest }) => rest),
    },
  };
}

/** The same listing without its detail page (what a page read without `$expand` yields). */
export function withoutDetail(listing: UpstreamListing): UpstreamListing {
  const { detail: _detail, ...rest } = listing;
  return rest;
}

export function upstreamBuilding(b: DemoBuilding, modifiedAt: string): UpstreamBuilding {
  const { refreshed_at: _r, created_at: _c, updated_at: _u, ...building } = b.row;
  const { building_id: _id, ...scores } = b.scores;
  return {
    building,
    scores,
    photos: b.photos.map(({ listing_id: _l, building_id: _b, ...rest }) => rest),
    modifiedAt,
  };
}
