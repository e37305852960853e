/**
 * The MCP tools: one per REST read operation, over the same services, the
 * same TypeBox query schemas (validated by the same Ajv setup, with its
 * coercion and defaults) and the same response envelope, so a tool's
 * `structuredContent` is the `{data, meta}` the REST route answers for the
 * same arguments.
 *
 * Everything static — names, descriptions, JSON schemas, compiled validators —
 * is built once (`buildToolCatalogue`); a call only validates and runs.
 */
import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import type { ListingStatus, ListingType } from '../domain/listing.ts';
import type { Tier } from '../domain/tiers.ts';
import type { Caller } from '../http/caller.ts';
import {
  capPerPage,
  type ListFreshness,
  listBodyChunks,
  listMetaFrom,
  type PaginatedMeta,
  paramNames,
  servedJsonBody,
} from '../http/envelope.ts';
import { describeValidationIssue, validationFailureMessage } from '../http/error-handler.ts';
import { ApiError } from '../http/errors.ts';
import { assertPageInRange, type PageRequest, pageLinks } from '../http/pagination.ts';
import { invalidResourceId, isResourceId, resourceIdParam } from '../http/path-id.ts';
import { StringEnum } from '../http/schemas.ts';
import { buildRequestValidator } from '../http/validation.ts';
import type { AreaInclude } from '../modules/areas/areas.schema.ts';
import { ListAreasQuery, ListAreasResponse } from '../modules/areas/areas.schema.ts';
import type { AreasService } from '../modules/areas/areas.service.ts';
import {
  BuildingListingsQuery,
  BuildingListingsResponse,
  BuildingScoresResponse,
  ViolationsResponse,
} from '../modules/building/building.schema.ts';
import type { BuildingService } from '../modules/building/building.service.ts';
import {
  CompareQuery,
  CompareResponse,
  MAX_COMPARE_AREAS,
  RentalSnapshotResponse,
  SaleSnapshotResponse,
  SnapshotQuery,
  TrendQuery,
  TrendResponse,
} from '../modules/market/market.schema.ts';
import type { MarketService } from '../modules/market/market.service.ts';
import type { MarketTrends } from '../modules/market/trends.ts';
import {
  ByUrlQuery,
  FeesResponse,
  OpenHousesResponse,
  PriceHistoryResponse,
} from '../modules/property/property.schema.ts';
import type { PropertyService } from '../modules/property/property.service.ts';
import { RentalSearchQuery, SaleSearchQuery } from '../modules/search/search.schema.ts';
import type { SearchQuery, SearchService } from '../modules/search/search.service.ts';
import { isDatabaseUnavailable } from '../platform/db/errors.ts';
import type { AreaTree } from '../reference/areas.ts';

/** The services the tools call: the ones the REST routes are given. */
export interface ToolServices {
  search: SearchService;
  areas: AreasService;
  market: MarketService;
  marketTrends: MarketTrends;
  property: PropertyService;
  building: BuildingService;
  areaTree: AreaTree;
  /** Origin of pagination links (PUBLIC_URL), as the REST routes use it. */
  publicUrl: string;
}

/** What one call runs with. */
export interface ToolCall {
  caller: Caller;
  /** Serializes a body through a REST response schema, exactly as the route's serializer does. */
  serialize(body: object, schema: TSchema): string;
}

/** Arguments after validation: coerced and defaulted like a REST query string. */
type Args = Record<string, unknown>;

interface ToolSpec {
  name: string;
  title: string;
  description: string;
  minTier: Tier;
  /** The operation's parameters: the REST query schema (plus `id` for a path parameter). */
  input: TObject;
  /** `id` is a listing or building id, checked first as the REST route's path check does. */
  pathId?: 'Listing' | 'Building';
  /** The REST body for these arguments: JSON text, or already parsed (the same JSON). */
  run(args: Args, call: ToolCall, sent: Args): Promise<string | Buffer | ToolBody>;
  /** One line for a model or a person: what came back. */
  summarize(body: ToolBody, args: Args): string;
}

/** The REST envelope as parsed back from its JSON text. */
export interface ToolBody {
  data: unknown;
  meta: Record<string, unknown>;
}

/**
 * The UTF-8 JSON text of a tool's body, when the tool had it before parsing (a
 * served body, cached listing rows): the MCP endpoint splices these bytes into
 * its answer rather than have the SDK serialize the parsed copy again, which
 * was a fifth of a search call's CPU (mcp.routes.ts, `splicedAnswer`).
 */
