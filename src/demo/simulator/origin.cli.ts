import { type Command, InvalidArgumentError } from 'commander';
import { loadConfig } from '../../config.ts';
import { packageVersion } from '../../version.ts';
import { startOrigin } from './server.ts';

function intOption(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number');
  return Number(value);
}

function numberOption(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a non-negative number');
  return n;
}

function instantOption(value: string): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw new InvalidArgumentError('must be an ISO 8601 instant');
  return at;
}

interface OriginCliOptions {
  host: string;
  port?: number;
  speed?: number;
  faultRate?: number;
  latency: boolean;
  seed?: number;
  scale?: number;
  start?: Date;
}

/**
 * `stoop origin`: the market simulator as a standalone RESO Web API server, for
 * pointing a Stoop (UPSTREAM_URL) or any RESO client at. Options override the
 * environment (SIM_PORT, SIM_SPEED, SIM_FAULT_RATE, SIM_LATENCY, DEMO_SEED,
 * DEMO_SCALE); UPSTREAM_TOKEN, when set, is the bearer token it requires.
 */
export function registerOriginCommand(program: Command): void {
  program
    .command('origin')
    .description('serve the simulated demo market as a RESO Web API (OData) until stopped')
    .option('--host <host>', 'listen address', '127.0.0.1')
    .option('--port <port>', 'listen port, 0 = any free port (env SIM_PORT)', intOption)
    .option('--speed <x>', 'simulated seconds per real second (env SIM_SPEED)', numberOption)
    .option('--fault-rate <x>', 'share of requests that fail, 0-1 (env SIM_FAULT_RATE)', numberOption)
    .option('--no-latency', 'answer without injected latency (env SIM_LATENCY)')
    .option('--seed <n>', 'market seed (env DEMO_SEED)', intOption)
    .option('--scale <x>', 'market size multiplier, 1 = full demo (env DEMO_SCALE)', numberOption)
    .option('--start <instant>', 'simulated start instant, ISO 8601 (default: now)', instantOption)
    .action(async (opts: OriginCliOptions) => {
      const env: Record<string, string | undefined> = { ...process.env };
      const set = (name: string, value: number | string | undefined) => {
        if (value !== undefined) env[name] = String(value);
      };
      set('SIM_PORT', opts.port);
      set('SIM_SPEED', opts.speed);
      set('SIM_FAULT_RATE', opts.faultRate);
      if (!opts.latency) env.SIM_LATENCY = 'false';
      set('DEMO_SEED', opts.seed);
      set('DEMO_SCALE', opts.scale);
      const cfg = loadConfig(env, packageVersion());
      const start = opts.start ?? new Date();
      process.stderr.write(`Building the simulated market (scale ${cfg.demo.scale})…\n`);
      const origin = await startOrigin({
        seed: cfg.demo.seed,
        scale: cfg.demo.scale,
        start,
        speed: cfg.simulator.speed,
        host: opts.host,
        port: cfg.simulator.port,
        token: cfg.upstream.token,
        latency: cfg.simulator.latency,
        faultRate: cfg.simulator.faultRate,
      });
      process.stderr.write(
        `Market simulator serving RESO Web API at ${origin.url} (simulated time from ${start.toISOString()} at ${cfg.simulator.speed}x${cfg.upstream.token ? ', bearer token required' : ''})\n`,
      );
      const stop = () => {
        origin.close().finally(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
