/**
 * The one mapping between Stoop's model and RESO Web API records, in both
 * directions: `encode*` writes what the market simulator serves, `decode*`
 * reads what the RESO source receives. Round trip contract (tested):
 * `decodeListing(encodeListing(x))` equals `x` for every listing the demo
 * market produces, summary-only (`detail` absent) or with its detail page.
 *
 * Field mapping (standard RESO Data Dictionary names; local `STOOP_*` fields
 * are documented in resources.ts):
 *   id ↔ ListingKey; listing_type ↔ PropertyType (ResidentialLease = rental,
 *   Residential = sale); status + closed_reason ↔ StandardStatus (Active;
 *   Pending or ActiveUnderContract = IN_CONTRACT; Closed = RENTED for a lease,
 *   SOLD for a sale; Withdrawn, Canceled, Expired, Hold, Delete = DELISTED);
 *   price ↔ ListPrice; bedroom_count ↔ BedroomsTotal; full/half bathrooms ↔
 *   BathroomsFull/BathroomsHalf; sqft ↔ LivingArea (SquareFeet); street ↔
 *   StreetNumber + StreetName (UnparsedAddress is written for humans); unit ↔
 *   UnitNumber; city/state/zip ↔ City/StateOrProvince/PostalCode; coordinates
 *   ↔ Latitude/Longitude; source_group_label ↔ ListOfficeName; listed_at ↔
 *   OnMarketTimestamp, or OnMarketDate alone when the date is approximate
 *   (listed_at_is_approximate, read back as midnight UTC); available_at ↔
 *   AvailabilityDate; contract_at ↔ PendingTimestamp (else PurchaseContractDate);
 *   off_market_at ↔ OffMarketTimestamp (else OffMarketDate / CloseDate);
 *   pets_allowed ↔ PetsAllowed; createdAt ↔ OriginalEntryTimestamp; modifiedAt
 *   ↔ ModificationTimestamp; description ↔ PublicRemarks; virtual tour ↔
 *   VirtualTourURLUnbranded; photos and floor plan ↔ Media (MediaCategory
 *   Photo / FloorPlan, Order, ImageWidth, ImageHeight, ShortDescription); open
 *   houses ↔ OpenHouse (OpenHouseKey, start/end, Livestream types = VIRTUAL,
 *   AppointmentRequiredYN, OpenHouseRemarks).
 *
 * Derived by the decoder, so every source yields the same shape: bathrooms
 * (full + ½ half), monthly_cost (rent + monthly fees, or the monthly fees of a
 * sale), price_per_sqft (2 decimals), amenity_mask (from STOOP_Amenities),
 * lead_photo_key (lowest-Order photo; STOOP_LeadPhotoKey without Media),
 * detail_scraped (STOOP_DetailAvailable), the details' photos_json and
 * floor_plan_key (from Media), and next_open_house_at: the earliest open house
 * starting at or after the record's ModificationTimestamp while the listing is
 * ACTIVE. The record's own modification instant is the observation time on
 * purpose: decoding stays a pure function of the record, and an upstream that
 * bumps ModificationTimestamp when an open house starts (the simulator does,
 * 1 ms after the start) keeps replicated stores exact without clock reads.
 */
import { type Amenity, amenitiesFromMask, amenityMask, isAmenity } from '../../domain/amenities.ts';
import { BUILDING_TYPES, type BuildingType, SALE_TYPES, type SaleType } from '../../domain/listing.ts';
import type { ListingRow } from '../../platform/db/tables.ts';
import {
  type UpstreamBuilding,
  UpstreamError,
  type UpstreamListing,
  type UpstreamListingDetail,
} from '../source.ts';
import {
  checkBuilding,
  checkDetail,
  checkSummary,
  type ResoBuilding,
  type ResoMedia,
  type ResoOpenHouse,
  type ResoProperty,
  type ResoPropertyDetail,
  type ResoPropertySummary,
} from './resources.ts';

