import { cpus, loadavg } from 'node:os';
import { neighborhoodAreaIds } from './areas.ts';
import { type RunningBaseline, startBaseline, stopBaseline } from './baseline.ts';
import { issueBenchKey } from './bench-key.ts';
import { BenchConfigError, readBenchConfig } from './config.ts';
import { sampleMarketIds } from './market-ids.ts';
import { checkPipelineTargets, formatPipeline, runPipelineBench } from './pipeline.ts';
import { createRng, type Rng } from './random.ts';
import { type BenchReport, checkTargets, formatTable, formatTargets, rate, writeReport } from './report.ts';
import { runScenario, type ScenarioResult } from './runner.ts';
import { baselineScenario, type Scenario, searchFiveAreasPath, serviceScenarios } from './scenarios.ts';
import { killServiceNow, type RunningService, startService, stopService } from './service.ts';

// Progress goes to stderr so stdout carries only the results (pipeable into a file or PR comment).
const log = (line: string) => process.stderr.write(`${line}\n`);

let service: RunningService | undefined;
let baseline: RunningBaseline | undefined;

async function cleanup(): Promise<void> {
  const [s, b] = [service, baseline];
  service = undefined;
  baseline = undefined;
  await Promise.allSettled([s ? stopService(s) : undefined, b ? stopBaseline(b) : undefined]);
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

  service = await startService(config, { log });
  // Without BENCH_API_KEY the bench calls as a fresh INTERNAL key (limits lifted for the run).
  const apiKey = config.apiKey ?? (await issueBenchKey(config));
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
  // Baseline first and last: drift during the run shows up as a gap between the two rows.
  const plan: Scenario[] = [
    baselineScenario('baseline'),
    ...serviceScenarios({ neighborhoods, photoKeys, ...ids }),
    baselineScenario('baseline-end'),
  ];
  // Scenarios that call as another tier get a key of their own (issued once per tier).
  const tierHeaders = new Map<string, Record<string, string>>();
  for (const tier of new Set(plan.flatMap((s) => (s.tier && s.tier !== 'INTERNAL' ? [s.tier] : [])))) {
    tierHeaders.set(tier, authHeaders(await issueBenchKey(config, tier)));
  }
  const rng = createRng(config.seed);
  const results: ScenarioResult[] = [];
  for (const scenario of plan) {
    const url = scenario.target === 'baseline' ? baseline.url : service.url;
    log(
      `▶ ${scenario.name}: ${config.warmupS} s warm-up + ${config.durationS} s at ${config.connections} connections…`,
    );
    const result = await runScenario(scenario, {
      url,
      connections: config.connections,
      durationS: config.durationS,
      warmupS: config.warmupS,
      headers: (scenario.tier && tierHeaders.get(scenario.tier)) || headers,
      rng,
    });
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
  const health = service.health;
  await cleanup();

  // The refresh pipeline, with the service stopped (it owns the store while running).
  const pipeline = await runPipelineBench(config, log);

  const { baselineReqPerSec, rated } = rate(results);
  const targets = [...checkTargets(rated), ...checkPipelineTargets(pipeline)];
  const report: BenchReport = {
    startedAt,
    finishedAt: new Date().toISOString(),
    settings: {
      durationS: config.durationS,
      warmupS: config.warmupS,
      connections: config.connections,
      dataDir: config.dataDir,
      // Only the kind of store: a DATABASE_URL can carry a password.
      database: config.databaseUrl?.startsWith('postgres') ? 'postgres' : 'sqlite',
      apiKey: config.apiKey ? 'BENCH_API_KEY' : 'issued INTERNAL key',
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
    targets,
  };
  await writeReport(config.resultsFile, report);

  process.stdout.write(
    `\nStoop bench: ${config.connections} connections, ${config.durationS} s per scenario ` +
      `(after ${config.warmupS} s warm-up), baseline ${baselineReqPerSec.toFixed(0)} req/s\n\n`,
  );
  process.stdout.write(
    `${formatTable(rated)}\n\n${formatPipeline(pipeline)}\n\n${formatTargets(targets)}\n\n`,
  );
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