const bodyJson = new WeakMap<ToolBody, readonly Buffer[]>();

/** The body's JSON as chunks to write in order. */
export function serializedToolBody(body: ToolBody): readonly Buffer[] | undefined {
  return bodyJson.get(body);
}

/** A tool ready to list and call. */
export interface ToolDefinition {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly minTier: Tier;
  /** JSON Schema of the arguments (self-contained: the query schemas carry no `$ref`). */
  readonly inputSchema: { type: 'object'; [key: string]: unknown };
  /** Validates (coercing and defaulting a copy) then runs; expected failures are ApiErrors. */
  call(sent: Args, call: ToolCall): Promise<ToolBody>;
  summarize(body: ToolBody, args: Args): string;
}

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 });
const count = new Intl.NumberFormat('en-US');

/** Query text as a REST client would send these arguments, in their order (pagination links keep it). */
function queryText(args: Args, omit: ReadonlySet<string> = new Set()): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined || value === null || omit.has(name)) continue;
    params.append(name, String(value));
  }
  return params.toString();
}

/** `meta` of a list answer, as `paginatedMeta` builds it for the REST request with these arguments. */
function listMeta(
  publicUrl: string,
  path: string,
  sent: Args,
  freshness: ListFreshness,
  page: PageRequest,
  total: number,
  known: ReadonlySet<string>,
  extraWarnings: readonly string[],
): PaginatedMeta {
  const text = queryText(sent);
  const links = pageLinks(publicUrl, text === '' ? path : `${path}?${text}`, page, total, known);
  return listMetaFrom(freshness, page, total, links, [...extraWarnings]);
}

function areaNames(tree: AreaTree, areas: unknown): string {
  if (typeof areas !== 'string' || areas === '') return '';
  const names = areas
    .split(',')
    .map((input) => {
      const resolution = tree.names.resolve(input);
      return resolution.kind === 'found' ? resolution.record.name : undefined;
    })
    .filter((n): n is string => n !== undefined);
  if (names.length === 0) return '';
  return ` in ${names.length > 3 ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more` : names.join(', ')}`;
}

function pageLine(meta: Record<string, unknown>, shown: number, noun: string): string {
  const total = Number(meta.total ?? shown);
  const page = Number(meta.page ?? 1);
  const perPage = Number(meta.perPage ?? shown) || 1;
  const pages = Math.max(1, Math.ceil(total / perPage));
  return `${count.format(shown)} of ${count.format(total)} ${noun}, page ${page} of ${pages}`;
}

function warningsLine(meta: Record<string, unknown>): string {
  const warnings = Array.isArray(meta.warnings) ? (meta.warnings as string[]) : [];
  return warnings.length > 0 ? ` Warnings: ${warnings.join(' ')}` : '';
}

interface ListingRow {
  id?: string;
  price?: number;
  address?: { street?: string; unit?: string | null };
  bedroomCount?: number | null;
  areaName?: string;
}

function streetLine(address: ListingRow['address']): string {
  if (!address?.street) return '';
  return address.unit ? `${address.street} #${address.unit}` : address.street;
}

function summarizeListings(body: ToolBody, noun: string, where: string): string {
  const rows = (body.data as ListingRow[]) ?? [];
  const total = Number(body.meta.total ?? rows.length);
  const perPage = Number(body.meta.perPage ?? rows.length) || 1;
  let line = `${count.format(rows.length)} of ${count.format(total)} ${noun}${where}, page ${Number(body.meta.page ?? 1)} of ${Math.max(1, Math.ceil(total / perPage))}`;
  const cheapest = rows.reduce<ListingRow | undefined>(
    (best, r) =>
      typeof r.price === 'number' && (best?.price === undefined || r.price < best.price) ? r : best,
    undefined,
  );
  if (cheapest?.price !== undefined) {
    line += `; cheapest ${usd.format(cheapest.price)} at ${streetLine(cheapest.address)}${cheapest.areaName ? `, ${cheapest.areaName}` : ''} (id ${cheapest.id})`;
  }
  return `${line}.${warningsLine(body.meta)}`;
}

interface Figure {
  value: number | null;
}
interface Snapshot {
  areaName?: string;
  listingType?: string;
  inventory?: number;
  price?: { median?: number | null };
  daysOnMarket?: Figure;
}

