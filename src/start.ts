/**
 * `npm start`: runs the service (src/main.ts) in a Node process started with
 * the flags it needs (runtime-flags.ts), which only a command line can set.
 *
 * Contract: the service's output goes straight to this terminal; SIGINT,
 * SIGTERM and SIGHUP are passed on (the service shuts down gracefully on the
 * first two); this process exits as the service did — with its exit code, or
 * by the same signal.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serviceNodeFlags } from './runtime-flags.ts';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

const child = spawn(
  process.execPath,
  [...serviceNodeFlags(), '--import', 'tsx', MAIN, ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
);
const forward = (signal: NodeJS.Signals) => {
  // A terminal's Ctrl-C reaches both processes; the service ignores the repeat.
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of FORWARDED) process.on(signal, forward);
child.on('error', (error) => {
  process.stderr.write(`could not start the service: ${error.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  for (const name of FORWARDED) process.off(name, forward);
  if (signal !== null) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
