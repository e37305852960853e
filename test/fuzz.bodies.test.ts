/**
 * Hostile JSON bodies on every route that takes one (the admin API's key
 * writes, webhook subscriptions, watchers), found through the route table and the
 * OpenAPI document. Besides
 * the clean-answer contract (no 5xx, no hang, bounded size, every 4xx the
 * envelope naming a field), bodies are never coerced: a key is issued only
 * from exactly the types the schema declares.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/http/errors.ts';
import type { IssuedApiKeyView } from '../src/modules/keys/keys.schema.ts';
import {
  type Answer,
  apiOperations,
  describeValue,
  expectCleanAnswer,
  forEachConcurrently,
  type Operation,
  send,
} from './fuzz.support.ts';
import { createTestApp, TEST_NOW, type TestApp } from './support/app.ts';

/** Fixed, so a failure replays exactly. */
const SEED = 20261102;

let t: TestApp;
let writes: Operation[];
let victimId: string;
/** A subscription and a watcher of the INTERNAL caller's account, so PATCH reaches body validation. */
let webhookId: string;
let watcherId: string;

/** A public address literal: registration accepts it without DNS, and no test starts the delivery worker. */
const WEBHOOK_URL = 'https://93.184.216.34/hooks/stoop';

beforeAll(async () => {
  t = await createTestApp({ scale: 0, env: { RATE_LIMIT_FREE: '10000000', MONTHLY_QUOTA_FREE: '10000000' } });
  // OAuth registration answers RFC 7591 errors, not the REST envelope: test/oauth.error.test.ts covers its bodies.
  writes = (await apiOperations(t)).operations.filter(
    (o) => o.bodyFields.length > 0 && !o.path.startsWith('/oauth/'),
  );
  victimId = (await t.ctx.subscriptions.issue({ accountId: 'fuzz-body-victim', tier: 'PRO' })).id;
  const created = await send(t, t.internalKey, 'POST', '/v1/webhooks', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: WEBHOOK_URL, events: ['listing.created'] }),
  });
  expect(created.status, created.text).toBe(200);
  webhookId = (JSON.parse(created.text) as { data: { id: string } }).data.id;
  // The store holds no listings here: a search watcher is the one with a target.
  const watcher = await send(t, t.internalKey, 'POST', '/v1/watchers', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(WATCHER_BODY),
  });
  expect(watcher.status, watcher.text).toBe(201);
  watcherId = (JSON.parse(watcher.text) as { data: { id: string } }).data.id;
});
afterAll(async () => {
  await t?.close();
});

const WATCHER_BODY = { watchType: 'search', searchFilters: { listingType: 'rental' }, pollInterval: 3600 };

const isWebhookRoute = (operation: Operation) => operation.path.startsWith('/v1/webhooks');
const isWatcherRoute = (operation: Operation) => operation.path.startsWith('/v1/watchers');

function targetOf(operation: Operation): string {
  const id = isWebhookRoute(operation) ? webhookId : isWatcherRoute(operation) ? watcherId : victimId;
  return operation.path.replace('{id}', id);
}

/** A valid body per operation: the fuzzers replace one field at a time. */
function validBody(operation: Operation): Record<string, unknown> {
  if (isWebhookRoute(operation)) {
    return operation.method === 'POST' ? { url: WEBHOOK_URL, events: ['listing.created'] } : { active: true };
  }
  if (isWatcherRoute(operation)) return operation.method === 'POST' ? WATCHER_BODY : { status: 'active' };
  return operation.method === 'POST' ? { account: 'fuzz-body', tier: 'FREE' } : { tier: 'PRO' };
}

async function sendBody(
  operation: Operation,
  text: string | undefined,
  key: string | null,
  contentType = 'application/json',
): Promise<Answer> {
  return send(t, key, operation.method, targetOf(operation), {
    headers: text === undefined ? {} : { 'content-type': contentType },
    ...(text === undefined ? {} : { body: text }),
  });
}

