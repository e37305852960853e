import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layout's rules, checked on the source text so a change that breaks one
 * fails here instead of in review:
 * - synthetic code (src/demo/) is reached only from the entry points that
 *   choose it (the composition root, boot, the CLI, the configured upstream);
 * - route modules stay thin: no SQL, no store, no `/v1` literal (the prefix is
 *   set once by the composition root);
 * - the domain depends on nothing but itself.
 */
const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

interface SourceFile {
  /** Path relative to src/, with forward slashes. */
  name: string;
  text: string;
  /** Resolved relative imports, relative to src/ ('../x' for files outside it). */
  imports: string[];
  /** Bare package imports. */
  packages: string[];
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^'"`;]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

const FILES: SourceFile[] = sourceFiles(SRC).map((path) => {
  const text = readFileSync(path, 'utf8');
  const imports: string[] = [];
  const packages: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2]!;
    if (spec.startsWith('.'))
      imports.push(
        relative(SRC, resolve(dirname(path), spec))
          .split('\\')
          .join('/'),
      );
    else packages.push(spec);
  }
  return { name: relative(SRC, path).split('\\').join('/'), text, imports, packages };
});

/** Files allowed to choose synthetic implementations. */
const DEMO_CHOOSERS = new Set(['app.ts', 'boot.ts', 'cli.ts', 'upstream/configured-upstream.ts']);

describe('architecture', () => {
  it('reads the whole tree', () => {
    expect(FILES.length).toBeGreaterThan(100);
    expect(FILES.some((f) => f.name === 'app.ts' && f.imports.includes('demo/photo-source.ts'))).toBe(true);
  });

  it('keeps synthetic code behind src/demo/: only the entry points that choose it import it', () => {
    const offenders = FILES.filter((f) => !f.name.startsWith('demo/') && !DEMO_CHOOSERS.has(f.name))
      .flatMap((f) => f.imports.filter((i) => i.startsWith('demo/')).map((i) => `${f.name} → ${i}`))
      .sort();
    expect(offenders).toEqual([]);
  });

  it('keeps route modules thin: no SQL, no store, no repeated /v1 prefix', () => {
    const routes = FILES.filter((f) => f.name.endsWith('.routes.ts'));
    expect(routes.length).toBeGreaterThanOrEqual(9);
    const offenders: string[] = [];
    for (const file of routes) {
      if (file.packages.includes('kysely')) offenders.push(`${file.name} imports kysely`);
      for (const i of file.imports) {
        if (i.startsWith('platform/db/') || i.endsWith('.repository.ts'))
          offenders.push(`${file.name} → ${i}`);
      }
      if (/\bstore\.|\.db\b/.test(file.text)) offenders.push(`${file.name} touches the store`);
      if (/(?:\.(?:get|post|put|patch|delete|route)\(\s*|\bpath:\s*)['"`]\/v1\//.test(file.text)) {
        offenders.push(`${file.name} repeats the /v1 prefix`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('keeps services free of HTTP framework types', () => {
    const offenders = FILES.filter(
      (f) => f.name.endsWith('.service.ts') && f.packages.includes('fastify'),
    ).map((f) => f.name);
    expect(offenders).toEqual([]);
  });

  it('keeps the domain independent of every other layer', () => {
    const offenders = FILES.filter((f) => f.name.startsWith('domain/'))
      .flatMap((f) => f.imports.filter((i) => !i.startsWith('domain/')).map((i) => `${f.name} → ${i}`))
      .sort();
    expect(offenders).toEqual([]);
  });

  it('has one composition root: only entry points import src/app.ts', () => {
    const importers = FILES.filter((f) => f.imports.includes('app.ts')).map((f) => f.name);
    expect(importers.filter((name) => !['boot.ts', 'cli.ts', 'main.ts'].includes(name))).toEqual([]);
  });

  it('keeps platform/ below the modules: it imports no module, job, route or demo code', () => {
    const offenders = FILES.filter((f) => f.name.startsWith('platform/'))
      .flatMap((f) =>
        f.imports
          .filter((i) => /^(modules|jobs|demo|upstream|http)\//.test(i) || i === 'app.ts')
          .map((i) => `${f.name} → ${i}`),
      )
      .sort();
    expect(offenders).toEqual([]);
  });
});
