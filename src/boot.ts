import { buildApp, compose } from './app.ts';
import { type Config, ConfigError } from './config.ts';
import { isDemoLoadInterrupted, isStoreEmpty, loadDemoMarket } from './demo/market/load.ts';
import type { HttpApp } from './http/server.ts';
import { listenWhileStarting, type StartingServer } from './http/starting.ts';
import type { Jobs } from './jobs/jobs.ts';
import { keepMarketClockMark } from './jobs/market-clock-mark.ts';
import { ReadinessRegistry } from './modules/health/readiness.ts';
import { systemClock } from './platform/clock.ts';
import type { Store } from './platform/db/database.ts';
import {
  claimProcessLease,
  EMBEDDED_LIMITS_LEASE,
  type ProcessLease,
} from './platform/limits/process-lease.ts';
import { createProgressReporter } from './platform/progress.ts';
import { openConfiguredStore, prepareStore } from './prepared-store.ts';
import { type ConfiguredUpstream, openMarketClock, openUpstream } from './upstream/configured-upstream.ts';

/**
 * Loads the demo market into an empty store, or reloads it when an earlier
 * load was interrupted. A store holding other market data (an ingested feed)
 * is left alone. Returns whether it loaded.
 */
export async function seedDemoIfEmpty(
  store: Store,
  config: Config,
  log: (line: string) => void,
  options: {
    replace?: boolean;
    onProgress?: (done: number, total: number, phase: string) => void;
    /** Ends the load between two of its transactions (see LoadDemoOptions.signal). */
    signal?: AbortSignal;
  } = {},
): Promise<boolean> {
  if (!config.demo.enabled) return false;
  const interrupted = await isDemoLoadInterrupted(store);
  if (!options.replace && !interrupted && !(await isStoreEmpty(store))) return false;
  if (interrupted) log('An earlier demo market load did not finish; loading it again.');
  log(`Loading the synthetic demo market (seed ${config.demo.seed}, scale ${config.demo.scale})…`);
  const progress = createProgressReporter('Demo market');
  const result = await loadDemoMarket(store, {
    seed: config.demo.seed,
    scale: config.demo.scale,
    now: new Date(),
    onProgress: (done, total, phase) => {
      progress.update(done, total, phase);
      options.onProgress?.(done, total, phase);
    },
    replace: options.replace === true || interrupted,
    ...(options.signal ? { signal: options.signal } : {}),
  }).finally(() => progress.stop());
  log(
    `Demo market loaded in ${(result.ms / 1000).toFixed(1)} s: ${result.listings} listings, ${result.buildings} buildings.`,
  );
  return true;
}

export interface RunningServer {
  app: HttpApp;
  store: Store;
  url: string;
  /** The background jobs (on their worker thread when the store allows): status, and trigger for tools. */
  jobs: Jobs;
  /** The upstream (with the demo's in-process simulator and its thread), when the server has one. */
  upstream: ConfiguredUpstream | null;
  close(): Promise<void>;
}

/**
 * Without REDIS_URL a server counts rate windows in its own memory and buffers
 * quota counts there, so a second server on the same store would admit a
 * second full budget. The first one holds the store's embedded-limits lease
 * (renewed every few seconds); another one waits at most one heartbeat to see
 * it renewed, then refuses to start with one line saying to set REDIS_URL. A
 * lease whose holder died lapses within 15 s and is taken over.
 */
async function claimEmbeddedLimits(store: Store, config: Config): Promise<ProcessLease | undefined> {
  if (config.redisUrl) return undefined;
  const claim = await claimProcessLease(store.db, EMBEDDED_LIMITS_LEASE);
  if (claim.acquired) return claim.lease;
  await store.close();
  throw new ConfigError(
    'REDIS_URL',
    `must be set to run more than one Stoop server on this store: another one (${claim.holder}) already serves it, and without Redis rate limits and quotas are counted in one process only`,
  );
}

export interface StartServerOptions {
  /**
   * Called when the store is prepared and the demo market is next, with the
   * URL the port answers on (bound from the start). Operator errors (store,
   * schema, a second server without Redis) come before it, so they stay the
   * one line `npm start` prints.
   */
  onStarting?: (url: string) => void;
  /**
   * Aborted when the process is asked to stop while it starts (a signal during
   * the demo load, say): the start ends at its next step — the demo load
   * between two of its transactions — closes what it opened, and rejects with
   * the signal's reason. Once the application serves, stopping is `close()`'s.
   */
  signal?: AbortSignal;
}