/** A 400 for a body may name a declared field, `body` itself, or a field that was sent (an unknown one). */
function namedFor(operation: Operation, sent: unknown): Set<string> {
  const keys = sent !== null && typeof sent === 'object' && !Array.isArray(sent) ? Object.keys(sent) : [];
  return new Set(['body', ...operation.bodyFields, ...keys]);
}

/** What a server may have parsed from a raw body (its fields may be named), or null. */
function parsedOrNull(text: string): unknown {
  try {
    return JSON.parse(text.replace(/^\uFEFF/, '')) as unknown;
  } catch {
    return null;
  }
}

/** A 201 issued exactly what was asked: the declared types, unchanged, and an end in the future. */
function expectIssuedAsSent(answer: Answer, sent: Record<string, unknown>, context: string): void {
  if (answer.status !== 201) return;
  const issued = (JSON.parse(answer.text) as { data: IssuedApiKeyView }).data;
  expect(typeof sent.account, context).toBe('string');
  expect(issued.account, context).toBe(sent.account);
  expect(issued.tier, context).toBe(sent.tier);
  if (issued.subscriptionEndsAt !== null) {
    expect(issued.subscriptionEndsAt > TEST_NOW.toISOString(), context).toBe(true);
    expect(issued.subscriptionEndsAt <= '9999-12-31T23:59:59.999Z', context).toBe(true);
  }
}

/** JSON values that a careless or hostile client puts in a field. */
const HOSTILE_FIELD_VALUES: readonly unknown[] = [
  null,
  true,
  0,
  -0,
  1.5,
  1e308,
  -1,
  '',
  ' ',
  '\u0000',
  'PRO\u0000',
  'x'.repeat(10_000),
  '😀',
  "' OR '1'='1",
  [],
  ['a'],
  ['PRO'],
  ['acme', 'other'],
  [['PRO']],
  {},
  { $ne: null },
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59-05:00',
  '2026-11-01T15:00:00Z',
  '1999-12-31T23:59:59Z',
  '2026-02-30T00:00:00Z',
  '2027-01-01',
  '+010000-01-01T00:00:00Z',
];

/** Whole bodies as raw text: not JSON, JSON of the wrong shape, numbers JSON cannot hold, depth. */
const HOSTILE_RAW_BODIES: readonly string[] = [
  '',
  'null',
  '[]',
  '"acme"',
  '1e400',
  '{',
  '{"account":"a","tier":"PRO"',
  'NaN',
  '\uFEFF{"account":"bom","tier":"FREE"}',
  '{"account":1e400,"tier":"FREE"}',
  '{"account":"dup","tier":"FREE","tier":"INTERNAL"}',
  '{"__proto__":{"tier":"INTERNAL"},"account":"proto"}',
  '{"constructor":{"prototype":{"tier":"INTERNAL"}},"account":"ctor","tier":"FREE"}',
  `{"account":${'['.repeat(5000)}${']'.repeat(5000)},"tier":"FREE"}`,
  `{"tier":"FREE","account":"${'a'.repeat(70 * 1024)}"}`,
  `{"tier":"FREE","account":"\\ud800"}`,
];

