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
  /** The record's freshness columns only: read on every request, since a refresh that changed nothing moves them alone. */
  header(id: string): Promise<{ refreshedAt: string } | undefined>;
  /** Everything the rendering needs, or undefined when there is no such record. */
  full(id: string): Promise<Full | undefined>;
}

export interface DetailRead {
  json: Buffer;
  detailScraped: boolean;
  refreshedAt: string;
}

/**
 * The read path of listing and building detail, shared: the rendered JSON is
 * cached per data version (the `VersionedJsonCache` contract: every writer of
 * listings, buildings or scores moves the version), while freshness is read
 * per request from the record's header. An unknown id is a 404.
 */
export class DetailReader<Full> {
  private readonly cache: VersionedJsonCache;

  constructor(
    private readonly source: DetailSource<Full>,
    capacity: number,
  ) {
    this.cache = new VersionedJsonCache(capacity);
  }

  async read(
    id: string,
    version: string,
    now: Date,
    render: (full: Full) => RenderedRecord | Promise<RenderedRecord>,
  ): Promise<DetailRead> {
    this.cache.useVersion(version);
    const cached = this.cache.get(id, now.getTime());
    if (cached) {
      const header = await this.source.header(id);
      if (!header) throw ApiError.notFound(this.source.resource, id);
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
    this.cache.set(id, entry, version);
    return { json: entry.json, detailScraped: entry.detailScraped, refreshedAt: rendered.refreshedAt };
  }
}
