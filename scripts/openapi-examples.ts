/**
 * Records the examples of the OpenAPI document (resources/openapi-examples.json):
 * boots the app on a small demo market (in-memory SQLite, a fixed seed and
 * instant, so a re-run changes nothing unless the API or the market does),
 * calls each operation over real HTTP, and keeps one success answer per
 * operation and one error body per error code, lists trimmed to two items.
 *
 * Errors are elicited from the live server where a request can cause them;
 * the few no request can cause on demand (a down database or limits backend,
 * an internal failure, a slow request) are the bodies the server builds
 * for them (`errorBody` with the error handler's and the access hook's words).
 *
 *   npx tsx scripts/openapi-examples.ts
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { buildApp, compose } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { loadDemoMarket } from '../src/demo/market/load.ts';
import { ApiError, ERROR_CODES, type ErrorCode, errorBody } from '../src/http/errors.ts';
import { EXAMPLES_FILE, type OpenApiExamples } from '../src/http/openapi-document.ts';
import { MarketSnapshotJob } from '../src/jobs/market-snapshots.ts';
import { appendEvents, lockEventLog } from '../src/modules/events/event-log.ts';
import { ManualClock } from '../src/platform/clock.ts';
import { openStore } from '../src/platform/db/database.ts';
import { migrateToLatest } from '../src/platform/db/migrate.ts';
import type { OutboundRequest, OutboundResponse } from '../src/platform/outbound/connector.ts';
import { syncAreas } from '../src/reference/areas-store.ts';

const SEED = 7;
const SCALE = 0.01;
const NOW = new Date('2026-11-01T15:00:00.000Z');
const PUBLIC_URL = 'https://stoop.example.com';
/** A documentation address (example.com's) the injected resolver answers with: nothing leaves the process. */
const WEBHOOK_ADDRESS = { address: '93.184.215.14', family: 4 as const };

/** Lists longer than this are cut: examples stay readable. */
const MAX_ITEMS = 2;

function trimmed(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map(trimmed);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, trimmed(inner)]));
  }
  return value;
}

