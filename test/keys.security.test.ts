import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Composition } from '../src/app.ts';
import type { ErrorBody } from '../src/http/errors.ts';
import type { ApiKeyView, IssuedApiKeyView } from '../src/modules/keys/keys.schema.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { type LoggedApp, startLoggedApp } from './support/log-capture.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const uuidOf = (key: string) => key.slice(key.indexOf('-') + 1);

async function post(url: string, key: string, path: string, body: unknown) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { data: IssuedApiKeyView } };
}

describe('stored form of keys', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ scale: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the database holds only the SHA-256 hash and the hint, never the key', async () => {
    const issued = [
      (await post(t.url, t.internalKey, '/v1/admin/keys', { account: 'acme', tier: 'PRO' })).body.data,
      await t.ctx.subscriptions.issue({ accountId: 'acme', tier: 'STARTER' }),
    ];
    const rows = await t.store.db.selectFrom('api_keys').selectAll().execute();
    const accounts = await t.store.db.selectFrom('accounts').selectAll().execute();
    const dump = JSON.stringify([rows, accounts]);
    for (const secret of [...issued.map((k) => k.key), t.internalKey]) {
      expect(dump).not.toContain(uuidOf(secret));
      // Not stored in any other reversible spelling either.
      expect(dump.toLowerCase()).not.toContain(uuidOf(secret).replaceAll('-', ''));
      const row = rows.find((r) => r.key_hash === sha256(secret));
      expect(row, 'a row with the SHA-256 of the key').toBeDefined();
      expect(row!.key_hint).toBe(`STOOP-…${secret.slice(-4)}`);
    }
  });

  it('no admin answer after creation contains the key or its hash', async () => {
    const { key, id } = (await post(t.url, t.internalKey, '/v1/admin/keys', { account: 'acme', tier: 'PRO' }))
      .body.data;
    for (const path of ['/v1/admin/keys', `/v1/admin/keys/${id}`, '/v1/admin/keys?account=acme']) {
      const text = await (await t.get(path)).text();
      expect(text).toContain(id);
      expect(text).not.toContain(uuidOf(key));
      expect(text).not.toContain(sha256(key));
    }
  });
});

describe('non-admin keys', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ scale: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('cannot list, read, escalate or revoke keys — their own or other accounts’', async () => {
    const business = await t.ctx.subscriptions.issue({ accountId: 'tenant-a', tier: 'BUSINESS' });
    const other = await t.ctx.subscriptions.issue({ accountId: 'tenant-b', tier: 'PRO' });
    const attempts: [string, string, unknown][] = [
      ['GET', '/v1/admin/keys', undefined],
      ['GET', '/v1/admin/keys?account=tenant-a', undefined],
      ['GET', `/v1/admin/keys/${business.id}`, undefined],
      ['GET', `/v1/admin/keys/${other.id}`, undefined],
      ['PATCH', `/v1/admin/keys/${business.id}`, { tier: 'INTERNAL' }],
      ['DELETE', `/v1/admin/keys/${other.id}`, undefined],
      ['POST', '/v1/admin/keys', { account: 'tenant-a', tier: 'INTERNAL' }],
    ];
    for (const [method, path, body] of attempts) {
      const response = await t.getAs(business.key, path, {
        method,
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
      const text = await response.text();
      expect(response.status, `${method} ${path}`).toBe(403);
      expect((JSON.parse(text) as ErrorBody).error.code).toBe('TIER_RESTRICTED');
      expect(text).not.toContain(other.id);
    }
    expect(await t.ctx.subscriptions.find(business.id)).toMatchObject({ tier: 'BUSINESS', status: 'active' });
    expect(await t.ctx.subscriptions.find(other.id)).toMatchObject({ status: 'active' });
    expect(await t.ctx.subscriptions.list('tenant-a')).toHaveLength(1);
  });

  it('an admin sees and manages every account’s keys', async () => {
    const other = await t.ctx.subscriptions.issue({ accountId: 'tenant-c', tier: 'PRO' });
    const response = await t.get(`/v1/admin/keys/${other.id}`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: ApiKeyView }).data.account).toBe('tenant-c');
  });
});

describe('logs', () => {
  let logged: LoggedApp;
  let composition: Composition;
  let url: string;
  let lines: string[];

  beforeAll(async () => {
    // The production logger settings (redaction included), at the most verbose level, for requests.
    logged = await startLoggedApp({ wiring: 'request logger options' });
    ({ composition, url, lines } = logged);
  });
  afterAll(async () => {
    await logged?.close();
  });

  it('never contain a key, whether sent in a header, created, rejected or looked up', async () => {
    const admin = (await composition.services.subscriptions.issue({ accountId: 'ops', tier: 'INTERNAL' }))
      .key;
    const created = await post(url, admin, '/v1/admin/keys', { account: 'acme', tier: 'PRO' });
    expect(created.status).toBe(201);
    const issued = created.body.data;

    const send = (authorization: string, path = '/v1/usage', method = 'GET') =>
      fetch(`${url}${path}`, { method, headers: { authorization } });
    expect((await send(`Bearer ${issued.key}`)).status).toBe(200);
    expect((await send(`Bearer ${admin}`, `/v1/admin/keys/${issued.id}`)).status).toBe(200);
    expect((await send(`Bearer ${issued.key}`, '/v1/admin/keys')).status).toBe(403);
    expect((await send(`Basic ${issued.key}`)).status).toBe(401);
    expect((await send(`Bearer ${admin}`, `/v1/admin/keys/${issued.id}`, 'DELETE')).status).toBe(200);
    expect((await send(`Bearer ${issued.key}`)).status).toBe(401);

    const log = lines.join('');
    // The capture works: requests and the admin audit trail are there, by id and hint.
    expect(log).toContain('"msg":"request completed"');
    expect(log).toContain('"action":"api_key.create"');
    expect(log).toContain(issued.id);
    expect(log).toContain(issued.hint);
    for (const secret of [issued.key, admin]) {
      expect(log).not.toContain(uuidOf(secret));
      expect(log).not.toContain(sha256(secret));
    }
  });
});
