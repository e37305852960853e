import type { Kysely } from 'kysely';
import type { Served } from '../../domain/freshness.ts';
import type { ListingType } from '../../domain/listing.ts';
import type { Tier } from '../../domain/tiers.ts';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { AreaTree } from '../../reference/areas.ts';
import type { DataVersion } from '../freshness/data-version.ts';
import type { FreshnessPolicy } from '../freshness/freshness-policy.ts';
import type { RentalSnapshot, SaleSnapshot } from './market.schema.ts';
import { computeSnapshot, type MarketRow } from './snapshot.ts';
import { MIN_SAMPLE } from './statistics.ts';

export type MarketSnapshot = RentalSnapshot | SaleSnapshot;

export interface SnapshotRequest {
  listingType: ListingType;
  areaId: number;
  bedrooms?: number | undefined;
  buildingType?: string | undefined;
}

/** How long a computed snapshot is served before time-dependent figures (new listings, days on market) are recomputed. */
const SNAPSHOT_TTL_MS = 60_000;
/** Bound on cached snapshots; the cache is cleared when it fills (areas × bedrooms × types is ~25k at most). */
const MAX_CACHED = 5000;

/** The ACTIVE rows of one listing type at one data version. */
interface RowSet {
  version: string;
  rows: Promise<MarketRow[]>;
}

interface CachedSnapshot {
  version: string;
  at: number;
  snapshot: MarketSnapshot;
}

/**
 * Market snapshots over ACTIVE listings. The rows (a few columns of each active
 * listing, ~32k rentals at full scale) are read with one query per listing type
 * and data version; snapshots are computed from them in memory and cached per
 * (parameters, data version) for SNAPSHOT_TTL_MS, so repeated calls cost a map
 * lookup and an all-NYC computation runs at most once a minute per key.
 */
