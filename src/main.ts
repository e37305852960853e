import { type RunningServer, startServer } from './boot.ts';
import { ConfigError, loadConfig } from './config.ts';
import { storeFailureMessage } from './platform/db/errors.ts';
import { packageVersion } from './version.ts';

/** The reason a start is aborted with when a signal asks the process to stop. */
class StopRequested extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`stopped by ${signal}`);
  }
}

/**
 * `npm start`: boot the whole service with configuration from the environment.
 *
 * SIGINT and SIGTERM stop it gracefully whenever they come: while it serves,
 * in-flight requests are answered, streams ended, jobs and workers stopped and
 * the store closed; while it is still starting (the first demo load takes tens
 * of seconds), the start ends at its next step and closes what it opened, and
 * an interrupted demo load is loaded again by the next start. Either way the
 * process exits 0. A second signal while stopping is ignored.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env, packageVersion());
  const stop = new AbortController();
  let server: RunningServer | null = null;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) return;
    stop.abort(new StopRequested(signal));
    // Still starting: the start sees the abort and ends (below).
    if (server === null) {
      process.stderr.write(`Stoop received ${signal} while starting; stopping\n`);
      return;
    }
    server.app.log.info({ signal }, 'shutting down');
    closeAndExit(server);
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  // The port answers from the first moment: health with progress, everything else 503 until served.
  try {
    server = await startServer(config, {
      signal: stop.signal,
      onStarting: () =>
        process.stderr.write(
          `Stoop is listening on ${config.publicUrl}, starting (progress: ${config.publicUrl}/v1/health)\n`,
        ),
    });
  } catch (error) {
    if (error instanceof StopRequested) process.exit(0);
    throw error;
  }
  process.stderr.write(`Stoop is serving on ${config.publicUrl} (docs: ${config.publicUrl}/docs)\n`);
  // A signal during the last steps of the start (after its final check) is served now.
  if (stop.signal.aborted) closeAndExit(server);
}

function closeAndExit(server: RunningServer): void {
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
}

main().catch((error: unknown) => {
  // Operator errors (bad configuration, a store that cannot be opened or is unavailable)
  // are one line naming what and why; anything else is a bug and gets its stack.
  const operatorMessage = error instanceof ConfigError ? error.message : storeFailureMessage(error);
  process.stderr.write(`${operatorMessage ?? (error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
