import { Writable } from 'node:stream';
import { type LoggerOptions, pino } from 'pino';
import { buildApp, type Composition, compose } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { type HttpApp, loggerOptions } from '../../src/http/server.ts';
import { ManualClock } from '../../src/platform/clock.ts';
import type { Store } from '../../src/platform/db/database.ts';
import { syncAreas } from '../../src/reference/areas-store.ts';
import { TEST_NOW } from './app.ts';
import { createTestStore, TEST_DIALECT } from './store.ts';

/** A stream that keeps every chunk written to it, as text, in `lines` (one pino line a chunk). */
export function captureLines(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { lines, stream };
}

/**
 * How requests are logged: through the composition's process logger (as in
 * production), or by a logger the app builds from the production options.
 */
export type LogWiring = 'process logger' | 'request logger options';

export interface LoggedApp {
  store: Store;
  composition: Composition;
  app: HttpApp;
  /** Base URL of the listening server. */
  url: string;
  /** Every log line written so far. */
  lines: string[];
  close(): Promise<void>;
}

/**
 * The app on a fresh store with the area tree, logging with the production
 * logger settings (redaction included) at the most verbose level into `lines`,
 * listening on a random loopback port.
 */
export async function startLoggedApp(options: {
  wiring: LogWiring;
  /**
   * With 'request logger options': whether the process logger writes into
   * `lines` too (else it is the one the composition makes from the
   * configuration). With 'process logger' it always does.
   */
  captureProcessLog?: boolean;
  env?: Record<string, string>;
  /** Called before the app listens, to add routes. */
  routes?: (app: HttpApp) => void;
}): Promise<LoggedApp> {
  const store = await createTestStore();
  let composition: Composition | undefined;
  let app: HttpApp | undefined;
  const close = async () => {
    await app?.close();
    await composition?.close();
    await store.close();
  };
  try {
    await syncAreas(store);
    const config = loadConfig({
      LOG_LEVEL: 'trace',
      DATABASE_URL: TEST_DIALECT === 'postgres' ? process.env.DATABASE_URL : 'sqlite::memory:',
      PUBLIC_URL: 'http://stoop.test',
      ...options.env,
    });
    const { lines, stream } = captureLines();
    const production = loggerOptions(config);
    if (typeof production !== 'object' || production === null) throw new Error('expected logger options');
    const captureProcessLog = options.wiring === 'process logger' || options.captureProcessLog === true;
    const log = captureProcessLog
      ? pino({ ...(production as LoggerOptions), level: 'trace' }, stream)
      : undefined;
    const clock = new ManualClock(TEST_NOW);
    composition = await compose({
      config,
      store,
      marketClock: clock,
      wallClock: clock,
      ...(log ? { log } : {}),
    });
    app =
      options.wiring === 'process logger'
        ? await buildApp(composition.services)
        : await buildApp(composition.services, { logger: { ...production, level: 'trace', stream } });
    options.routes?.(app);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    return { store, composition, app, url, lines, close };
  } catch (error) {
    await close();
    throw error;
  }
}
