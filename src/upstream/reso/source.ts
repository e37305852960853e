/**
 * `ListingSource` over a RESO Web API (OData 4) service: the production
 * adapter, and the one the demo points at the market simulator.
 *
 * Requests:
 * - pages: `GET {root}/Property?$filter=…&$select=…&$orderby=ModificationTimestamp,ListingKey&$top=n`
 *   (plus `$expand=Media,OpenHouse` when `expand`), following `@odata.nextLink`;
 *   the cursor handed out is that link, verbatim;
 * - replication: `$filter=ModificationTimestamp ge <instant>` (inclusive, see
 *   `ListingPageQuery.modifiedSince`) under the same ordering;
 * - one listing: `GET {root}/Property('key')?$expand=Media,OpenHouse`;
 * - buildings: the local `Building` resource with the same conventions
 *   (`$orderby=ModificationTimestamp,BuildingKey`, `$expand=Media`).
 * A next link or cursor that does not start with the service root is refused
 * (`parse_failed`): following it would send the bearer token elsewhere.
 */
import type { Config } from '../../config.ts';
import type { ListingRow } from '../../platform/db/tables.ts';
import {
  type CallOptions,
  type ListingPage,
  type ListingPageQuery,
  type ListingSource,
  type UpstreamBuilding,
  UpstreamError,
  type UpstreamListing,
} from '../source.ts';
import { type Backoff, JsonClient, type RetryLog, type Sleep } from './http.ts';
import { decodeBuilding, decodeListing, PROPERTY_TYPES, STANDARD_STATUSES } from './mapping.ts';
import {
  BUILDING_FIELDS,
  PROPERTY_DETAIL_FIELDS,
  PROPERTY_EXPANSIONS,
  PROPERTY_SUMMARY_FIELDS,
} from './resources.ts';

export interface ResoSourceOptions {
  /** Service root, e.g. `http://127.0.0.1:8081/odata` (no trailing slash needed). */
  url: string;
  /** Bearer token; never logged. */
  token?: string | undefined;
  /** Per-request timeout, ms (overridable per call). */
  timeoutMs?: number;
  /** Retries of a retryable failure (overridable per call). */
  retries?: number;
  /** Page size when the query gives none. */
  pageSize?: number;
  fetch?: typeof fetch;
  backoff?: Backoff;
  sleep?: Sleep;
  random?: () => number;
  log?: RetryLog;
}

const DEFAULT_PAGE_SIZE = 500;
const MAX_PAGE_SIZE = 5_000;
const ALL_STATUSES: readonly ListingRow['status'][] = ['ACTIVE', 'IN_CONTRACT', 'OFF_MARKET'];

/** An OData string literal: single quotes doubled. */
function stringLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** A DateTimeOffset literal, normalized to ISO 8601 UTC with milliseconds. */
function instantLiteral(value: string, name: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new RangeError(`${name} is not an ISO 8601 instant: "${value}"`);
  return new Date(ms).toISOString();
}

function query(params: Record<string, string | undefined>): string {
  return Object.entries(params)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([key, value]) => `${key}=${encodeURIComponent(value)}`)
    .join('&');
}

function pageSize(requested: number | undefined, fallback: number): string {
  const n = requested ?? fallback;
  return String(Math.max(1, Math.min(MAX_PAGE_SIZE, Math.floor(n))));
}

export class ResoListingSource implements ListingSource {
  readonly name: string;
  private readonly root: string;
  private readonly client: JsonClient;
  private readonly defaultPageSize: number;

