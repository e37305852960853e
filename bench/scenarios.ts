import type { Tier } from '../src/domain/tiers.ts';
import { type Rng, randomInt, sample } from './random.ts';

/** Which server a scenario hits: the Stoop child process, or the in-process reference server. */
export type Target = 'service' | 'baseline';

export interface Scenario {
  readonly name: string;
  readonly target: Target;
  /** One line for the README/JSON: what the figure tells you. */
  readonly description: string;
  /** Path and query of the next request; called once per request, so no two need be alike. */
  readonly nextPath: (rng: Rng) => string;
  /** Tier of the key the scenario calls with; INTERNAL (the bench's own key) when absent. */
  readonly tier?: Tier;
  /** The JSON body of the next request, sent with POST; absent: the scenario sends GETs. */
  readonly nextBody?: (rng: Rng) => string;
  /** Headers the scenario's requests add to the run's (e.g. the MCP transport's Accept). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface ScenarioInputs {
  /** Neighborhood ids to draw area filters from (see `neighborhoodAreaIds`). */
  readonly neighborhoods: readonly number[];
  /**
   * Photo keys known to exist (e.g. the `leadPhotoKey`s of a search response);
   * without any, the photo scenario is left out.
   */
  readonly photoKeys?: readonly string[];
  /** Real listing and building ids (see `sampleMarketIds`); without them the detail scenarios are left out. */
  readonly listingIds?: readonly string[];
  readonly buildingIds?: readonly string[];
}

const BOROUGHS = '100,200,300,400,500';

function query(params: Record<string, string | number | boolean>): string {
  // Values are numbers, booleans and comma lists of ids: nothing needs escaping,
  // and keeping commas literal sends the URL a user would type.
  return Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

/** A rent band a renter might ask for: low end 1500–4000, width 1000–6000. */
function priceBand(rng: Rng): { minPrice: number; maxPrice: number } {
  const minPrice = randomInt(rng, 1500, 4000);
  return { minPrice, maxPrice: minPrice + randomInt(rng, 1000, 6000) };
}

/**
 * The headline search: a new area set and price band on every request, so a
 * response or query-plan cache keyed on the URL cannot stand in for the work.
 */
export function searchFiveAreasPath(rng: Rng, neighborhoods: readonly number[]): string {
  return `/v1/search/rentals?${query(searchFiveAreasParams(rng, neighborhoods))}`;
}

/** The headline search's parameters: REST sends them as the query, MCP as the tool's arguments. */
function searchFiveAreasParams(rng: Rng, neighborhoods: readonly number[]) {
  const areas = sample(rng, neighborhoods, 5).join(',');
  return { areas, ...priceBand(rng), sort: 'PRICE', perPage: 50 };
}

/** Midtown Manhattan (Bryant Park), as `near` takes it: lat,lng. */
const MIDTOWN = { latitude: 40.7536, longitude: -73.9832 };

/**
 * Geo search: rentals within 1,500 m of a point in Midtown (moved up to ~500 m
 * on each request, so no two URLs are alike), nearest first, with a price band
 * and a bedroom floor.
 */
export function searchNearPath(rng: Rng): string {
  const latitude = MIDTOWN.latitude + (rng() - 0.5) * 0.009;
  const longitude = MIDTOWN.longitude + (rng() - 0.5) * 0.012;
  return `/v1/search/rentals?${query({
    near: `${latitude.toFixed(5)},${longitude.toFixed(5)}`,
    radius: 1500,
    ...priceBand(rng),
    minBeds: randomInt(rng, 0, 2),
    sort: 'DISTANCE',
    perPage: 50,
  })}`;
}

/**
 * The headline search as an MCP `tools/call search_rentals` (stateless: no
 * initialize, no session), with the same arguments as `search-5-areas`: the
 * cost of the MCP layer (transport, JSON-RPC, tool dispatch, per-call quota
 * charge, structured and text results) over the same service call.
 */
function mcpSearchScenario(neighborhoods: readonly number[]): Scenario {
  let id = 0;
  return {
    name: 'mcp-search-5-areas',
    target: 'service',
    description:
      'POST /mcp tools/call search_rentals with the arguments of search-5-areas (stateless, JSON response): MCP calls/s beside the REST search.',
    nextPath: () => '/mcp',
    nextBody: (rng) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'search_rentals', arguments: searchFiveAreasParams(rng, neighborhoods) },
      }),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  };
}

