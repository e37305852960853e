import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDeliveryWorker } from '../src/jobs/deliveries/delivery-worker.ts';
import { WebhooksService } from '../src/modules/webhooks/webhooks.service.ts';
import { nonPublicReason } from '../src/platform/outbound/addresses.ts';
import {
  type Connector,
  nodeConnector,
  OutboundError,
  type OutboundRequest,
} from '../src/platform/outbound/connector.ts';
import {
  checkUrl,
  type OutboundPolicy,
  type ResolvedAddress,
  resolveDestination,
} from '../src/platform/outbound/destination.ts';
import { createTestApp, type TestApp } from './support/app.ts';

/**
 * SSRF defences with an injected resolver and connector: no test here ever
 * opens a connection outside 127.0.0.0/8 (the connector records instead of
 * connecting, except the loopback-only node connector tests at the end).
 */

const STRICT: OutboundPolicy = { allowHttp: false, allowedHosts: [] };
const HTTP_OK: OutboundPolicy = { allowHttp: true, allowedHosts: [] };

describe('address classification', () => {
  const refused = [
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '240.0.0.1',
    '198.18.0.1',
    '192.0.2.1',
    '::1',
    '::',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '::127.0.0.1',
    '64:ff9b::7f00:1',
    '2002:7f00:1::1',
    '2001::1',
    '2001:db8::1',
    '[::1]',
  ];
  it.each(refused)('refuses %s', (address) => {
    expect(nonPublicReason(address)).toBeDefined();
  });
  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001::1',
  ])('accepts %s', (address) => {
    expect(nonPublicReason(address)).toBeUndefined();
  });
});

describe('URL shape', () => {
  it('accepts https, refuses other schemes, plain http unless allowed, and credentials', () => {
    expect(checkUrl('https://hooks.example/x', STRICT).ok).toBe(true);
    expect(checkUrl('http://hooks.example/x', STRICT)).toEqual({ ok: false, reason: 'must be an https URL' });
    expect(checkUrl('http://hooks.example/x', HTTP_OK).ok).toBe(true);
    expect(checkUrl('ftp://hooks.example/x', HTTP_OK).ok).toBe(false);
    expect(checkUrl('file:///etc/passwd', HTTP_OK).ok).toBe(false);
    expect(checkUrl('https://user:pw@hooks.example/', STRICT)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('credentials'),
    });
    expect(checkUrl('https://user@hooks.example/', STRICT).ok).toBe(false);
    expect(checkUrl('not a url', STRICT).ok).toBe(false);
    expect(checkUrl(`https://hooks.example/${'a'.repeat(3000)}`, STRICT).ok).toBe(false);
  });
});

/** A resolver answering from a table, counting lookups; never the system's. */
function tableResolver(table: Record<string, string[]>) {
  const asked: string[] = [];
  const resolver = async (host: string): Promise<ResolvedAddress[]> => {
    asked.push(host);
    const answers = table[host];
    if (!answers) throw new Error(`ENOTFOUND ${host}`);
    return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolver, asked, table };
}

/** A connector that records what it was asked to send and answers 200 without connecting anywhere. */
function recordingConnector() {
  const sent: OutboundRequest[] = [];
  const connector: Connector = async (request) => {
    sent.push(request);
    return { status: 200, retryAfter: undefined, location: undefined, bodySnippet: '' };
  };
  return { connector, sent };
}

describe('destination check', () => {
  it('refuses a host resolving to loopback, or to any non-public address among public ones', async () => {
    const { resolver } = tableResolver({
      'loopback.test': ['127.0.0.1'],
      'mixed.test': ['93.184.216.34', '10.1.2.3'],
      'v6.test': ['::ffff:127.0.0.1'],
      'public.test': ['93.184.216.34', '2606:4700:4700::1111'],
    });
    for (const host of ['loopback.test', 'mixed.test', 'v6.test']) {
      const result = await resolveDestination(`https://${host}/x`, STRICT, resolver);
      expect(result, host).toMatchObject({ ok: false, kind: 'address' });
    }
    expect(await resolveDestination('https://public.test/x', STRICT, resolver)).toMatchObject({
      ok: true,
      pinned: { address: '93.184.216.34', family: 4 },
    });
    expect(await resolveDestination('https://unknown.test/x', STRICT, resolver)).toMatchObject({
      ok: false,
      kind: 'dns',
    });
  });

  it('lets listed hosts through the address check only', async () => {
    const { resolver } = tableResolver({ localhost: ['127.0.0.1'] });
    const policy: OutboundPolicy = { allowHttp: true, allowedHosts: ['localhost', '127.0.0.1'] };
    expect((await resolveDestination('http://localhost:9/x', policy, resolver)).ok).toBe(true);
    expect((await resolveDestination('http://127.0.0.1:9/x', policy, resolver)).ok).toBe(true);
    expect((await resolveDestination('http://127.0.0.2:9/x', policy, resolver)).ok).toBe(false);
    expect((await resolveDestination('http://[::1]:9/x', policy, resolver)).ok).toBe(false);
  });

  it('never asks DNS about IP literals', async () => {
    const { resolver, asked } = tableResolver({});
    for (const url of [
      'http://127.0.0.1/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://169.254.169.254/',
    ]) {
      expect((await resolveDestination(url, HTTP_OK, resolver)).ok, url).toBe(false);
    }
    expect(asked).toEqual([]);
  });
});