function summarizeSnapshot(s: Snapshot): string {
  const median = s.price?.median;
  const dom = s.daysOnMarket?.value;
  return `${s.areaName ?? 'area'}: ${count.format(s.inventory ?? 0)} active ${s.listingType === 'sale' ? 'sales' : 'rentals'}, median price ${
    median === null || median === undefined ? 'n/a (too few listings)' : usd.format(median)
  }, median days on market ${dom === null || dom === undefined ? 'n/a' : dom}`;
}

function checkId(what: 'Listing' | 'Building', sent: unknown): string {
  const id = typeof sent === 'number' && Number.isInteger(sent) && sent >= 0 ? String(sent) : sent;
  if (typeof id !== 'string' || !isResourceId(id)) throw invalidResourceId(what, id);
  return id;
}

/**
 * What a search answer's summary line reads of each listing (./summarizeListings):
 * listing rows arrive as cached JSON fragments (one Buffer per listing and
 * data version), each parsed once, of which only these fields are kept — the
 * whole parsed row of every listing the cache holds would be kept alive
 * beside its bytes for nothing (about 22 MB at the demo's full scale). Shared
 * between calls and never mutated. The answer itself is the fragments' bytes.
 */
const summaryFieldsOf = new WeakMap<Buffer, ListingRow>();

function summaryFields(fragment: Buffer): ListingRow {
  let fields = summaryFieldsOf.get(fragment);
  if (fields === undefined) {
    const row = JSON.parse(fragment.toString('utf8')) as ListingRow;
    fields = { id: row.id, price: row.price, areaName: row.areaName };
    if (row.address) fields.address = { street: row.address.street, unit: row.address.unit };
    summaryFieldsOf.set(fragment, fields);
  }
  return fields;
}

/** Where a model finds the ids the detail tools take. */
const LISTING_ID_HINT =
  'Listing ids come from search_rentals / search_sales / get_building_listings results (`data[].id`).';
const BUILDING_ID_HINT = 'Building ids come from `buildingId` of a listing (search results or get_property).';

function idInput(what: 'Listing' | 'Building'): TObject {
  return Type.Object({ id: resourceIdParam(what) });
}

const marketListingType = StringEnum(['rentals', 'sales'] as const, {
  default: 'rentals',
  description: 'Which market: `rentals` (default) or `sales`.',
});

