import type { Kysely } from 'kysely';
import { keyedLookup } from '../../platform/db/keyed-lookup.ts';
import type {
  BuildingScoresRow,
  Database,
  FeeRow,
  ListingDetailsRow,
  ListingRow,
  OpenHouseRow,
  PriceEventRow,
} from '../../platform/db/tables.ts';
import { SUMMARY_COLUMNS, type SummaryRow } from '../listings/listing.mapper.ts';

/** Listing columns the detail needs beyond the summary's. */
const DETAIL_LISTING_COLUMNS = [
  'closed_reason',
  'monthly_fees',
  'pets_allowed',
  'has_3d_tour',
  'refreshed_at',
  'updated_at',
] as const satisfies readonly (keyof ListingRow)[];

export type DetailListingRow = SummaryRow & Pick<ListingRow, (typeof DETAIL_LISTING_COLUMNS)[number]>;

export type StoredDetails = Omit<ListingDetailsRow, 'listing_id' | 'updated_at' | 'source_hash'>;

/** Everything `GET /property/{id}` serves about one listing, read in two queries. */
export interface ListingDetailRows {
  listing: DetailListingRow;
  /** Null when the detail page was never fetched (or is no longer kept). */
  details: StoredDetails | null;
  building: { id: string; name: string; slug: string } | null;
  scores: BuildingScoresRow | undefined;
  photos: PhotoRow[];
}

import type { PhotoRow } from '../photos/photo.mapper.ts';

const detailJoin = keyedLookup((db) =>
  db
    .selectFrom('listings as l')
    .leftJoin('listing_details as d', 'd.listing_id', 'l.id')
    .leftJoin('buildings as b', 'b.id', 'l.building_id')
    .leftJoin('building_scores as s', 's.building_id', 'l.building_id')
    .select(SUMMARY_COLUMNS.map((c) => `l.${c}` as const))
    .select(DETAIL_LISTING_COLUMNS.map((c) => `l.${c}` as const))
    .select([
      'd.listing_id as d_listing_id',
      'd.description as d_description',
      'd.amenities_json as d_amenities_json',
      'd.unit_features_json as d_unit_features_json',
      'd.lease_terms_json as d_lease_terms_json',
      'd.concessions_json as d_concessions_json',
      'd.sale_details_json as d_sale_details_json',
      'd.agents_json as d_agents_json',
      'd.pets_policy_json as d_pets_policy_json',
      'd.photos_json as d_photos_json',
      'd.floor_plan_key as d_floor_plan_key',
      'd.virtual_tour_url as d_virtual_tour_url',
      'b.name as b_name',
      'b.slug as b_slug',
      's.building_id as s_building_id',
      's.health_score as s_health_score',
      's.noise_score as s_noise_score',
      's.safety_score as s_safety_score',
      's.transit_score as s_transit_score',
      's.violations_open as s_violations_open',
      's.updated_at as s_updated_at',
    ])
    .where('l.id', '=', ''),
);

const listingPhotos = keyedLookup((db) =>
  db
    .selectFrom('photos')
    .select(['key', 'width', 'height', 'caption'])
    .where('listing_id', '=', '')
    .orderBy('position'),
);

/** The listing row, its detail record, building link and scores (one lookup with left joins), and its photos. */
export async function findListingDetailRows(
  db: Kysely<Database>,
  id: string,
): Promise<ListingDetailRows | undefined> {
  const row = (await detailJoin(db, id))[0];
  if (!row) return undefined;
  const photos = await listingPhotos(db, id);
  return {
    // The joined row carries every listing column under its own name (plus the
    // prefixed joined ones): used as is, not copied.
    listing: row,
    details:
      row.d_listing_id === null
        ? null
        : {
            description: row.d_description!,
            amenities_json: row.d_amenities_json!,
            unit_features_json: row.d_unit_features_json!,
            lease_terms_json: row.d_lease_terms_json,
            concessions_json: row.d_concessions_json,
            sale_details_json: row.d_sale_details_json,
            agents_json: row.d_agents_json!,
            pets_policy_json: row.d_pets_policy_json!,
            photos_json: row.d_photos_json!,
            floor_plan_key: row.d_floor_plan_key,
            virtual_tour_url: row.d_virtual_tour_url,
          },
    building:
      row.b_name === null || row.b_slug === null
        ? null
        : { id: row.building_id, name: row.b_name, slug: row.b_slug },
    scores:
      row.s_building_id === null
        ? undefined
        : {
            building_id: row.s_building_id,
            health_score: row.s_health_score,
            noise_score: row.s_noise_score,
            safety_score: row.s_safety_score,
            transit_score: row.s_transit_score,
            violations_open: row.s_violations_open!,
            updated_at: row.s_updated_at!,
          },
    photos,
  };
}

