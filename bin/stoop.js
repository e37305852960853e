#!/usr/bin/env node
// Thin launcher: the CLI is TypeScript run through tsx, so `npx stoop` works without a build step.
// Signals are passed on, so `stoop serve` or `stoop origin` stopped by a service manager
// (SIGTERM to this process) shut down as they do on Ctrl-C.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNodeChild } from './run-child.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
runNodeChild(['--import', 'tsx', join(root, 'src', 'cli.ts'), ...process.argv.slice(2)], {
  what: 'the Stoop CLI',
});