  constructor(options: ResoSourceOptions) {
    const root = new URL(options.url);
    if (root.protocol !== 'http:' && root.protocol !== 'https:') {
      throw new RangeError(`upstream URL must be http or https, got ${root.protocol}`);
    }
    // Credentials in the URL would end up in logs and `meta`; the token option is the way.
    root.username = '';
    root.password = '';
    root.search = '';
    root.hash = '';
    this.root = root.toString().replace(/\/+$/, '');
    this.name = `reso:${this.root}`;
    this.defaultPageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.client = new JsonClient({
      token: options.token,
      timeoutMs: options.timeoutMs ?? 10_000,
      retries: options.retries ?? 3,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.backoff ? { backoff: options.backoff } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
      ...(options.random ? { random: options.random } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
  }

  async searchListings(q: ListingPageQuery, options?: CallOptions): Promise<ListingPage> {
    const url = q.cursor ? this.continuation(q.cursor) : this.propertyPageUrl(q);
    const body = await this.client.get(url, 'Property page', options);
    const { value, next } = this.page(body, 'Property page');
    const listings: UpstreamListing[] = value.map(decodeListing);
    return { listings, next };
  }

  async fetchListing(id: string, options?: CallOptions): Promise<UpstreamListing> {
    const url = `${this.root}/Property(${encodeURIComponent(stringLiteral(id))})?${query({
      $expand: PROPERTY_EXPANSIONS.join(','),
    })}`;
    const body = await this.client.get(url, `Property ${id}`, options);
    const listing = decodeListing(body);
    if (listing.listing.id !== id) {
      throw new UpstreamError(
        'parse_failed',
        `Property ${id}: answered with ListingKey ${listing.listing.id}`,
      );
    }
    if (!listing.detail) {
      throw new UpstreamError('parse_failed', `Property ${id}: Media and OpenHouse were not expanded`);
    }
    return listing;
  }

  async fetchBuilding(id: string, options?: CallOptions): Promise<UpstreamBuilding> {
    const url = `${this.root}/Building(${encodeURIComponent(stringLiteral(id))})?${query({ $expand: 'Media' })}`;
    const body = await this.client.get(url, `Building ${id}`, options);
    const building = decodeBuilding(body);
    if (building.building.id !== id) {
      throw new UpstreamError(
        'parse_failed',
        `Building ${id}: answered with BuildingKey ${building.building.id}`,
      );
    }
    return building;
  }

  async listBuildings(
    q: { modifiedSince?: string; pageSize?: number; cursor?: string | null },
    options?: CallOptions,
  ): Promise<{ buildings: UpstreamBuilding[]; next: string | null }> {
    let url: string;
    if (q.cursor) url = this.continuation(q.cursor);
    else {
      url = `${this.root}/Building?${query({
        $filter: q.modifiedSince
          ? `ModificationTimestamp ge ${instantLiteral(q.modifiedSince, 'modifiedSince')}`
          : undefined,
        $select: BUILDING_FIELDS.join(','),
        $orderby: 'ModificationTimestamp,BuildingKey',
        $top: pageSize(q.pageSize, this.defaultPageSize),
        $expand: 'Media',
      })}`;
    }
    const body = await this.client.get(url, 'Building page', options);
    const { value, next } = this.page(body, 'Building page');
    return { buildings: value.map(decodeBuilding), next };
  }

  /** The page URL of a query without cursor. */
  propertyPageUrl(q: ListingPageQuery): string {
    const clauses: string[] = [];
    if (q.listingType) clauses.push(`PropertyType eq ${stringLiteral(PROPERTY_TYPES[q.listingType])}`);
    // Always filtered: statuses the mapping cannot place (ComingSoon, Incomplete) never reach the decoder.
    const statuses = (q.statuses ?? ALL_STATUSES).flatMap((s) => STANDARD_STATUSES[s]);
    clauses.push(`StandardStatus in (${statuses.map(stringLiteral).join(',')})`);
    if (q.modifiedSince) {
      clauses.push(`ModificationTimestamp ge ${instantLiteral(q.modifiedSince, 'modifiedSince')}`);
    }
    const fields = q.expand
      ? [...PROPERTY_SUMMARY_FIELDS, ...PROPERTY_DETAIL_FIELDS]
      : PROPERTY_SUMMARY_FIELDS;
    return `${this.root}/Property?${query({
      $filter: clauses.join(' and '),
      $select: fields.join(','),
      $orderby: 'ModificationTimestamp,ListingKey',
      $top: pageSize(q.pageSize, this.defaultPageSize),
      $expand: q.expand ? PROPERTY_EXPANSIONS.join(',') : undefined,
    })}`;
  }

  private continuation(link: string): string {
    let url: URL;
    try {
      url = new URL(link, `${this.root}/`);
    } catch {
      throw new UpstreamError('parse_failed', 'next link is not a URL');
    }
    const text = url.toString();
    if (!text.startsWith(`${this.root}/`)) {
      throw new UpstreamError('parse_failed', 'next link points outside the service root');
    }
    return text;
  }

  private page(body: unknown, what: string): { value: unknown[]; next: string | null } {
    if (typeof body !== 'object' || body === null || !Array.isArray((body as { value?: unknown }).value)) {
      throw new UpstreamError('parse_failed', `${what}: field value: expected an array of records`);
    }
    const link = (body as { '@odata.nextLink'?: unknown })['@odata.nextLink'];
    if (link !== undefined && link !== null && typeof link !== 'string') {
      throw new UpstreamError('parse_failed', `${what}: field @odata.nextLink: expected a string`);
    }
    const value = (body as { value: unknown[] }).value;
    return { value, next: typeof link === 'string' && link !== '' ? this.continuation(link) : null };
  }
}

/** The source configured by UPSTREAM_URL / UPSTREAM_TOKEN / UPSTREAM_TIMEOUT_MS / UPSTREAM_RETRIES. */
export function resoSourceFromConfig(
  config: Pick<Config, 'upstream'>,
  overrides: Partial<ResoSourceOptions> = {},
): ResoListingSource {
  const url = overrides.url ?? config.upstream.url;
  if (!url) throw new RangeError('UPSTREAM_URL is not set');
  return new ResoListingSource({
    token: config.upstream.token,
    timeoutMs: config.upstream.timeoutMs,
    retries: config.upstream.retries,
    ...overrides,
    url,
  });
}
