import { Type } from '@sinclair/typebox';
import { nyDate } from '../../domain/listing.ts';
import { fitStoredArray, fitStoredRecord } from '../../platform/db/stored-json.ts';
import type { FeeRow, OpenHouseRow, PriceEventRow } from '../../platform/db/tables.ts';
import { toListingSummary } from '../listings/listing.mapper.ts';
import { toPhoto } from '../photos/photo.mapper.ts';
import { photoUrl } from '../photos/photo-url.ts';
import type { ListingDetailRows } from './property.repository.ts';
import {
  AgentSchema,
  ConcessionsSchema,
  type Fee,
  LeaseTermsSchema,
  type ListingDetail,
  type OpenHouse,
  PetsPolicySchema,
  type PriceEvent,
  SaleDetailsSchema,
  UnitFeaturesSchema,
} from './property.schema.ts';

const AmenityName = Type.String({ minLength: 1 });

export interface DetailLinks {
  /** Origin of photo URLs. */
  photoBaseUrl: string;
  /** Origin of API links (PUBLIC_URL). */
  publicUrl: string;
}

/** `YYYY-MM-DD` of a stored ISO timestamp (or date). */
/** New York's calendar date of a stored instant: the calendar `listedAt` and days on market use. */
function dateOf(value: string | null): string | null {
  return value === null ? null : nyDate(Date.parse(value));
}

/** The one mapping from stored rows to the API's ListingDetail. */
export function toListingDetail(
  rows: ListingDetailRows,
  areaName: string,
  now: Date,
  links: DetailLinks,
): ListingDetail {
  const { listing, details, building } = rows;
  // Assigned onto the summary rather than spread into a new literal: a 50-field spread
  // costs V8 far more than adding the detail fields to the summary object.
  return Object.assign(toListingSummary(listing, areaName, rows.scores, now), {
    description: details?.description ?? null,
    amenities: details ? fitStoredArray(AmenityName, details.amenities_json) : [],
    unitFeatures: details ? fitStoredRecord(UnitFeaturesSchema, details.unit_features_json) : null,
    leaseTerms: details ? fitStoredRecord(LeaseTermsSchema, details.lease_terms_json) : null,
    concessions: details ? fitStoredRecord(ConcessionsSchema, details.concessions_json) : null,
    saleDetails: details ? fitStoredRecord(SaleDetailsSchema, details.sale_details_json) : null,
    agents: details ? fitStoredArray(AgentSchema, details.agents_json) : [],
    petsAllowed: listing.pets_allowed === 1,
    petsPolicy: details ? fitStoredRecord(PetsPolicySchema, details.pets_policy_json) : null,
    photos: rows.photos.map((p) => toPhoto(p, links.photoBaseUrl)),
    floorPlan:
      details?.floor_plan_key != null
        ? { key: details.floor_plan_key, url: photoUrl(links.photoBaseUrl, details.floor_plan_key) }
        : null,
    has3dTour: listing.has_3d_tour === 1,
    virtualTourUrl: details?.virtual_tour_url ?? null,
    monthlyFees: listing.monthly_fees,
    building: building
      ? {
          id: building.id,
          name: building.name,
          slug: building.slug,
          url: `${links.publicUrl}/v1/building/${encodeURIComponent(building.id)}`,
        }
      : null,
    contractAt: dateOf(listing.contract_at),
    offMarketAt: dateOf(listing.off_market_at),
    closedReason: listing.closed_reason,
    updatedAt: listing.updated_at,
  });
}

/**
 * A timeline in date order. `pctChange` is recomputed from consecutive prices
 * (two decimals) so every event after the first carries one, whatever the
 * source stored: a cut, a raise, a relisting price, a closing discount, or 0.
 */
export function toPriceEvents(
  rows: readonly Pick<PriceEventRow, 'date' | 'price' | 'event'>[],
): PriceEvent[] {
  let previous: number | null = null;
  return rows.map((row) => {
    const pctChange =
      previous === null || previous === 0
        ? null
        : Math.round(((row.price - previous) / previous) * 10_000) / 100;
    previous = row.price;
    return { date: row.date.slice(0, 10), price: row.price, event: row.event, pctChange };
  });
}

export function toFee(row: Omit<FeeRow, 'listing_id' | 'id'>): Fee {
  return {
    typeLabel: row.type_label,
    category: row.category,
    requirement: row.requirement,
    refundability: row.refundability,
    calcType: row.calc_type,
    amount: row.amount,
    timing: row.timing,
    occurrence: row.occurrence,
  };
}

export function toOpenHouse(row: Omit<OpenHouseRow, 'listing_id'>): OpenHouse {
  return {
    id: row.id,
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    kind: row.kind,
    byAppointment: row.by_appointment === 1,
    note: row.note,
  };
}
