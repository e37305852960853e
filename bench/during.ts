/**
 * `npm run bench -- --during`: each read scenario measured again while
 * something that used to stall the request thread goes on, beside its idle
 * figures from the same run (issue 12, Targets):
 *
 * - `costly-queries`: anonymous callers from five source addresses, each
 *   within the Free limit (a 429 is waited out as its Retry-After says),
 *   asking the costliest searches there are: deep pages of non-active
 *   statuses sorted by price per sqft, and amenity filters on non-active
 *   statuses.
 * - `refresh`: refresh cycles back to back (`refresh-loop.ts`, in its own
 *   process) from a `stoop origin` feed whose market moves (below the
 *   service's priority: it stands in for a feed on another machine), into the
 *   store the service serves; the service rebuilds its read model after each.
 * - `backfill`: the market-history backfill. The service is stopped, the
 *   store's snapshot coverage cleared, and the service started again: its
 *   snapshot job then backfills 24 months from scratch. Restarted again
 *   whenever the backfill ended before a scenario began; at the end the bench
 *   waits for it to complete, so the store is left with full coverage.
 *
 * Target (for `areas`, `search-5-areas`, `property-detail`): p99 ≤ 2× the idle
 * p99 and max < 50 ms. A figure counts only when the pressure ran throughout
 * its window and every response was a 2xx.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config.ts';
import { readDemoRecord } from '../src/demo/market/load.ts';
import { DataVersion } from '../src/modules/freshness/data-version.ts';
import { MAX_RESULT_WINDOW } from '../src/modules/search/search.service.ts';
import { HOUR_MS, ManualClock } from '../src/platform/clock.ts';
import type { Store } from '../src/platform/db/database.ts';
import { openConfiguredStore, prepareStore } from '../src/prepared-store.ts';
import { type BenchConfig, REPO_ROOT } from './config.ts';
import { backgroundOf, fetchHealth, waitForSettled } from './health.ts';
import { startOriginProcess } from './pipeline.ts';
import { createRng, type Rng, randomInt } from './random.ts';
import { layoutTable, yesNo } from './report.ts';
import type { ScenarioResult } from './runner.ts';
import type { Scenario } from './scenarios.ts';

/** Scenarios with a `--during` target, and the target. */
export const DURING_TARGETS = {
  scenarios: ['areas', 'search-5-areas', 'property-detail'] as readonly string[],
  maxP99Factor: 2,
  maxLatencyMs: 50,
};

export interface DuringContext {
  readonly config: BenchConfig;
  readonly log: (line: string) => void;
  /** The service's base URL as it runs now (a restart changes it). */
  url(): string;
  /** Stops the service, runs `whileStopped` on its store, starts it again and waits until ready. */
  restart(whileStopped: () => Promise<void>): Promise<void>;
}

/** Background work kept going while scenarios are measured. */
export interface Pressure {
  readonly name: string;
  readonly description: string;
  /** Gets it going (again, when it ended); resolves once it runs. */
  ensure(): Promise<void>;
  /** Whether it is going now. */
  active(): Promise<boolean>;
  /** Ends it (or lets it finish); what it did, for the results. */
  stop(): Promise<Record<string, unknown>>;
}

export interface DuringRow {
  readonly pressure: string;
  readonly scenario: string;
  readonly idleP99Ms: number;
  readonly idleMaxMs: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly reqPerSec: number;
  readonly non2xx: number;
  readonly errors: number;
  /** The pressure was going when the scenario's warm-up began and still when its window ended. */
  readonly covered: boolean;
  /** Null: the scenario has no `--during` target. */
  readonly met: boolean | null;
}

export interface DuringReport {
  readonly rows: readonly DuringRow[];
  readonly pressures: Readonly<Record<string, Record<string, unknown>>>;
}

/** Whether a row meets the `--during` target (null when its scenario has none). */
export function meetsDuringTarget(
  row: Pick<DuringRow, 'scenario' | 'idleP99Ms' | 'p99Ms' | 'maxMs' | 'non2xx' | 'errors' | 'covered'>,
): boolean | null {
  if (!DURING_TARGETS.scenarios.includes(row.scenario)) return null;
  return (
    row.covered &&
    row.non2xx === 0 &&
    row.errors === 0 &&
    row.p99Ms <= DURING_TARGETS.maxP99Factor * row.idleP99Ms &&
    row.maxMs < DURING_TARGETS.maxLatencyMs
  );
}

/**
 * Every scenario under every pressure, in that order (one pressure at a time,
 * all its scenarios, then it stops). `measure` runs one scenario against the
 * service's current URL, as the idle run did.
 */
