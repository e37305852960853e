import { startServer } from './boot.ts';
import { ConfigError, loadConfig } from './config.ts';
import { storeFailureMessage } from './platform/db/errors.ts';
import { packageVersion } from './version.ts';

/** `npm start`: boot the whole service with configuration from the environment. */
async function main(): Promise<void> {
  const config = loadConfig(process.env, packageVersion());
  // The port answers from the first moment: health with progress, everything else 503 until served.
  const server = await startServer(config, {
    onStarting: () =>
      process.stderr.write(
        `Stoop is listening on ${config.publicUrl}, starting (progress: ${config.publicUrl}/v1/health)\n`,
      ),
  });
  process.stderr.write(`Stoop is serving on ${config.publicUrl} (docs: ${config.publicUrl}/docs)\n`);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    server.app.log.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  // Operator errors (bad configuration, a store that cannot be opened or is unavailable)
  // are one line naming what and why; anything else is a bug and gets its stack.
  const operatorMessage = error instanceof ConfigError ? error.message : storeFailureMessage(error);
  process.stderr.write(`${operatorMessage ?? (error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
