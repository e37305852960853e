/**
 * Data pipeline measurements, run after the HTTP scenarios (the service child
 * is stopped by then, so the store is not shared):
 *
 * 1. Full refresh throughput: every on-market listing from the market
 *    simulator (its own process, as an operator's feed would be), over HTTP
 *    through the RESO source, into the bench store with change detection.
 *    Target ≥ 3,000 listings/s on SQLite.
 * 2. Single-flight: 100 concurrent search reads of stale data by a Business
 *    key against a live app start exactly one upstream refresh.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { buildApp, compose } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { type DemoRecord, readDemoRecord } from '../src/demo/market/load.ts';
import { Refresher } from '../src/jobs/refresh/refresher.ts';
import { DataVersion } from '../src/modules/freshness/data-version.ts';
import { HOUR_MS, ManualClock } from '../src/platform/clock.ts';
import type { Store } from '../src/platform/db/database.ts';
import { BACKGROUND_NICE } from '../src/platform/worker/threads.ts';
import { openConfiguredStore, prepareStore } from '../src/prepared-store.ts';
import { ResoListingSource } from '../src/upstream/reso/source.ts';
import { type BenchConfig, REPO_ROOT } from './config.ts';
import type { TargetCheck } from './report.ts';

export interface PipelineBenchResult {
  fullRefresh: {
    listings: number;
    created: number;
    updated: number;
    unchanged: number;
    events: number;
    seconds: number;
    listingsPerSecond: number;
  };
  singleFlight: {
    reads: number;
    staleReads: number;
    refreshTriggered: number;
    /**
     * Refresh cycles the burst started: what single flight bounds. One cycle
     * reads as many pages as the changes since the last refresh fill (keyset
     * pages on ModificationTimestamp, one request each).
     */
    refreshCycles: number;
    /** Every upstream request, the cycle's pages. */
    upstreamRequests: number;
  };
}

export const FULL_REFRESH_TARGET = 3_000;

/**
 * `stoop origin` in its own process, from simulated instant `at`: fixed
 * (speed ≈ 0) unless told, or moving `speed` simulated ms per real ms.
 * `remote`: it stands in for a feed on another machine, so it runs below the
 * service's priority (every thread of it: started under `nice`) instead of
 * taking the serving thread's CPU on a small bench machine.
 */
export async function startOriginProcess(
  demo: DemoRecord,
  at: Date,
  speed = 0.001,
  options: { remote?: boolean } = {},
): Promise<{ url: string; child: ChildProcess }> {
  const node = options.remote
    ? { command: 'nice', prefix: ['-n', String(BACKGROUND_NICE), process.execPath] }
    : { command: process.execPath, prefix: [] };
  const child = spawn(
    node.command,
    [
      ...node.prefix,
      '--import',
      'tsx',
      'src/cli.ts',
      'origin',
      '--port',
      '0',
      '--seed',
      String(demo.seed),
      '--scale',
      String(demo.scale),
      '--start',
      at.toISOString(),
      '--speed',
      String(speed),
      '--no-latency',
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+\/odata)/.exec(seen);
      if (match) resolve(match[1]!);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`stoop origin exited (${code}): ${seen.slice(-500)}`)));
  });
  return { url, child };
}

export async function runPipelineBench(
  config: BenchConfig,
  log: (line: string) => void,
): Promise<PipelineBenchResult> {
  const appConfig = loadConfig({
    ...process.env,
    DATA_DIR: config.dataDir,
    ...(config.databaseUrl ? { DATABASE_URL: config.databaseUrl } : {}),
    LOG_LEVEL: 'silent',
    RATE_LIMIT_BUSINESS: '1000000000',
    MONTHLY_QUOTA_BUSINESS: '1000000000',
  });
  const store = await openConfiguredStore(appConfig);
  let origin: { url: string; child: ChildProcess } | undefined;
  try {
    await prepareStore(store);
    const demo = await readDemoRecord(store);
    if (!demo) throw new Error('the bench store holds no demo market');
    // Six simulated hours after the store's last refresh (each run moves on): some
    // listings changed, most did not — the mix a real refresh cycle sees.
    const syncedTo = await new DataVersion(store.db, new ManualClock(0)).refreshedAt('search:rental');
    const at = new Date(Date.parse(syncedTo ?? demo.generatedAt) + 6 * HOUR_MS);
    log(`Starting the market simulator (scale ${demo.scale}) at ${at.toISOString()}…`);
    origin = await startOriginProcess(demo, at);

    const clock = new ManualClock(at);
    const source = new ResoListingSource({ url: origin.url, timeoutMs: 60_000 });
    const refresher = new Refresher({
      store,
      clock,
      source,
      dataVersion: new DataVersion(store.db, clock),
      pageSize: 2000,
    });
    log(
      '▶ full refresh: every on-market listing, simulator → RESO over HTTP → store, with change detection…',
    );
    const full = await refresher.fullRefresh();
    const seconds = full.ms / 1000;
    const fullRefresh = {
      listings: full.received,
      created: full.created,
      updated: full.updated,
      unchanged: full.unchanged,
      events: full.events,
      seconds,
      listingsPerSecond: Math.round(full.received / seconds),
    };
    log(`  ${fullRefresh.listings} listings in ${seconds.toFixed(1)} s = ${fullRefresh.listingsPerSecond}/s`);

    log('▶ single-flight: 100 concurrent stale reads by a Business key…');
    const singleFlight = await singleFlightBench(appConfig, store, origin.url, at);
    log(
      `  ${singleFlight.refreshTriggered} reads reported a refresh; refresh cycles: ${singleFlight.refreshCycles}, upstream requests (its pages): ${singleFlight.upstreamRequests}`,
    );
    return { fullRefresh, singleFlight };
  } finally {
    origin?.child.kill('SIGTERM');
    await store.close();
  }
}

