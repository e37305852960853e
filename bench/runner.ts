import autocannon from 'autocannon';
import type { Rng } from './random.ts';
import type { Scenario } from './scenarios.ts';

export interface RunOptions {
  /** Origin of the server the scenario targets. */
  readonly url: string;
  readonly connections: number;
  readonly durationS: number;
  readonly warmupS: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly rng: Rng;
}

export interface ScenarioResult {
  readonly name: string;
  readonly target: Scenario['target'];
  readonly description: string;
  /** One request the generator produced, to reproduce by hand with curl. */
  readonly samplePath: string;
  readonly connections: number;
  readonly durationS: number;
  /** Responses received during the measured window. */
  readonly responses: number;
  /** Mean of autocannon's per-second samples. */
  readonly reqPerSec: number;
  /** Over every response of the measured window, non-2xx included (as autocannon counts them). */
  readonly latencyMs: {
    readonly mean: number;
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
  };
  readonly non2xx: number;
  readonly statusCodes: Readonly<Record<string, number>>;
  /** Connection errors, timeouts included. */
  readonly errors: number;
  readonly timeouts: number;
  /** Mean bytes on the wire per response, status line and headers included. */
  readonly bytesPerResponse: number;
}

type ResponseListener = (statusCode: number, bytes: number, latencyMs: number) => void;

function fire(options: autocannon.Options, onResponse?: ResponseListener): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    // The callback form is the one that hands back the instance, which the response hook needs.
    const instance = autocannon(options, (error: unknown, result) => {
      if (error) reject(error instanceof Error ? error : new Error(String(error)));
      else resolve(result);
    });
    if (onResponse)
      instance.on('response', (_client, statusCode, bytes, latencyMs) =>
        onResponse(statusCode, bytes, latencyMs),
      );
  });
}

/**
 * Percentiles from every raw sample. autocannon's own histogram has 1 ms
 * resolution, which turns a sub-millisecond baseline into "0 ms" and makes a
 * p99 near the 20 ms target jump in whole steps.
 */
function summarize(samples: number[]): ScenarioResult['latencyMs'] {
  if (samples.length === 0)
    return { mean: Number.NaN, p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, max: Number.NaN };
  const sorted = Float64Array.from(samples).sort();
  // Nearest-rank: the value below which q of the samples fall, as HdrHistogram reports it.
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  const sum = sorted.reduce((acc, v) => acc + v, 0);
  return {
    mean: sum / sorted.length,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: sorted[sorted.length - 1]!,
  };
}

/** Warm-up (discarded), then the measured run, with a freshly generated path on every request. */
export async function runScenario(scenario: Scenario, options: RunOptions): Promise<ScenarioResult> {
  const base: autocannon.Options = {
    url: options.url,
    connections: options.connections,
    headers: { ...options.headers, ...scenario.headers },
    timeout: 10,
    requests: [
      {
        setupRequest: (request) => {
          const path = scenario.nextPath(options.rng);
          return scenario.nextBody
            ? { ...request, path, method: 'POST', body: scenario.nextBody(options.rng) }
            : { ...request, path };
        },
      },
    ],
  };
  if (options.warmupS > 0) await fire({ ...base, duration: options.warmupS });

  let bytes = 0;
  const latencies: number[] = [];
  const result = await fire({ ...base, duration: options.durationS }, (_status, responseBytes, latencyMs) => {
    bytes += responseBytes;
    latencies.push(latencyMs);
  });
  const counted = latencies.length;

  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {}))
    statusCodes[code] = stat.count ?? 0;
  return {
    name: scenario.name,
    target: scenario.target,
    description: scenario.description,
    samplePath: scenario.nextPath(options.rng),
    connections: options.connections,
    durationS: result.duration,
    responses: counted,
    reqPerSec: result.requests.mean,
    latencyMs: summarize(latencies),
    non2xx: result.non2xx,
    statusCodes,
    errors: result.errors,
    timeouts: result.timeouts,
    bytesPerResponse: counted > 0 ? bytes / counted : 0,
  };
}
