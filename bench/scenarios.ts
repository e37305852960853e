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
}

export interface ScenarioInputs {
  /** Neighborhood ids to draw area filters from (see `neighborhoodAreaIds`). */
  readonly neighborhoods: readonly number[];
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
  const areas = sample(rng, neighborhoods, 5).join(',');
  return `/v1/search/rentals?${query({ areas, ...priceBand(rng), sort: 'PRICE', perPage: 50 })}`;
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
