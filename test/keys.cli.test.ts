import { rmSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Composition, compose } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { ErrorBody } from '../src/http/errors.ts';
import type { HttpApp } from '../src/http/server.ts';
import { KeysCliError, registerKeysCommands } from '../src/modules/keys/keys.cli.ts';
import type { ApiKeyView, IssuedApiKeyView } from '../src/modules/keys/keys.schema.ts';
import { openStore, type Store } from '../src/platform/db/database.ts';
import { createTestApp, TEST_NOW, type TestApp } from './support/app.ts';
import { type CliResult, cliStore, runStoop } from './support/cli.ts';

// On PostgreSQL the CLI and the app share a throw-away schema; on SQLite a file in a temp dir.
const cli = cliStore('keys-cli', { DEMO: 'false' });
const { dataDir, databaseUrl, schema } = cli;
const childEnv = cli.env;

/** Runs the real `stoop` CLI in a child process. */
const stoop = (...args: string[]) => runStoop(childEnv, args, 30_000);

/** stdout must be exactly one JSON value and nothing else. */
function onlyJson<T>(result: CliResult): T {
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout.endsWith('\n')).toBe(true);
  expect(result.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(result.stdout) as T;
}

let store: Store | undefined;
let app: HttpApp | undefined;
let composition: Composition | undefined;
let url = '';

/** Boots the HTTP app on the database the CLI wrote (after the CLI created the schema). */
async function startApp(): Promise<void> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    ...(schema ? { DATABASE_SCHEMA: schema } : {}),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://stoop.test',
    // A change the CLI makes reaches a running server within API_KEY_CACHE_MS (keys.cache.test.ts
    // holds that bound on a fake clock). Here the subject is what the CLI writes, so the app reads
    // the key on every request: with the default 1 s, "the next request" after a revoke that took
    // under a second was still answered from the cache (seen on a fast machine).
    API_KEY_CACHE_MS: '0',
  });
  store = await openStore({ dialect: config.dialect, databaseUrl, schema, poolSize: 2 });
  composition = await compose({ config, store });
  app = await buildApp(composition.services, { logger: false });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
}