async function main(): Promise<void> {
  const store = await openStore({ dialect: 'sqlite', databaseUrl: 'sqlite::memory:' });
  await migrateToLatest(store);
  await syncAreas(store);
  await loadDemoMarket(store, { seed: SEED, scale: SCALE, now: NOW });
  const clock = new ManualClock(NOW);
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: 'sqlite::memory:',
    PUBLIC_URL,
    REDIS_URL: '',
    RATE_LIMIT_INTERNAL: '1000000',
    // A small anonymous window, so a few calls elicit the 429.
    RATE_LIMIT_FREE: '8',
  });
  // Deliveries never open a socket: the receiver "answers" 503, so a delivery stays pending (retried
  // later). What it was sent is kept, by event type: the webhook payload examples.
  const delivered = new Map<string, unknown>();
  const connector = async (request: OutboundRequest): Promise<OutboundResponse> => {
    const payload = JSON.parse(request.body) as { type: string };
    if (!delivered.has(payload.type)) delivered.set(payload.type, payload);
    return { status: 503, retryAfter: '3600', location: undefined, bodySnippet: '' };
  };
  const composition = await compose({
    config,
    store,
    wallClock: clock,
    marketClock: clock,
    webhookDelivery: { resolver: async () => [WEBHOOK_ADDRESS], connector },
  });
  const ctx = composition.services;
  await new MarketSnapshotJob(store.db, ctx.areaTree, clock, { backfillDays: 60 }).run();
  const app = await buildApp(ctx, { logger: false });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });

  const internal = (await ctx.subscriptions.issue({ accountId: 'demo-operator', tier: 'INTERNAL' })).key;
  const business = (await ctx.subscriptions.issue({ accountId: 'acme-realty', tier: 'BUSINESS' })).key;
  const free = (await ctx.subscriptions.issue({ accountId: 'free-dev', tier: 'FREE' })).key;

  const examples: OpenApiExamples = {
    source: {
      script: 'scripts/openapi-examples.ts',
      demoMarket: { seed: SEED, scale: SCALE, now: NOW.toISOString() },
    },
    operations: {},
    errors: {},
    webhooks: {},
  };

  interface Call {
    method?: string;
    key?: string | null;
    body?: unknown;
    headers?: Record<string, string>;
  }
  const call = async (path: string, options: Call = {}) => {
    const headers = new Headers(options.headers);
    const key = options.key === undefined ? business : options.key;
    if (key !== null) headers.set('authorization', `Bearer ${key}`);
    if (options.body !== undefined && !headers.has('content-type')) {
      headers.set('content-type', 'application/json');
    }
    return fetch(`${base}${path}`, {
      method: options.method ?? 'GET',
      headers,
      ...(options.body !== undefined
        ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) }
        : {}),
    });
  };
  /** Calls an operation, records its answer, and returns its body. */
  const record = async <T = Record<string, unknown>>(
    operationId: string,
    path: string,
    options: Call = {},
  ) => {
    const response = await call(path, options);
    const contentType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const value = contentType === 'application/json' ? await response.json() : await response.text();
    if (response.status >= 400) {
      throw new Error(`${operationId}: ${path} answered ${response.status}: ${JSON.stringify(value)}`);
    }
    if (contentType === 'application/json') {
      examples.operations[operationId] = {
        request: { method: options.method ?? 'GET', path },
        status: response.status,
        contentType,
        value: trimmed(value),
      };
    }
    return value as T;
  };
  const recordError = async (code: ErrorCode, path: string, options: Call = {}) => {
    const response = await call(path, options);
    const body = (await response.json()) as { error: { code: string } };
    if (body.error?.code !== code) {
      throw new Error(`expected ${code} from ${path}, got ${response.status} ${JSON.stringify(body)}`);
    }
    examples.errors[code] = body;
  };
  /** Sends raw bytes (what fetch will not send) and records the error body of the answer. */
  const recordRawError = async (code: ErrorCode, request: string) => {
    const { port } = new URL(base);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.end(request));
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(text));
    });
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string } };
    if (body.error.code !== code) throw new Error(`expected ${code} from a raw request, got ${answer}`);
    examples.errors[code] = body;
  };
  /** The first event of a stream, as sent (the stream is then closed). */
  const recordStream = async (operationId: string, path: string, key: string) => {
    const controller = new AbortController();
    const response = await fetch(`${base}${path}`, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let text = '';
    while (!/\n\n(?!:)[^\n]*data:[^\n]*\n\n|^(?!:)[^\n]*\ndata:[^\n]*\n\n/m.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      if (text.length > 20_000) break;
    }
    controller.abort();
    const events = text.split('\n\n').filter((block) => /^data:/m.test(block));
    if (response.status === 200 && events.length > 0) {
      examples.operations[operationId] = {
        request: { method: 'GET', path },
        status: 200,
        contentType: 'text/event-stream',
        value: `${events[0]}\n\n`,
      };
    }
  };

  // Service.
  await record('getHealth', '/v1/health', { key: null });
  await record('getReadiness', '/v1/health/ready', { key: null });
  await record('getLiveness', '/v1/health/live', { key: null });

  // Areas, search, listings and buildings.
  const areas = await record<{ data: { id: number; name: string }[] }>(
    'listAreas',
    '/v1/areas?level=1&perPage=5',
  );
  const manhattan = areas.data.find((area) => area.name === 'Manhattan') ?? areas.data[0]!;
  const secondArea = areas.data.find((area) => area.id !== manhattan.id)!;
  const rentals = await record<{
    data: { id: string; urlPath: string; buildingId: string; areaId: number; price: number }[];
  }>('searchRentals', `/v1/search/rentals?areas=${manhattan.id}&perPage=2`);
  await record('searchSales', `/v1/search/sales?areas=${manhattan.id}&perPage=2`);
  const listing = rentals.data[0]!;
  const buildingId = listing.buildingId;
  await record('getListing', `/v1/property/${listing.id}`);
  await record('getListingByUrl', `/v1/property/by-url?url=${encodeURIComponent(listing.urlPath)}`);
  await record('getListingHistory', `/v1/property/${listing.id}/history`);
  await record('getListingFees', `/v1/property/${listing.id}/fees`);
  await record('getListingOpenHouses', `/v1/property/${listing.id}/open-houses`);
  await record('getBuilding', `/v1/building/${buildingId}`);
  await record('listBuildingListings', `/v1/building/${buildingId}/listings?perPage=2`);
  await record('getBuildingScores', `/v1/building/${buildingId}/scores`);
  await record('listBuildingViolations', `/v1/building/${buildingId}/violations`);

  // Market.
  await record('getRentalMarketSnapshot', `/v1/market/rentals/snapshot?areaId=${manhattan.id}`);
  await record('getSaleMarketSnapshot', `/v1/market/sales/snapshot?areaId=${manhattan.id}`);
  await record('compareMarkets', `/v1/market/compare?areas=${manhattan.id},${secondArea.id}`);
  await record(
    'getRentalMarketTrends',
    `/v1/market/rentals/trends?areaId=${manhattan.id}&interval=week&from=2026-10-05&to=2026-10-25`,
  );
  await record('getSaleMarketTrends', `/v1/market/sales/trends?areaId=${manhattan.id}&interval=month`);
  await record('getUsage', '/v1/usage');

  // Admin.
  const created = await record<{ data: { id: string } }>('createApiKey', '/v1/admin/keys', {
    method: 'POST',
    key: internal,
    body: { account: 'acme-realty', tier: 'PRO' },
  });
  await record('listApiKeys', '/v1/admin/keys', { key: internal });
  await record('getApiKey', `/v1/admin/keys/${created.data.id}`, { key: internal });
  await record('updateApiKey', `/v1/admin/keys/${created.data.id}`, {
    method: 'PATCH',
    key: internal,
    body: { tier: 'BUSINESS' },
  });
  await record('revokeApiKey', `/v1/admin/keys/${created.data.id}`, { method: 'DELETE', key: internal });

  // Events: one price cut of the listing above, as the refresh pipeline would log it.
  await store.db.transaction().execute(async (trx) => {
    await lockEventLog(trx, store.dialect);
    await appendEvents(
      trx,
      [
        {
          type: 'listing.price_decreased',
          listingId: listing.id,
          buildingId,
          listingType: 'rental',
          areaId: listing.areaId,
          oldValue: listing.price + 250,
          newValue: listing.price,
          occurredAt: NOW.toISOString(),
        },
      ],
      NOW.toISOString(),
    );
  });
  const feed = await record<{ data: { type: string }[] }>('listEvents', '/v1/events?limit=2');
  // A webhook delivery of a listing event is the feed's event (the ListingEvent payload).
  for (const event of feed.data) examples.webhooks[event.type] ??= event;
  await recordStream('streamEvents', '/v1/events/stream?after=0', business);
  await recordStream('streamListing', `/v1/listing/${listing.id}`, business);

  // Webhooks.
  const webhook = await record<{ data: { id: string } }>('createWebhook', '/v1/webhooks', {
    method: 'POST',
    body: {
      url: 'https://hooks.example.com/stoop',
      events: ['listing.price_decreased', 'listing.created'],
      filters: { areas: [manhattan.id], listingType: 'rental' },
    },
  });
  await record('listWebhooks', '/v1/webhooks?perPage=2');
  await record('getWebhook', `/v1/webhooks/${webhook.data.id}`);
  await record('updateWebhook', `/v1/webhooks/${webhook.data.id}`, {
    method: 'PATCH',
    body: { events: ['listing.price_decreased'] },
  });
  await record('rotateWebhookSecret', `/v1/webhooks/${webhook.data.id}/rotate-secret`, { method: 'POST' });
  await record('testWebhook', `/v1/webhooks/${webhook.data.id}/test`, { method: 'POST' });
  // The delivery worker sends the test delivery (to the connector above).
  await ctx.webhookDelivery.drain();
  const deliveries = await record<{ data: { id: string }[] }>(
    'listWebhookDeliveries',
    `/v1/webhooks/${webhook.data.id}/deliveries?perPage=2`,
  );
  const retryPath = `/v1/webhooks/${webhook.data.id}/deliveries/${deliveries.data[0]!.id}/retry`;
  await recordError('CONFLICT', retryPath, { method: 'POST' });
  // Deactivating cancels the pending delivery; a cancelled one can be retried once active again.
  await call(`/v1/webhooks/${webhook.data.id}`, { method: 'PATCH', body: { active: false } });
  await call(`/v1/webhooks/${webhook.data.id}`, { method: 'PATCH', body: { active: true } });
  await record('retryWebhookDelivery', retryPath, { method: 'POST' });

  // Watchers.
  const watcher = await record<{ data: { id: string } }>('createWatcher', '/v1/watchers', {
    method: 'POST',
    body: { watchType: 'listing', listingId: listing.id },
  });
  await record('listWatchers', '/v1/watchers?perPage=2');
  await record('getWatcher', `/v1/watchers/${watcher.data.id}`);
  await record('updateWatcher', `/v1/watchers/${watcher.data.id}`, {
    method: 'PATCH',
    body: { status: 'paused' },
  });
  await recordStream('streamWatcherChanges', `/v1/watchers/${watcher.data.id}/stream`, business);

  // OAuth discovery and registration, the MCP card and one MCP message.
  await record('getOAuthServerMetadata', '/.well-known/oauth-authorization-server', { key: null });
  await record('getOAuthServerMetadataForMcp', '/.well-known/oauth-authorization-server/mcp', { key: null });
  await record('getProtectedResourceMetadata', '/.well-known/oauth-protected-resource', { key: null });
  await record('getMcpProtectedResourceMetadata', '/.well-known/oauth-protected-resource/mcp', { key: null });
  const redirectUri = 'https://app.example.com/oauth/callback';
  const client = await record<{ client_id: string }>('registerOAuthClient', '/oauth/register', {
    method: 'POST',
    key: null,
    body: { client_name: 'Acme listings assistant', redirect_uris: [redirectUri] },
  });
  // Authorization code with PKCE: the consent form posted as a browser would, then the token exchange.
  const verifier = randomBytes(32).toString('base64url');
  const consentPage = await fetch(
    `${base}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: 'demo-state',
    })}`,
  );
  const html = await consentPage.text();
  const fields = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
      m[1]!,
      m[2]!
        .replaceAll('&quot;', '"')
        .replaceAll('&#39;', "'")
        .replaceAll('&lt;', '<')
        .replaceAll('&gt;', '>')
        .replaceAll('&amp;', '&'),
    ]),
  );
  const decided = await fetch(`${base}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: consentPage.headers.get('set-cookie')?.split(';')[0] ?? '',
    },
    body: new URLSearchParams({ ...fields, action: 'approve', api_key: business }),
  });
  const code = new URL(decided.headers.get('location') ?? 'x:').searchParams.get('code');
  if (!code) throw new Error(`the consent step answered ${decided.status} without a code`);
  await record('oauthToken', '/oauth/token', {
    method: 'POST',
    key: null,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: client.client_id,
    }).toString(),
  });
  await record('getMcpServerCard', '/.well-known/mcp/server.json', { key: null });
  await record('mcp', '/mcp', {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  });

  // Errors the live server gives on demand.
  await recordError('INVALID_PARAMS', '/v1/search/rentals?minBeds=many');
  await recordError('INVALID_BODY', '/v1/watchers', { method: 'POST', body: { watchType: 'listing' } });
  await recordError('MISSING_API_KEY', `/v1/property/${listing.id}`, { key: null });
  await recordError('INVALID_API_KEY', '/v1/search/rentals', {
    key: 'STOOP-00000000-0000-4000-8000-000000000000',
  });
  const expiring = await ctx.subscriptions.issue({
    accountId: 'lapsed-co',
    tier: 'STARTER',
    subscriptionEndsAt: new Date(NOW.getTime() + 60_000).toISOString(),
  });
  clock.advance(120_000);
  await recordError('EXPIRED_API_KEY', `/v1/property/${listing.id}`, { key: expiring.key });
  await recordError('TIER_RESTRICTED', `/v1/property/${listing.id}`, { key: free });
  await recordError('NOT_FOUND', '/v1/property/999999999');
  await recordError('METHOD_NOT_ALLOWED', '/mcp', { headers: { accept: 'text/event-stream' } });
  await recordError('NOT_ACCEPTABLE', '/v1/events/stream', { headers: { accept: 'application/json' } });
  await recordError('PAYLOAD_TOO_LARGE', '/v1/watchers', {
    method: 'POST',
    body: JSON.stringify({ watchType: 'search', pad: 'x'.repeat(config.http.bodyLimitBytes) }),
  });
  await recordError('UNSUPPORTED_MEDIA_TYPE', '/v1/watchers', {
    method: 'POST',
    headers: { 'content-type': 'text/csv' },
    body: 'watchType,listingId',
  });
  for (let i = 0; i < 10 && (await call('/v1/areas', { key: null })).status !== 429; i++);
  await recordError('RATE_LIMIT_EXCEEDED', '/v1/areas', { key: null });

  await recordRawError('INVALID_REQUEST', 'GET /v1/health HTTP/1.1\r\nConnection: close\r\n\r\n');
  await recordRawError(
    'HEADERS_TOO_LARGE',
    `GET /v1/health HTTP/1.1\r\nHost: stoop\r\nX-Padding: ${'x'.repeat(20 * 1024)}\r\n\r\n`,
  );

  // Errors no request can cause on demand: the bodies the server builds for them.
  const requestId = '6f1c2a4e-8a3b-4d52-9a57-0c6b1f3e2d90';
  const built: [ErrorCode, string, Record<string, unknown>?][] = [
    [
      'QUOTA_EXCEEDED',
      'Monthly quota of 1000 requests (plus 0 overage) is used up until 2026-12-01T00:00:00.000Z',
      { retryAfter: 2538000 },
    ],
    [
      'REQUEST_TIMEOUT',
      `The request did not arrive in time: headers are due within ${config.http.headersTimeoutMs / 1000} s and the whole request within ${config.http.requestTimeoutMs / 1000} s`,
    ],
    ['INTERNAL_ERROR', 'An internal error occurred; it has been logged with the request id'],
    ['SERVICE_UNAVAILABLE', 'The database is unavailable; retry later', { retryAfter: 5 }],
  ];
  for (const [code, message, details] of built) {
    examples.errors[code] = errorBody(new ApiError(code, message, details), requestId, config.publicUrl);
  }

  for (const [type, payload] of delivered) examples.webhooks[type] ??= payload;

  await app.close();
  await composition.close();
  await store.close();

  // UPSTREAM_ERROR (502) is raised by no route today, so no operation declares it.
  const missingCodes = (Object.keys(ERROR_CODES) as ErrorCode[]).filter(
    (code) => !examples.errors[code] && code !== 'UPSTREAM_ERROR',
  );
  writeFileSync(fileURLToPath(EXAMPLES_FILE), `${JSON.stringify(examples, null, 2)}\n`);
  console.log(
    `wrote ${Object.keys(examples.operations).length} operation examples and ${Object.keys(examples.errors).length} error examples to ${fileURLToPath(EXAMPLES_FILE)}` +
      ` and ${Object.keys(examples.webhooks).length} webhook payloads` +
      (missingCodes.length > 0 ? ` (no example for ${missingCodes.join(', ')})` : ''),
  );
}

await main();