type Listing = UpstreamListing['listing'];
type Photo = UpstreamListingDetail['photos'][number];

const SUB_TYPE: Readonly<Record<BuildingType, string | null>> = {
  RENTAL: 'Apartment',
  CONDO: 'Condominium',
  COOP: 'StockCooperative',
  CONDOP: 'Condominium',
  TOWNHOUSE: 'Townhouse',
  MULTI_FAMILY: null,
  HOUSE: 'SingleFamilyResidence',
};

const DELISTED_STATUSES = new Set(['Withdrawn', 'Canceled', 'Expired', 'Hold', 'Delete']);

/** Every StandardStatus the decoder maps, by our status: the source filters on these. */
export const STANDARD_STATUSES: Readonly<Record<ListingRow['status'], readonly string[]>> = {
  ACTIVE: ['Active'],
  IN_CONTRACT: ['ActiveUnderContract', 'Pending'],
  OFF_MARKET: ['Closed', ...DELISTED_STATUSES],
};

export const PROPERTY_TYPES: Readonly<Record<ListingRow['listing_type'], string>> = {
  rental: 'ResidentialLease',
  sale: 'Residential',
};

function fail(resource: string, key: unknown, message: string): never {
  const label = typeof key === 'string' && key !== '' ? `${resource} ${key}` : resource;
  throw new UpstreamError('parse_failed', `${label}: ${message}`);
}

