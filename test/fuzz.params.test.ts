/**
 * Hostile input on every parameter of every route. The operations come from
 * the route table (`registeredRoutes`) joined with the OpenAPI document, so a
 * new route or parameter is fuzzed without touching this file. Every answer
 * must be clean (see `expectCleanAnswer`): no 5xx, no hang, bounded size, and
 * every 4xx the error envelope naming a parameter.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/http/errors.ts';
import {
  type Answer,
  apiOperations,
  describeValue,
  encodeText,
  expectCleanAnswer,
  forEachConcurrently,
  HOSTILE_NUMBERS,
  HOSTILE_STRINGS,
  HOSTILE_VALUES,
  MAX_ENVELOPE_BYTES,
  type Operation,
  type Parameter,
  requestTarget,
  type SentValue,
  send,
} from './fuzz.support.ts';
import { createTestApp, type TestApp } from './support/app.ts';

/** Fixed, so a failure replays exactly. */
const SEED = 20261101;

/** A public address literal: registration accepts it without DNS, and no test starts the delivery worker. */
const WEBHOOK_URL = 'https://93.184.216.34/hooks/stoop';

let t: TestApp;
let operations: Operation[];
let undocumented: string[];
/** A valid value for every required parameter (and every path parameter), per operation path. */
let examples: (operation: Operation, parameter: Parameter) => string | undefined;

beforeAll(async () => {
  // Anonymous callers share one IP: lift the Free limits so only the input decides the answer.
  t = await createTestApp({
    scale: 0.005,
    env: { RATE_LIMIT_FREE: '10000000', MONTHLY_QUOTA_FREE: '10000000' },
  });
  ({ operations, undocumented } = await apiOperations(t));
  // The OAuth endpoints answer in the RFC 6749 family (or an HTML page), not the REST envelope: test/oauth.error.test.ts fuzzes them.
  operations = operations.filter((operation) => !/^\/(oauth|\.well-known\/oauth-)/.test(operation.path));
  const listing = await t.store.db
    .selectFrom('listings')
    .select(['id', 'building_id'])
    .where('listing_type', '=', 'rental')
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
  const search = (await (await t.get('/v1/search/rentals?perPage=50')).json()) as {
    data: { id: string; urlPath: string; leadPhotoKey: string | null }[];
  };
  const withPhoto = search.data.find((item) => item.leadPhotoKey !== null)!;
  const keyId = (await t.ctx.subscriptions.issue({ accountId: 'fuzz-victim', tier: 'PRO' })).id;
  const webhook = await send(t, t.internalKey, 'POST', '/v1/webhooks', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: WEBHOOK_URL, events: ['listing.created'] }),
  });
  expect(webhook.status, webhook.text).toBe(200);
  const webhookId = (JSON.parse(webhook.text) as { data: { id: string } }).data.id;
  const watcher = await send(t, t.internalKey, 'POST', '/v1/watchers', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ watchType: 'listing', listingId: listing.id, pollInterval: 3600 }),
  });
  expect(watcher.status, watcher.text).toBe(201);
  const watcherId = (JSON.parse(watcher.text) as { data: { id: string } }).data.id;
  examples = (operation, parameter) => {
    switch (parameter.name) {
      case 'id':
        if (operation.path.startsWith('/v1/property/') || operation.path.startsWith('/v1/listing/'))
          return listing.id;
        if (operation.path.startsWith('/v1/building/')) return listing.building_id;
        if (operation.path.startsWith('/v1/webhooks/')) return webhookId;
        if (operation.path.startsWith('/v1/watchers/')) return watcherId;
        return keyId;
      case 'deliveryId':
        return 'whd_none';
      case 'key':
        return withPhoto.leadPhotoKey!;
      case 'url':
        return search.data[0]!.urlPath;
      case 'areaId':
      case 'areas':
        return '100';
      case 'account':
        return 'fuzz-victim';
      default:
        return parameter.schema.enum?.[0];
    }
  };
});
afterAll(async () => {
  await t?.close();
});

/** The operation's required and path parameters at valid values (defaults left to the server). */
function baseline(operation: Operation): Map<string, SentValue> {
  const values = new Map<string, SentValue>();
  for (const parameter of operation.parameters) {
    if (!parameter.required && parameter.in !== 'path') continue;
    const example = examples(operation, parameter);
    if (example !== undefined) values.set(parameter.name, example);
  }
  return values;
}

/**
 * Names a 400 may give: the operation's parameters and body fields, `body`
 * itself, or `path` for router-level rejections. The image host (`/fp/…`)
 * checks the file name as a whole and names it `file`.
 */
function namedBy(operation: Operation): Set<string> {
  return new Set([
    'path',
    ...(operation.path.startsWith('/fp/') ? ['file'] : []),
    ...(operation.bodyFields.length > 0 ? ['body', ...operation.bodyFields] : []),
    ...operation.parameters.map((p) => p.name),
  ]);
}

/**
 * Writes carry a valid body, so what decides the answer is the fuzzed
 * parameter: a hostile key id is a 404 before any key is touched, and a POST
 * (which has no parameter) issues a key.
 */