async function singleFlightBench(
  appConfig: ReturnType<typeof loadConfig>,
  store: Store,
  originUrl: string,
  at: Date,
): Promise<PipelineBenchResult['singleFlight']> {
  // Three hours after the full refresh: stale for Business (30 min).
  const clock = new ManualClock(at.getTime() + 3 * HOUR_MS);
  let upstreamRequests = 0;
  let refreshCycles = 0;
  // A feed answering in about a second (as real ones do), so the burst overlaps the refresh.
  const countingFetch: typeof fetch = async (input, init) => {
    upstreamRequests++;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return fetch(input, init);
  };
  const source = new ResoListingSource({ url: originUrl, timeoutMs: 60_000, fetch: countingFetch });
  let refresher: Refresher | undefined;
  const composition = await compose({
    config: appConfig,
    store,
    marketClock: clock,
    limitsNamespace: `stoop-bench-${process.pid}`,
    refresher: (parts) => {
      const created = new Refresher({ ...parts, source, pageSize: 5000 });
      // A stale read starts a cycle through replicate() only when none is in flight (requestRefresh).
      const replicate = created.replicate.bind(created);
      created.replicate = () => {
        refreshCycles++;
        return replicate();
      };
      refresher = created;
      return created;
    },
  });
  const app = await buildApp(composition.services, { logger: false });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  let keyId: string | undefined;
  try {
    const issued = await composition.services.subscriptions.issue({
      accountId: 'stoop-bench',
      tier: 'BUSINESS',
    });
    keyId = issued.id;
    const key = issued.key;
    const reads = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const response = await fetch(`${url}/v1/search/rentals?areas=100,300&perPage=20`, {
          headers: { authorization: `Bearer ${key}` },
        });
        return (await response.json()) as { meta?: { source: string; refreshTriggered: boolean } };
      }),
    );
    await refresher?.idle();
    return {
      reads: reads.length,
      staleReads: reads.filter((r) => r.meta?.source === 'stale').length,
      refreshTriggered: reads.filter((r) => r.meta?.refreshTriggered === true).length,
      refreshCycles,
      upstreamRequests,
    };
  } finally {
    // The run must not leave a working key in the user's store.
    if (keyId) await composition.services.subscriptions.setStatus(keyId, 'revoked');
    await app.close();
    await composition.close();
  }
}

export function checkPipelineTargets(result: PipelineBenchResult): TargetCheck[] {
  const { fullRefresh, singleFlight } = result;
  return [
    {
      name: `full refresh >= ${FULL_REFRESH_TARGET} listings/s`,
      pass: fullRefresh.listingsPerSecond >= FULL_REFRESH_TARGET,
      detail: `${fullRefresh.listingsPerSecond} listings/s (${fullRefresh.listings} in ${fullRefresh.seconds.toFixed(1)} s)`,
    },
    {
      name: 'single-flight: 100 concurrent stale reads = 1 refresh cycle',
      pass: singleFlight.refreshCycles === 1 && singleFlight.refreshTriggered === singleFlight.reads,
      detail: `${singleFlight.refreshCycles} refresh cycle(s), ${singleFlight.upstreamRequests} upstream request(s) (its pages); ${singleFlight.refreshTriggered}/${singleFlight.reads} reads reported refreshTriggered`,
    },
  ];
}

export function formatPipeline(result: PipelineBenchResult): string {
  const f = result.fullRefresh;
  const s = result.singleFlight;
  return [
    '| pipeline | figure |',
    '|---|---|',
    `| full refresh (simulator → RESO over HTTP → store, change detection) | ${f.listingsPerSecond} listings/s: ${f.listings} listings in ${f.seconds.toFixed(1)} s (${f.updated} changed, ${f.unchanged} unchanged, ${f.events} events) |`,
    `| 100 concurrent stale Business reads | ${s.refreshCycles} refresh cycle (${s.upstreamRequests} upstream requests: its pages), ${s.refreshTriggered} reads with refreshTriggered |`,
  ].join('\n');
}
