import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Root of the repository, so the bench behaves the same whatever directory it is started from. */
export const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');

export interface BenchConfig {
  /** Measured seconds per scenario. */
  readonly durationS: number;
  /** Unmeasured seconds run before each scenario, so JIT, SQLite page cache and sockets are warm. */
  readonly warmupS: number;
  readonly connections: number;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly apiKey: string | undefined;
  /** Seed of the request generator: the same seed replays the same request sequence. */
  readonly seed: number;
  readonly resultsFile: string;
  /** How long to wait for `GET /v1/health/ready` after starting the service (the first start loads the demo). */
  readonly readyTimeoutS: number;
  /** How long to wait for background work (history backfill, jobs) to finish before idle figures. */
  readonly settleTimeoutS: number;
  /** `--during`: also measure each read scenario under background work and costly anonymous queries. */
  readonly during: boolean;
}

export class BenchConfigError extends Error {}

function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, integer: boolean): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new BenchConfigError(`${name} must be a positive ${integer ? 'integer' : 'number'}, got "${raw}"`);
  }
  return value;
}

export function readBenchConfig(
  env: NodeJS.ProcessEnv = process.env,
  argv: readonly string[] = process.argv.slice(2),
): BenchConfig {
  const unknown = argv.filter((arg) => arg !== '--during');
  if (unknown.length > 0)
    throw new BenchConfigError(`unknown argument ${unknown[0]} (the only one is --during)`);
  return {
    durationS: positiveNumber(env, 'BENCH_DURATION', 10, false),
    warmupS: 2,
    connections: positiveNumber(env, 'BENCH_CONNECTIONS', 10, true),
    dataDir: resolve(REPO_ROOT, env.BENCH_DATA_DIR || 'data'),
    databaseUrl: env.DATABASE_URL || undefined,
    apiKey: env.BENCH_API_KEY || undefined,
    seed: positiveNumber(env, 'BENCH_SEED', 20261121, true),
    resultsFile: resolve(REPO_ROOT, 'bench/results/latest.json'),
    readyTimeoutS: positiveNumber(env, 'BENCH_READY_TIMEOUT', 300, false),
    settleTimeoutS: positiveNumber(env, 'BENCH_SETTLE_TIMEOUT', 900, false),
    during: argv.includes('--during'),
  };
}
