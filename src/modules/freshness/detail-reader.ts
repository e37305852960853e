import { ApiError } from '../../http/errors.ts';
import { VersionedJsonCache } from '../../platform/versioned-json-cache.ts';

/** What a detail read renders from the full rows of one record. */
export interface RenderedRecord {
  data: unknown;
  detailScraped: boolean;
  /** Epoch ms after which the rendering is out of date (days on market); Infinity when never. */
  validUntil: number;
  refreshedAt: string;
}

/** How one kind of record (a listing, a building) is read from the store. */
export interface DetailSource<Full> {
  /** Names the record in a 404 ("Listing", "Building"). */
  readonly resource: string;
  /**
   * The record's freshness columns, read once per data-version epoch (a
   * refresh that changed nothing moves them alone), and optionally a `stamp` that changes
   * whenever the rendering would: with one, a cached rendering is reused while
   * the stamp is unchanged, whatever else in the store moved; without, the
   * cache is emptied at every data-version move.
   */
  header(id: string): Promise<RecordHeader | undefined>;
  /** Everything the rendering needs, or undefined when there is no such record. */
  full(id: string): Promise<Full | undefined>;
}

/** A record's freshness columns and, optionally, its rendering stamp (see DetailSource.header). */
export interface RecordHeader {
  refreshedAt: string;
  stamp?: string;
}

export interface DetailRead {
  json: Buffer;
  detailScraped: boolean;
  refreshedAt: string;
}

/**
 * The read path of listing and building detail, shared: the rendered JSON is
 * cached, while freshness is read from the record's header once per
 * DataVersion epoch (at once after a write this process signals, within a
 * second of one made elsewhere: the data version's own bound). A
 * source whose header carries a stamp has its renderings validated per record
 * (a refresh cycle that changed a few listings re-renders those few); one
 * without is cached per data version (the `VersionedJsonCache` contract:
 * every writer of listings, buildings or scores moves the version). An
 * unknown id is a 404.
 */
export class DetailReader<Full> {
  private readonly cache: VersionedJsonCache;
  /** The stamp each cached rendering was made at (stamped sources only). */
  private readonly stamps = new Map<string, string>();
  /** Headers read during the epoch they were read in (see `read`). */
  private readonly headers = new Map<string, { epoch: object; header: RecordHeader }>();

  constructor(
    private readonly source: DetailSource<Full>,
    capacity: number,
  ) {
    this.cache = new VersionedJsonCache(capacity);
  }

  /**
   * `headerEpoch` (DataVersion.epoch; null: read it now) lets a header read
   * earlier in the same epoch stand in for the query, so a record read many
   * times a second costs one header query per epoch instead of one per
   * request; its freshness is then as old as the data version allows. A
   * caller that has just written the record (a live refresh) passes null.
   */
  async read(
    id: string,
    version: string,
    now: Date,
    render: (full: Full) => RenderedRecord | Promise<RenderedRecord>,
    headerEpoch: object | null = null,
  ): Promise<DetailRead> {
    const header = await this.headerOf(id, headerEpoch);
    const { stamp } = header;
    // Stamped renderings outlive data-version moves: the stamp decides.
    const cacheVersion = stamp === undefined ? version : 'stamped';
    this.cache.useVersion(cacheVersion);
    const cached = this.cache.get(id, now.getTime());
    if (cached && (stamp === undefined || this.stamps.get(id) === stamp)) {
      return { json: cached.json, detailScraped: cached.detailScraped, refreshedAt: header.refreshedAt };
    }
    const full = await this.source.full(id);
    if (full === undefined) throw ApiError.notFound(this.source.resource, id);
    const rendered = await render(full);
    const entry = {
      json: Buffer.from(JSON.stringify(rendered.data)),
      detailScraped: rendered.detailScraped,
      validUntil: rendered.validUntil,
    };
    if (stamp !== undefined) {
      // The rows were read after the stamp: at least as new. A change in between
      // moves the stamp, so the next read renders again.
      if (this.stamps.size >= this.cache.capacity) this.stamps.clear();
      this.stamps.set(id, stamp);
    }
    this.cache.set(id, entry, cacheVersion);
    return { json: entry.json, detailScraped: entry.detailScraped, refreshedAt: rendered.refreshedAt };
  }

  /** The record's header (reused within `epoch`), or a 404; an unknown id is never remembered. */
  private async headerOf(id: string, epoch: object | null): Promise<RecordHeader> {
    const known = epoch === null ? undefined : this.headers.get(id);
    if (known !== undefined && known.epoch === epoch) return known.header;
    const header = await this.source.header(id);
    if (!header) throw ApiError.notFound(this.source.resource, id);
    if (epoch !== null) {
      if (this.headers.size >= this.cache.capacity) this.headers.clear();
      this.headers.set(id, { epoch, header });
    }
    return header;
  }
}