function schemaError(
  resource: string,
  key: unknown,
  check: typeof checkSummary | typeof checkDetail | typeof checkBuilding,
  record: unknown,
): never {
  const error = check.Errors(record).First();
  const field = error ? error.path.replace(/^\//, '').replace(/\//g, '.') : '';
  fail(resource, key, field ? `field ${field}: ${error!.message}` : 'not a valid record');
}

/** Enumeration values compared in their compact form: `Active Under Contract` = `ActiveUnderContract`. */
function compact(value: string): string {
  return value.replace(/[\s_-]/g, '');
}

function instant(value: string): string {
  return new Date(value).toISOString();
}

function dateOf(iso: string | null): string | null {
  return iso === null ? null : iso.slice(0, 10);
}

function midnight(date: string | null | undefined): string | null {
  return date ? `${date}T00:00:00.000Z` : null;
}

/** `123 West 45th Street` → number and name; a street without a house number keeps it all as the name. */
function splitStreet(street: string): { number: string | null; name: string } {
  const match = /^(\d[\dA-Za-z]*(?:-\d+[A-Za-z]?)?)\s+(.+)$/.exec(street);
  return match ? { number: match[1]!, name: match[2]! } : { number: null, name: street };
}

function standardStatus(listing: Listing): string {
  if (listing.status === 'ACTIVE') return 'Active';
  if (listing.status === 'IN_CONTRACT') return 'Pending';
  return listing.closed_reason === 'DELISTED' ? 'Withdrawn' : 'Closed';
}

// ---------------------------------------------------------------------------
// Listings
// ---------------------------------------------------------------------------

/** A listing as a RESO Property record; with `detail`, the full record including Media and OpenHouse. */
export function encodeListing(x: UpstreamListing): ResoProperty {
  const summary = encodeListingSummary(x);
  return x.detail ? Object.assign(summary, encodeListingDetail(x, x.detail)) : summary;
}

/**
 * The summary fields only (what a page without `$expand` carries). A known
 * detail page still informs them: the amenity list keeps the page's order
 * (else the vocabulary's) and STOOP_OpenHouseStarts lists every open house
 * shown; `openHouseStarts` gives those when the detail page is not at hand
 * (else only the next one is known).
 */
export function encodeListingSummary(
  x: UpstreamListing,
  openHouseStarts?: readonly string[],
): ResoPropertySummary {
  const l = x.listing;
  const { number, name } = splitStreet(l.street);
  const detail = x.detail;
  const amenities: string[] = detail?.details
    ? (JSON.parse(detail.details.amenities_json) as string[])
    : amenitiesFromMask(l.amenity_mask);
  return {
    ListingKey: l.id,
    ModificationTimestamp: x.modifiedAt,
    OriginalEntryTimestamp: x.createdAt,
    PropertyType: PROPERTY_TYPES[l.listing_type],
    PropertySubType: SUB_TYPE[l.building_type as BuildingType] ?? null,
    StandardStatus: standardStatus(l),
    ListPrice: l.price,
    BedroomsTotal: l.bedroom_count,
    BathroomsFull: l.full_bathroom_count,
    BathroomsHalf: l.half_bathroom_count,
    LivingArea: l.sqft,
    LivingAreaUnits: l.sqft === null ? null : 'SquareFeet',
    UnparsedAddress: `${l.street}${l.unit ? ` #${l.unit}` : ''}, ${l.city}, ${l.state} ${l.zip_code}`,
    StreetNumber: number,
    StreetName: name,
    UnitNumber: l.unit,
    City: l.city,
    StateOrProvince: l.state,
    PostalCode: l.zip_code,
    Latitude: l.latitude,
    Longitude: l.longitude,
    ListOfficeName: l.source_group_label,
    OnMarketDate: dateOf(l.listed_at),
    OnMarketTimestamp: l.listed_at_is_approximate ? null : l.listed_at,
    AvailabilityDate: l.available_at,
    PendingTimestamp: l.contract_at,
    PurchaseContractDate: dateOf(l.contract_at),
    OffMarketTimestamp: l.off_market_at,
    OffMarketDate: dateOf(l.off_market_at),
    CloseDate: l.closed_reason === 'RENTED' || l.closed_reason === 'SOLD' ? dateOf(l.off_market_at) : null,
    PetsAllowed: [l.pets_allowed ? 'Yes' : 'No'],
    STOOP_AreaId: l.area_id,
    STOOP_BuildingId: l.building_id,
    STOOP_BuildingType: l.building_type,
    STOOP_UrlPath: l.url_path,
    STOOP_NoFee: l.no_fee === 1,
    STOOP_SaleType: l.sale_type,
    STOOP_NetEffectiveRent: l.net_effective,
    STOOP_MonthsFree: l.months_free,
    STOOP_LeaseTermMonths: l.lease_term_months,
    STOOP_MonthlyFees: l.monthly_fees,
    STOOP_Amenities: amenities,
    STOOP_Has3DTour: l.has_3d_tour === 1,
    STOOP_LeadPhotoKey: l.lead_photo_key,
    STOOP_DetailAvailable: l.detail_scraped === 1,
    STOOP_OpenHouseStarts: detail
      ? detail.openHouses.map((oh) => oh.starts_at)
      : openHouseStarts
        ? [...openHouseStarts]
        : l.next_open_house_at
          ? [l.next_open_house_at]
          : [],
  };
}

function encodeListingDetail(x: UpstreamListing, detail: UpstreamListingDetail): ResoPropertyDetail {
  const l = x.listing;
  const d = detail.details;
  const parse = (json: string | null | undefined): Record<string, unknown> | null =>
    json ? (JSON.parse(json) as Record<string, unknown>) : null;
  return {
    PublicRemarks: d ? d.description : null,
    VirtualTourURLUnbranded: d?.virtual_tour_url ?? null,
    STOOP_UnitFeatures: parse(d?.unit_features_json),
    STOOP_LeaseTerms: parse(d?.lease_terms_json),
    STOOP_Concessions: parse(d?.concessions_json),
    STOOP_SaleDetails: parse(d?.sale_details_json),
    STOOP_Agents: d ? (JSON.parse(d.agents_json) as Record<string, unknown>[]) : null,
    STOOP_PetsPolicy: parse(d?.pets_policy_json),
    STOOP_Fees: detail.fees.map((f) => ({
      type_label: f.type_label,
      category: f.category,
      requirement: f.requirement,
      refundability: f.refundability,
      calc_type: f.calc_type,
      amount: f.amount,
      timing: f.timing,
      occurrence: f.occurrence,
    })),
    Media: encodeMedia('Property', l.id, detail.photos, d?.floor_plan_key ?? null),
    OpenHouse: detail.openHouses.map((oh) => ({
      OpenHouseKey: oh.id,
      ListingKey: l.id,
      OpenHouseDate: oh.starts_at.slice(0, 10),
      OpenHouseStartTime: oh.starts_at,
      OpenHouseEndTime: oh.ends_at,
      OpenHouseType: oh.kind === 'VIRTUAL' ? 'LivestreamPublic' : 'Public',
      AppointmentRequiredYN: oh.by_appointment === 1,
      OpenHouseRemarks: oh.note ?? null,
    })),
  };
}

function encodeMedia(
  resource: string,
  key: string,
  photos: readonly Photo[],
  floorPlanKey: string | null,
): ResoMedia[] {
  const media: ResoMedia[] = photos.map((p) => ({
    MediaKey: p.key,
    MediaCategory: 'Photo',
    Order: p.position,
    ImageWidth: p.width,
    ImageHeight: p.height,
    ShortDescription: p.caption ?? null,
    ResourceName: resource,
    ResourceRecordKey: key,
    STOOP_RenderSeed: p.render_seed,
  }));
  if (floorPlanKey !== null) {
    media.push({
      MediaKey: floorPlanKey,
      MediaCategory: 'FloorPlan',
      Order: photos.length,
      ResourceName: resource,
      ResourceRecordKey: key,
    });
  }
  return media;
}

function decodePhotos(resource: string, key: string, media: readonly ResoMedia[]): Photo[] {
  const photos = media
    .map((m, index) => ({ m, index }))
    .filter(({ m }) => compact(m.MediaCategory) === 'Photo')
    .sort((a, b) => a.m.Order - b.m.Order);
  return photos.map(({ m, index }) => {
    if (m.ImageWidth == null || m.ImageHeight == null) {
      fail(resource, key, `field Media.${index}: a photo needs ImageWidth and ImageHeight`);
    }
    return {
      key: m.MediaKey,
      position: m.Order,
      width: m.ImageWidth,
      height: m.ImageHeight,
      caption: m.ShortDescription ?? null,
      render_seed: m.STOOP_RenderSeed ?? 0,
    };
  });
}

function decodeStatus(
  key: string,
  raw: string,
  type: ListingRow['listing_type'],
): Pick<Listing, 'status' | 'closed_reason'> {
  const status = compact(raw);
  if (status === 'Active') return { status: 'ACTIVE', closed_reason: null };
  if (status === 'ActiveUnderContract' || status === 'Pending') {
    return { status: 'IN_CONTRACT', closed_reason: null };
  }
  if (status === 'Closed')
    return { status: 'OFF_MARKET', closed_reason: type === 'rental' ? 'RENTED' : 'SOLD' };
  if (DELISTED_STATUSES.has(status)) return { status: 'OFF_MARKET', closed_reason: 'DELISTED' };
  fail('Property', key, `field StandardStatus: "${raw}" has no Stoop equivalent`);
}

function decodeListingType(key: string, raw: string): ListingRow['listing_type'] {
  const type = compact(raw);
  if (type === 'ResidentialLease') return 'rental';
  if (type === 'Residential') return 'sale';
  fail('Property', key, `field PropertyType: "${raw}" is neither ResidentialLease nor Residential`);
}

/**
 * A RESO Property record as Stoop's listing. The detail page is decoded when
 * the record carries both `Media` and `OpenHouse` (a full record or an
 * `$expand`ed page), and is absent otherwise ("not fetched"). Throws
 * `parse_failed` naming the offending field.
 */
export function decodeListing(record: unknown): UpstreamListing {
  const key = (record as { ListingKey?: unknown } | null)?.ListingKey;
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    fail('Property', undefined, 'record is not a JSON object');
  }
  if (!checkSummary.Check(record)) schemaError('Property', key, checkSummary, record);
  const r = record as ResoProperty;
  const id = r.ListingKey;
  const expanded = Array.isArray(r.Media) && Array.isArray(r.OpenHouse);
  if (expanded && !checkDetail.Check(record)) schemaError('Property', id, checkDetail, record);

  const listingType = decodeListingType(id, r.PropertyType);
  const { status, closed_reason } = decodeStatus(id, r.StandardStatus, listingType);
  if (!(BUILDING_TYPES as readonly string[]).includes(r.STOOP_BuildingType)) {
    fail('Property', id, `field STOOP_BuildingType: unknown building type "${r.STOOP_BuildingType}"`);
  }
  const saleType = r.STOOP_SaleType ?? null;
  if (saleType !== null && !(SALE_TYPES as readonly string[]).includes(saleType)) {
    fail('Property', id, `field STOOP_SaleType: unknown sale type "${saleType}"`);
  }
  const modifiedAt = instant(r.ModificationTimestamp);
  const price = Math.round(r.ListPrice);
  const sqft = r.LivingArea ?? null;
  const names = r.STOOP_Amenities.filter((a): a is Amenity => isAmenity(a));

  let listedAt: string | null = null;
  let approximate: 0 | 1 = 0;
  if (r.OnMarketTimestamp) listedAt = instant(r.OnMarketTimestamp);
  else if (r.OnMarketDate) {
    listedAt = midnight(r.OnMarketDate);
    approximate = 1;
  }

  const detail = expanded ? decodeDetail(r as ResoProperty & ResoPropertyDetail) : undefined;
  const openHouseStarts = detail
    ? detail.openHouses.map((oh) => oh.starts_at)
    : r.STOOP_OpenHouseStarts.map(instant);
  let nextOpenHouse: string | null = null;
  if (status === 'ACTIVE') {
    for (const start of openHouseStarts) {
      if (start >= modifiedAt && (nextOpenHouse === null || start < nextOpenHouse)) nextOpenHouse = start;
    }
  }
  const leadPhoto = detail ? (detail.photos[0]?.key ?? null) : (r.STOOP_LeadPhotoKey ?? null);

  const listing: Listing = {
    id,
    listing_type: listingType,
    status,
    closed_reason,
    building_id: r.STOOP_BuildingId,
    area_id: r.STOOP_AreaId,
    street: r.StreetNumber ? `${r.StreetNumber} ${r.StreetName}` : r.StreetName,
    unit: r.UnitNumber ?? null,
    city: r.City,
    state: r.StateOrProvince,
    zip_code: r.PostalCode,
    latitude: r.Latitude,
    longitude: r.Longitude,
    url_path: r.STOOP_UrlPath,
    building_type: r.STOOP_BuildingType,
    price,
    net_effective: r.STOOP_NetEffectiveRent ?? null,
    months_free: r.STOOP_MonthsFree ?? null,
    lease_term_months: r.STOOP_LeaseTermMonths ?? null,
    monthly_fees: r.STOOP_MonthlyFees,
    monthly_cost: listingType === 'rental' ? price + r.STOOP_MonthlyFees : r.STOOP_MonthlyFees,
    no_fee: r.STOOP_NoFee ? 1 : 0,
    sale_type: saleType as SaleType | null,
    bedroom_count: r.BedroomsTotal,
    full_bathroom_count: r.BathroomsFull,
    half_bathroom_count: r.BathroomsHalf,
    bathrooms: r.BathroomsFull + 0.5 * r.BathroomsHalf,
    sqft,
    price_per_sqft: sqft === null ? null : Math.round((price / sqft) * 100) / 100,
    listed_at: listedAt,
    listed_at_is_approximate: approximate,
    available_at: r.AvailabilityDate ?? null,
    off_market_at: r.OffMarketTimestamp
      ? instant(r.OffMarketTimestamp)
      : status === 'OFF_MARKET'
        ? midnight(r.OffMarketDate ?? r.CloseDate)
        : null,
    contract_at: r.PendingTimestamp ? instant(r.PendingTimestamp) : midnight(r.PurchaseContractDate),
    amenity_mask: amenityMask(names),
    pets_allowed: r.PetsAllowed.some((p) => compact(p) !== 'No') ? 1 : 0,
    has_3d_tour: r.STOOP_Has3DTour ? 1 : 0,
    next_open_house_at: nextOpenHouse,
    lead_photo_key: leadPhoto,
    source_group_label: r.ListOfficeName,
    detail_scraped: r.STOOP_DetailAvailable ? 1 : 0,
  };
  const out: UpstreamListing = { listing, modifiedAt, createdAt: instant(r.OriginalEntryTimestamp) };
  if (detail) out.detail = detail;
  return out;
}