export async function runDuring(
  ctx: DuringContext,
  pressures: readonly Pressure[],
  scenarios: readonly Scenario[],
  idle: readonly ScenarioResult[],
  measure: (scenario: Scenario, url: string) => Promise<ScenarioResult>,
): Promise<DuringReport> {
  const rows: DuringRow[] = [];
  const summaries: Record<string, Record<string, unknown>> = {};
  for (const pressure of pressures) {
    ctx.log(`▶ during ${pressure.name}: ${pressure.description}`);
    try {
      for (const scenario of scenarios) {
        const before = idle.find((r) => r.name === scenario.name);
        if (!before) continue;
        await pressure.ensure();
        const going = await pressure.active();
        ctx.log(`  ${scenario.name} during ${pressure.name}…`);
        const result = await measure(scenario, ctx.url());
        const covered = going && (await pressure.active());
        if (!covered) ctx.log(`  ⚠ ${pressure.name} was not going throughout ${scenario.name}'s window`);
        const row = {
          pressure: pressure.name,
          scenario: scenario.name,
          idleP99Ms: before.latencyMs.p99,
          idleMaxMs: before.latencyMs.max,
          p99Ms: result.latencyMs.p99,
          maxMs: result.latencyMs.max,
          reqPerSec: result.reqPerSec,
          non2xx: result.non2xx,
          errors: result.errors,
          covered,
        };
        rows.push({ ...row, met: meetsDuringTarget(row) });
      }
    } finally {
      summaries[pressure.name] = await pressure.stop();
    }
  }
  return { rows, pressures: summaries };
}

function fmt(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

export function formatDuring(report: DuringReport): string {
  const target = `p99≤${DURING_TARGETS.maxP99Factor}×idle, max<${DURING_TARGETS.maxLatencyMs} ms`;
  const header = [
    'scenario',
    'during',
    'idle p99',
    'p99 ms',
    '×idle',
    'idle max',
    'max ms',
    'req/s',
    'non-2xx',
    'covered',
    'target',
    'met',
  ];
  const rows = report.rows.map((r) => [
    r.scenario,
    r.pressure,
    fmt(r.idleP99Ms, 1),
    fmt(r.p99Ms, 1),
    `${fmt(r.p99Ms / r.idleP99Ms, 1)}×`,
    fmt(r.idleMaxMs, 1),
    fmt(r.maxMs, 1),
    fmt(r.reqPerSec, 0),
    String(r.non2xx + r.errors),
    r.covered ? 'yes' : 'NO',
    r.met === null ? '' : target,
    yesNo(r.met),
  ]);
  const pressures = Object.entries(report.pressures)
    .map(([name, summary]) => `${name}: ${JSON.stringify(summary)}`)
    .join('\n');
  return `${layoutTable(header, rows)}\n\n${pressures}`;
}

// ---- the pressures -----------------------------------------------------------

async function withStore<T>(config: BenchConfig, work: (store: Store) => Promise<T>): Promise<T> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATA_DIR: config.dataDir,
    LOG_LEVEL: 'silent',
  };
  if (config.databaseUrl !== undefined) env.DATABASE_URL = config.databaseUrl;
  const store = await openConfiguredStore(loadConfig(env));
  try {
    await prepareStore(store);
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Source addresses of the anonymous callers: distinct loopback addresses, so each has its own Free window. */
const COSTLY_SOURCES = ['127.0.0.11', '127.0.0.12', '127.0.0.13', '127.0.0.14', '127.0.0.15'];

/**
 * The costliest anonymous searches (issue 12, part 5), without their page:
 * non-active statuses, sorted by price per sqft or filtered on amenities.
 */
export const COSTLY_QUERIES: readonly string[] = ['rentals', 'sales'].flatMap((type) => [
  `/v1/search/${type}?status=OFF_MARKET&sort=PRICE_PER_SQFT`,
  `/v1/search/${type}?status=OFF_MARKET,IN_CONTRACT&amenities=doorman,gym,pool`,
  `/v1/search/${type}?status=OFF_MARKET&amenities=doorman,gym,pool&sort=PRICE_PER_SQFT`,
]);
const COSTLY_PER_PAGE = 10;

/**
 * One costly request: a random query of `COSTLY_QUERIES` at a deep page, in
 * the last half of the pages it serves (`totals`: its match count, learned
 * first; at most the service's result window of 10,000), the deepest being
 * the costliest for offset paging.
 */
export function costlyPath(rng: Rng, totals: readonly number[]): string {
  const i = randomInt(rng, 0, COSTLY_QUERIES.length - 1);
  const served = Math.min(totals[i] ?? 0, MAX_RESULT_WINDOW);
  const last = Math.max(1, Math.ceil(served / COSTLY_PER_PAGE));
  const page = randomInt(rng, Math.ceil(last / 2), last);
  return `${COSTLY_QUERIES[i]}&page=${page}&perPage=${COSTLY_PER_PAGE}`;
}

/** Match counts of `COSTLY_QUERIES` (page 1 of each), asked from an address of its own. */
async function costlyTotals(url: string): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, localAddress: '127.0.0.10' });
  try {
    const totals: number[] = [];
    for (const query of COSTLY_QUERIES) {
      const res = await fetchJson(agent, `${url}${query}&perPage=1`);
      // Unknown: the deepest page at full scale.
      totals.push(typeof res?.meta?.total === 'number' ? res.meta.total : 398_000);
    }
    return totals;
  } finally {
    agent.destroy();
  }
}