/** What sub-resources need of their listing: existence and freshness. */
export interface ListingHeader {
  id: string;
  refreshed_at: string;
  detail_scraped: 0 | 1;
}

const listingHeader = keyedLookup((db) =>
  db.selectFrom('listings').select(['id', 'refreshed_at', 'detail_scraped']).where('id', '=', ''),
);

export async function findListingHeader(
  db: Kysely<Database>,
  id: string,
): Promise<ListingHeader | undefined> {
  return (await listingHeader(db, id))[0];
}

/**
 * A listing's freshness and the stamp of everything its detail rendering shows:
 * its revision (row, detail, fees, open houses, photos), its building's and its
 * building scores' update times. Equal stamps, equal rendering.
 */
export interface ListingDetailStamp {
  refreshed_at: string;
  stamp: string;
}

const listingDetailStamp = keyedLookup((db) =>
  db
    .selectFrom('listings as l')
    .leftJoin('buildings as b', 'b.id', 'l.building_id')
    .leftJoin('building_scores as s', 's.building_id', 'l.building_id')
    .select([
      'l.refreshed_at',
      'l.revision',
      'b.updated_at as building_updated_at',
      's.updated_at as scores_updated_at',
    ])
    .where('l.id', '=', ''),
);

export async function findListingDetailStamp(
  db: Kysely<Database>,
  id: string,
): Promise<ListingDetailStamp | undefined> {
  const row = (await listingDetailStamp(db, id))[0];
  return (
    row && {
      refreshed_at: row.refreshed_at,
      stamp: `${row.revision}|${row.building_updated_at ?? ''}|${row.scores_updated_at ?? ''}`,
    }
  );
}

export async function findListingIdByUrlPath(
  db: Kysely<Database>,
  urlPath: string,
): Promise<string | undefined> {
  const row = await db.selectFrom('listings').select('id').where('url_path', '=', urlPath).executeTakeFirst();
  return row?.id;
}

/** A listing's timeline in date order (events on one day in the order they were recorded). */
export async function listPriceEvents(
  db: Kysely<Database>,
  listingId: string,
): Promise<Pick<PriceEventRow, 'date' | 'price' | 'event'>[]> {
  return db
    .selectFrom('price_events')
    .select(['date', 'price', 'event'])
    .where('listing_id', '=', listingId)
    .orderBy('date')
    .orderBy('id')
    .execute();
}

export async function listFees(
  db: Kysely<Database>,
  listingId: string,
): Promise<Omit<FeeRow, 'listing_id'>[]> {
  return db
    .selectFrom('fees')
    .select([
      'id',
      'type_label',
      'category',
      'requirement',
      'refundability',
      'calc_type',
      'amount',
      'timing',
      'occurrence',
    ])
    .where('listing_id', '=', listingId)
    .orderBy('id')
    .execute();
}

/** Open houses that have not ended by `nowIso`, soonest first. */
export async function listUpcomingOpenHouses(
  db: Kysely<Database>,
  listingId: string,
  nowIso: string,
): Promise<Omit<OpenHouseRow, 'listing_id'>[]> {
  return db
    .selectFrom('open_houses')
    .select(['id', 'starts_at', 'ends_at', 'kind', 'by_appointment', 'note'])
    .where('listing_id', '=', listingId)
    .where('ends_at', '>', nowIso)
    .orderBy('starts_at')
    .orderBy('id')
    .execute();
}