/**
 * Everything `npm start` does, in order: the listening socket (answering
 * health and "starting" 503s meanwhile: src/http/starting.ts), store, schema,
 * demo data, the upstream (the in-process market simulator in the demo), the
 * composition (services and jobs), the HTTP application taking the socket
 * over, then the background jobs. A start that fails closes the socket again.
 */
export async function startServer(config: Config, options: StartServerOptions = {}): Promise<RunningServer> {
  // Steps health waits for before it calls the node ready (they may finish after listen).
  const readiness = new ReadinessRegistry();
  readiness.expect('schema', 'migrating');
  readiness.expect('demo', 'loading');
  // Until the composition registers their probes, which answer from then on.
  readiness.expect('searchIndex', 'not started');
  readiness.expect('marketCaches', 'not started');
  const listener = await listenWhileStarting(config, readiness);
  try {
    return await startBehind(listener, config, readiness, options);
  } catch (error) {
    await listener.close({ now: true });
    throw error;
  }
}

/** `startServer` once the port answers: the application takes `listener` over when composed. */
async function startBehind(
  listener: StartingServer,
  config: Config,
  readiness: ReadinessRegistry,
  options: StartServerOptions,
): Promise<RunningServer> {
  const { signal } = options;
  // What this start opened, closed in reverse order when it fails or is stopped before serving.
  const opened: Array<() => Promise<void>> = [];
  try {
    // The request thread never checkpoints SQLite's log: the jobs worker does (wal-checkpoints.ts).
    const store = await openConfiguredStore(config, { walCheckpoints: 'background' });
    opened.push(() => store.close());
    await prepareStore(store);
    readiness.mark('schema');
    signal?.throwIfAborted();
    const limitsLease = await claimEmbeddedLimits(store, config);
    if (limitsLease) opened.push(() => limitsLease.release());
    options.onStarting?.(listener.url);
    await seedDemoIfEmpty(store, config, (line) => process.stderr.write(`${line}\n`), {
      onProgress: (done, total) =>
        readiness.mark('demo', false, `loading ${total > 0 ? Math.floor((done / total) * 100) : 0}%`),
      ...(signal ? { signal } : {}),
    });
    readiness.mark('demo');
    signal?.throwIfAborted();
    const upstream = await openUpstream(config, store);
    if (upstream) opened.push(() => upstream.close());
    // Without an upstream the market clock still resumes where the store's data left off (at 1×).
    const marketClock = upstream?.marketClock ?? (await openMarketClock(store));
    const composition = await compose({
      config,
      store,
      marketClock,
      ...(upstream ? { upstream } : {}),
      ...(limitsLease ? { limitsLease } : {}),
      readiness,
      jobsWorker: { ...(upstream ? { upstreamUrl: () => upstreamAddress(upstream, config) } : {}) },
    });
    opened.push(() => composition.close());
    readiness.mark('searchIndex');
    readiness.mark('marketCaches');
    signal?.throwIfAborted();
    const app = await buildApp(composition.services, { serverFactory: listener.serverFactory });
    await app.ready();
    signal?.throwIfAborted();
    listener.serve();
    app.log.info(`Server listening at ${listener.url}`);
    await composition.jobs.start();
    const clockMark = keepMarketClockMark(store, marketClock, systemClock);
    return {
      app,
      store,
      url: listener.url,
      jobs: composition.jobs,
      upstream,
      close: async () => {
        await composition.jobs.stop();
        // No new connections; the application ends its streams and answers what is in flight.
        const closed = listener.close();
        await app.close();
        await closed;
        await composition.close();
        await upstream?.close();
        await clockMark.stop();
        await store.close();
      },
    };
  } catch (error) {
    for (const close of opened.reverse()) {
      // The start's own error is the one to report; a closer that fails too adds nothing to it.
      await close().catch(() => undefined);
    }
    throw error;
  }
}

/** Where the upstream answers: the in-process simulator once started, or the configured feed. */
async function upstreamAddress(upstream: ConfiguredUpstream, config: Config): Promise<string> {
  if (upstream.origin) return (await upstream.origin).url;
  if (config.upstream.url) return config.upstream.url;
  throw new Error('the upstream has no address');
}