function requestInit(operation: Operation): RequestInit {
  if (operation.streamOnly) return { headers: { accept: 'text/event-stream' } };
  if (operation.path.startsWith('/v1/watchers')) {
    if (operation.method !== 'PATCH') return {};
    return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'active' }) };
  }
  if (operation.path.startsWith('/v1/webhooks')) {
    const body =
      operation.method === 'PATCH'
        ? { active: true }
        : operation.method === 'POST' && operation.path === '/v1/webhooks'
          ? { url: WEBHOOK_URL, events: ['listing.created'] }
          : undefined;
    return body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {};
  }
  if (operation.method !== 'PATCH' && operation.method !== 'POST') return {};
  const body = operation.method === 'POST' ? { account: 'fuzz-issued', tier: 'FREE' } : { tier: 'PRO' };
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

async function call(
  operation: Operation,
  values: ReadonlyMap<string, SentValue>,
  key: string | null,
  extraQuery = '',
): Promise<{ answer: Answer; target: string }> {
  const target = requestTarget(operation, values, extraQuery);
  return { answer: await send(t, key, operation.method, target, requestInit(operation)), target };
}

function isNumeric(parameter: Parameter): boolean {
  return parameter.schema.type === 'integer' || parameter.schema.type === 'number';
}

describe('the route table is fully described', () => {
  it('every access-controlled route has an OpenAPI operation (or is a hidden wildcard)', () => {
    expect(undocumented).toEqual([]);
    expect(operations.length).toBeGreaterThanOrEqual(25);
  });

  it('every required or path parameter has a valid example, and each read answers 200 with them', async () => {
    for (const operation of operations) {
      if (operation.hidden) continue;
      for (const parameter of operation.parameters) {
        if (!parameter.required && parameter.in !== 'path') continue;
        const known = examples(operation, parameter) !== undefined || parameter.schema.default !== undefined;
        expect(known, `${operation.method} ${operation.path}: ${parameter.name}`).toBe(true);
      }
      // GET /mcp is documented as its 405 (a stateless MCP endpoint offers no stream).
      if (operation.method !== 'GET' || operation.path === '/mcp') continue;
      const { answer, target } = await call(operation, baseline(operation), t.internalKey);
      expect(answer.status, `${target}: ${answer.text.slice(0, 300)}`).toBe(200);
    }
  });
});