/** Scenarios in run order; the baseline is added around them by the runner. */
export function serviceScenarios(inputs: ScenarioInputs): Scenario[] {
  return [
    {
      name: 'areas',
      target: 'service',
      description: 'GET /v1/areas, page 1..35 (default perPage 10): reference data, the cheapest real route.',
      nextPath: (rng) => `/v1/areas?page=${randomInt(rng, 1, 35)}`,
    },
    {
      name: 'search-5-areas',
      target: 'service',
      description:
        'GET /v1/search/rentals with 5 random neighborhoods, a random price band, sort=PRICE, perPage=50.',
      nextPath: (rng) => searchFiveAreasPath(rng, inputs.neighborhoods),
    },
    mcpSearchScenario(inputs.neighborhoods),
    {
      name: 'search-all-nyc-6-filters',
      target: 'service',
      description:
        'GET /v1/search/rentals over all five boroughs with price, beds, noFee and petsAllowed filters, perPage=50.',
      nextPath: (rng) => {
        const minBeds = randomInt(rng, 0, 2);
        return `/v1/search/rentals?${query({
          areas: BOROUGHS,
          ...priceBand(rng),
          minBeds,
          maxBeds: minBeds + randomInt(rng, 1, 2),
          noFee: rng() < 0.5,
          petsAllowed: rng() < 0.5,
          perPage: 50,
        })}`;
      },
    },
    {
      name: 'search-near',
      target: 'service',
      description:
        'GET /v1/search/rentals near a random Midtown point, radius 1,500 m, with a price band and minBeds, sort=DISTANCE, perPage=50.',
      nextPath: searchNearPath,
    },
    {
      name: 'market-snapshot-borough',
      target: 'service',
      description:
        'GET /v1/market/rentals/snapshot for a random borough and bedroom bucket (or all): cached figures per data version.',
      nextPath: (rng) =>
        `/v1/market/rentals/snapshot?${query({ areaId: randomInt(rng, 1, 5) * 100, ...bedroomsParam(rng) })}`,
    },
    {
      name: 'market-snapshot-nyc',
      target: 'service',
      description:
        'GET /v1/market/rentals/snapshot for the root area (all NYC + NJ) and a random bedroom bucket (or all).',
      nextPath: (rng) => `/v1/market/rentals/snapshot?${query({ areaId: 1, ...bedroomsParam(rng) })}`,
    },
    ...photoScenarios(inputs.photoKeys ?? []),
    ...detailScenarios(inputs.listingIds ?? [], inputs.buildingIds ?? []),
  ];
}

/**
 * One listing or building per request, drawn from ids sampled across the whole
 * market (every status, scraped or not). They call as PRO: the Starter/Pro read
 * path is the hot one, while Business and Internal reads of a listing fetch it
 * live from upstream first, which would measure the upstream, not the service.
 */
function detailScenarios(listingIds: readonly string[], buildingIds: readonly string[]): Scenario[] {
  const pick = (rng: Rng, ids: readonly string[]) => ids[randomInt(rng, 0, ids.length - 1)]!;
  const out: Scenario[] = [];
  if (listingIds.length > 0) {
    out.push({
      name: 'property-detail',
      target: 'service',
      tier: 'PRO',
      description: `GET /v1/property/{id} as a PRO key, over ${listingIds.length} random listings of every status.`,
      nextPath: (rng) => `/v1/property/${pick(rng, listingIds)}`,
    });
  }
  if (buildingIds.length > 0) {
    out.push({
      name: 'building-detail',
      target: 'service',
      tier: 'PRO',
      description: `GET /v1/building/{id} as a PRO key, over ${buildingIds.length} random buildings.`,
      nextPath: (rng) => `/v1/building/${pick(rng, buildingIds)}`,
    });
  }
  return out;
}

/**
 * A few keys in rotation: after the warm-up every variant is on disk, so the
 * figure is the cost of serving a cached photo (lookup, file read, headers),
 * the CDN-origin path that photo URLs in responses point at.
 */
function photoScenarios(photoKeys: readonly string[]): Scenario[] {
  const keys = photoKeys.slice(0, 8);
  if (keys.length === 0) return [];
  return [
    {
      name: 'photo-cached-fp',
      target: 'service',
      description: `GET /fp/<key>-se_large_800_400.webp over ${keys.length} photos already rendered: the unmetered image-host path.`,
      nextPath: (rng) => `/fp/${keys[randomInt(rng, 0, keys.length - 1)]}-se_large_800_400.webp`,
    },
  ];
}

/** A bedroom bucket 0–4, or none (every count) one time in six. */
function bedroomsParam(rng: Rng): { bedrooms?: number } {
  const pick = randomInt(rng, 0, 5);
  return pick === 5 ? {} : { bedrooms: pick };
}

/** Same body bytes as a real search response, served with no work: the ceiling on this machine. */
export function baselineScenario(name = 'baseline'): Scenario {
  return {
    name,
    target: 'baseline',
    description: 'node:http serving precomputed bytes of a typical search-5-areas response body.',
    nextPath: () => '/',
  };
}
