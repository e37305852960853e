import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { ROOT } from './support/cli.ts';

const run = promisify(execFile);

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer?: string }[];
}

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await createTestApp({ scale: 0 });
  dir = mkdtempSync(join(tmpdir(), 'stoop-openapi-lint-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the served OpenAPI document under Redocly lint (recommended ruleset)', () => {
  it('the config extends the recommended ruleset and turns no rule off', () => {
    const config = readFileSync(join(ROOT, 'redocly.yaml'), 'utf8');
    expect(config).toMatch(/extends:\s*\n\s*-\s*recommended/);
    expect(config).not.toMatch(/\boff\b/);
  });

  it('has no error and no warning', async () => {
    const document = await (await t.get('/openapi.json')).text();
    const file = join(dir, 'openapi.json');
    writeFileSync(file, document);
    // Redocly exits non-zero on errors; its report says why, so it is read either way.
    const { stdout } = await run(
      'npx',
      ['redocly', 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json'],
      {
        cwd: ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 64 * 1024 * 1024,
      },
    ).catch((error: { stdout: string }) => error);
    const { totals, problems } = JSON.parse(stdout.slice(stdout.indexOf('{'))) as {
      totals: { errors: number; warnings: number };
      problems: LintProblem[];
    };
    const summary = problems.map(
      (p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`,
    );
    expect(summary).toEqual([]);
    expect(totals).toMatchObject({ errors: 0, warnings: 0 });
  });
});