function decodeDetail(r: ResoProperty & ResoPropertyDetail): UpstreamListingDetail {
  const id = r.ListingKey;
  const photos = decodePhotos('Property', id, r.Media);
  const openHouses = r.OpenHouse.map((oh: ResoOpenHouse) => ({
    id: oh.OpenHouseKey,
    starts_at: instant(oh.OpenHouseStartTime),
    ends_at: instant(oh.OpenHouseEndTime),
    kind: /livestream|virtual/i.test(oh.OpenHouseType) ? ('VIRTUAL' as const) : ('IN_PERSON' as const),
    by_appointment: oh.AppointmentRequiredYN ? (1 as const) : (0 as const),
    note: oh.OpenHouseRemarks ?? null,
  }));
  const fees = r.STOOP_Fees.map((f) => ({ ...f }));
  let details: UpstreamListingDetail['details'] = null;
  if (r.STOOP_DetailAvailable) {
    if (r.PublicRemarks === null) {
      fail('Property', id, 'field PublicRemarks: required when STOOP_DetailAvailable is true');
    }
    const json = (value: unknown) => (value == null ? null : JSON.stringify(value));
    const floorPlan = r.Media.find((m) => compact(m.MediaCategory) === 'FloorPlan');
    details = {
      description: r.PublicRemarks,
      amenities_json: JSON.stringify(r.STOOP_Amenities),
      unit_features_json: JSON.stringify(r.STOOP_UnitFeatures ?? {}),
      lease_terms_json: json(r.STOOP_LeaseTerms),
      concessions_json: json(r.STOOP_Concessions),
      sale_details_json: json(r.STOOP_SaleDetails),
      agents_json: JSON.stringify(r.STOOP_Agents ?? []),
      pets_policy_json: JSON.stringify(r.STOOP_PetsPolicy ?? {}),
      photos_json: JSON.stringify(photos.map((p) => p.key)),
      floor_plan_key: floorPlan?.MediaKey ?? null,
      virtual_tour_url: r.VirtualTourURLUnbranded ?? null,
    };
  }
  return { details, fees, openHouses, photos };
}

