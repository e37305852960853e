import { configDefaults, defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer.ts';
import { SummaryLineReporter } from './test/support/summary-reporter.ts';

/**
 * Files whose subject does not depend on the store's dialect — the HTTP edge,
 * parameter and body fuzzing, the tier matrix, photos, the docs page in a
 * browser, Redis faults, streaming a large CSV in bounded memory — run once,
 * in the SQLite pass; the PostgreSQL pass (CI's second) runs every file whose
 * behaviour can differ by dialect. Keeps CI within its time budget on two cores.
 */
const DIALECT_INDEPENDENT = [
  'test/http.edge.test.ts',
  // The bench's ratio arithmetic (pure functions).
  'test/bench.report.test.ts',
  // The response-body pool over plain node:http sockets.
  'test/response-slabs.test.ts',
  'test/fuzz.params.test.ts',
  'test/fuzz.bodies.test.ts',
  'test/access.tiers.test.ts',
  'test/photos.limits.test.ts',
  'test/photos.happy.test.ts',
  'test/photos.error.test.ts',
  'test/photos.floorplan.test.ts',
  'test/docs.browser.test.ts',
  'test/faults.redis.test.ts',
  'test/opendata.bulk.test.ts',
  // The consent page's HTML, headers and browser behaviour; the OAuth storage runs on both dialects in oauth.*.test.ts.
  'test/oauth.consent.browser.test.ts',
  // Its own PostgreSQL cluster and its own SQLite files, whatever DATABASE_URL says: the two passes ran it identically.
  'test/faults.database.test.ts',
  // The SQLite driver's lock waits, on SQLite files of its own.
  'test/store.sqlite-locks.test.ts',
  // A third-party MCP client over the transport: the store is not its subject.
  'test/mcp.remote.test.ts',
  // The MCP JSON answer transport under the SDK's Server (no store).
  'test/mcp.transport.test.ts',
  // The request logger factory over pino (no store).
  'test/request-logger.test.ts',
  // The rebuilt index's row mapping (a pure function; the worker that runs it is tested on both dialects).
  'test/search.carried-rows.test.ts',
  // A list answer's meta and the area-id union (pure functions).
  'test/list-meta.test.ts',
  // The front page's HTML and headers; the OpenAPI document's lint and a client generated from it;
  // the CSV/GeoJSON encoders (pure functions); the demo market's calibration (generated in memory).
  'test/home.http.test.ts',
  'test/home.browser.test.ts',
  'test/openapi.lint.test.ts',
  'test/openapi.client.test.ts',
  'test/exports.encoders.test.ts',
  // Parameter validation and the document against the server's answers: the store is not their subject.
  'test/params.error.test.ts',
  'test/search.geo.error.test.ts',
  'test/openapi.examples.test.ts',
  // The response serializer against the documented examples (schemas and fast-json-stringify only).
  'test/http.serializer.test.ts',
  'test/openapi.contract.test.ts',
  'test/demo-calibration.test.ts',
  // No store at all: the demo generator and lots, the RESO client against a misbehaving upstream,
  // the simulator on its own thread and as a RESO server (the refresh job's store work runs on
  // both dialects in jobs.event-loop.test.ts).
  'test/demo-market.test.ts',
  'test/demo-lots.test.ts',
  'test/upstream.reso.error.test.ts',
  'test/simulator.thread.test.ts',
  'test/upstream.simulator.test.ts',
  // The HTTP edge's answers, parameter validation, log redaction, CORS, outbound connections, photo scenes.
  'test/http.error.test.ts',
  'test/search.error.test.ts',
  'test/mcp.error.test.ts',
  'test/logs.security.test.ts',
  'test/cors.security.test.ts',
  'test/outbound.ssrf.test.ts',
  'test/outbound.keepalive.test.ts',
  'test/photos.scenes.test.ts',
  // Geo search's SQL path runs on both dialects in search.geo.property.test.ts.
  'test/search.geo.happy.test.ts',
  // The CLIs' arguments and output; the key and import storage they call runs on both dialects
  // in keys.*.test.ts and opendata.import.*.test.ts.
  'test/keys.cli.test.ts',
  // What a CLI command's start-up loads (module graph only).
  'test/cli.startup.test.ts',
  'test/opendata.cli.test.ts',
  // The launchers and signals (process-level; how a stopped start closes its store runs on both
  // dialects in boot.stop.test.ts), and the worker-thread request client (no store).
  'test/start.launcher.test.ts',
  'test/worker.request.test.ts',
  // The event-loop measurement the stall tests use (this thread's clock; no store).
  'test/event-loop-activity.test.ts',
];
const postgresPass = process.env.DATABASE_URL?.startsWith('postgres') ?? false;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...(postgresPass ? DIALECT_INDEPENDENT : [])],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: a third worker made the SQLite pass no faster (the suite is CPU-bound)
    // and vitest's pool once failed its teardown with it.
    pool: 'forks',
    poolOptions: {
      forks: {
        maxForks: 2,
        minForks: 1,
        // A worker runs file after file without a fresh process and module graph: loading
        // src (Fastify, schemas, the demo generator) again for each of ~95 files took about
        // as long as many files' tests. Each file still gets its own store, app and Redis
        // namespace from the harness; vitest still restores mocks between files.
        isolate: false,
      },
    },
    // The longest files start first, so none runs on alone at the end of a pass.
    sequence: { sequencer: LongestFirstSequencer },
    reporters: ['default', new SummaryLineReporter()],
  },
});
