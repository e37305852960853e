// One Node child process that stands in for this one: `bin/stoop.js` (the CLI) and
// `src/launcher.ts` (`npm start`, `stoop serve`) run their real work this way.
// Plain JavaScript, so the bin script can use it before tsx is loaded.
import { spawn } from 'node:child_process';

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs `node <args>` with this terminal, passes SIGINT, SIGTERM and SIGHUP on
 * (a service manager's SIGTERM to this process reaches the child too), and
 * ends this process as the child ended: with its exit code, or by its signal.
 */
export function runNodeChild(args, options = {}) {
  const child = spawn(process.execPath, args, { stdio: 'inherit', env: options.env ?? process.env });
  const forward = (signal) => {
    // A terminal's Ctrl-C reaches both processes; the child ignores the repeat.
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of FORWARDED) process.on(signal, forward);
  child.on('error', (error) => {
    process.stderr.write(`could not start ${options.what ?? 'the process'}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    for (const name of FORWARDED) process.off(name, forward);
    if (signal !== null) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
