/**
 * Runs the service (src/main.ts) in a Node process started with the flags it
 * needs (runtime-flags.ts), which only a command line can set: `npm start`
 * (src/start.ts) and `stoop serve` both start it this way.
 *
 * Contract: the service's output goes straight to this terminal; SIGINT,
 * SIGTERM and SIGHUP are passed on (the service shuts down gracefully on the
 * first two, whether it is serving or still starting); this process then exits
 * as the service did — with its exit code, or by the same signal.
 */
import { fileURLToPath } from 'node:url';
import { runNodeChild } from '../bin/run-child.js';
import { serviceNodeFlags } from './runtime-flags.ts';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

/** Starts the service process (configured by `env`, default this process's) and ends this process as it ends. */
export function launchService(env: NodeJS.ProcessEnv = process.env): void {
  runNodeChild([...serviceNodeFlags(), '--import', 'tsx', MAIN], { env, what: 'the service' });
}