// ---------------------------------------------------------------------------
// Buildings (a local resource: RESO has no Building)
// ---------------------------------------------------------------------------

export function encodeBuilding(x: UpstreamBuilding): ResoBuilding {
  const b = x.building;
  const parse = (json: string) => JSON.parse(json) as Record<string, unknown>;
  return {
    BuildingKey: b.id,
    ModificationTimestamp: x.modifiedAt,
    BuildingName: b.name,
    UnparsedAddress: b.address_street,
    City: b.city,
    StateOrProvince: b.state,
    PostalCode: b.zip_code,
    Latitude: b.latitude,
    Longitude: b.longitude,
    YearBuilt: b.year_built ?? null,
    StoriesTotal: b.floor_count ?? null,
    NumberOfUnitsTotal: b.unit_count ?? null,
    ParcelNumber: b.bbl ?? null,
    BuilderName: b.developer ?? null,
    PetsAllowed: [b.pets_allowed ? 'Yes' : 'No'],
    STOOP_Slug: b.slug,
    STOOP_AreaId: b.area_id,
    STOOP_BuildingType: b.building_type,
    STOOP_YearRenovated: b.year_renovated ?? null,
    STOOP_Bin: b.bin ?? null,
    STOOP_ManagementCompany: b.management_company ?? null,
    STOOP_Architect: b.architect ?? null,
    STOOP_TaxAbatementStatus: b.tax_abatement_status ?? null,
    STOOP_TaxAbatementYearsRemaining: b.tax_abatement_years_remaining ?? null,
    STOOP_Amenities: parse(b.amenities_json),
    STOOP_Policies: parse(b.policies_json),
    STOOP_NycData: parse(b.nyc_data_json),
    STOOP_AdditionalDetails: parse(b.additional_details_json),
    STOOP_InternetProviders: b.internet_providers_json
      ? (JSON.parse(b.internet_providers_json) as ResoBuilding['STOOP_InternetProviders'])
      : null,
    STOOP_Scores: x.scores,
    Media: encodeMedia('Building', b.id, x.photos, null),
  };
}

