import type { Kysely } from 'kysely';
import type { Freshness, Served, ServedJson } from '../../domain/freshness.ts';
import type { ListingStatus, ListingType } from '../../domain/listing.ts';
import type { Tier } from '../../domain/tiers.ts';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { AreaTree } from '../../reference/areas.ts';
import type { DataVersion } from '../freshness/data-version.ts';
import { DetailReader } from '../freshness/detail-reader.ts';
import type { FreshnessPolicy } from '../freshness/freshness-policy.ts';
import { toListingSummary } from '../listings/listing.mapper.ts';
import type { ListingSummary } from '../listings/listing.schema.ts';
import type { PhotoRow } from '../photos/photo.mapper.ts';
import { toBuildingDetail, toBuildingScores, toHpdViolation } from './building.mapper.ts';
import {
  type BuildingDetailRow,
  type BuildingHeader,
  findBuilding,
  findBuildingHeader,
  findScores,
  listAllBuildingPhotos,
  listBuildingListings,
  listViolations,
} from './building.repository.ts';
import type { BuildingScores, HpdViolation } from './building.schema.ts';

/** Buildings kept serialized (2–4 KB each): 12k buildings make a full city. */
const BUILDING_CACHE_ENTRIES = 20_000;

/** At most this many violations are served (newest first); a warning says when more exist. */
export const MAX_VIOLATIONS = 1000;

export interface ListingsPage {
  items: ListingSummary[];
  total: number;
  meta: Freshness;
}

/**
 * Building photos of the whole store, grouped by building, read once per
 * version of the building data: the photos table is indexed by listing, not by
 * building, and building photos are few (a handful per building, ~14k rows for
 * the whole city). Building photos are written only with buildings, and every
 * building write moves the `buildings` sync scope, whose time is the version.
 */
class BuildingPhotoCache {
  private current: { version: string; photos: Map<string, PhotoRow[]> } | null = null;
  private loading: { version: string; done: Promise<Map<string, PhotoRow[]>> } | null = null;

  constructor(private readonly db: Kysely<Database>) {}

  async get(buildingId: string, version: string): Promise<readonly PhotoRow[]> {
    if (this.current?.version === version) return this.current.photos.get(buildingId) ?? [];
    if (this.loading?.version !== version) this.loading = { version, done: listAllBuildingPhotos(this.db) };
    const loading = this.loading;
    try {
      const photos = await loading.done;
      // Only the newest requested version is installed: a slow load for an older one must not win.
      if (this.loading === loading) {
        this.current = { version, photos };
        this.loading = null;
      }
      return photos.get(buildingId) ?? [];
    } catch (error) {
      if (this.loading === loading) this.loading = null;
      throw error;
    }
  }
}

/** One building and its sub-resources, with the freshness rules of the `FreshnessPolicy`. */
export class BuildingService {
  private readonly photos: BuildingPhotoCache;
  private readonly reader: DetailReader<BuildingDetailRow>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly areaTree: AreaTree,
    private readonly clock: Clock,
    private readonly freshness: FreshnessPolicy,
    private readonly dataVersion: DataVersion,
    private readonly photoBaseUrl: string,
  ) {
    this.photos = new BuildingPhotoCache(db);
    this.reader = new DetailReader(
      {
        resource: 'Building',
        header: async (id) => {
          const header = await findBuildingHeader(db, id);
          return header && { refreshedAt: header.refreshed_at };
        },
        full: (id) => findBuilding(db, id),
      },
      BUILDING_CACHE_ENTRIES,
    );
  }

  /** `GET /building/{id}`: the record with its photos; a building record is complete as stored. */
  async detail(id: string, tier: Tier): Promise<ServedJson> {
    const version = await this.dataVersion.version();
    // Building photos are written only with buildings: their version is the buildings scope's.
    const photosVersion = (await this.dataVersion.changedAt('buildings')) ?? 'never';
    const epoch = await this.dataVersion.epoch();
    const read = await this.reader.read(
      id,
      version,
      this.clock.now(),
      async (row) => ({
        data: toBuildingDetail(
          row,
          this.areaName(row.area_id),
          await this.photos.get(id, photosVersion),
          this.photoBaseUrl,
        ),
        detailScraped: true,
        validUntil: Number.POSITIVE_INFINITY,
        refreshedAt: row.refreshed_at,
      }),
      epoch,
    );
    return { json: read.json, meta: this.meta({ id }, tier, 'detail', read.refreshedAt) };
  }

  async scores(id: string, tier: Tier): Promise<Served<BuildingScores>> {
    const header = await this.header(id);
    const data = toBuildingScores(id, await findScores(this.db, id));
    return { data, meta: this.meta(header, tier, 'detail', header.refreshed_at) };
  }

  /**
   * Violations linked by the building's BBL. A building without a known BBL
   * has none that can be linked: an empty list and a warning saying why, so
   * clients need no special case.
   */
  async violations(id: string, tier: Tier): Promise<Served<HpdViolation[]> & { warnings: string[] }> {
    const header = await this.header(id);
    const meta = this.meta(header, tier, 'detail', header.refreshed_at);
    if (header.bbl === null) {
      return {
        data: [],
        meta,
        warnings: [
          `No BBL (Borough-Block-Lot) is known for building ${id}, so no HPD violations can be linked to it; the list is empty.`,
        ],
      };
    }
    const rows = await listViolations(this.db, header.bbl, MAX_VIOLATIONS + 1);
    const warnings =
      rows.length > MAX_VIOLATIONS
        ? [
            `More than ${MAX_VIOLATIONS} violations are recorded; only the ${MAX_VIOLATIONS} most recent are listed.`,
          ]
        : [];
    return { data: rows.slice(0, MAX_VIOLATIONS).map(toHpdViolation), meta, warnings };
  }

  /**
   * A page of the building's listings. Their age is that of the oldest row
   * served (the building's or a listing's); a stale page asks for a refresh of
   * the building, which covers its listings.
   */
  async listings(
    id: string,
    tier: Tier,
    filter: { statuses: readonly ListingStatus[]; listingType: ListingType | undefined },
    page: number,
    perPage: number,
  ): Promise<ListingsPage> {
    const header = await this.header(id);
    const { rows, total } = await listBuildingListings(
      this.db,
      { buildingId: id, ...filter },
      perPage,
      (page - 1) * perPage,
    );
    const now = this.clock.now();
    const scores = rows.length > 0 ? await findScores(this.db, id) : undefined;
    let oldest = header.refreshed_at;
    let allDetailScraped = rows.length > 0;
    const items = rows.map((row) => {
      if (row.refreshed_at < oldest) oldest = row.refreshed_at;
      allDetailScraped &&= row.detail_scraped === 1;
      return toListingSummary(row, this.areaName(row.area_id), scores, now);
    });
    return { items, total, meta: this.meta(header, tier, 'search', oldest, allDetailScraped) };
  }

  private async header(id: string): Promise<BuildingHeader> {
    const header = await findBuildingHeader(this.db, id);
    if (!header) throw ApiError.notFound('Building', id);
    return header;
  }

  /** A building record is complete as stored, so `detailScraped` is true unless listings say otherwise. */
  private meta(
    building: { id: string },
    tier: Tier,
    kind: 'search' | 'detail',
    refreshedAt: string,
    detailScraped = true,
  ): Freshness {
    return this.freshness.ofRecord({
      tier,
      kind,
      target: { kind: 'building', id: building.id },
      refreshedAt,
      detailScraped,
    });
  }

  private areaName(areaId: number): string {
    return this.areaTree.get(areaId)?.name ?? 'Unassigned';
  }
}