function specs(s: ToolServices): ToolSpec[] {
  const searchSpec = (
    name: string,
    listingType: ListingType,
    input: TObject,
    path: string,
    noun: string,
  ): ToolSpec => {
    const known = paramNames(input as { properties: Record<string, unknown> });
    return {
      name,
      title: listingType === 'rental' ? 'Search rentals' : 'Search sales',
      description: `Searches active NYC ${noun} listings (Free tier and up) and returns one page of ListingSummary rows (id, address, price, beds, baths, sqft, area, building id, days on market, no-fee…) with paging in meta (total, page, perPage, links). Use it to find ${noun} matching a budget, size or neighborhood; areas takes area ids, slugs, names or common aliases (areas="100" is all of Manhattan, areas="UWS,Bed-Stuy"; list_areas finds them). Near a place: near="lat,lng" (latitude first) with radius in metres (default 1000) and sort="DISTANCE"; each row then has distance (metres); bbox is "minLng,minLat,maxLng,maxLat" (longitude first). Filters are ANDed; list parameters are comma-separated. perPage is capped at the caller's tier maximum (by default 10 for Free, 50 for Starter) with a warning in meta.warnings. Same parameters and answer as GET ${path}.`,
      minTier: 'FREE',
      input,
      async run(args, call, sent) {
        const query = args as SearchQuery;
        const capped = capPerPage(query.perPage ?? 10, call.caller.maxPerPage);
        const page = { page: query.page ?? 1, perPage: capped.perPage };
        const result = await s.search.find(listingType, query, page, call.caller.tier);
        assertPageInRange(page, result.total);
        const meta = listMeta(
          s.publicUrl,
          path,
          sent,
          result.meta,
          page,
          result.total,
          known,
          capped.warnings,
        );
        // `data` holds what the summary line reads of each row, `meta` the meta it reads
        // (numbers and warnings); the answer is the REST bytes, the meta serialized once.
        const body: ToolBody = {
          data: result.items.map(summaryFields),
          meta: meta as unknown as ToolBody['meta'],
        };
        bodyJson.set(body, listBodyChunks(result.items, JSON.stringify(meta)));
        return body;
      },
      summarize: (body, args) => summarizeListings(body, noun, areaNames(s.areaTree, args.areas)),
    };
  };

  const areasKnown = paramNames(ListAreasQuery);
  const listingsKnown = paramNames(BuildingListingsQuery);

  return [
    searchSpec('search_rentals', 'rental', RentalSearchQuery, '/v1/search/rentals', 'rentals'),
    searchSpec('search_sales', 'sale', SaleSearchQuery, '/v1/search/sales', 'sales'),
    {
      name: 'list_areas',
      title: 'List areas',
      description:
        'Lists and searches the area tree (Free tier and up): regions, boroughs and neighborhoods of NYC and Northern New Jersey, each with id, name, level and parentId. Use it first to turn a place name into the area ids the search and market tools take (`q="Upper West"`), or to walk the tree (`parentId=100` lists Manhattan\'s children). Same parameters and answer as GET /v1/areas.',
      minTier: 'FREE',
      input: ListAreasQuery,
      async run(args, call, sent) {
        const query = args as ListAreasQuery;
        const capped = capPerPage(query.perPage ?? 10, call.caller.maxPerPage);
        const page = { page: query.page ?? 1, perPage: capped.perPage };
        const include = new Set((query.include?.split(',') ?? []) as AreaInclude[]);
        const result = await s.areas.list({ ...query, include, ...page, tier: call.caller.tier });
        assertPageInRange(page, result.total);
        const meta = listMeta(
          s.publicUrl,
          '/v1/areas',
          sent,
          result.meta,
          page,
          result.total,
          areasKnown,
          capped.warnings,
        );
        return call.serialize({ data: result.items, meta }, ListAreasResponse);
      },
      summarize(body) {
        const rows = (body.data as { id: number; name: string }[]) ?? [];
        const shown = rows
          .slice(0, 10)
          .map((a) => `${a.name} (${a.id})`)
          .join(', ');
        return `${pageLine(body.meta, rows.length, 'areas')}${shown ? `: ${shown}${rows.length > 10 ? ', …' : ''}` : ''}.${warningsLine(body.meta)}`;
      },
    },
    {
      name: 'get_market_snapshot',
      title: 'Market snapshot',
      description:
        'Market statistics for one area and its descendants (Free tier and up): active inventory, new listings, price and price-per-sqft distributions (median, quartiles), days on market and price cuts, optionally for one bedroom bucket (0–4, 4 = 4+) and building type. Figures from too few listings are null, never 0. Use it to answer "what does a 1-bedroom cost in Astoria"; areaId is an area id, slug, name or alias (areaId="Astoria"). Same answer as GET /v1/market/rentals/snapshot or /v1/market/sales/snapshot.',
      minTier: 'FREE',
      input: Type.Object({ listingType: marketListingType, ...SnapshotQuery.properties }),
      async run(args, call) {
        const q = args as SnapshotQuery & { listingType: 'rentals' | 'sales' };
        const listingType: ListingType = q.listingType === 'sales' ? 'sale' : 'rental';
        const { data, meta } = await s.market.snapshotOf(
          { listingType, areaId: q.areaId, bedrooms: q.bedrooms, buildingType: q.buildingType },
          call.caller.tier,
        );
        const body = {
          data,
          meta: { ...meta, warnings: [] },
        };
        return call.serialize(body, listingType === 'sale' ? SaleSnapshotResponse : RentalSnapshotResponse);
      },
      summarize: (body) => `${summarizeSnapshot(body.data as Snapshot)}.${warningsLine(body.meta)}`,
    },
    {
      name: 'get_market_trends',
      title: 'Market trend',
      description:
        'A daily, weekly or monthly series of one market metric (median_price, median_price_per_sqft, median_days_on_market, inventory, new_listings) for an area and its descendants (Free tier and up), from daily snapshots. Use it to answer "are rents rising in Bushwick"; areaId is an area id, slug, name or alias (areaId="Bushwick"). Days not materialized yet are null points with a warning. Same answer as GET /v1/market/rentals/trends or /v1/market/sales/trends.',
      minTier: 'FREE',
      input: Type.Object({ listingType: marketListingType, ...TrendQuery.properties }),
      async run(args, call) {
        const q = args as TrendQuery & { listingType: 'rentals' | 'sales' };
        const { data, meta, warnings } = await s.marketTrends.trend(
          {
            listingType: q.listingType === 'sales' ? 'sale' : 'rental',
            areaId: q.areaId,
            bedrooms: q.bedrooms,
            metric: q.metric,
            interval: q.interval,
            from: q.from,
            to: q.to,
          },
          call.caller.tier,
        );
        const body = {
          data,
          meta: {
            ...meta,
            warnings,
          },
        };
        return call.serialize(body, TrendResponse);
      },
      summarize(body) {
        const t = body.data as {
          areaName: string;
          metric: string;
          interval: string;
          from: string;
          to: string;
          points: { value: number | null }[];
        };
        const values = t.points.map((p) => p.value).filter((v): v is number => v !== null);
        const change =
          values.length >= 2
            ? `; first ${values[0]} → last ${values[values.length - 1]}`
            : '; too few materialized points to compare';
        return `${t.metric} by ${t.interval} in ${t.areaName}, ${t.from} to ${t.to}: ${t.points.length} points${change}.${warningsLine(body.meta)}`;
      },
    },
    {
      name: 'compare_neighborhoods',
      title: 'Compare neighborhoods',
      description: `The market snapshot figures of 1–${MAX_COMPARE_AREAS} areas side by side, in the order given (Free tier and up): inventory, median price and distribution, days on market, price cuts. Use it to compare neighborhoods a user is choosing between; pass area ids, slugs, names or aliases comma-separated (\`areas="107,118"\`, \`areas="Astoria,LIC"\`). Same parameters and answer as GET /v1/market/compare.`,
      minTier: 'FREE',
      input: CompareQuery,
      async run(args, call) {
        const q = args as CompareQuery;
        const { data, meta } = await s.market.compare(
          q.listingType === 'sales' ? 'sale' : 'rental',
          q.areas,
          { bedrooms: q.bedrooms, buildingType: q.buildingType },
          call.caller.tier,
        );
        const body = { data, meta: { ...meta, warnings: [] } };
        return call.serialize(body, CompareResponse);
      },
      summarize: (body) =>
        `${(body.data as Snapshot[]).map(summarizeSnapshot).join('; ')}.${warningsLine(body.meta)}`,
    },
    {
      name: 'get_property',
      title: 'Get a listing',
      description: `The full record of one listing (Starter tier and up): every search field plus description, amenities, unit features, lease terms or sale details, agents, pets policy, photos, floor plan and building link. ${LISTING_ID_HINT} Same answer as GET /v1/property/{id}.`,
      minTier: 'STARTER',
      input: idInput('Listing'),
      pathId: 'Listing',
      run: async (args, call) => servedJsonBody(await s.property.detail(args.id as string, call.caller.tier)),
      summarize: summarizeDetail,
    },
    {
      name: 'get_property_by_url',
      title: 'Get a listing by URL',
      description:
        'The full record of the listing a StreetEasy-style page URL or path names (`/rental/8421007` or a full https URL), Starter tier and up. Use it when the user pastes a listing link. Same answer as GET /v1/property/by-url.',
      minTier: 'STARTER',
      input: ByUrlQuery,
      run: async (args, call) =>
        servedJsonBody(await s.property.detailByUrl(args.url as string, call.caller.tier)),
      summarize: summarizeDetail,
    },
    {
      name: 'get_building',
      title: 'Get a building',
      description: `One building (Starter tier and up): address, type, year built, size, amenities, policies, NYC public-record data, management, BBL, likely internet providers and photos. ${BUILDING_ID_HINT} Same answer as GET /v1/building/{id}.`,
      minTier: 'STARTER',
      input: idInput('Building'),
      pathId: 'Building',
      run: async (args, call) => servedJsonBody(await s.building.detail(args.id as string, call.caller.tier)),
      summarize(body) {
        const b = body.data as { id?: string; name?: string; yearBuilt?: number | null };
        return `Building ${b.id}: ${b.name ?? ''}${b.yearBuilt ? `, built ${b.yearBuilt}` : ''}.`;
      },
    },
    {
      name: 'get_building_listings',
      title: 'Listings in a building',
      description: `The listings of one building as ListingSummary rows, newest first (Starter tier and up); status defaults to ACTIVE, listingType to both. Paged like search. ${BUILDING_ID_HINT} Same parameters and answer as GET /v1/building/{id}/listings.`,
      minTier: 'STARTER',
      input: Type.Object({ id: resourceIdParam('Building'), ...BuildingListingsQuery.properties }),
      pathId: 'Building',
      async run(args, call, sent) {
        const query = args as BuildingListingsQuery & { id: string };
        const capped = capPerPage(query.perPage ?? 10, call.caller.maxPerPage);
        const page = { page: query.page ?? 1, perPage: capped.perPage };
        const statuses = query.status
          ? ([...new Set(query.status.split(','))] as ListingStatus[])
          : (['ACTIVE'] as ListingStatus[]);
        const result = await s.building.listings(
          query.id,
          call.caller.tier,
          { statuses, listingType: query.listingType },
          page.page,
          page.perPage,
        );
        assertPageInRange(page, result.total);
        const { id: _id, ...querySent } = sent;
        const meta = listMeta(
          s.publicUrl,
          `/v1/building/${query.id}/listings`,
          querySent,
          result.meta,
          page,
          result.total,
          listingsKnown,
          capped.warnings,
        );
        return call.serialize({ data: result.items, meta }, BuildingListingsResponse);
      },
      summarize: (body) => summarizeListings(body, 'listings', ' in this building'),
    },
    {
      name: 'get_fees',
      title: 'Listing fees',
      description: `Fees a renter or buyer pays besides rent or price (broker fee, application fee, deposits, building and transfer fees, taxes) for one listing, Starter tier and up. Empty when none are known. ${LISTING_ID_HINT} Same answer as GET /v1/property/{id}/fees.`,
      minTier: 'STARTER',
      input: idInput('Listing'),
      pathId: 'Listing',
      run: async (args, call) =>
        call.serialize(await s.property.fees(args.id as string, call.caller.tier), FeesResponse),
      summarize: (body) => `${(body.data as unknown[]).length} fee(s) known for this listing.`,
    },
    {
      name: 'get_open_houses',
      title: 'Open houses',
      description: `Upcoming (or in-progress) open houses of one listing, soonest first (Starter tier and up). ${LISTING_ID_HINT} Same answer as GET /v1/property/{id}/open-houses.`,
      minTier: 'STARTER',
      input: idInput('Listing'),
      pathId: 'Listing',
      run: async (args, call) =>
        call.serialize(await s.property.openHouses(args.id as string, call.caller.tier), OpenHousesResponse),
      summarize(body) {
        const rows = body.data as { startsAt?: string }[];
        return rows.length === 0
          ? 'No upcoming open houses.'
          : `${rows.length} upcoming open house(s); next starts ${rows[0]?.startsAt ?? 'soon'}.`;
      },
    },
    {
      name: 'get_building_scores',
      title: 'Building scores',
      description: `Composite 0–100 scores of one building (higher is better) from public city data, updated weekly: health (HPD violations), noise (complaints nearby), safety (crime nearby), transit (subway and bus access); null when unknown. Starter tier and up. ${BUILDING_ID_HINT} Same answer as GET /v1/building/{id}/scores.`,
      minTier: 'STARTER',
      input: idInput('Building'),
      pathId: 'Building',
      run: async (args, call) =>
        call.serialize(await s.building.scores(args.id as string, call.caller.tier), BuildingScoresResponse),
      summarize(body) {
        const d = body.data as Record<string, unknown>;
        const parts = ['health', 'noise', 'safety', 'transit'].map(
          (k) => `${k} ${typeof d[k] === 'number' ? d[k] : 'n/a'}`,
        );
        return `Building scores: ${parts.join(', ')}.`;
      },
    },
    {
      name: 'get_building_violations',
      title: 'Building violations',
      description: `NYC HPD housing maintenance code violations of one building, newest inspection first (Starter tier and up). A building without a known BBL answers an empty list with a warning. ${BUILDING_ID_HINT} Same answer as GET /v1/building/{id}/violations.`,
      minTier: 'STARTER',
      input: idInput('Building'),
      pathId: 'Building',
      async run(args, call) {
        const { data, meta, warnings } = await s.building.violations(args.id as string, call.caller.tier);
        return call.serialize({ data, meta: { ...meta, warnings } }, ViolationsResponse);
      },
      summarize(body) {
        const rows = body.data as { class?: string; violationClass?: string }[];
        return `${rows.length} HPD violation(s) on record.${warningsLine(body.meta)}`;
      },
    },
    {
      name: 'get_price_history',
      title: 'Price history',
      description: `The timeline of one listing in date order (Pro tier and up): listed, price changes (with percent change), contract, rented or sold, delisted, relisted. Use it to judge whether a price is falling or a listing is stale. ${LISTING_ID_HINT} Same answer as GET /v1/property/{id}/history.`,
      minTier: 'PRO',
      input: idInput('Listing'),
      pathId: 'Listing',
      run: async (args, call) =>
        call.serialize(await s.property.history(args.id as string, call.caller.tier), PriceHistoryResponse),
      summarize(body) {
        const rows = body.data as { event?: string; price?: number | null }[];
        const last = rows[rows.length - 1];
        return `${rows.length} event(s) in the price history${last ? `; latest: ${last.event ?? 'event'}${typeof last.price === 'number' ? ` at ${usd.format(last.price)}` : ''}` : ''}.`;
      },
    },
  ];
}