async function usage(key: string): Promise<{ status: number; tier?: string; code?: string }> {
  const response = await fetch(`${url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await response.json()) as { data?: { tier: string } } & Partial<ErrorBody>;
  return { status: response.status, tier: body.data?.tier, code: body.error?.code };
}

afterAll(async () => {
  await app?.close();
  await composition?.close();
  await store?.close();
  // A `t_…` schema: dropped by the global teardown (test/support/global-setup.ts).
  rmSync(dataDir, { recursive: true, force: true });
});

describe('stoop keys', () => {
  let pro: IssuedApiKeyView;
  let human: { key: string; id: string; stdout: string };

  beforeAll(async () => {
    // The first command migrates the empty store; run it alone.
    pro = onlyJson<IssuedApiKeyView>(
      await stoop('keys', 'create', '--tier', 'pro', '--account', 'acme', '--json'),
    );
    const result = await stoop('keys', 'create', '--tier', 'Business', '--account', 'globex');
    expect(result.code, result.stderr).toBe(0);
    const key = /STOOP-[0-9a-f-]{36}/.exec(result.stdout)?.[0];
    const id = /id ([0-9a-f-]{36})/.exec(result.stdout)?.[1];
    human = { key: key ?? '', id: id ?? '', stdout: result.stdout };
    await startApp();
  });

  it('create --json prints exactly one JSON object with the key, and nothing else on stdout', () => {
    expect(pro).toMatchObject({ tier: 'PRO', account: 'acme', status: 'active', subscriptionEndsAt: null });
    expect(pro.key).toMatch(/^STOOP-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(pro.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('create without --json shows the key once, with a warning that it will not be shown again', () => {
    expect(human.key).not.toBe('');
    expect(human.stdout.split(human.key)).toHaveLength(2);
    expect(human.stdout).toMatch(/only time it is shown/);
    expect(human.stdout).toContain('BUSINESS');
  });

  it('list shows hint, id, tier, status, account and expiry, never keys or hashes', async () => {
    const all = onlyJson<ApiKeyView[]>(await stoop('keys', 'list', '--json'));
    expect(all.map((k) => k.id)).toEqual(expect.arrayContaining([pro.id, human.id]));
    expect(all.find((k) => k.id === pro.id)).toEqual({
      id: pro.id,
      account: 'acme',
      tier: 'PRO',
      status: 'active',
      hint: pro.hint,
      subscriptionEndsAt: null,
      createdAt: pro.createdAt,
      updatedAt: pro.updatedAt,
    });
    const table = await stoop('keys', 'list');
    expect(table.code).toBe(0);
    for (const text of [JSON.stringify(all), table.stdout, table.stderr]) {
      expect(text).not.toMatch(/STOOP-[0-9a-f]{8}-/);
      expect(text).not.toMatch(/[0-9a-f]{64}/);
    }
    expect(table.stdout).toContain(pro.hint);
    expect(table.stdout).toContain(human.id);
  });

  it('a created key works over HTTP; revoke takes effect on the very next request, for good', async () => {
    expect(await usage(pro.key)).toMatchObject({ status: 200, tier: 'PRO' });
    const revoked = await stoop('keys', 'revoke', pro.key);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).not.toContain(pro.key);
    expect(await usage(pro.key)).toMatchObject({ status: 401, code: 'INVALID_API_KEY' });

    const enable = await stoop('keys', 'enable', pro.id);
    expect(enable.code).toBe(1);
    expect(enable.stderr).toMatch(/revoked/);
    expect(enable.stderr).not.toMatch(/\n\s+at /);
    expect(await usage(pro.key)).toMatchObject({ status: 401, code: 'INVALID_API_KEY' });
  });

  it('operator mistakes: exit code 1 and a message naming the argument, nothing on stdout', async () => {
    const [tier, unknown] = await Promise.all([
      stoop('keys', 'create', '--tier', 'gold', '--account', 'acme', '--json'),
      stoop('keys', 'revoke', 'no-such-id'),
    ]);
    expect(tier).toMatchObject({ code: 1, stdout: '' });
    expect(tier.stderr).toMatch(/--tier.*gold.*must be one of free, starter, pro, business, internal/);
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toMatch(/<key\|id>.*"no-such-id"/);
    expect(unknown.stderr).not.toMatch(/\n\s+at /);
  });
});

/**
 * The same commands in process, over the test app's provider and manual clock:
 * fast enough to cover every command and mistake, and runs on both dialects.
 * Exit handling mirrors src/cli.ts: commander errors carry their exit code,
 * a KeysCliError is exit code 1 with its message on stderr.
 */
describe('stoop keys (in process)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ scale: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function run(...args: string[]): Promise<CliResult> {
    const out: string[] = [];
    const err: string[] = [];
    const program = new Command('stoop')
      .exitOverride()
      .configureOutput({ writeOut: (s) => out.push(s), writeErr: (s) => err.push(s) });
    registerKeysCommands(program, {
      clock: t.clock,
      open: async () => ({ provider: t.ctx.subscriptions, apiKeyPrefix: 'STOOP', close: async () => {} }),
      stdout: (s) => out.push(`${s}\n`),
      stderr: (s) => err.push(`${s}\n`),
    });
    let code = 0;
    try {
      await program.parseAsync(args, { from: 'user' });
    } catch (error) {
      if (error instanceof CommanderError) code = error.exitCode;
      else if (error instanceof KeysCliError) {
        code = 1;
        err.push(`${error.message}\n`);
      } else throw error;
    }
    return { code, stdout: out.join(''), stderr: err.join('') };
  }

  const tierOf = async (key: string) => {
    const response = await t.getAs(key, '/v1/usage');
    const body = (await response.json()) as { data?: { tier: string } } & Partial<ErrorBody>;
    return response.status === 200 ? body.data?.tier : body.error?.code;
  };

  it('create: tier case-insensitive, --expires normalised, key shown only in the create output', async () => {
    const created = onlyJson<IssuedApiKeyView>(
      await run(
        'keys',
        'create',
        '--tier',
        'sTaRtEr',
        '--account',
        'acme',
        '--expires',
        '2027-01-01T00:00:00-05:00',
        '--json',
      ),
    );
    expect(created).toMatchObject({
      tier: 'STARTER',
      account: 'acme',
      subscriptionEndsAt: '2027-01-01T05:00:00.000Z',
    });
    expect(await tierOf(created.key)).toBe('STARTER');
    const listed = await run('keys', 'list', '--account', 'acme', '--json');
    expect(onlyJson<ApiKeyView[]>(listed).map((k) => k.id)).toEqual([created.id]);
    expect(listed.stdout).not.toContain(created.key.slice(6));
    const none = await run('keys', 'list', '--account', 'nobody', '--json');
    expect(onlyJson<ApiKeyView[]>(none)).toEqual([]);
  });

  it('a subscription end in the past is accepted with a warning on stderr', async () => {
    const result = await run(
      'keys',
      'create',
      '--tier',
      'pro',
      '--account',
      'late',
      '--expires',
      '2020-01-01T00:00:00Z',
      '--json',
    );
    const created = onlyJson<IssuedApiKeyView>(result);
    expect(result.stderr).toMatch(/warning: --expires .* is in the past/);
    expect(await tierOf(created.key)).toBe('EXPIRED_API_KEY');
  });

  it('disable, enable, set-tier and expire (default now, --at, --never) apply on the next request', async () => {
    const { key, id } = await t.ctx.subscriptions.issue({ accountId: 'ops', tier: 'BUSINESS' });
    expect(await tierOf(key)).toBe('BUSINESS');

    expect((await run('keys', 'disable', id)).stdout).toMatch(/^Disabled STOOP-….*disabled/);
    expect(await tierOf(key)).toBe('INVALID_API_KEY');
    expect((await run('keys', 'enable', key)).code).toBe(0);
    expect(await tierOf(key)).toBe('BUSINESS');

    expect(onlyJson<ApiKeyView>(await run('keys', 'set-tier', key, 'Internal', '--json')).tier).toBe(
      'INTERNAL',
    );
    expect(await tierOf(key)).toBe('INTERNAL');

    const scheduled = onlyJson<ApiKeyView>(
      await run('keys', 'expire', id, '--at', '2026-11-01T16:00:00+01:00', '--json'),
    );
    expect(scheduled.subscriptionEndsAt).toBe('2026-11-01T15:00:00.000Z');
    t.clock.set('2026-11-01T14:59:59.999Z');
    try {
      expect(await tierOf(key)).toBe('INTERNAL');
      t.clock.set('2026-11-01T15:00:00.000Z');
      expect(await tierOf(key)).toBe('EXPIRED_API_KEY');
      expect(
        onlyJson<ApiKeyView>(await run('keys', 'expire', id, '--never', '--json')).subscriptionEndsAt,
      ).toBeNull();
      expect(await tierOf(key)).toBe('INTERNAL');
      t.clock.advance(60_000);
      expect((await run('keys', 'expire', id)).code).toBe(0);
      expect(await tierOf(key)).toBe('EXPIRED_API_KEY');
      expect((await t.ctx.subscriptions.find(id))?.subscriptionEndsAt).toBe('2026-11-01T15:01:00.000Z');
    } finally {
      t.clock.set(TEST_NOW);
    }
  });

  it('a revoked key can never be re-enabled or changed; revoking again is fine', async () => {
    const { key, id } = await t.ctx.subscriptions.issue({ accountId: 'ops', tier: 'PRO' });
    expect((await run('keys', 'revoke', key)).code).toBe(0);
    expect(await tierOf(key)).toBe('INVALID_API_KEY');
    for (const args of [
      ['enable', id],
      ['disable', id],
      ['set-tier', id, 'internal'],
      ['expire', id, '--never'],
    ]) {
      const result = await run('keys', ...args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toMatch(/revoked; a revoked key can never be re-enabled/);
      expect(result.stdout).toBe('');
    }
    expect((await run('keys', 'revoke', id)).code).toBe(0);
    expect(await t.ctx.subscriptions.find(id)).toMatchObject({
      status: 'revoked',
      tier: 'PRO',
      subscriptionEndsAt: null,
    });
    expect(await tierOf(key)).toBe('INVALID_API_KEY');
  });

  it.each([
    [['create', '--tier', 'gold', '--account', 'acme'], /option '--tier <tier>' argument 'gold' is invalid/],
    [['create', '--account', 'acme'], /required option '--tier <tier>'/],
    [['create', '--tier', 'pro'], /required option '--account <account>'/],
    [['create', '--tier', 'pro', '--account', 'a b'], /--account <account>' argument 'a b' is invalid/],
    [['create', '--tier', 'pro', '--account', 'x'.repeat(101)], /--account/],
    [
      ['create', '--tier', 'pro', '--account', 'acme', '--expires', 'next week'],
      /--expires <date-time>' argument 'next week'/,
    ],
    [['create', '--tier', 'pro', '--account', 'acme', '--expires', '2027-02-30T00:00:00Z'], /--expires/],
    [['create', '--tier', 'pro', '--account', 'acme', '--expires', '2027-01-01T00:00:00'], /--expires/],
    [['list', '--account', 'a/b'], /--account/],
    [['set-tier', 'some-id', 'gold'], /argument 'tier'/],
    [['expire', 'some-id', '--at', '2027-13-01T00:00:00Z'], /--at <date-time>/],
    [['expire', 'some-id', '--at', '2027-01-01T00:00:00Z', '--never'], /--at or --never/],
    [['revoke', 'no-such-id'], /argument <key\|id>: no API key matches "no-such-id"/],
    [['disable', '00000000-0000-4000-8000-000000000000'], /argument <key\|id>/],
    [['enable', 'STOOP-00000000-0000-4000-8000-000000000000'], /no API key matches "STOOP-…0000"/],
    [['revoke'], /missing required argument 'key\|id'/],
  ])('keys %j → exit 1, stderr %s, nothing changed', async (args, pattern) => {
    const before = await t.ctx.subscriptions.list();
    const result = await run('keys', ...args);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(pattern);
    expect(result.stdout).toBe('');
    expect(await t.ctx.subscriptions.list()).toEqual(before);
  });
});
