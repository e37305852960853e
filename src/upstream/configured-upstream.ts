/**
 * Which upstream this process talks to, decided once from the configuration:
 * - UPSTREAM_URL set: that RESO Web API (an operator's licensed feed);
 * - else, with the demo market: the market simulator, started in-process on a
 *   loopback port and reached over HTTP through the same RESO source, so the
 *   real adapter is exercised; the simulator and the whole service then run on
 *   one simulated clock (SIM_SPEED × real time);
 * - else: no upstream (a store loaded from files is served as it is).
 */
import type { Config } from '../config.ts';
import { readDemoRecord } from '../demo/market/load.ts';
import { ScaledClock } from '../demo/simulator/clock.ts';
import { type Origin, startOrigin } from '../demo/simulator/server.ts';
import { readPipelineInstants } from '../jobs/refresh/pipeline-state.repository.ts';
import { readScopes } from '../modules/freshness/data-version.ts';
import { type Clock, systemClock } from '../platform/clock.ts';
import type { Store } from '../platform/db/database.ts';
import { resoSourceFromConfig } from './reso/source.ts';
import {
  type CallOptions,
  type ListingPage,
  type ListingPageQuery,
  type ListingSource,
  type UpstreamBuilding,
  UpstreamError,
  type UpstreamListing,
} from './source.ts';

export interface ConfiguredUpstream {
  source: ListingSource;
  kind: 'reso' | 'simulator';
  /** The clock the service runs on: simulated in the demo, real otherwise. */
  clock: Clock;
  /** Clock milliseconds per real millisecond (scales timer delays). */
  speed: number;
  /** The in-process simulator (starting in the background), when the demo runs one. */
  origin: Promise<Origin> | null;
  close(): Promise<void>;
}

/**
 * The latest instant the store has seen (refresh times, replication marks):
 * a restarted simulated clock resumes from there, never going back in time.
 */
async function latestKnownInstant(store: Store): Promise<number> {
  const scopes = await readScopes(store.db);
  const marks = await readPipelineInstants(store.db);
  let latest = 0;
  for (const value of [...scopes.map((r) => r.at), ...marks]) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms) && ms > latest) latest = ms;
  }
  return latest;
}

export async function openUpstream(config: Config, store: Store): Promise<ConfiguredUpstream | null> {
  if (config.upstream.url) {
    return {
      source: resoSourceFromConfig(config),
      kind: 'reso',
      clock: systemClock,
      speed: 1,
      origin: null,
      close: async () => {},
    };
  }
  if (!config.demo.enabled || !config.simulator.enabled) return null;
  const demo = await readDemoRecord(store);
  if (!demo) return null;
  const anchor = Math.max(Date.now(), await latestKnownInstant(store));
  const clock = new ScaledClock({ anchor, speed: config.simulator.speed });
  // Building the simulator's index takes seconds at full scale: the service
  // starts answering from its store meanwhile, and upstream calls wait for it.
  const starting = startOrigin({
    seed: demo.seed,
    scale: demo.scale,
    start: new Date(demo.generatedAt),
    clock,
    host: '127.0.0.1',
    port: config.simulator.port,
    latency: config.simulator.latency,
    faultRate: config.simulator.faultRate,
    ...(config.upstream.token ? { token: config.upstream.token } : {}),
  });
  // Observed here so a failed start is not an unhandled rejection; calls see the failure.
  starting.catch(() => {});
  return {
    source: new DeferredSource(starting.then((origin) => resoSourceFromConfig(config, { url: origin.url }))),
    kind: 'simulator',
    clock,
    speed: config.simulator.speed,
    origin: starting,
    close: async () => {
      const origin = await starting.catch(() => null);
      await origin?.close();
    },
  };
}

/** A source whose implementation becomes available later (the in-process simulator starting). */
class DeferredSource implements ListingSource {
  readonly name = 'reso:market-simulator';

  constructor(private readonly ready: Promise<ListingSource>) {}

  private async source(): Promise<ListingSource> {
    try {
      return await this.ready;
    } catch (error) {
      throw new UpstreamError(
        'unavailable',
        `the market simulator did not start: ${(error as Error).message}`,
      );
    }
  }

  async searchListings(query: ListingPageQuery, options?: CallOptions): Promise<ListingPage> {
    return (await this.source()).searchListings(query, options);
  }

  async fetchListing(id: string, options?: CallOptions): Promise<UpstreamListing> {
    return (await this.source()).fetchListing(id, options);
  }

  async fetchBuilding(id: string, options?: CallOptions): Promise<UpstreamBuilding> {
    return (await this.source()).fetchBuilding(id, options);
  }

  async listBuildings(
    query: Parameters<ListingSource['listBuildings']>[0],
    options?: CallOptions,
  ): ReturnType<ListingSource['listBuildings']> {
    return (await this.source()).listBuildings(query, options);
  }
}