export class MarketService {
  private readonly rowSets = new Map<ListingType, RowSet>();
  private readonly cache = new Map<string, CachedSnapshot>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly areaTree: AreaTree,
    private readonly clock: Clock,
    private readonly dataVersion: DataVersion,
    private readonly freshness: FreshnessPolicy,
  ) {}

  /** `GET /market/{type}/snapshot`: one area's figures; their age is when they were computed. */
  async snapshotOf(request: SnapshotRequest, tier: Tier): Promise<Served<MarketSnapshot>> {
    const data = await this.snapshot(request, await this.dataVersion.version());
    return { data, meta: this.freshness.ofDerived(tier, data.computedAt) };
  }

  /**
   * `GET /market/compare`: the figures of each area in request order (all
   * validated first, so an unknown one is a 400 naming `areas` before any work);
   * their age is that of the oldest.
   */
  async compare(
    listingType: ListingType,
    areaIds: readonly number[],
    filters: { bedrooms?: number | undefined; buildingType?: string | undefined },
    tier: Tier,
  ): Promise<Served<MarketSnapshot[]>> {
    for (const id of areaIds) this.assertArea(id, 'areas');
    const version = await this.dataVersion.version();
    const data: MarketSnapshot[] = [];
    for (const areaId of areaIds) {
      data.push(await this.snapshot({ listingType, areaId, ...filters }, version, 'areas'));
    }
    const computedAt = data.map((s) => s.computedAt).sort()[0] ?? null;
    return { data, meta: this.freshness.ofDerived(tier, computedAt) };
  }

  /** Validates an area id or throws a 400 naming `parameter`. */
  assertArea(areaId: number, parameter: string): void {
    if (!this.areaTree.has(areaId)) {
      throw ApiError.invalidParam({ parameter, rule: 'unknown_area', message: `no area has id ${areaId}` });
    }
  }

  private async snapshot(
    request: SnapshotRequest,
    version: string,
    parameter = 'areaId',
  ): Promise<MarketSnapshot> {
    this.assertArea(request.areaId, parameter);
    const key = `${request.listingType}|${request.areaId}|${request.bedrooms ?? ''}|${request.buildingType ?? ''}`;
    const now = this.clock.now();
    const hit = this.cache.get(key);
    if (
      hit &&
      hit.version === version &&
      now.getTime() - hit.at < SNAPSHOT_TTL_MS &&
      now.getTime() >= hit.at
    ) {
      return hit.snapshot;
    }
    const rows = await this.rows(request.listingType, version);
    const figures = computeSnapshot(
      rows,
      {
        listingType: request.listingType,
        areaIds: new Set(this.areaTree.descendantsAndSelf(request.areaId)),
        bedrooms: request.bedrooms,
        buildingType: request.buildingType,
      },
      now,
    );
    const common = {
      areaId: request.areaId,
      areaName: this.areaTree.get(request.areaId)?.name ?? '',
      bedrooms: request.bedrooms ?? null,
      buildingType: (request.buildingType ?? null) as RentalSnapshot['buildingType'],
      computedAt: now.toISOString(),
      minSample: MIN_SAMPLE,
      inventory: figures.inventory,
      newListings7d: figures.newListings7d,
      newListings30d: figures.newListings30d,
      price: figures.price,
      pricePerSqft: figures.pricePerSqft,
      daysOnMarket: figures.daysOnMarket,
      priceCutShare: figures.priceCutShare,
      medianPriceCutPct: figures.medianPriceCutPct,
    };
    const snapshot: MarketSnapshot =
      request.listingType === 'rental'
        ? {
            ...common,
            listingType: 'rental',
            netEffectiveRent: figures.netEffectiveRent!,
            concessionShare: figures.concessionShare!,
            noFeeShare: figures.noFeeShare!,
          }
        : { ...common, listingType: 'sale', saleTypeMix: figures.saleTypeMix! };
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(key, { version, at: now.getTime(), snapshot });
    return snapshot;
  }

  /** Computes the level ≤ 1 snapshots (NYC, boroughs) of both types so the first callers find them cached. */
  async warm(): Promise<void> {
    const version = await this.dataVersion.version();
    for (const listingType of ['rental', 'sale'] as const) {
      for (const area of this.areaTree.records) {
        if (area.level > 1) continue;
        for (const bedrooms of [undefined, 0, 1, 2, 3, 4]) {
          await this.snapshot({ listingType, areaId: area.id, bedrooms }, version);
        }
      }
    }
  }

  private rows(listingType: ListingType, version: string): Promise<MarketRow[]> {
    const current = this.rowSets.get(listingType);
    if (current && current.version === version) return current.rows;
    const rows = loadActiveMarketRows(this.db, listingType);
    this.rowSets.set(listingType, { version, rows });
    // A failed load is not cached: the next request retries.
    rows.catch(() => {
      if (this.rowSets.get(listingType)?.rows === rows) this.rowSets.delete(listingType);
    });
    return rows;
  }
}

/** One query: the columns market figures read, for every ACTIVE listing of a type. */
export async function loadActiveMarketRows(
  db: Kysely<Database>,
  listingType: ListingType,
): Promise<MarketRow[]> {
  const rows = await db
    .selectFrom('listings')
    .select([
      'area_id',
      'bedroom_count',
      'building_type',
      'price',
      'price_per_sqft',
      'net_effective',
      'months_free',
      'listed_at',
      'price_delta',
      'no_fee',
      'sale_type',
    ])
    .where('listing_type', '=', listingType)
    .where('status', '=', 'ACTIVE')
    .execute();
  return rows.map((r) => ({
    areaId: Number(r.area_id),
    bedrooms: Number(r.bedroom_count),
    buildingType: r.building_type,
    price: Number(r.price),
    pricePerSqft: r.price_per_sqft === null ? null : Number(r.price_per_sqft),
    netEffective: r.net_effective === null ? null : Number(r.net_effective),
    monthsFree: r.months_free === null ? null : Number(r.months_free),
    listedAt: r.listed_at === null ? null : Date.parse(r.listed_at),
    priceDelta: Number(r.price_delta),
    noFee: Number(r.no_fee) === 1,
    saleType: r.sale_type,
  }));
}