/** A Building record as Stoop's building; `parse_failed` naming the field when it is not one. */
export function decodeBuilding(record: unknown): UpstreamBuilding {
  const key = (record as { BuildingKey?: unknown } | null)?.BuildingKey;
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    fail('Building', undefined, 'record is not a JSON object');
  }
  if (!checkBuilding.Check(record)) schemaError('Building', key, checkBuilding, record);
  const r = record as ResoBuilding;
  if (!(BUILDING_TYPES as readonly string[]).includes(r.STOOP_BuildingType)) {
    fail(
      'Building',
      r.BuildingKey,
      `field STOOP_BuildingType: unknown building type "${r.STOOP_BuildingType}"`,
    );
  }
  const providers = r.STOOP_InternetProviders?.providers ?? null;
  return {
    building: {
      id: r.BuildingKey,
      slug: r.STOOP_Slug,
      name: r.BuildingName,
      address_street: r.UnparsedAddress,
      city: r.City,
      state: r.StateOrProvince,
      zip_code: r.PostalCode,
      area_id: r.STOOP_AreaId,
      building_type: r.STOOP_BuildingType,
      year_built: r.YearBuilt,
      year_renovated: r.STOOP_YearRenovated,
      floor_count: r.StoriesTotal,
      unit_count: r.NumberOfUnitsTotal,
      latitude: r.Latitude,
      longitude: r.Longitude,
      bbl: r.ParcelNumber,
      bin: r.STOOP_Bin,
      management_company: r.STOOP_ManagementCompany,
      developer: r.BuilderName,
      architect: r.STOOP_Architect,
      tax_abatement_status: r.STOOP_TaxAbatementStatus,
      tax_abatement_years_remaining: r.STOOP_TaxAbatementYearsRemaining,
      amenities_json: JSON.stringify(r.STOOP_Amenities),
      policies_json: JSON.stringify(r.STOOP_Policies),
      nyc_data_json: JSON.stringify(r.STOOP_NycData),
      additional_details_json: JSON.stringify(r.STOOP_AdditionalDetails),
      internet_providers_json: r.STOOP_InternetProviders ? JSON.stringify(r.STOOP_InternetProviders) : null,
      // Denormalized from the broadband record, as the building row keeps them for search filters.
      fiber_available: providers?.some((p) => p.technologyCode === 50) ? 1 : 0,
      max_download_mbps:
        providers && providers.length > 0 ? Math.max(...providers.map((p) => p.maxDownloadMbps)) : null,
      pets_allowed: r.PetsAllowed.some((p) => compact(p) !== 'No') ? 1 : 0,
    },
    scores: r.STOOP_Scores ? { ...r.STOOP_Scores, updated_at: instant(r.STOOP_Scores.updated_at) } : null,
    photos: decodePhotos('Building', r.BuildingKey, r.Media),
    modifiedAt: instant(r.ModificationTimestamp),
  };
}