describe('one rule for numbers: non-finite, non-decimal or out-of-range is a 400 naming the parameter', () => {
  it('on every numeric parameter of every route', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const operation of operations) {
      for (const parameter of operation.parameters.filter(isNumeric)) {
        const { minimum, maximum } = parameter.schema;
        const values = [
          'Infinity',
          '-Infinity',
          '+Infinity',
          '1e400',
          '-1e400',
          'NaN',
          '0x10',
          ' 1',
          ...(maximum === undefined ? [] : [String(maximum + 1), String(maximum * 1e6)]),
          ...(minimum === undefined ? [] : [String(minimum - 1)]),
        ];
        for (const value of values) {
          checked++;
          const sent = baseline(operation).set(parameter.name, value);
          const { answer, target } = await call(operation, sent, t.internalKey);
          const body = answer.status === 400 ? (JSON.parse(answer.text) as ErrorBody) : undefined;
          const issue = body?.error.details?.params?.[0];
          if (
            answer.status !== 400 ||
            body?.error.code !== 'INVALID_PARAMS' ||
            issue?.parameter !== parameter.name ||
            !body.error.message.includes(`"${parameter.name}"`)
          ) {
            failures.push(`${target} → ${answer.status} ${answer.text.slice(0, 160)}`);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(failures).toEqual([]);
  });
});

describe('pattern errors say what is accepted', () => {
  it('on every parameter with a pattern: never a generic message; enum lists name every allowed value', async () => {
    const failures: string[] = [];
    for (const operation of operations) {
      for (const parameter of operation.parameters.filter((p) => p.schema.pattern !== undefined)) {
        const sent = baseline(operation).set(parameter.name, '~bad~');
        const { answer, target } = await call(operation, sent, t.internalKey);
        const body = JSON.parse(answer.text) as ErrorBody;
        const message = body.error.details?.params?.[0]?.message ?? '';
        const enumList = /^\^\(([A-Za-z_|]+)\)\(,\(\1\)\)\*\$$/.exec(parameter.schema.pattern!);
        const missing = enumList?.[1]?.split('|').filter((value) => !message.includes(value)) ?? [];
        if (
          answer.status !== 400 ||
          body.error.details?.params?.[0]?.parameter !== parameter.name ||
          /documented values|invalid format/.test(message) ||
          missing.length > 0
        ) {
          failures.push(`${target} → ${answer.status} ${message}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('hostile values on every parameter', () => {
  it('each hostile value on each parameter, as INTERNAL and anonymously', async () => {
    const cases: { operation: Operation; name: string; value: SentValue; key: string | null }[] = [];
    for (const operation of operations) {
      const parameters = operation.hidden
        ? [{ name: '*', numeric: true }]
        : operation.parameters.map((p) => ({ name: p.name, numeric: isNumeric(p) }));
      for (const { name, numeric } of parameters) {
        // Number-like text matters where a number is read; elsewhere it is just text.
        const values = numeric ? HOSTILE_VALUES : HOSTILE_STRINGS;
        values.forEach((value, index) => {
          cases.push({ operation, name, value, key: t.internalKey });
          // Anonymous callers differ only in tier (page size, limits), and keyed routes turn them
          // away before reading any parameter: every fifth value (one, on keyed routes) is enough.
          const probes = operation.access.requiresKey ? index === 0 : index % 5 === 0;
          if (probes) cases.push({ operation, name, value, key: null });
        });
      }
    }
    expect(cases.length).toBeGreaterThan(4000);
    await forEachConcurrently(cases, 4, async ({ operation, name, value, key }) => {
      const { answer, target } = await call(operation, baseline(operation).set(name, value), key);
      expectCleanAnswer(
        answer,
        namedBy(operation),
        `${key ? 'INTERNAL' : 'anonymous'} ${operation.method} ${target.slice(0, 200)} (${name}=${describeValue(value)})`,
      );
    });
  });

  it('random combinations of hostile values, unknown parameters and callers (fast-check)', async () => {
    const hostile = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_VALUES) },
      { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
      { weight: 1, arbitrary: fc.double().map((n) => String(n)) },
      { weight: 1, arbitrary: fc.bigInt().map((n) => n.toString()) },
      { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 8 }), { minLength: 2, maxLength: 5 }) },
    );
    const unknownName = fc.string({ unit: 'binary', minLength: 1, maxLength: 30 });
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: 10_000 }),
        fc.array(fc.tuple(fc.nat({ max: 10_000 }), hostile), { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(unknownName, fc.string({ maxLength: 20 })), { maxLength: 3 }),
        fc.boolean(),
        async (which, mutations, unknown, anonymous) => {
          const operation = operations[which % operations.length]!;
          const names = operation.hidden ? ['*'] : operation.parameters.map((p) => p.name);
          const sent = baseline(operation);
          for (const [index, value] of mutations) {
            if (names.length > 0) sent.set(names[index % names.length]!, value);
          }
          const extra = unknown.map(([n, v]) => `${encodeText(n)}=${encodeText(v)}`).join('&');
          const key = anonymous ? null : t.internalKey;
          const { answer, target } = await call(operation, sent, key, extra);
          // An unknown parameter is a 400 naming it (as the server decoded it); it may be the one named.
          const named = new Set([
            ...namedBy(operation),
            ...unknown.map(([n]) => decodeURIComponent(encodeText(n))),
          ]);
          expectCleanAnswer(
            answer,
            named,
            `${key ? 'INTERNAL' : 'anonymous'} ${operation.method} ${target.slice(0, 300)}`,
          );
        },
      ),
      { seed: SEED, numRuns: 400 },
    );
  });
});

describe('unknown parameters are not echoed without bound', () => {
  it('a 15 KB query of unknown parameters is a small 400 naming at most ten of them', async () => {
    // Just under Node's 16 KB limit for the request head (past it Node answers 431 itself).
    const unknown = Array.from({ length: 720 }, (_, i) => `junk${i}=${'z'.repeat(13)}`).join('&');
    expect(unknown.length).toBeGreaterThan(15_000);
    for (const path of ['/v1/search/rentals?perPage=1', '/v1/areas?perPage=1']) {
      const answer = await send(t, t.internalKey, 'GET', `${path}&${unknown}`);
      expect(answer.status).toBe(400);
      expect(answer.bytes).toBeLessThanOrEqual(MAX_ENVELOPE_BYTES);
      const body = JSON.parse(answer.text) as ErrorBody;
      expect(body.error.message).toMatch(/^Unknown parameter "junk0"/);
      expect(body.error.details?.params).toHaveLength(10);
    }
  });

  it('known parameters are kept in links, in the order sent; page and perPage are set', async () => {
    const answer = await send(
      t,
      t.internalKey,
      'GET',
      '/v1/search/rentals?sort=PRICE&minPrice=100&perPage=2',
    );
    const meta = (JSON.parse(answer.text) as { meta: { links: { self: string }; warnings: string[] } }).meta;
    expect(meta.links.self).toBe(
      'http://stoop.test/v1/search/rentals?sort=PRICE&minPrice=100&page=1&perPage=2',
    );
    expect(meta.warnings).toEqual([]);
  });

  it('an over-long unknown parameter name is shortened in its 400', async () => {
    const name = `n${'x'.repeat(3000)}`;
    const answer = await send(t, t.internalKey, 'GET', `/v1/areas?perPage=1&${name}=1`);
    expect(answer.status).toBe(400);
    expect(answer.bytes).toBeLessThan(2000);
    const body = JSON.parse(answer.text) as ErrorBody;
    expect(body.error.details?.params?.[0]?.parameter).toBe(`n${'x'.repeat(39)}…`);
  });
});
