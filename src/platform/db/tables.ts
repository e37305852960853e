/**
 * Row types of every table, shared by both dialects.
 *
 * Portability rules (one query code path for SQLite and PostgreSQL):
 * - Timestamps are ISO 8601 UTC text (`2026-11-21T22:46:04.000Z`), dates are
 *   `YYYY-MM-DD` text: both sort and compare lexicographically in either engine.
 * - Booleans are 0/1 integers (`Flag`): better-sqlite3 cannot bind JS booleans.
 * - Structured sub-records are JSON text, parsed by the row mappers.
 * - Money is whole dollars (integer); ratios and coordinates are double precision.
 */
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { ListingEventType } from '../../domain/events.ts';
import type { Tier } from '../../domain/tiers.ts';

export type Flag = 0 | 1;

export interface AreasTable {
  id: number;
  name: string;
  parent_id: number | null;
  level: number;
  slug: string;
  /** Lowercased, accent-stripped name used by `q` matching. */
  name_folded: string;
  latitude: number | null;
  longitude: number | null;
}

export interface BuildingsTable {
  id: string;
  slug: string;
  name: string;
  address_street: string;
  city: string;
  state: string;
  zip_code: string;
  area_id: number;
  building_type: string;
  year_built: number | null;
  year_renovated: number | null;
  floor_count: number | null;
  unit_count: number | null;
  latitude: number;
  longitude: number;
  /** Borough-Block-Lot; null when unknown (then no HPD violations can be linked). */
  bbl: string | null;
  bin: string | null;
  management_company: string | null;
  developer: string | null;
  architect: string | null;
  tax_abatement_status: string | null;
  tax_abatement_years_remaining: number | null;
  /** JSON: BuildingAmenities. */
  amenities_json: string;
  /** JSON: BuildingPolicies. */
  policies_json: string;
  /** JSON: NycData (community district, police precinct, building class, …). */
  nyc_data_json: string;
  /** JSON: additional details (lot size, elevators, heating, …). */
  additional_details_json: string;
  /** JSON: InternetProviders record, or null when no broadband match exists. */
  internet_providers_json: string | null;
  /** Denormalized from internet providers for search filters. */
  fiber_available: Flag;
  max_download_mbps: number | null;
  pets_allowed: Flag;
  refreshed_at: string;
  created_at: string;
  updated_at: string;
}