function summarizeDetail(body: ToolBody): string {
  const d = body.data as ListingRow & { status?: string; listingType?: string; buildingId?: string | null };
  const price = typeof d.price === 'number' ? usd.format(d.price) : 'price unknown';
  return `Listing ${d.id}: ${streetLine(d.address)}${d.areaName ? `, ${d.areaName}` : ''}; ${d.listingType ?? ''} ${d.status ?? ''} at ${price}${
    typeof d.bedroomCount === 'number' ? `, ${d.bedroomCount === 0 ? 'studio' : `${d.bedroomCount} bed`}` : ''
  }${d.buildingId ? `; building ${d.buildingId}` : ''}.`;
}

interface CompiledValidator {
  (data: unknown): boolean;
  errors?:
    | { keyword: string; instancePath: string; message?: string; params: Record<string, unknown> }[]
    | null;
}

/** The REST query validator for a schema: the same Ajv options, coercion, defaults and text rules. */
function compileQueryValidator(schema: TObject, name: string): CompiledValidator {
  const compile = buildRequestValidator({}) as unknown as (route: {
    schema: unknown;
    method: string;
    url: string;
    httpPart: string;
  }) => CompiledValidator;
  return compile({ schema, method: 'POST', url: `/mcp#${name}`, httpPart: 'querystring' });
}

