import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { cliStore, ROOT } from './support/cli.ts';

const run = promisify(execFile);
const REGISTER = pathToFileURL(join(ROOT, 'test/support/module-log/register.mjs')).href;
const dir = mkdtempSync(join(tmpdir(), 'stoop-cli-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The modules a real `stoop …` process loaded (repo-relative paths and package names), and what it printed. */
async function modulesLoadedBy(args: string[]): Promise<{ modules: Set<string>; output: string }> {
  const log = join(dir, `${args.join('-')}.log`);
  const store = cliStore('cli-startup', { DEMO: 'false', STOOP_MODULE_LOG: log });
  const { stdout, stderr } = await run(
    process.execPath,
    ['--import', REGISTER, '--import', 'tsx', 'src/cli.ts', ...args],
    {
      cwd: ROOT,
      env: store.env,
      timeout: 30_000,
    },
  );
  rmSync(store.dataDir, { recursive: true, force: true });
  const root = pathToFileURL(ROOT).href;
  const modules = new Set(
    readFileSync(log, 'utf8')
      .split('\n')
      .filter((url) => url.startsWith(root))
      .map((url) => url.slice(root.length + 1).replace(/^node_modules\/((?:@[^/]+\/)?[^/]+)\/.*$/, '$1')),
  );
  return { modules, output: stdout + stderr };
}

/**
 * A command that needs only the store starts without the service: under tsx
 * every module costs ~2 ms of CPU to load, and the whole graph made
 * `stoop keys list` take 1.5–3 s to print one line.
 */
describe('stoop CLI start-up', () => {
  it('`keys list` loads the store and the keys commands, not the service or its upstream', async () => {
    const { modules, output } = await modulesLoadedBy(['keys', 'list']);
    expect(output).toContain('No API keys.');
    expect(modules).toContain('src/modules/keys/keys.cli.ts');
    expect(modules).toContain('src/prepared-store.ts');
    for (const heavy of [
      'src/app.ts',
      'src/boot.ts',
      'src/upstream/configured-upstream.ts',
      'fastify',
      '@modelcontextprotocol/sdk',
      'pino',
    ]) {
      expect(modules, heavy).not.toContain(heavy);
    }
  });
});