/** Every column of `buildings`, in table order (checked complete at compile time, like LISTING_COLUMNS). */
export const BUILDING_COLUMNS = [
  'id',
  'slug',
  'name',
  'address_street',
  'city',
  'state',
  'zip_code',
  'area_id',
  'building_type',
  'year_built',
  'year_renovated',
  'floor_count',
  'unit_count',
  'latitude',
  'longitude',
  'bbl',
  'bin',
  'management_company',
  'developer',
  'architect',
  'tax_abatement_status',
  'tax_abatement_years_remaining',
  'amenities_json',
  'policies_json',
  'nyc_data_json',
  'additional_details_json',
  'internet_providers_json',
  'fiber_available',
  'max_download_mbps',
  'pets_allowed',
  'refreshed_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof BuildingsTable)[];

type MissingBuildingColumns = Exclude<keyof BuildingsTable, (typeof BUILDING_COLUMNS)[number]>;
export const BUILDING_COLUMNS_COMPLETE: MissingBuildingColumns extends never ? true : MissingBuildingColumns =
  true;

export interface BuildingScoresTable {
  building_id: string;
  health_score: number | null;
  noise_score: number | null;
  safety_score: number | null;
  transit_score: number | null;
  violations_open: number;
  updated_at: string;
}

/**
 * Rentals and sales share one table: they share ~90% of their fields, every
 * search, building and history query treats them alike, and one row shape keeps
 * one mapper. Type-specific columns (lease terms, concessions; sale type,
 * maintenance, taxes) are nullable and set only for their `listing_type`.
 */
export interface ListingsTable {
  id: string;
  listing_type: 'rental' | 'sale';
  status: 'ACTIVE' | 'IN_CONTRACT' | 'OFF_MARKET';
  /** Why a listing left the market: RENTED, SOLD, DELISTED, or null while on market. */
  closed_reason: 'RENTED' | 'SOLD' | 'DELISTED' | null;
  building_id: string;
  area_id: number;
  street: string;
  unit: string | null;
  city: string;
  state: string;
  zip_code: string;
  latitude: number;
  longitude: number;
  url_path: string;
  building_type: string;

  price: number;
  /** Latest price minus the previous price (0 when never changed). */
  price_delta: number;
  /** Rent net of concessions over the lease term (rentals; equals price when none). */
  net_effective: number | null;
  months_free: number | null;
  lease_term_months: number | null;
  /**
   * Sum of the recurring monthly fees every tenant pays (rentals; conditional
   * ones such as pet rent are excluded) or maintenance/common charges + taxes (sales).
   */
  monthly_fees: number;
  /** price + monthly_fees for rentals; monthly_fees for sales. Indexed for `maxMonthlyCost`. */
  monthly_cost: number;
  no_fee: Flag;
  sale_type: 'RESALE' | 'SPONSOR_UNIT' | 'FORECLOSURE' | null;

  bedroom_count: number;
  full_bathroom_count: number;
  half_bathroom_count: number;
  /** full + 0.5 × half: the value bath filters compare against. */
  bathrooms: number;
  sqft: number | null;
  price_per_sqft: number | null;

  listed_at: string | null;
  listed_at_is_approximate: Flag;
  available_at: string | null;
  /** When the listing went off market (closed or delisted); null while on market. */
  off_market_at: string | null;
  contract_at: string | null;

  /** Bit set of AMENITY_CODES (listing and building amenities merged). */
  amenity_mask: number;
  pets_allowed: Flag;
  has_3d_tour: Flag;
  /** Start of the next scheduled open house, maintained with open_houses. */
  next_open_house_at: string | null;
  lead_photo_key: string | null;
  source_group_label: string;
  /** Quality/recency rank used by `sort=RECOMMENDED` (higher first). */
  rank_score: number;

  detail_scraped: Flag;
  /** When this service last confirmed the row with upstream. */
  refreshed_at: string;
  /** When the listing first appeared upstream. */
  created_at: string;
  /** When upstream last changed the listing (its modification timestamp). */
  updated_at: string;
  /**
   * The store's change counter when the listing (row or detail) last changed:
   * assigned by the refresh writer, never by data (migration 0010).
   */
  revision: ColumnType<number, number | undefined, number>;
  /**
   * Hash of the upstream detail payload the listing's details, fees, open houses
   * and photos were last written from; null until a refresh wrote them (migration 0013).
   */
  detail_hash: ColumnType<string | null, string | null | undefined, string | null>;
}

/**
 * Every column of `listings`, in table order: the one list bulk writers
 * (demo loader, refresh pipeline) and change detection derive theirs from.
 * Typed against the table so a new column cannot be forgotten here.
 */
export const LISTING_COLUMNS = [
  'id',
  'listing_type',
  'status',
  'closed_reason',
  'building_id',
  'area_id',
  'street',
  'unit',
  'city',
  'state',
  'zip_code',
  'latitude',
  'longitude',
  'url_path',
  'building_type',
  'price',
  'price_delta',
  'net_effective',
  'months_free',
  'lease_term_months',
  'monthly_fees',
  'monthly_cost',
  'no_fee',
  'sale_type',
  'bedroom_count',
  'full_bathroom_count',
  'half_bathroom_count',
  'bathrooms',
  'sqft',
  'price_per_sqft',
  'listed_at',
  'listed_at_is_approximate',
  'available_at',
  'off_market_at',
  'contract_at',
  'amenity_mask',
  'pets_allowed',
  'has_3d_tour',
  'next_open_house_at',
  'lead_photo_key',
  'source_group_label',
  'rank_score',
  'detail_scraped',
  'refreshed_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ListingsTable)[];

// Compile-time check that LISTING_COLUMNS names every column.
// `revision` and `detail_hash` are the store's bookkeeping, not listing data: writers set them themselves.
type MissingListingColumns = Exclude<
  keyof ListingsTable,
  (typeof LISTING_COLUMNS)[number] | 'revision' | 'detail_hash'
>;
export const LISTING_COLUMNS_COMPLETE: MissingListingColumns extends never ? true : MissingListingColumns =
  true;

/** The rich detail record, stored only for listings whose detail page was scraped. */
export interface ListingDetailsTable {
  listing_id: string;
  description: string;
  /** JSON: string[] of amenity names. */
  amenities_json: string;
  /** JSON: unit features (floor, exposure, view, laundry, outdoor space, …). */
  unit_features_json: string;
  /** JSON: lease terms (rentals) — term options, guarantors, furnished, … */
  lease_terms_json: string | null;
  /** JSON: concessions (rentals) — months free, net effective, expiry. */
  concessions_json: string | null;
  /** JSON: sale details — maintenance, common charges, taxes, financing, flip tax. */
  sale_details_json: string | null;
  /** JSON: agent and brokerage contacts. */
  agents_json: string;
  /** JSON: pets policy. */
  pets_policy_json: string;
  /** JSON: photo keys in display order. */
  photos_json: string;
  floor_plan_key: string | null;
  virtual_tour_url: string | null;
  updated_at: string;
  /** Superseded by `listings.detail_hash` (migration 0013); no longer written or read. */
  source_hash: string | null;
}

export interface PriceEventsTable {
  id: Generated<number>;
  listing_id: string;
  date: string;
  price: number;
  event:
    | 'LISTED'
    | 'PRICE_DECREASE'
    | 'PRICE_INCREASE'
    | 'IN_CONTRACT'
    | 'RENTED'
    | 'SOLD'
    | 'DELISTED'
    | 'RELISTED';
  pct_change: number | null;
}

export interface FeesTable {
  id: Generated<number>;
  listing_id: string;
  type_label: string;
  category: string;
  requirement: string;
  refundability: string;
  calc_type: string;
  amount: number;
  timing: string;
  occurrence: string;
}

export interface OpenHousesTable {
  id: string;
  listing_id: string;
  starts_at: string;
  ends_at: string;
  kind: 'IN_PERSON' | 'VIRTUAL';
  by_appointment: Flag;
  note: string | null;
}

export interface PhotosTable {
  key: string;
  listing_id: string | null;
  building_id: string | null;
  position: number;
  width: number;
  height: number;
  caption: string | null;
  /** Deterministic seed the demo renders the source image from. */
  render_seed: number;
}

export interface HpdViolationsTable {
  violation_id: string;
  bbl: string;
  class: 'A' | 'B' | 'C' | 'I';
  status: string;
  description: string;
  inspection_date: string;
  is_open: Flag;
}

/**
 * When each scope last changed (the data version), was confirmed with upstream
 * (`refresh:` scopes, `meta.dataAge`), or a marker was written. Read and written
 * only through src/modules/freshness/data-version.ts, which types the scopes.
 */
export interface SyncStateTable {
  scope: string;
  refreshed_at: string;
  detail: string | null;
}

export interface AccountsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  /** Hex SHA-256 of the whole key. */
  key_hash: string;
  /** Prefix and last four characters, for people to recognise a key. */
  key_hint: string;
  tier: 'FREE' | 'STARTER' | 'PRO' | 'BUSINESS' | 'INTERNAL';
  status: 'active' | 'disabled' | 'revoked';
  subscription_ends_at: string | null;
  /** Identifier at the billing provider that provisioned the key, if any. */
  external_ref: string | null;
  created_at: string;
  updated_at: string;
}

/** Requests counted per rate bucket and calendar month (UTC, `YYYY-MM`). */
export interface UsageCountersTable {
  bucket: string;
  period: string;
  used: number;
}

/** A lease one process holds at a time (platform/limits/process-lease.ts); ISO 8601 UTC instants. */
export interface ProcessLeasesTable {
  name: string;
  /** `host:pid:<random>` of the holder. */
  holder: string;
  expires_at: string;
  renewed_at: string;
}

/**
 * One day's market figures for (listing type, area incl. descendants, bedroom
 * bucket), materialized by the market-snapshots job. Days with no inventory and
 * no new listings have no row (read as 0 within the covered range).
 */
export interface MarketDailySnapshotsTable {
  listing_type: 'rental' | 'sale';
  area_id: number;
  /** 'all', or '0'…'4' (4 = 4 or more). */
  bedrooms: string;
  date: string;
  inventory: number;
  new_listings: number;
  median_price: number | null;
  price_n: number;
  median_price_per_sqft: number | null;
  price_per_sqft_n: number;
  median_days_on_market: number | null;
  days_on_market_n: number;
}

/** Which days the market-snapshots job has materialized (one row, id 'daily'). */
export interface MarketSnapshotCoverageTable {
  id: string;
  first_date: string;
  last_date: string;
  /** First day the backfill aims for; first_date reaches it when the backfill is done. */
  target_first_date: string;
  updated_at: string;
}

/** The durable, append-only log of listing changes; `sequence` orders it and is every consumer's cursor. */
export interface ListingEventsTable {
  sequence: Generated<number>;
  type: ListingEventType;
  listing_id: string;
  building_id: string;
  listing_type: 'rental' | 'sale';
  /** The listing's area when the change was detected; null for events logged before migration 0011. */
  area_id: number | null;
  /** JSON text of the value before the change; null when there was none. */
  old_value: string | null;
  /** JSON text of the value after the change. */
  new_value: string | null;
  /** When upstream says the change happened. */
  occurred_at: string;
  /** When this service detected it. */
  recorded_at: string;
}

/** How far each independent consumer has read the event log. */
export interface EventCursorsTable {
  consumer: string;
  sequence: number;
  updated_at: string;
}

/**
 * The refresh pipeline's own state by name: replication high-water marks.
 * Read and written only through src/jobs/refresh/pipeline-state.repository.ts.
 */
export interface PipelineStateTable {
  name: string;
  value: string;
  updated_at: string;
}

// ---------------------------------------------------------------------------
// NYC open data (migration 0005_open_data; src/modules/opendata).
// Point tables carry a ~200 m grid cell (cell_x, cell_y; see opendata/geo.ts).
// ---------------------------------------------------------------------------

/** One MapPLUTO tax lot, keyed by BBL. */
export interface PlutoLotsTable {
  bbl: string;
  year_built: number | null;
  num_floors: number | null;
  units_res: number | null;
  units_total: number | null;
  building_class: string | null;
  /** Community district as MN01…SI03. */
  community_district: string | null;
  police_precinct: number | null;
  zoning: string | null;
  address: string | null;
  latitude: number | null;
  longitude: number | null;
  cell_x: number | null;
  cell_y: number | null;
  imported_at: string;
}

/** One FCC BDC fixed-availability record: (location, provider, technology). */
export interface BroadbandAvailabilityTable {
  location_id: number;
  provider_id: number;
  technology: number;
  frn: string | null;
  brand_name: string;
  holding_company: string | null;
  max_download_mbps: number;
  max_upload_mbps: number;
  low_latency: Flag;
  /** R residential, B business, X both. */
  business_residential_code: string;
  state_usps: string | null;
  block_geoid: string | null;
  h3_res8_id: string | null;
  imported_at: string;
}

/** A 311 service request whose complaint type starts with "Noise". */
export interface NoiseComplaintsTable {
  unique_key: string;
  /** `YYYY-MM-DD` (New York local date). */
  created_date: string;
  complaint_type: string;
  descriptor: string | null;
  bbl: string | null;
  latitude: number;
  longitude: number;
  cell_x: number;
  cell_y: number;
}

/** An NYPD complaint with its law category (severity). */
export interface CrimeComplaintsTable {
  cmplnt_num: string;
  /** `YYYY-MM-DD`: when the offense started (else when it was reported). */
  complaint_date: string;
  offense: string | null;
  law_category: 'FELONY' | 'MISDEMEANOR' | 'VIOLATION';
  precinct: number | null;
  latitude: number;
  longitude: number;
  cell_x: number;
  cell_y: number;
}

/** A GTFS station (location_type 1, or a stop without a parent station). */
export interface TransitStationsTable {
  stop_id: string;
  name: string;
  latitude: number;
  longitude: number;
  cell_x: number;
  cell_y: number;
}

/** The last import of each dataset: scores need to know which inputs exist at all. */
export interface OpenDataImportsTable {
  dataset: string;
  imported_at: string;
  source_file: string;
  rows_read: number;
  rows_upserted: number;
  rows_ignored: number;
  rows_rejected: number;
}

// ---------------------------------------------------------------------------
// Webhooks (migration 0008_webhooks; src/modules/webhooks, src/jobs/deliveries).
// ---------------------------------------------------------------------------

/** A webhook subscription of an account. */
export interface WebhookSubscriptionsTable {
  id: string;
  account_id: string;
  url: string;
  /** JSON: event type names. */
  events: string;
  /** JSON: WebhookFilters, or null. */
  filters: string | null;
  active: Flag;
  /**
   * The signing secret (`whsec_…`), stored as is: signing needs it, so it
   * cannot be hashed like an API key (encrypting it at rest is a follow-up).
   */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  after_sequence: number;
  failing_since: string | null;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export type WebhookDeliveryStatus = 'pending' | 'delivering' | 'succeeded' | 'failed' | 'cancelled';

/** The delivery outbox: one row per (subscription, event), retried until it succeeds or fails for good. */
export interface WebhookDeliveriesTable {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  response_status: number | null;
  latency_ms: number | null;
  last_error: string | null;
  claimed_until: string | null;
  claimed_by: string | null;
  created_at: string;
  updated_at: string;
}

// ---------------------------------------------------------------------------
// Watchers (migration 0009_watchers; src/modules/watchers, src/jobs/watchers).
// ---------------------------------------------------------------------------

export type WatchType = 'listing' | 'building' | 'search';
export type WatcherStatus = 'active' | 'paused';

/** A watcher of an account: one listing, one building or one search, polled on its interval. */
export interface WatchersTable {
  id: string;
  account_id: string;
  watch_type: WatchType;
  /** JSON: {listingId} | {buildingId} | {searchFilters}. */
  target: string;
  poll_interval_s: number;
  status: WatcherStatus;
  /** Why the service paused it (`quota_exceeded`, `tier_restricted`), or `by_owner`; null while active. */
  paused_reason: string | null;
  last_polled_at: string | null;
  last_change_at: string | null;
  /** The claim: pollers move it forward (compare-and-set) before polling. */
  next_poll_at: string;
  /** JSON: what the last poll saw; null before the first. */
  snapshot: string | null;
  last_sequence: ColumnType<number, number | undefined, number>;
  created_at: string;
  updated_at: string;
}

/** A change a watcher detected, kept for `Last-Event-ID` resume. */
export interface WatcherChangesTable {
  watcher_id: string;
  sequence: number;
  occurred_at: string;
  /** JSON: the WatcherChange payload. */
  payload: string;
}

/** OAuth 2.1 registered clients (src/oauth); expire 30 days after registration. */
export interface OAuthClientsTable {
  client_id: string;
  client_name: string;
  /** JSON array of strings. */
  redirect_uris: string;
  /** JSON object: the registered metadata echoed back. */
  metadata: string;
  created_at: string;
  expires_at: string;
}

/** OAuth authorization codes, by SHA-256 hash; single-use (`used_at`). */
export interface OAuthCodesTable {
  code_hash: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  scope: string;
  key_id: string | null;
  account_id: string | null;
  tier: Tier;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** OAuth grants: one consent and the family of tokens issued from it. */
export interface OAuthGrantsTable {
  id: string;
  client_id: string;
  code_hash: string;
  key_id: string | null;
  account_id: string | null;
  tier: Tier;
  resource: string;
  scope: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  revoked_reason: string | null;
}

/** OAuth access and refresh tokens, by SHA-256 hash. */
export interface OAuthTokensTable {
  token_hash: string;
  kind: 'access' | 'refresh';
  grant_id: string;
  tier: Tier;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** Secrets every node shares (the consent form's CSRF key). */
export interface OAuthSecretsTable {
  name: string;
  value: string;
  created_at: string;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  usage_counters: UsageCountersTable;
  process_leases: ProcessLeasesTable;
  areas: AreasTable;
  buildings: BuildingsTable;
  building_scores: BuildingScoresTable;
  listings: ListingsTable;
  listing_details: ListingDetailsTable;
  price_events: PriceEventsTable;
  fees: FeesTable;
  open_houses: OpenHousesTable;
  photos: PhotosTable;
  hpd_violations: HpdViolationsTable;
  sync_state: SyncStateTable;
  market_daily_snapshots: MarketDailySnapshotsTable;
  market_snapshot_coverage: MarketSnapshotCoverageTable;
  listing_events: ListingEventsTable;
  event_cursors: EventCursorsTable;
  pipeline_state: PipelineStateTable;
  pluto_lots: PlutoLotsTable;
  broadband_availability: BroadbandAvailabilityTable;
  noise_complaints: NoiseComplaintsTable;
  crime_complaints: CrimeComplaintsTable;
  transit_stations: TransitStationsTable;
  open_data_imports: OpenDataImportsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  watchers: WatchersTable;
  watcher_changes: WatcherChangesTable;
  oauth_clients: OAuthClientsTable;
  oauth_codes: OAuthCodesTable;
  oauth_grants: OAuthGrantsTable;
  oauth_tokens: OAuthTokensTable;
  oauth_secrets: OAuthSecretsTable;
}

export type AreaRow = Selectable<AreasTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type BuildingRow = Selectable<BuildingsTable>;
export type NewBuilding = Insertable<BuildingsTable>;
export type BuildingScoresRow = Selectable<BuildingScoresTable>;
export type ListingRow = Selectable<ListingsTable>;
export type NewListing = Insertable<ListingsTable>;
export type ListingUpdate = Updateable<ListingsTable>;
export type ListingDetailsRow = Selectable<ListingDetailsTable>;
export type NewListingDetails = Insertable<ListingDetailsTable>;
export type PriceEventRow = Selectable<PriceEventsTable>;
export type NewPriceEvent = Insertable<PriceEventsTable>;
export type FeeRow = Selectable<FeesTable>;
export type NewFee = Insertable<FeesTable>;
export type OpenHouseRow = Selectable<OpenHousesTable>;
export type NewOpenHouse = Insertable<OpenHousesTable>;
export type NewPhoto = Insertable<PhotosTable>;
export type NewHpdViolation = Insertable<HpdViolationsTable>;
export type ListingEventRow = Selectable<ListingEventsTable>;
export type NewListingEvent = Insertable<ListingEventsTable>;
export type WebhookSubscriptionRow = Selectable<WebhookSubscriptionsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type NewWebhookDelivery = Insertable<WebhookDeliveriesTable>;
export type WatcherRow = Selectable<WatchersTable>;
export type NewWatcher = Insertable<WatchersTable>;
export type WatcherChangeRow = Selectable<WatcherChangesTable>;