describe('hostile JSON bodies', () => {
  it('the body routes are found from the route table', () => {
    expect(writes.map((o) => `${o.method} ${o.path}`).sort()).toEqual([
      'PATCH /v1/admin/keys/{id}',
      'PATCH /v1/watchers/{id}',
      'PATCH /v1/webhooks/{id}',
      'POST /v1/admin/keys',
      'POST /v1/watchers',
      'POST /v1/webhooks',
    ]);
  });

  it('each hostile value in each declared field, as INTERNAL and anonymously', async () => {
    const cases: { operation: Operation; body: Record<string, unknown>; key: string | null }[] = [];
    for (const operation of writes) {
      for (const field of [...operation.bodyFields, 'unknownField']) {
        for (const value of HOSTILE_FIELD_VALUES) {
          for (const key of [t.internalKey, null]) {
            cases.push({ operation, body: { ...validBody(operation), [field]: value }, key });
          }
        }
      }
    }
    await forEachConcurrently(cases, 4, async ({ operation, body, key }) => {
      const answer = await sendBody(operation, JSON.stringify(body), key);
      const context = `${key ? 'INTERNAL' : 'anonymous'} ${operation.method} ${operation.path} ${describeValue(JSON.stringify(body))}`;
      expectCleanAnswer(answer, namedFor(operation, body), context);
      expectIssuedAsSent(answer, body, context);
    });
  });

  it('raw bodies and content types', async () => {
    for (const operation of writes) {
      for (const text of HOSTILE_RAW_BODIES) {
        const answer = await sendBody(operation, text, t.internalKey);
        expectCleanAnswer(
          answer,
          namedFor(operation, parsedOrNull(text)),
          `${operation.method} ${describeValue(text)}`,
        );
        // A BOM and duplicate names are JSON a parser may accept; prototype keys are refused outright.
        if (/__proto__|constructor/.test(text)) expect(answer.status, describeValue(text)).toBe(400);
      }
      expect(({} as Record<string, unknown>).tier).toBeUndefined();
      const valid = JSON.stringify(validBody(operation));
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/json; charset=utf-16',
      ]) {
        const answer = await sendBody(operation, valid, t.internalKey, type);
        expectCleanAnswer(answer, namedFor(operation, null), `${operation.method} as ${type}`);
      }
      expectCleanAnswer(
        await sendBody(operation, undefined, t.internalKey),
        namedFor(operation, null),
        'no body',
      );
    }
  });

  it('random JSON bodies (fast-check)', async () => {
    const fieldValue = fc.oneof(fc.constantFrom(...HOSTILE_FIELD_VALUES), fc.jsonValue({ maxDepth: 3 }));
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.dictionary(
          fc.constantFrom(
            'account',
            'tier',
            'status',
            'subscriptionEndsAt',
            'url',
            'events',
            'filters',
            'active',
            'watchType',
            'listingId',
            'buildingId',
            'searchFilters',
            'pollInterval',
            'other',
          ),
          fieldValue,
        ),
        fc.boolean(),
        async (which, fields, anonymous) => {
          const operation = writes[which % writes.length]!;
          const body = { ...validBody(operation), ...fields };
          const answer = await sendBody(operation, JSON.stringify(body), anonymous ? null : t.internalKey);
          const context = `${operation.method} ${describeValue(JSON.stringify(body))}`;
          expectCleanAnswer(answer, namedFor(operation, body), context);
          expectIssuedAsSent(answer, body, context);
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe('bodies are never coerced', () => {
  it.each([
    [{ account: ['a'], tier: 'PRO' }, 'account'],
    [{ account: 123, tier: 'PRO' }, 'account'],
    [{ account: 'acme', tier: ['PRO'] }, 'tier'],
    [{ account: 'acme', tier: 'PRO', subscriptionEndsAt: ['2030-01-01T00:00:00Z'] }, 'subscriptionEndsAt'],
  ])('POST %j → 400 naming %s, nothing issued', async (body, field) => {
    const [operation] = writes.filter((o) => o.method === 'POST');
    const before = await t.ctx.subscriptions.list();
    const answer = await sendBody(operation!, JSON.stringify(body), t.internalKey);
    expect(answer.status, answer.text).toBe(400);
    const error = (JSON.parse(answer.text) as ErrorBody).error;
    expect(error.code).toBe('INVALID_BODY');
    expect(error.details?.params?.[0]).toMatchObject({ parameter: field, location: 'body', rule: 'type' });
    expect(await t.ctx.subscriptions.list()).toHaveLength(before.length);
  });
});
