import { Command, InvalidArgumentError } from 'commander';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { registerOriginCommand } from './demo/simulator/origin.cli.ts';
import { PipelineCliError, registerPipelineCommands } from './jobs/refresh/pipeline.cli.ts';
import { launchService } from './launcher.ts';
import { DataVersion } from './modules/freshness/data-version.ts';
import { KeysCliError, registerKeysCommands } from './modules/keys/keys.cli.ts';
import { LocalSubscriptionProvider } from './modules/keys/subscriptions.ts';
import { registerOpenDataCommands } from './modules/opendata/opendata.cli.ts';
import { type Clock, systemClock } from './platform/clock.ts';
import { storeFailureMessage } from './platform/db/errors.ts';
import { createProgressReporter } from './platform/progress.ts';
import { openConfiguredStore, openPreparedStore, prepareStore } from './prepared-store.ts';
import { packageVersion } from './version.ts';

// The service's module graph (the app, the configured upstream, the demo loader) is
// imported by the commands that run it, not here: loading it under tsx took ~2.5 s
// of CPU, so `stoop keys list` took 1.5–3 s to print a line; the store, keys and
// config alone load in about half that.

function intOption(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number');
  return Number(value);
}

function numberOption(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

function config(overrides: Record<string, string | undefined> = {}): Config {
  const env = { ...process.env };
  for (const [key, value] of Object.entries(overrides)) if (value !== undefined) env[key] = value;
  return loadConfig(env, packageVersion());
}

const log = (line: string) => process.stderr.write(`${line}\n`);

export function buildCli(): Command {
  const program = new Command('stoop')
    .description('Stoop: self-hostable NYC real estate listings data service')
    .version(packageVersion());

  program
    .command('serve')
    .description('run the HTTP service (what `npm start` does)')
    .option('--host <host>', 'listen address (env HOST)')
    .option('--port <port>', 'listen port (env PORT)', intOption)
    .action((opts: { host?: string; port?: number }) => {
      const env = { ...process.env };
      if (opts.host !== undefined) env.HOST = opts.host;
      if (opts.port !== undefined) env.PORT = String(opts.port);
      // A bad setting is this command's one-line error, before any process starts.
      loadConfig(env, packageVersion());
      // The same process, flags and signal handling as `npm start` (src/launcher.ts).
      launchService(env);
    });

  program
    .command('migrate')
    .description('create or upgrade the database schema and reference data, then exit')
    .action(async () => {
      const store = await openConfiguredStore(config());
      try {
        await prepareStore(store);
        log(`Schema is up to date (${store.dialect}).`);
      } finally {
        await store.close();
      }
    });

  program
    .command('seed')
    .description('load the synthetic demo market into an empty store, then exit')
    .option('--seed <n>', 'generator seed (env DEMO_SEED)', intOption)
    .option('--scale <x>', 'market size multiplier, 1 = full demo (env DEMO_SCALE)', numberOption)
    .option('--replace', 'delete the market the store holds and load the demo market again')
    .action(async (opts: { seed?: number; scale?: number; replace?: boolean }) => {
      const cfg = config({
        DEMO: 'true',
        DEMO_SEED: opts.seed?.toString(),
        DEMO_SCALE: opts.scale?.toString(),
      });
      const { seedDemoIfEmpty } = await import('./boot.ts');
      const store = await openConfiguredStore(cfg);
      try {
        await prepareStore(store);
        const loaded = await seedDemoIfEmpty(store, cfg, log, { replace: opts.replace === true });
        if (!loaded) log('The store already holds market data; nothing loaded (use --replace to reload).');
      } finally {
        await store.close();
      }
    });

  // Keys are callers' business: real time, never the market clock a live demo ran ahead.
  registerKeysCommands(program, {
    clock: systemClock,
    open: async () => {
      const cfg = config();
      const store = await openPreparedStore(cfg);
      return {
        provider: new LocalSubscriptionProvider(store.db, systemClock, cfg.apiKeyPrefix),
        apiKeyPrefix: cfg.apiKeyPrefix,
        close: () => store.close(),
      };
    },
    stdout: (text) => process.stdout.write(`${text}\n`),
    stderr: log,
  });

  // Imports and scores are market data: the market clock of the store the command opens.
  let openDataClock: Clock = systemClock;
  registerOpenDataCommands(program, {
    clock: { now: () => openDataClock.now() },
    open: async () => {
      const { openMarketClock } = await import('./upstream/configured-upstream.ts');
      const store = await openConfiguredStore(config());
      try {
        await prepareStore(store);
        openDataClock = await openMarketClock(store);
      } catch (error) {
        await store.close();
        throw error;
      }
      return store;
    },
    stdout: (text) => process.stdout.write(`${text}\n`),
    stderr: log,
  });

  registerPipelineCommands(program, {
    open: async (withUpstream) => {
      const cfg = config();
      const [{ createRefresher }, { openMarketClock, openUpstream }] = await Promise.all([
        import('./app.ts'),
        import('./upstream/configured-upstream.ts'),
      ]);
      const store = await openConfiguredStore(cfg);
      try {
        await prepareStore(store);
        const upstream = withUpstream ? await openUpstream(cfg, store) : null;
        const clock = upstream?.marketClock ?? (await openMarketClock(store));
        return {
          store,
          clock,
          refresher: upstream
            ? createRefresher({ store, clock, dataVersion: new DataVersion(store.db, clock) }, upstream)
            : null,
          close: async () => {
            await upstream?.close();
            await store.close();
          },
        };
      } catch (error) {
        await store.close();
        throw error;
      }
    },
    stdout: (text) => process.stdout.write(`${text}\n`),
    stderr: log,
    progress: (label) => {
      const reporter = createProgressReporter(label);
      return { update: (done, total) => reporter.update(done, total, 'bytes'), stop: () => reporter.stop() };
    },
  });

  registerOriginCommand(program);

  return program;
}

buildCli()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    // Operator mistakes (bad config, unknown key) and store failures (cannot be opened,
    // unavailable: locked, full, read-only, unreachable) get one line; anything else its stack.
    const expected =
      error instanceof ConfigError || error instanceof KeysCliError || error instanceof PipelineCliError;
    log(
      expected
        ? (error as Error).message
        : (storeFailureMessage(error) ?? (error as Error).stack ?? String(error)),
    );
    process.exit(1);
  });
