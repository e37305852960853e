/**
 * The `engines.node` range of package.json is a promise: every package of the
 * installed tree must run on every Node version it admits. A dependency whose
 * own `engines.node` excludes the range's lowest version (or all of the Node 20
 * line) breaks that promise (cookie@2, pulled in by light-my-request, needed
 * Node 22). Also checks that the cookie version pinned for Node 20 still does
 * what light-my-request uses it for (`app.inject({ cookies })`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The two functions used of `semver` (installed with fastify; it ships no types of its own). */
interface Semver {
  satisfies(version: string, range: string): boolean;
  intersects(a: string, b: string): boolean;
  minVersion(range: string): { version: string } | null;
}
const semver = createRequire(import.meta.url)('semver') as Semver;

interface Installed {
  path: string;
  name: string;
  version: string;
  node: string;
}

/** Every package under node_modules (nested ones included) that declares `engines.node`. */
function installedWithEngines(dir: string, out: Installed[] = []): Installed[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.name.startsWith('@')) {
      installedWithEngines(path, out);
      continue;
    }
    const manifest = join(path, 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
        name?: string;
        version?: string;
        engines?: { node?: unknown };
      };
      if (typeof pkg.engines?.node === 'string') {
        out.push({
          path: path.slice(ROOT.length),
          name: pkg.name ?? entry.name,
          version: pkg.version ?? '?',
          node: pkg.engines.node,
        });
      }
    }
    const nested = join(path, 'node_modules');
    if (existsSync(nested)) installedWithEngines(nested, out);
  }
  return out;
}

describe('engines', () => {
  const project = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    engines: { node: string };
  };
  const lowest = semver.minVersion(project.engines.node)!.version;

  it('admits Node 20 and the Node running the tests', () => {
    expect(semver.intersects(project.engines.node, '20.x')).toBe(true);
    expect(semver.satisfies(process.versions.node, project.engines.node)).toBe(true);
  });

  it('every installed package runs on the lowest Node version package.json admits', () => {
    const installed = installedWithEngines(join(ROOT, 'node_modules'));
    // The walk found the tree (fastify alone brings dozens of packages with engines).
    expect(installed.length).toBeGreaterThan(50);
    const excluding = installed
      .filter((p) => {
        try {
          return !semver.satisfies(lowest, p.node) || !semver.intersects(p.node, '20.x');
        } catch {
          return true; // an unparsable range promises nothing
        }
      })
      .map((p) => `${p.path} (${p.name}@${p.version}) engines.node "${p.node}"`);
    expect(excluding, `packages that do not run on Node ${lowest}`).toEqual([]);
  });
});

describe('cookie pin', () => {
  it('light-my-request sends inject cookies with the pinned cookie version', async () => {
    const app = Fastify();
    app.get('/echo', async (request) => ({ cookie: request.headers.cookie ?? null }));
    try {
      const plain = await app.inject({ method: 'GET', url: '/echo', cookies: { a: 'b', c: 'd e' } });
      expect(plain.json()).toEqual({ cookie: 'a=b; c=d%20e' });
      const listed = await app.inject({
        method: 'GET',
        url: '/echo',
        cookies: [{ name: 'session', value: 'x1' }],
      });
      expect(listed.json()).toEqual({ cookie: 'session=x1' });
    } finally {
      await app.close();
    }
  });
});
