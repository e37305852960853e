/**
 * Regenerates the Configuration table of README.md from the environment
 * declaration (src/config/declaration.ts), between the config:start and
 * config:end markers. `--check` changes nothing and exits 1 when the README is
 * out of date (test/config.test.ts makes the same check).
 *
 *   npm run docs:config
 *   npm run docs:config -- --check
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { renderConfigurationTable, withConfigurationTable } from '../src/config/docs.ts';

const readmePath = new URL('../README.md', import.meta.url);
const readme = readFileSync(readmePath, 'utf8');
const updated = withConfigurationTable(readme, renderConfigurationTable());

if (updated === readme) {
  console.log('README.md: the configuration table is up to date');
} else if (process.argv.includes('--check')) {
  console.error('README.md: the configuration table is out of date; run `npm run docs:config`');
  process.exitCode = 1;
} else {
  writeFileSync(readmePath, updated);
  console.log('README.md: configuration table regenerated');
}