function fetchJson(agent: Agent, url: string): Promise<{ meta?: { total?: unknown } } | null> {
  return new Promise((resolve) => {
    const req = request(url, { agent, timeout: 30_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.once('end', () => {
        try {
          resolve(res.statusCode === 200 ? (JSON.parse(body) as { meta?: { total?: unknown } }) : null);
        } catch {
          resolve(null);
        }
      });
    });
    req.once('timeout', () => req.destroy(new Error('timed out')));
    req.once('error', () => resolve(null));
    req.end();
  });
}

/** One GET from a given source address; resolves with the status, latency and Retry-After. */
function getFrom(
  agent: Agent,
  url: string,
  path: string,
): Promise<{ status: number; ms: number; retryAfterS: number | null }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { agent, timeout: 30_000 }, (res) => {
      res.resume();
      res.once('end', () => {
        const retry = Number(res.headers['retry-after']);
        resolve({
          status: res.statusCode ?? 0,
          ms: performance.now() - started,
          retryAfterS: Number.isFinite(retry) ? retry : null,
        });
      });
    });
    req.once('timeout', () => req.destroy(new Error('timed out')));
    req.once('error', reject);
    req.end();
  });
}

export function costlyQueries(ctx: DuringContext, seed: number): Pressure {
  let controller: AbortController | null = null;
  let loops: Promise<void>[] = [];
  const statuses: Record<string, number> = {};
  let maxMs = 0;
  let costly = 0;
  let totals: number[] | null = null;
  const run = async (source: string, rng: Rng, signal: AbortSignal) => {
    const agent = new Agent({ keepAlive: true, localAddress: source });
    try {
      while (!signal.aborted) {
        try {
          const answer = await getFrom(agent, ctx.url(), costlyPath(rng, totals ?? []));
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
          if (answer.status !== 429) {
            costly++;
            maxMs = Math.max(maxMs, answer.ms);
            continue;
          }
          // Within the Free limit, as the callers were: wait out the window.
          await sleep(Math.min(60, Math.max(1, answer.retryAfterS ?? 5)) * 1000, undefined, { signal });
        } catch {
          // A request cut off by the end of the pressure is not an error of the service.
          if (signal.aborted) break;
          statuses.error = (statuses.error ?? 0) + 1;
          await sleep(500, undefined, { signal }).catch(() => {});
        }
      }
    } catch {
      // Aborted while waiting: the pressure is over.
    } finally {
      agent.destroy();
    }
  };
  return {
    name: 'costly-queries',
    description: `anonymous deep-page and amenity searches on non-active statuses from ${COSTLY_SOURCES.length} source addresses, each within the Free limit`,
    ensure: async () => {
      if (controller && !controller.signal.aborted) return;
      totals ??= await costlyTotals(ctx.url());
      controller = new AbortController();
      const signal = controller.signal;
      loops = COSTLY_SOURCES.map((source, i) => run(source, createRng(seed + i), signal));
      // Let the first round of costly queries reach the service before measuring.
      await sleep(500);
    },
    active: async () => controller !== null && !controller.signal.aborted,
    stop: async () => {
      controller?.abort();
      await Promise.allSettled(loops);
      return {
        sources: COSTLY_SOURCES.length,
        matches: Object.fromEntries(COSTLY_QUERIES.map((q, i) => [q, totals?.[i] ?? null])),
        answered: costly,
        statuses,
        slowestMs: Math.round(maxMs),
      };
    },
  };
}

/** Simulated ms per real ms of the feed the refresh cycles replicate from: 10 market minutes a second. */
const ORIGIN_SPEED = 600;

