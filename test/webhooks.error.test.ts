import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTING_EVENT_TYPES } from '../src/domain/events.ts';
import { MAX_SUBSCRIPTIONS_PER_ACCOUNT } from '../src/modules/webhooks/webhooks.schema.ts';
import { createTestApp, type TestApp } from './support/app.ts';

let t: TestApp;
let key: string;
// https only (the default); 127.0.0.1 is allowlisted so valid registrations need no DNS.
beforeAll(async () => {
  t = await createTestApp({ scale: 0, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
  key = (await t.ctx.subscriptions.issue({ accountId: 'hooks-errors', tier: 'BUSINESS' })).key;
});
afterAll(async () => {
  await t?.close();
});

interface ErrorJson {
  error: {
    code: string;
    message: string;
    status: number;
    details?: { params?: { parameter: string; rule: string }[] };
  };
}

async function send(method: string, path: string, body?: unknown, raw?: string) {
  const response = await t.getAs(key, path, {
    method,
    ...(body === undefined && raw === undefined
      ? {}
      : { body: raw ?? JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: (text ? JSON.parse(text) : null) as ErrorJson & { data: { id: string } },
  };
}

const VALID = { url: 'https://127.0.0.1/hook', events: ['listing.created'] };

describe('creating', () => {
  it('rejects unknown event names with a 400 that lists the valid ones', async () => {
    const { status, body } = await send('POST', '/v1/webhooks', {
      ...VALID,
      events: ['listing.created', 'listing.exploded'],
    });
    expect(status).toBe(400);
    expect(body.error.code).toBe('INVALID_BODY');
    expect(body.error.message).toContain('"listing.exploded"');
    for (const type of LISTING_EVENT_TYPES) expect(body.error.message).toContain(type);
    expect(body.error.details?.params?.[0]).toMatchObject({ parameter: 'events', rule: 'enum' });
  });

  it.each([
    ['no url', { events: ['listing.created'] }, 'url'],
    ['no events', { url: VALID.url }, 'events'],
    ['empty events', { ...VALID, events: [] }, 'events'],
    ['not a URL', { ...VALID, url: 'hook' }, 'url'],
    ['plain http (not allowed here)', { ...VALID, url: 'http://127.0.0.1/hook' }, 'url'],
    ['ftp', { ...VALID, url: 'ftp://127.0.0.1/hook' }, 'url'],
    ['credentials in the URL', { ...VALID, url: 'https://user:secret@127.0.0.1/hook' }, 'url'],
    ['an unknown field', { ...VALID, secret: 'mine' }, 'secret'],
    ['an unknown area', { ...VALID, filters: { areas: [424242] } }, 'filters.areas'],
    [
      'minPrice above maxPrice',
      { ...VALID, filters: { minPrice: 5000, maxPrice: 1000 } },
      'filters.minPrice',
    ],
    ['minBeds above maxBeds', { ...VALID, filters: { minBeds: 3, maxBeds: 1 } }, 'filters.minBeds'],
    ['an unknown filter', { ...VALID, filters: { colour: 'red' } }, 'colour'],
    ['a bad listing type', { ...VALID, filters: { listingType: 'castle' } }, 'listingType'],
  ])('400 for %s, naming the field', async (_name, body, field) => {
    const answer = await send('POST', '/v1/webhooks', body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(answer.body.error.code).toBe('INVALID_BODY');
    const named = answer.body.error.details?.params?.map((p) => p.parameter).join(',') ?? '';
    expect(`${named} ${answer.body.error.message}`).toContain(field);
  });

  it('400 for a body that is not JSON', async () => {
    const answer = await send('POST', '/v1/webhooks', undefined, '{"url":');
    expect(answer.status).toBe(400);
  });

  it(`409 past ${MAX_SUBSCRIPTIONS_PER_ACCOUNT} subscriptions per account`, async () => {
    const other = (await t.ctx.subscriptions.issue({ accountId: 'hooks-many', tier: 'BUSINESS' })).key;
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_ACCOUNT; i++) {
      await t.ctx.webhooks.create('hooks-many', { url: `https://127.0.0.1/h${i}`, events: ['listing.sold'] });
    }
    const response = await t.getAs(other, '/v1/webhooks', {
      method: 'POST',
      body: JSON.stringify(VALID),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(409);
  });
});

describe('addressing', () => {
  it('404 for unknown ids on every route', async () => {
    const paths: [string, string][] = [
      ['GET', '/v1/webhooks/wh_missing'],
      ['PATCH', '/v1/webhooks/wh_missing'],
      ['DELETE', '/v1/webhooks/wh_missing'],
      ['GET', '/v1/webhooks/wh_missing/deliveries'],
      ['POST', '/v1/webhooks/wh_missing/test'],
      ['POST', '/v1/webhooks/wh_missing/rotate-secret'],
      ['POST', '/v1/webhooks/wh_missing/deliveries/whd_missing/retry'],
    ];
    for (const [method, path] of paths) {
      const answer = await send(method, path, method === 'PATCH' ? { active: false } : undefined);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.error.code).toBe('NOT_FOUND');
    }
    const created = await send('POST', '/v1/webhooks', VALID);
    const missing = await send('POST', `/v1/webhooks/${created.body.data.id}/deliveries/whd_missing/retry`);
    expect(missing.status).toBe(404);
  });

  it('400 for a page beyond the last, and for a bad status filter', async () => {
    expect((await send('GET', '/v1/webhooks?page=99')).status).toBe(400);
    const created = await send('POST', '/v1/webhooks', VALID);
    expect((await send('GET', `/v1/webhooks/${created.body.data.id}/deliveries?status=lost`)).status).toBe(
      400,
    );
  });
});

describe('changing', () => {
  it('400 for an empty or unknown change, unknown events, and a refused URL', async () => {
    const { body } = await send('POST', '/v1/webhooks', VALID);
    const path = `/v1/webhooks/${body.data.id}`;
    expect((await send('PATCH', path, {})).status).toBe(400);
    expect((await send('PATCH', path, { secret: 'x' })).status).toBe(400);
    expect((await send('PATCH', path, { active: 'yes' })).status).toBe(400);
    const events = await send('PATCH', path, { events: ['nope'] });
    expect(events.status).toBe(400);
    expect(events.body.error.message).toContain('listing.created');
    const url = await send('PATCH', path, { url: 'https://10.0.0.1/' });
    expect(url.status).toBe(400);
    expect(url.body.error.details?.params?.[0]).toMatchObject({ parameter: 'url', rule: 'destination' });
  });

  it('409 for a test ping or a retry on an inactive subscription, and for retrying an undelivered delivery', async () => {
    const { body } = await send('POST', '/v1/webhooks', VALID);
    const id = body.data.id;
    const ping = await send('POST', `/v1/webhooks/${id}/test`);
    expect(ping.status).toBe(202);
    const retry = await send('POST', `/v1/webhooks/${id}/deliveries/${ping.body.data.id}/retry`);
    expect(retry.status).toBe(409);
    expect(retry.body.error.message).toContain('pending');
    await send('PATCH', `/v1/webhooks/${id}`, { active: false });
    expect((await send('POST', `/v1/webhooks/${id}/test`)).status).toBe(409);
    expect((await send('POST', `/v1/webhooks/${id}/deliveries/${ping.body.data.id}/retry`)).status).toBe(409);
  });
});
