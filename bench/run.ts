import { cpus, loadavg } from 'node:os';
import { neighborhoodAreaIds } from './areas.ts';
import { type RunningBaseline, startBaseline, stopBaseline } from './baseline.ts';
import { BenchKeys, configuredKeyStore } from './bench-key.ts';
import { type BenchConfig, BenchConfigError, readBenchConfig } from './config.ts';
import {
  costlyQueries,
  type DuringReport,
  formatDuring,
  historyBackfill,
  refreshCycles,
  runDuring,
} from './during.ts';
import { waitForSettled } from './health.ts';
import { sampleMarketIds } from './market-ids.ts';
import { checkPipelineTargets, formatPipeline, runPipelineBench } from './pipeline.ts';
import { createRng, type Rng } from './random.ts';
import {
  type BenchReport,
  BRACKET_PREFIX,
  checkTargets,
  formatTable,
  formatTargets,
  isBracket,
  rate,
  type TargetCheck,
  writeReport,
} from './report.ts';
import { runScenario, type ScenarioResult } from './runner.ts';
import { baselineScenario, type Scenario, searchFiveAreasPath, serviceScenarios } from './scenarios.ts';
import { killServiceNow, type RunningService, startService, stopService } from './service.ts';
import { checkWebhookTargets, formatWebhooks, runWebhookBench, type WebhookBenchResult } from './webhooks.ts';

/** The baseline between two scenarios: a short run (after a short warm-up) is enough to place it. */
const BRACKET_SECONDS = 4;
const BRACKET_WARMUP_SECONDS = 1;

// Progress goes to stderr so stdout carries only the results (pipeable into a file or PR comment).
const log = (line: string) => process.stderr.write(`${line}\n`);

let service: RunningService | undefined;
let baseline: RunningBaseline | undefined;
/** Every key the run issues; revoked by `cleanup` whichever way the run ends. */
let keys: BenchKeys | undefined;

/** Stops what the run started and revokes the keys it issued; shared by success, failure and signals. */
async function cleanup(): Promise<void> {
  const [s, b] = [service, baseline];
  service = undefined;
  baseline = undefined;
  await Promise.allSettled([s ? stopService(s) : undefined, b ? stopBaseline(b) : undefined]);
  if (keys && keys.outstanding.length > 0) {
    try {
      log(`Revoked the ${await keys.revokeAll()} API key(s) the bench issued.`);
    } catch (error) {
      log(
        `⚠ ${(error as Error).message}; revoke them with \`stoop keys revoke <id>\` (ids: ${keys.outstanding.join(', ')})`,
      );
    }
  }
}

/** Waits until no background work runs, so idle figures are idle. */
async function settle(config: BenchConfig, running: RunningService): Promise<boolean> {
  log('Waiting for background work (history backfill, jobs) to finish before measuring idle figures…');
  return waitForSettled(running.url, {
    timeoutMs: config.settleTimeoutS * 1000,
    log,
    check: () => {
      if (running.child.exitCode !== null) throw new Error('Stoop exited while the bench waited for it');
    },
  });
}

function authHeaders(apiKey: string): Record<string, string> {
  return { authorization: `Bearer ${apiKey}` };
}

/**
 * The baseline must move the same number of bytes as the search it is compared
 * with, otherwise the ratio measures payload size rather than the service.
 * Many samples, median size, so one unusually empty or full area set does not skew it.
 */
async function typicalSearchBody(
  url: string,
  headers: Record<string, string>,
  neighborhoods: readonly number[],
  rng: Rng,
): Promise<Uint8Array> {
  const bodies: Uint8Array[] = [];
  let lastFailure = '';
  for (let i = 0; i < 21; i++) {
    const path = searchFiveAreasPath(rng, neighborhoods);
    const res = await fetch(`${url}${path}`, { headers, signal: AbortSignal.timeout(10_000) });
    const body = new Uint8Array(await res.arrayBuffer());
    if (res.status === 200) bodies.push(body);
    else lastFailure = `HTTP ${res.status} for ${path}: ${Buffer.from(body).toString('utf8').slice(0, 300)}`;
  }
  if (bodies.length === 0) {
    const hint = /\b(401|403|429)\b/.test(lastFailure)
      ? ' (set BENCH_API_KEY to a key with enough quota)'
      : '';
    throw new Error(`could not fetch a search response to size the baseline${hint}: ${lastFailure}`);
  }
  bodies.sort((a, b) => a.byteLength - b.byteLength);
  return bodies[Math.floor(bodies.length / 2)]!;
}

