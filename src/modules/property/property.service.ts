import type { Kysely } from 'kysely';
import type { Freshness, Served, ServedJson } from '../../domain/freshness.ts';
import { daysOnMarketValidUntil } from '../../domain/listing.ts';
import type { Tier } from '../../domain/tiers.ts';
import { ApiError } from '../../http/errors.ts';
import { RESOURCE_ID_MAX_LENGTH } from '../../http/path-id.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { AreaTree } from '../../reference/areas.ts';
import type { DataVersion } from '../freshness/data-version.ts';
import { DetailReader } from '../freshness/detail-reader.ts';
import type { FreshnessPolicy } from '../freshness/freshness-policy.ts';
import type { LiveOutcome } from '../freshness/refresh-port.ts';
import { type DetailLinks, toFee, toListingDetail, toOpenHouse, toPriceEvents } from './property.mapper.ts';
import {
  findListingDetailRows,
  findListingDetailStamp,
  findListingHeader,
  findListingIdByUrlPath,
  type ListingDetailRows,
  type ListingHeader,
  listFees,
  listPriceEvents,
  listUpcomingOpenHouses,
} from './property.repository.ts';
import type { Fee, OpenHouse, PriceEvent } from './property.schema.ts';

/** Listing details kept serialized (about 2–4 KB each): the hot set, not the market. */
const DETAIL_CACHE_ENTRIES = 20_000;

/** A listing page path: `/rental/<id>` or `/sale/<id>` (a trailing slash is tolerated). */
const LISTING_PATH = new RegExp(`^/(rental|sale)/([0-9]{1,${RESOURCE_ID_MAX_LENGTH}})/?$`);

/**
 * The listing page path a `url` parameter names, or a 400 naming `url` and
 * what is wrong with it. Accepts the path itself or an absolute http(s) URL
 * (any host: the path is what identifies the listing).
 */
export function listingPathFromUrl(raw: string): { urlPath: string; id: string } {
  const value = raw.trim();
  let path: string;
  if (value.startsWith('/')) {
    path = value.split(/[?#]/, 1)[0]!;
  } else {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw invalidUrl('must be a listing path such as /rental/123 or an absolute http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw invalidUrl(`must be an http(s) URL (got ${url.protocol.slice(0, -1)})`);
    }
    path = url.pathname;
  }
  const match = LISTING_PATH.exec(path);
  if (!match) {
    throw invalidUrl(`path "${path.slice(0, 200)}" is not a listing page (/rental/<id> or /sale/<id>)`);
  }
  return { urlPath: `/${match[1]}/${match[2]}`, id: match[2]! };
}

function invalidUrl(message: string): ApiError {
  return ApiError.invalidParam({ parameter: 'url', rule: 'listing_url', message });
}

/**
 * One listing and its sub-resources (history, fees, open houses), with the
 * freshness rules of the `FreshnessPolicy`.
 */
export class PropertyService {
  private readonly reader: DetailReader<ListingDetailRows>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly areaTree: AreaTree,
    private readonly clock: Clock,
    private readonly freshness: FreshnessPolicy,
    private readonly dataVersion: DataVersion,
    private readonly links: DetailLinks,
  ) {
    this.reader = new DetailReader(
      {
        resource: 'Listing',
        header: async (id) => {
          const header = await findListingDetailStamp(db, id);
          return header && { refreshedAt: header.refreshed_at, stamp: header.stamp };
        },
        full: (id) => findListingDetailRows(db, id),
      },
      DETAIL_CACHE_ENTRIES,
    );
  }

  /** `GET /property/{id}`: live-fetched first for Business and Internal callers. */
  async detail(id: string, tier: Tier): Promise<ServedJson> {
    const live = await this.freshness.liveRead(tier, id);
    return this.readDetail(id, tier, live);
  }

  /** `GET /property/by-url`: the listing whose page path the URL names. */
  async detailByUrl(url: string, tier: Tier): Promise<ServedJson> {
    const { urlPath, id: pathId } = listingPathFromUrl(url);
    let id = await findListingIdByUrlPath(this.db, urlPath);
    let live: LiveOutcome | null = null;
    if (id !== undefined) {
      live = await this.freshness.liveRead(tier, id);
    } else if (this.freshness.readsLive(tier)) {
      // Not stored yet: a live caller may still get it from upstream under the id the path carries.
      live = await this.freshness.liveRead(tier, pathId);
      if (live === 'refreshed') id = await findListingIdByUrlPath(this.db, urlPath);
    }
    if (id === undefined) throw ApiError.notFound('Listing with URL path', urlPath);
    return this.readDetail(id, tier, live);
  }

  private async readDetail(id: string, tier: Tier, live: LiveOutcome | null): Promise<ServedJson> {
    const now = this.clock.now();
    // A live read that refreshed may just have written the listing: its header is read again.
    // One that failed (or found it gone upstream) wrote nothing: the epoch's header stands.
    const epoch = live === 'refreshed' ? null : await this.dataVersion.epoch();
    const read = await this.reader.read(
      id,
      await this.dataVersion.version(),
      now,
      (rows) => {
        const data = toListingDetail(rows, this.areaName(rows.listing.area_id), now, this.links);
        return {
          data,
          detailScraped: data.detailScraped,
          validUntil: daysOnMarketValidUntil(rows.listing, now),
          refreshedAt: rows.listing.refreshed_at,
        };
      },
      epoch,
    );
    const meta = this.freshness.ofRecord({
      tier,
      kind: 'detail',
      target: { kind: 'listing', id },
      refreshedAt: read.refreshedAt,
      detailScraped: read.detailScraped,
      live,
    });
    return { json: read.json, meta };
  }

  async history(id: string, tier: Tier): Promise<Served<PriceEvent[]>> {
    const header = await this.header(id);
    return { data: toPriceEvents(await listPriceEvents(this.db, id)), meta: this.subMeta(header, tier) };
  }

  async fees(id: string, tier: Tier): Promise<Served<Fee[]>> {
    const header = await this.header(id);
    return { data: (await listFees(this.db, id)).map(toFee), meta: this.subMeta(header, tier) };
  }

  /** Open houses that have not ended yet by the service clock (in progress or upcoming). */
  async openHouses(id: string, tier: Tier): Promise<Served<OpenHouse[]>> {
    const header = await this.header(id);
    const rows = await listUpcomingOpenHouses(this.db, id, this.clock.now().toISOString());
    return { data: rows.map(toOpenHouse), meta: this.subMeta(header, tier) };
  }

  private async header(id: string): Promise<ListingHeader> {
    const header = await findListingHeader(this.db, id);
    if (!header) throw ApiError.notFound('Listing', id);
    return header;
  }

  /** Sub-resources are refreshed with their listing; their age is the listing's. */
  private subMeta(header: ListingHeader, tier: Tier): Freshness {
    return this.freshness.ofRecord({
      tier,
      kind: 'detail',
      target: { kind: 'listing', id: header.id },
      refreshedAt: header.refreshed_at,
      detailScraped: header.detail_scraped === 1,
    });
  }

  private areaName(areaId: number): string {
    return this.areaTree.get(areaId)?.name ?? 'Unassigned';
  }
}
