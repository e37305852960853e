import { buildApp, compose } from './app.ts';
import type { Config } from './config.ts';
import { isDemoLoadInterrupted, isStoreEmpty, loadDemoMarket } from './demo/market/load.ts';
import type { HttpApp } from './http/server.ts';
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
  app: HttpApp;
  store: Store;
  url: string;
  close(): Promise<void>;
}

/**
 * Everything `npm start` does, in order: store, schema, demo data, the
 * upstream (the in-process market simulator in the demo), the composition
 * (services and jobs), the HTTP server, then the background jobs.
 */
export async function startServer(config: Config): Promise<RunningServer> {
  const store = await openConfiguredStore(config);
  await prepareStore(store);
  await seedDemoIfEmpty(store, config, (line) => process.stderr.write(`${line}\n`));
  const upstream = await openUpstream(config, store);
  const composition = await compose({
    config,
    store,
    ...(upstream ? { clock: upstream.clock, upstream } : {}),
  });
  const app = await buildApp(composition.services);
  const url = await app.listen({ host: config.host, port: config.port });
  await composition.jobs.start();
  return {
    app,
    store,
    url,
    close: async () => {
      await composition.jobs.stop();
      await app.close();
      await composition.close();
      await upstream?.close();
      await store.close();
    },
  };
}