async function main(): Promise<void> {
  const config = readBenchConfig();
  const neighborhoods = neighborhoodAreaIds();
  const startedAt = new Date().toISOString();

  keys = new BenchKeys(configuredKeyStore(config));
  service = await startService(config, { log });
  const settled = await settle(config, service);
  // Without BENCH_API_KEY the bench calls as a fresh INTERNAL key (limits lifted for the run; revoked at the end).
  const apiKey = config.apiKey ?? (await keys.issue());
  const headers = authHeaders(apiKey);
  const body = await typicalSearchBody(service.url, headers, neighborhoods, createRng(config.seed ^ 0x5eed));
  baseline = await startBaseline(body);
  log(`Baseline serves ${body.byteLength} bytes on ${baseline.url}.`);

  const ids = await sampleMarketIds(config);
  const photoKeys = (
    JSON.parse(Buffer.from(body).toString('utf8')) as { data: { leadPhotoKey: string | null }[] }
  ).data
    .map((l) => l.leadPhotoKey)
    .filter((k): k is string => k !== null);
  // Baseline first and last (drift over the run shows as a gap between the two rows), and a short
  // one between every two scenarios: each scenario is rated against the baseline around it (report.ts).
  const plan: Scenario[] = [
    baselineScenario('baseline'),
    ...serviceScenarios({ neighborhoods, photoKeys, ...ids }).flatMap((scenario, i) =>
      i === 0 ? [scenario] : [baselineScenario(`${BRACKET_PREFIX}${scenario.name}`), scenario],
    ),
    baselineScenario('baseline-end'),
  ];
  // Scenarios that call as another tier get a key of their own (issued once per tier).
  const tierHeaders = new Map<string, Record<string, string>>();
  for (const tier of new Set(plan.flatMap((s) => (s.tier && s.tier !== 'INTERNAL' ? [s.tier] : [])))) {
    tierHeaders.set(tier, authHeaders(await keys.issue(tier)));
  }
  const rng = createRng(config.seed);
  const measure = (scenario: Scenario, url: string) =>
    runScenario(scenario, {
      url,
      connections: config.connections,
      durationS: isBracket(scenario) ? Math.min(BRACKET_SECONDS, config.durationS) : config.durationS,
      warmupS: isBracket(scenario) ? BRACKET_WARMUP_SECONDS : config.warmupS,
      headers: (scenario.tier && tierHeaders.get(scenario.tier)) || headers,
      rng,
    });
  const results: ScenarioResult[] = [];
  for (const scenario of plan) {
    const url = scenario.target === 'baseline' ? baseline.url : service.url;
    if (isBracket(scenario)) log(`  baseline again (${BRACKET_SECONDS} s)…`);
    else
      log(
        `▶ ${scenario.name}: ${config.warmupS} s warm-up + ${config.durationS} s at ${config.connections} connections…`,
      );
    const result = await measure(scenario, url);
    if (result.non2xx > 0 || result.errors > 0) {
      const codes = Object.entries(result.statusCodes)
        .filter(([code]) => !code.startsWith('2'))
        .map(([code, n]) => `${n}× ${code}`)
        .join(', ');
      log(
        `⚠ ${scenario.name}: ${result.non2xx} non-2xx${codes ? ` (${codes})` : ''}, ${result.errors} errors; ` +
          `its figures do not measure successful requests. Try e.g.: curl -i '${url}${result.samplePath}'` +
          (result.statusCodes['429'] ? '; 429 means rate limited: set BENCH_API_KEY' : ''),
      );
    }
    results.push(result);
  }

  let during: DuringReport | undefined;
  if (config.during) {
    const ctx = {
      config,
      log,
      url: () => {
        if (!service) throw new Error('the service is not running');
        return service.url;
      },
      restart: async (whileStopped: () => Promise<void>) => {
        const old = service;
        service = undefined;
        if (old) await stopService(old);
        await whileStopped();
        service = await startService(config, { log });
      },
    };
    const readScenarios = plan.filter((s) => s.target === 'service');
    during = await runDuring(
      ctx,
      [costlyQueries(ctx, config.seed), refreshCycles(ctx), historyBackfill(ctx)],
      readScenarios,
      results,
      measure,
    );
  }
  const health = service?.health;
  await cleanup();

  // The refresh pipeline, with the service stopped (it owns the store while running).
  // `--during` measures the request thread under background work instead.
  const pipeline = config.during ? undefined : await runPipelineBench(config, log);
  // Webhooks (issue 13): delivery throughput and change-to-delivery latency, also with the service stopped.
  const webhooks: WebhookBenchResult | undefined = config.during
    ? undefined
    : await runWebhookBench(config, log);

  const { baselineReqPerSec, rated } = rate(results);
  const targets: TargetCheck[] = [
    ...checkTargets(rated),
    ...(pipeline ? checkPipelineTargets(pipeline) : []),
    ...(webhooks ? checkWebhookTargets(webhooks) : []),
  ];
  if (during)
    for (const row of during.rows)
      if (row.met !== null)
        targets.push({
          name: `${row.scenario} during ${row.pressure}: p99 <= 2x idle and max < 50 ms`,
          pass: row.met,
          detail: `p99 ${row.p99Ms.toFixed(1)} ms (idle ${row.idleP99Ms.toFixed(1)}), max ${row.maxMs.toFixed(1)} ms${row.covered ? '' : ' (pressure not going throughout)'}`,
        });
  const report: BenchReport & { webhooks?: WebhookBenchResult } = {
    startedAt,
    finishedAt: new Date().toISOString(),
    settings: {
      durationS: config.durationS,
      warmupS: config.warmupS,
      connections: config.connections,
      dataDir: config.dataDir,
      // Only the kind of store: a DATABASE_URL can carry a password.
      database: config.databaseUrl?.startsWith('postgres') ? 'postgres' : 'sqlite',
      apiKey: config.apiKey ? 'BENCH_API_KEY' : 'issued INTERNAL key (revoked at the end)',
      mode: config.during ? 'during' : 'idle',
      settledBeforeIdle: settled,
      seed: config.seed,
      baselineBodyBytes: body.byteLength,
    },
    environment: {
      node: process.version,
      platform: `${process.platform}/${process.arch}`,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      loadavgAtEnd: loadavg(),
      health,
    },
    baselineReqPerSec,
    scenarios: rated,
    pipeline,
    webhooks,
    during,
    targets,
  };
  await writeReport(config.resultsFile, report);

  process.stdout.write(
    `\nStoop bench: ${config.connections} connections, ${config.durationS} s per scenario ` +
      `(after ${config.warmupS} s warm-up), baseline ${baselineReqPerSec.toFixed(0)} req/s\n\n`,
  );
  const sections = [
    formatTable(rated),
    pipeline ? formatPipeline(pipeline) : '',
    webhooks ? formatWebhooks(webhooks) : '',
    during ? `Under background work (--during), beside the idle figures:\n\n${formatDuring(during)}` : '',
    formatTargets(targets),
  ];
  process.stdout.write(`${sections.filter((section) => section !== '').join('\n\n')}\n\n`);
  log(`Results written to ${config.resultsFile}`);
}

const onSignal = (signal: NodeJS.Signals) => {
  log(`${signal}: stopping the service…`);
  void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);
// Whatever path ends the process, never leave a Stoop child holding the data dir.
process.once('exit', () => {
  if (service) killServiceNow(service);
});

main().catch(async (error: unknown) => {
  await cleanup();
  log(error instanceof BenchConfigError ? error.message : ((error as Error).stack ?? String(error)));
  process.exitCode = 1;
});
