import { startServer } from './boot.ts';
import { ConfigError, loadConfig } from './config.ts';
import { packageVersion } from './version.ts';

/** `npm start`: boot the whole service with configuration from the environment. */
async function main(): Promise<void> {
  const config = loadConfig(process.env, packageVersion());
  const server = await startServer(config);
  process.stderr.write(`Stoop is listening on ${config.publicUrl} (docs: ${config.publicUrl}/docs)\n`);
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
  process.stderr.write(
    `${error instanceof ConfigError ? error.message : ((error as Error).stack ?? String(error))}\n`,
  );
  process.exit(1);
});
