import type { FastifyInstance } from 'fastify';
import { buildApp, createContext } from './app.ts';
import type { Config } from './config.ts';
import { isDemoLoadInterrupted, isStoreEmpty, loadDemoMarket } from './demo/market/load.ts';
import { Refresher } from './jobs/refresh/refresher.ts';
import { RefreshScheduler } from './jobs/refresh/scheduler.ts';
import { ScoresJob } from './jobs/scores.ts';
import { openStore, type Store } from './platform/db/database.ts';
import { migrateToLatest } from './platform/db/migrate.ts';
import { createProgressReporter } from './platform/progress.ts';
import { syncAreas } from './reference/areas-store.ts';
import { openUpstream } from './upstream/configured-upstream.ts';

export async function openConfiguredStore(config: Config): Promise<Store> {
  return openStore({
    dialect: config.dialect,
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
  });
}

/** Schema to the latest version and reference data (area tree) in place; idempotent. */
export async function prepareStore(store: Store): Promise<void> {
  await migrateToLatest(store);
  await syncAreas(store);
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

export interface RunningServer {
  app: FastifyInstance;
  store: Store;
  url: string;
  close(): Promise<void>;
}

/**
 * Everything `npm start` does: store, schema, demo data, the upstream (the
 * in-process market simulator in the demo), the refresh pipeline and its
 * schedule, background jobs, HTTP server.
 */
export async function startServer(config: Config): Promise<RunningServer> {
  const store = await openConfiguredStore(config);
  await prepareStore(store);
  await seedDemoIfEmpty(store, config, (line) => process.stderr.write(`${line}\n`));
  const upstream = await openUpstream(config, store);
  let refresher: Refresher | undefined;
  const ctx = await createContext({
    config,
    store,
    ...(upstream
      ? {
          clock: upstream.clock,
          refresher: (parts) => {
            refresher = new Refresher({ ...parts, source: upstream.source, upstreamKind: upstream.kind });
            return refresher;
          },
        }
      : {}),
  });
  const app = await buildApp(ctx);
  refresher?.useLog(app.log);
  const scheduler =
    refresher && config.refresh
      ? new RefreshScheduler(refresher, ctx.clock, {
          speed: upstream?.speed ?? 1,
          log: app.log,
          lastSearchRefresh: () => ctx.dataVersion.refreshedAt('search:rental'),
        })
      : null;
  const url = await app.listen({ host: config.host, port: config.port });
  await scheduler?.start();
  // In the background: a first run backfills history without delaying start.
  ctx.marketSnapshots.start(undefined, (error) =>
    app.log.error({ err: error }, 'market snapshot job failed'),
  );
  // Weekly building scores from imported open data (a no-op until a dataset is imported).
  const scores = new ScoresJob(store.db, ctx.areaTree, ctx.clock);
  scores.start((error) => app.log.error({ err: error }, 'building scores job failed'));
  return {
    app,
    store,
    url,
    close: async () => {
      await scores.stop();
      await scheduler?.stop();
      await app.close();
      await refresher?.idle();
      await upstream?.close();
      await store.close();
    },
  };
}
