/**
 * A client generated from the live document, as a third party would make one:
 * openapi-typescript types, an openapi-fetch client (search → listing →
 * building → market snapshot, with a key), typechecked by tsc in strict mode
 * and run with tsx against the live server.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, okJson, type TestApp, UNLIMITED } from './support/app.ts';
import { ROOT } from './support/cli.ts';

const run = promisify(execFile);

/** The third party's code: only the generated types and openapi-fetch. */
const CLIENT = `
import assert from 'node:assert/strict';
import createClient from 'openapi-fetch';
import type { paths } from './stoop-api.ts';

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type SearchHeaders = paths['/v1/search/rentals']['get']['responses'][200]['headers'];
// Compile-time: the rate-limit header is typed as an integer, not unknown.
const remainingIsNumber: Equals<NonNullable<SearchHeaders['X-RateLimit-Remaining']>, number> = true;

// The search routes also answer CSV and GeoJSON: this client asks for JSON only.
const client = createClient<paths, 'application/json'>({
  baseUrl: process.env.STOOP_URL!,
  headers: { Authorization: \`Bearer \${process.env.STOOP_KEY!}\` },
});

const search = await client.GET('/v1/search/rentals', { params: { query: { perPage: 1 } } });
assert.ok(search.data, JSON.stringify(search.error));
const first = search.data.data[0];
assert.ok(first);
const remainingHeader = search.response.headers.get('X-RateLimit-Remaining');
assert.ok(remainingHeader !== null);
const remaining: NonNullable<SearchHeaders['X-RateLimit-Remaining']> = Number(remainingHeader);
assert.ok(Number.isInteger(remaining));

const listing = await client.GET('/v1/property/{id}', { params: { path: { id: first.id } } });
assert.ok(listing.data, JSON.stringify(listing.error));
const price: number = listing.data.data.price;

const building = await client.GET('/v1/building/{id}', { params: { path: { id: listing.data.data.buildingId } } });
assert.ok(building.data, JSON.stringify(building.error));

// metric and interval are optional: the snapshot needs only the area.
const snapshot = await client.GET('/v1/market/rentals/snapshot', { params: { query: { areaId: String(first.areaId) } } });
assert.ok(snapshot.data, JSON.stringify(snapshot.error));
const trend = await client.GET('/v1/market/rentals/trends', { params: { query: { areaId: String(first.areaId) } } });
assert.ok(trend.data, JSON.stringify(trend.error));

const missing = await client.GET('/v1/property/{id}', { params: { path: { id: '999999999' } } });
const code: string | undefined = missing.error?.error.code;

console.log(
  JSON.stringify({
    remainingIsNumber,
    listingId: listing.data.data.id,
    price,
    buildingId: building.data.data.id,
    snapshotAreaId: snapshot.data.data.areaId,
    trendMetric: trend.data.data.metric,
    remaining,
    missingStatus: missing.response.status,
    code,
  }),
);
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM'],
    types: ['node'],
    strict: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    noEmit: true,
  },
  files: ['client.ts'],
};

let t: TestApp;
let dir: string;
let key: string;
let types: string;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.01, env: UNLIMITED });
  key = (await t.ctx.subscriptions.issue({ accountId: 'generated-client', tier: 'PRO' })).key;
  dir = mkdtempSync(join(tmpdir(), 'stoop-generated-client-'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  writeFileSync(join(dir, 'client.ts'), CLIENT);
  // Generated from the document as served, over HTTP.
  types = astToString(await openapiTS(new URL(`${t.url}/openapi.json`)));
  writeFileSync(join(dir, 'stoop-api.ts'), types);
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a client generated from the live document', () => {
  it('generates, typechecks in strict mode, and reads typed fields and headers from the live server', async () => {
    expect(types).toContain('"/v1/search/rentals": {');
    const tsc = await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', dir], { cwd: dir }).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('');

    const { stdout } = await run(join(ROOT, 'node_modules/.bin/tsx'), ['client.ts'], {
      cwd: dir,
      env: { ...process.env, STOOP_URL: t.url, STOOP_KEY: key },
    });
    const seen = JSON.parse(stdout) as Record<string, unknown>;

    // What the client read is what the server serves to anyone.
    const search = await okJson<{ data: { id: string; buildingId: string; areaId: number }[] }>(
      t,
      '/v1/search/rentals?perPage=1',
    );
    const expected = search.data[0]!;
    const listing = await okJson<{ data: { price: number } }>(t, `/v1/property/${expected.id}`);
    expect(seen).toMatchObject({
      remainingIsNumber: true,
      listingId: expected.id,
      price: listing.data.price,
      buildingId: expected.buildingId,
      snapshotAreaId: expected.areaId,
      trendMetric: 'median_price',
      missingStatus: 404,
      code: 'NOT_FOUND',
    });
    expect(Number.isInteger(seen.remaining)).toBe(true);
  });

  it('the typecheck fails when the client misuses a typed field (the check is not vacuous)', async () => {
    writeFileSync(
      join(dir, 'misuse.ts'),
      "import type { paths } from './stoop-api.ts';\ntype Listing = paths['/v1/property/{id}']['get']['responses'][200]['content']['application/json']['data'];\nexport const price: string = ({} as Listing).price;\n",
    );
    writeFileSync(join(dir, 'tsconfig.misuse.json'), JSON.stringify({ ...TSCONFIG, files: ['misuse.ts'] }));
    const result = await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(dir, 'tsconfig.misuse.json')], {
      cwd: dir,
    }).then(
      () => ({ failed: false, output: '' }),
      (error: { stdout: string }) => ({ failed: true, output: error.stdout }),
    );
    expect(result.failed).toBe(true);
    expect(result.output).toContain("Type 'number' is not assignable to type 'string'");
  });
});