/**
 * The same 400 the REST route answers for a query that fails validation
 * (an unknown argument included: it names it and suggests the closest one).
 */
function validationError(validate: CompiledValidator): ApiError {
  const issues = (validate.errors ?? []).map((issue) => describeValidationIssue(issue, 'querystring'));
  const first = issues[0] ?? {
    parameter: 'arguments',
    location: 'query',
    rule: 'type',
    message: 'is invalid',
  };
  return new ApiError('INVALID_PARAMS', validationFailureMessage(first, validate.errors?.[0]?.params.hint), {
    params: issues.length > 0 ? issues : [first],
  });
}

/** Builds every tool once: JSON schemas and compiled validators included. */
export function buildToolCatalogue(services: ToolServices): readonly ToolDefinition[] {
  return specs(services).map((spec) => {
    const validate = compileQueryValidator(spec.input, spec.name);
    // TypeBox marks schemas with symbol keys; JSON carries only the JSON Schema.
    const inputSchema = JSON.parse(JSON.stringify(spec.input)) as ToolDefinition['inputSchema'];
    return {
      name: spec.name,
      title: spec.title,
      description: spec.description,
      minTier: spec.minTier,
      inputSchema,
      summarize: spec.summarize,
      async call(sent, call) {
        const args: Args = { ...sent };
        if (spec.pathId) args.id = checkId(spec.pathId, sent.id);
        if (!validate(args)) throw validationError(validate);
        const body = await spec.run(args, call, sent);
        if (typeof body !== 'string' && !Buffer.isBuffer(body)) return body;
        const json = typeof body === 'string' ? Buffer.from(body) : body;
        const parsed = JSON.parse(json.toString('utf8')) as ToolBody;
        bodyJson.set(parsed, [json]);
        return parsed;
      },
    };
  });
}

/**
 * A failure as the REST error handler reports it: ApiErrors as they are, an
 * unavailable database as a 503 to retry, anything else logged with the
 * request id and answered without internals.
 */
export function asApiError(
  error: unknown,
  request: { id: string; log: { error(fields: object, message: string): void } },
): ApiError {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) {
    return new ApiError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry later', { retryAfter: 5 });
  }
  request.log.error({ err: error }, 'MCP call failed');
  return new ApiError(
    'INTERNAL_ERROR',
    `An internal error occurred; it has been logged with the request id ${request.id}`,
  );
}
