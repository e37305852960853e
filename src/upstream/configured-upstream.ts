/**
 * Which upstream this process talks to, decided once from the configuration:
 * - UPSTREAM_URL set: that RESO Web API (an operator's licensed feed);
 * - else, with the demo market: the market simulator, started in-process on
 *   its own worker thread (so its index and its pages never hold the request
 *   thread) on a loopback port, and reached over HTTP through the same RESO
 *   source, so the real adapter is exercised; the simulator and the service's
 *   market clock then run at SIM_SPEED × real time;
 * - else: no upstream (a store loaded from files is served as it is).
 *
 * And the market clock the process runs on (README "Two clocks"): it resumes
 * from the latest instant the store has seen when that lies ahead of the wall
 * clock (a live demo ran ahead), so market time never goes backwards across
 * restarts and a static restart never serves data from its future. Callers'
 * time (keys, limits, quotas) is the wall clock, never this one.
 */
import { type Logger, pino } from 'pino';
import type { Config } from '../config.ts';
import { readDemoRecord } from '../demo/market/load.ts';
import { OriginThread, type ThreadOrigin } from '../demo/simulator/origin-thread.ts';
import { readPipelineInstants } from '../jobs/refresh/pipeline-state.repository.ts';
import { readScopes } from '../modules/freshness/data-version.ts';
import { type Clock, ScaledClock, systemClock } from '../platform/clock.ts';
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
  /** The market clock: SIM_SPEED × real time with the simulator, 1× with a feed (see `openMarketClock`). */
  marketClock: Clock;
  /** Clock milliseconds per real millisecond (scales timer delays). */
  speed: number;
  /**
   * The in-process simulator's address once it first serves (it starts in the
   * background; rejects if it cannot start), when the demo runs one.
   */
  origin: Promise<ThreadOrigin> | null;
  /** The in-process simulator's thread (restarted if it dies), when the demo runs one. */
  simulator: OriginThread | null;
  close(): Promise<void>;
}

/**
 * The latest instant the store has seen (refresh times, replication marks):
 * a restarted market clock resumes from there, never going back in time.
 */
export async function latestKnownInstant(store: Store): Promise<number> {
  const scopes = await readScopes(store.db);
  const marks = await readPipelineInstants(store.db);
  let latest = 0;
  for (const value of [...scopes.map((r) => r.at), ...marks]) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms) && ms > latest) latest = ms;
  }
  return latest;
}

/**
 * The market clock of a process: from max(wall now, latest instant in the
 * store), at `speed` × the wall clock. At 1× over a store that is not ahead it
 * is the wall clock itself.
 */
export async function openMarketClock(
  store: Store,
  options: { speed?: number; wall?: Clock } = {},
): Promise<Clock> {
  const wall = options.wall ?? systemClock;
  const speed = options.speed ?? 1;
  const now = wall.now().getTime();
  const latest = await latestKnownInstant(store);
  if (speed === 1 && latest <= now) return wall;
  return new ScaledClock({ anchor: Math.max(now, latest), speed, real: wall });
}

export interface OpenUpstreamOptions {
  /** Where the simulator thread's deaths and restarts are logged (default: a logger at LOG_LEVEL). */
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export async function openUpstream(
  config: Config,
  store: Store,
  options: OpenUpstreamOptions = {},
): Promise<ConfiguredUpstream | null> {
  if (config.upstream.url) {
    return {
      source: resoSourceFromConfig(config),
      kind: 'reso',
      marketClock: await openMarketClock(store),
      speed: 1,
      origin: null,
      simulator: null,
      close: async () => {},
    };
  }
  if (!config.demo.enabled || !config.simulator.enabled) return null;
  const demo = await readDemoRecord(store);
  if (!demo) return null;
  const clock = await openMarketClock(store, { speed: config.simulator.speed });
  // Building the simulator's index takes seconds at full scale: the service
  // starts answering from its store meanwhile, and upstream calls wait for it.
  const simulator = new OriginThread({
    seed: demo.seed,
    scale: demo.scale,
    start: new Date(demo.generatedAt),
    clock,
    speed: config.simulator.speed,
    host: '127.0.0.1',
    port: config.simulator.port,
    latency: config.simulator.latency,
    faultRate: config.simulator.faultRate,
    token: config.upstream.token,
    log: options.log ?? pino({ level: config.logLevel }),
  });
  const starting = simulator.origin;
  // Observed here so a failed start is not an unhandled rejection; calls see the failure.
  starting.catch(() => {});
  return {
    source: new DeferredSource(
      starting.then((origin) => resoSourceFromConfig(config, { url: origin.url })),
      () => simulator.serving,
    ),
    kind: 'simulator',
    marketClock: clock,
    speed: config.simulator.speed,
    origin: starting,
    simulator,
    close: () => simulator.close(),
  };
}

/** A source whose implementation becomes available later (the in-process simulator starting). */
class DeferredSource implements ListingSource {
  readonly name = 'reso:market-simulator';

  constructor(
    private readonly ready: Promise<ListingSource>,
    /** Whether the simulator serves now (false while its thread restarts). */
    private readonly serving: () => boolean,
  ) {}

  private async source(): Promise<ListingSource> {
    let source: ListingSource;
    try {
      source = await this.ready;
    } catch (error) {
      throw new UpstreamError(
        'unavailable',
        `the market simulator did not start: ${(error as Error).message}`,
      );
    }
    if (!this.serving()) throw new UpstreamError('unavailable', 'the market simulator is restarting');
    return source;
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
