import { buildApp, compose } from './app.ts';
import { type Config, ConfigError } from './config.ts';
import { isDemoLoadInterrupted, isStoreEmpty, loadDemoMarket } from './demo/market/load.ts';
import type { HttpApp } from './http/server.ts';
import type { Jobs } from './jobs/jobs.ts';
import { keepMarketClockMark } from './jobs/market-clock-mark.ts';
import { ReadinessRegistry } from './modules/health/readiness.ts';
import { systemClock } from './platform/clock.ts';
import { openStore, type Store } from './platform/db/database.ts';
import { StoreOpenError, unavailableReason } from './platform/db/errors.ts';
import { migrateToLatest } from './platform/db/migrate.ts';
import {
  claimProcessLease,
  EMBEDDED_LIMITS_LEASE,
  type ProcessLease,
} from './platform/limits/process-lease.ts';
import { createProgressReporter } from './platform/progress.ts';
import { syncAreas } from './reference/areas-store.ts';
import { type ConfiguredUpstream, openMarketClock, openUpstream } from './upstream/configured-upstream.ts';

/**
 * The configured store, open. A store that cannot be opened (directory,
 * permissions, disk, server) is a `StoreOpenError` with a one-line message.
 * Outages later on are reported on stderr: one line when the store becomes
 * unavailable, one when it answers again.
 */
export async function openConfiguredStore(config: Config): Promise<Store> {
  const quiet = config.logLevel === 'silent' || config.logLevel === 'error' || config.logLevel === 'fatal';
  return openStore({
    dialect: config.dialect,
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    queryTimeoutMs: config.databaseQueryTimeoutMs,
    log: quiet ? () => {} : (line) => process.stderr.write(`${line}\n`),
  });
}

/**
 * Schema to the latest version and reference data (area tree) in place;
 * idempotent. A store that cannot take the writes (read-only, full, locked,
 * unreachable) is a `StoreOpenError` naming it and the cause in one line.
 */
export async function prepareStore(store: Store): Promise<void> {
  try {
    await migrateToLatest(store);
    await syncAreas(store);
  } catch (error) {
    const reason = unavailableReason(error);
    if (reason === undefined) throw error;
    throw new StoreOpenError(`Cannot prepare the ${store.dialect} store ${store.location}: ${reason}`, {
      cause: error,
    });
  }
}

/**
 * Loads the demo market into an empty store, or reloads it when an earlier
 * load was interrupted. A store holding other market data (an ingested feed)
 * is left alone. Returns whether it loaded.
 */
export async function seedDemoIfEmpty(
  store: Store,
  config: Config,
  log: (line: string) => void,
  options: { replace?: boolean } = {},
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
    onProgress: progress.update,
    replace: options.replace === true || interrupted,
  });
  progress.stop();
  log(
    `Demo market loaded in ${(result.ms / 1000).toFixed(1)} s: ${result.listings} listings, ${result.buildings} buildings.`,
  );
  return true;
}

/** The configured store, open and prepared (`prepareStore`); closed again when preparing fails. */
export async function openPreparedStore(config: Config): Promise<Store> {
  const store = await openConfiguredStore(config);
  try {
    await prepareStore(store);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
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

/**
 * Everything `npm start` does, in order: store, schema, demo data, the
 * upstream (the in-process market simulator in the demo), the composition
 * (services and jobs), the HTTP server, then the background jobs.
 */
export async function startServer(config: Config): Promise<RunningServer> {
  // Steps health waits for before it calls the node ready (they may finish after listen).
  const readiness = new ReadinessRegistry();
  readiness.expect('schema', 'migrating');
  readiness.expect('demo', 'loading');
  const store = await openConfiguredStore(config);
  await prepareStore(store);
  readiness.mark('schema');
  const limitsLease = await claimEmbeddedLimits(store, config);
  await seedDemoIfEmpty(store, config, (line) => process.stderr.write(`${line}\n`));
  readiness.mark('demo');
  const upstream = await openUpstream(config, store);
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
  const app = await buildApp(composition.services);
  const url = await app.listen({ host: config.host, port: config.port });
  await composition.jobs.start();
  const clockMark = keepMarketClockMark(store, marketClock, systemClock);
  return {
    app,
    store,
    url,
    jobs: composition.jobs,
    upstream,
    close: async () => {
      await composition.jobs.stop();
      await app.close();
      await composition.close();
      await upstream?.close();
      await clockMark.stop();
      await store.close();
    },
  };
}

/** Where the upstream answers: the in-process simulator once started, or the configured feed. */
async function upstreamAddress(upstream: ConfiguredUpstream, config: Config): Promise<string> {
  if (upstream.origin) return (await upstream.origin).url;
  if (config.upstream.url) return config.upstream.url;
  throw new Error('the upstream has no address');
}