describe('at delivery time (worker with injected resolver and connector)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ scale: 0, env: { WEBHOOK_ALLOW_HTTP: '1' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  const silent = { warn: () => {}, error: () => {}, info: () => {} };

  function parts(table: Record<string, string[]>) {
    const dns = tableResolver(table);
    const wire = recordingConnector();
    const common = {
      db: t.store.db,
      wallClock: t.clock,
      areaTree: t.ctx.areaTree,
      policy: HTTP_OK,
      resolver: dns.resolver,
    };
    const service = new WebhooksService(common);
    const worker = new WebhookDeliveryWorker({
      ...common,
      dialect: t.store.dialect,
      connector: wire.connector,
      log: silent,
    });
    return { dns, wire, service, worker };
  }

  it('refuses every non-public destination of the issue without attempting a connection', async () => {
    const { wire, service, worker, dns } = parts({
      'public.test': ['93.184.216.34'],
      'loopback.test': ['127.0.0.1'],
    });
    const hook = await service.create('ssrf', {
      url: 'http://public.test/hook',
      events: ['listing.created'],
    });
    const urls = [
      'http://127.0.0.1/',
      'http://[::1]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://loopback.test/',
    ];
    for (const url of urls) {
      // The URL changed behind the registration check (as DNS or configuration can).
      await t.store.db.updateTable('webhook_subscriptions').set({ url }).where('id', '=', hook.id).execute();
      const queued = await service.test('ssrf', hook.id);
      await worker.drain();
      const [after] = (await service.deliveries('ssrf', hook.id, { page: 1, perPage: 50 })).items.filter(
        (d) => d.id === queued.id,
      );
      expect(after?.last_error, url).toMatch(/^refused: /);
      expect(after?.status, url).toBe('pending');
    }
    expect(wire.sent).toEqual([]);
    expect(dns.asked.filter((h) => h !== 'public.test')).toEqual(['loopback.test']);
  });

  it('re-resolves at connection time: a host rebinding to loopback after registration is refused', async () => {
    const { wire, service, worker, dns } = parts({ 'rebind.test': ['93.184.216.34'] });
    const hook = await service.create('ssrf', {
      url: 'http://rebind.test/hook',
      events: ['listing.created'],
    });
    dns.table['rebind.test'] = ['127.0.0.1'];
    await service.test('ssrf', hook.id);
    await worker.drain();
    expect(wire.sent).toEqual([]);
    const [delivery] = (await service.deliveries('ssrf', hook.id, { page: 1, perPage: 5 })).items;
    expect(delivery?.last_error).toContain('127.0.0.1');
  });

  it('connects to the vetted address itself (pinned), with the URL host kept for TLS and Host', async () => {
    const { wire, service, worker } = parts({ 'hooks.test': ['93.184.216.34'] });
    const hook = await service.create('ssrf', { url: 'http://hooks.test/in', events: ['listing.created'] });
    await service.test('ssrf', hook.id);
    await worker.drain();
    expect(wire.sent).toHaveLength(1);
    expect(wire.sent[0]!.pinned).toEqual({ address: '93.184.216.34', family: 4 });
    expect(wire.sent[0]!.url.host).toBe('hooks.test');
    expect(wire.sent[0]!.timeoutMs).toBe(15_000);
    expect(wire.sent[0]!.maxResponseBytes).toBe(4096);
  });
});

describe('node connector (loopback only)', () => {
  let server: Server;
  let port: number;
  const hosts: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      hosts.push(request.headers.host ?? '');
      request.resume();
      if (request.url === '/big') {
        response.writeHead(200);
        response.end('x'.repeat(1_000_000));
      } else if (request.url === '/silent') {
        // never answers
      } else {
        response.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
        response.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const send = (path: string, timeoutMs = 2000) =>
    nodeConnector({
      // A name DNS cannot answer: the connection can only go to the pinned address.
      url: new URL(`http://pinned.invalid:${port}${path}`),
      pinned: { address: '127.0.0.1', family: 4 },
      headers: { 'content-type': 'application/json' },
      body: '{}',
      timeoutMs,
      maxResponseBytes: 4096,
    });

  it('goes to the pinned address, sends the URL host, and does not follow redirects', async () => {
    const response = await send('/redirect');
    expect(response.status).toBe(302);
    expect(response.location).toBe('http://127.0.0.1:1/elsewhere');
    expect(hosts.at(-1)).toBe(`pinned.invalid:${port}`);
  });

  it('reads at most 4 KiB of an answer', async () => {
    const response = await send('/big');
    expect(response.status).toBe(200);
    expect(response.bodySnippet.length).toBe(4096);
  });

  it('gives up at the deadline', async () => {
    const started = Date.now();
    await expect(send('/silent', 300)).rejects.toBeInstanceOf(OutboundError);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