export function refreshCycles(ctx: DuringContext): Pressure {
  let origin: { url: string; child: ChildProcess } | null = null;
  let loop: ChildProcess | null = null;
  const cycles: Record<string, number>[] = [];
  const start = async () => {
    const { demo, syncedTo } = await withStore(ctx.config, async (store) => ({
      demo: await readDemoRecord(store),
      syncedTo: await new DataVersion(store.db, new ManualClock(0)).refreshedAt('search:rental'),
    }));
    if (!demo) throw new Error('the bench store holds no demo market');
    // An hour after the store's last refresh, moving on: every cycle finds changes.
    const at = new Date(Date.parse(syncedTo ?? demo.generatedAt) + HOUR_MS);
    origin ??= await startOriginProcess(demo, at, ORIGIN_SPEED, { remote: true });
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: ctx.config.dataDir, LOG_LEVEL: 'silent' };
    if (ctx.config.databaseUrl !== undefined) env.DATABASE_URL = ctx.config.databaseUrl;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bench/refresh-loop.ts', origin.url, at.toISOString(), String(ORIGIN_SPEED)],
      { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    loop = child;
    let buffered = '';
    let readyResolve: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      readyResolve = resolve;
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const parsed = JSON.parse(line) as Record<string, number> & { ready?: boolean };
        if (parsed.ready) readyResolve();
        else cycles.push(parsed);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    const exited = once(child, 'exit').then(([code]) => {
      throw new Error(`the refresh loop exited (${code}) before its first cycle`);
    });
    await Promise.race([ready, exited]);
    exited.catch(() => {});
  };
  const alive = () => loop !== null && loop.exitCode === null && loop.signalCode === null;
  return {
    name: 'refresh',
    description: `refresh cycles back to back (replication from a stoop origin feed moving at ${ORIGIN_SPEED}×) into the served store`,
    ensure: async () => {
      if (!alive()) await start();
    },
    active: async () => alive(),
    stop: async () => {
      if (loop && alive()) {
        const exited = once(loop, 'exit');
        loop.kill('SIGTERM');
        // It ends after its current cycle; a stuck one is killed.
        const timedOut = await Promise.race([exited.then(() => false), sleep(60_000).then(() => true)]);
        if (timedOut) loop.kill('SIGKILL');
      }
      origin?.child.kill('SIGTERM');
      const changed = cycles.reduce((sum, c) => sum + (c.created ?? 0) + (c.updated ?? 0), 0);
      const ms = cycles.map((c) => c.ms ?? 0);
      return {
        cycles: cycles.length,
        listingsChanged: changed,
        events: cycles.reduce((sum, c) => sum + (c.events ?? 0), 0),
        cycleMsMedian: ms.length > 0 ? ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)] : null,
      };
    },
  };
}

/** The job that backfills market history (health's `background.jobs`). */
const SNAPSHOT_JOB = 'market-snapshots';
/** How long the bench waits for a restart's own background work before measuring during the backfill. */
const START_WORK_TIMEOUT_MS = 120_000;

export function historyBackfill(ctx: DuringContext): Pressure {
  let restarts = 0;
  const going = async () => {
    const state = backgroundOf(await fetchHealth(ctx.url()));
    return state.backfillRunning && !state.backfillComplete;
  };
  return {
    name: 'backfill',
    description:
      'the 24-month market-history backfill from scratch (service restarted over a store whose snapshot coverage was cleared)',
    ensure: async () => {
      if (await going()) return;
      restarts++;
      await ctx.restart(() =>
        withStore(ctx.config, async (store) => {
          // Without coverage the snapshot job starts over: the newest days first, then back 24 months.
          await store.db.deleteFrom('market_snapshot_coverage').execute();
        }),
      );
      // The job starts once the server listens; give it a moment to report.
      for (let i = 0; i < 40 && !(await going()); i++) await sleep(250);
      // A start also does work of its own once ready (the summary warm-up after the first
      // index swap): what is measured here is the backfill, so the rest finishes first.
      await waitForSettled(ctx.url(), { timeoutMs: START_WORK_TIMEOUT_MS, log: ctx.log }, (state) =>
        state.running.every((job) => job === SNAPSHOT_JOB),
      );
    },
    active: going,
    stop: async () => {
      const before = backgroundOf(await fetchHealth(ctx.url()));
      ctx.log(
        `  letting the backfill finish (${before.backfillPercent}%), so the store keeps full coverage…`,
      );
      const settled = await waitForSettled(ctx.url(), {
        timeoutMs: ctx.config.settleTimeoutS * 1000,
        log: ctx.log,
      });
      return { restarts, completeAtEnd: settled };
    },
  };
}
