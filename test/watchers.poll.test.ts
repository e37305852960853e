import { EventSource } from 'eventsource';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TIERS } from '../src/domain/tiers.ts';
import { quotaPeriod } from '../src/http/access.ts';
import { Refresher } from '../src/jobs/refresh/refresher.ts';
import { WatcherPoller } from '../src/jobs/watchers/watcher-poller.ts';
import { accountBucket } from '../src/modules/keys/api-key-resolver.ts';
import { WatcherStreams } from '../src/modules/watchers/watcher-streams.ts';
import { WatcherTargets } from '../src/modules/watchers/watcher-targets.ts';
import type { WatcherChange, WatcherView } from '../src/modules/watchers/watchers.schema.ts';
import { type RecordedWatcherChange, WatchersService } from '../src/modules/watchers/watchers.service.ts';
import type { ListingRow } from '../src/platform/db/tables.ts';
import { UpstreamError, type UpstreamListing } from '../src/upstream/source.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { ListingOnlySource } from './support/upstream.ts';
import { startReceiver } from './support/webhook-receiver.ts';

/**
 * An upstream at the edge of the test: it answers a listing fetch with the
 * stored listing at the price the test set (a newer modification time), or
 * fails on demand.
 */
class PricedSource extends ListingOnlySource {
  readonly name = 'priced';
  fail = false;
  fetches = 0;
  readonly prices = new Map<string, number>();

  constructor(private readonly stored: (id: string) => Promise<ListingRow | undefined>) {
    super();
  }

  async fetchListing(id: string): Promise<UpstreamListing> {
    this.fetches++;
    if (this.fail) throw new UpstreamError('unavailable', 'upstream answered 503', 503);
    const row = await this.stored(id);
    if (!row) throw new UpstreamError('not_found', `no listing ${id}`, 404);
    const {
      price_delta: _d,
      rank_score: _r,
      refreshed_at: _f,
      revision: _v,
      created_at,
      updated_at,
      ...listing
    } = row;
    const price = this.prices.get(id);
    if (price === undefined || price === row.price) {
      return { listing, modifiedAt: updated_at, createdAt: created_at };
    }
    return {
      listing: { ...listing, price },
      modifiedAt: new Date(Date.parse(updated_at) + 60_000).toISOString(),
      createdAt: created_at,
    };
  }
}

const LIMITS: Record<string, string> = {
  UPSTREAM_LIVE_TIMEOUT_MS: '10000',
  // The webhook receiver of the watcher.change test listens on loopback.
  WEBHOOK_ALLOW_HTTP: '1',
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
};
for (const tier of TIERS) {
  LIMITS[`RATE_LIMIT_${tier}`] = '1000000';
  LIMITS[`MONTHLY_QUOTA_${tier}`] = '1000000';
}
// Business accounts get a small quota, so exhausting it takes a few polls.
LIMITS.MONTHLY_QUOTA_BUSINESS = '6';
LIMITS.OVERAGE_LIMIT_BUSINESS = '2';

let t: TestApp;
let source: PricedSource;
let listings: ListingRow[];
beforeAll(async () => {
  source = new PricedSource((id) =>
    t.store.db.selectFrom('listings').selectAll().where('id', '=', id).executeTakeFirst(),
  );
  t = await createTestApp({
    scale: 0.005,
    env: LIMITS,
    refresher: (parts) => new Refresher({ ...parts, source }),
  });
  listings = await t.store.db
    .selectFrom('listings')
    .selectAll()
    .where('status', '=', 'ACTIVE')
    .orderBy('id')
    .limit(20)
    .execute();
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => {
  source.fail = false;
  source.fetches = 0;
});

async function send(key: string, method: string, path: string, body?: unknown) {
  const response = await t.getAs(key, path, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as { data: WatcherView } };
}

async function pollAfter(seconds: number) {
  t.clock.advance(seconds * 1000);
  return t.ctx.watcherPoller.pollDue();
}

function used(account: string): Promise<number> {
  return t.ctx.limits.quota.used(accountBucket(account), quotaPeriod(t.clock.now()).id);
}

describe('listing polls through the live path', () => {
  it('fetches the listing from upstream at each poll and records what upstream changed', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'p-live', tier: 'INTERNAL' })).key;
    const target = listings[0]!;
    const { body } = await send(key, 'POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: target.id,
      pollInterval: 60,
    });
    const id = body.data.id;
    await pollAfter(61);
    expect(source.fetches).toBe(1);
    expect((await t.ctx.watchers.get('p-live', id)).lastSequence).toBe(0);
    source.prices.set(target.id, target.price + 500);
    await pollAfter(61);
    expect(source.fetches).toBe(2);
    const rows = await t.store.db
      .selectFrom('watcher_changes')
      .selectAll()
      .where('watcher_id', '=', id)
      .execute();
    expect(rows).toHaveLength(1);
    const change = JSON.parse(rows[0]!.payload) as WatcherChange;
    expect(change.data.changes).toContainEqual({
      kind: 'changed',
      field: 'price',
      listingId: null,
      oldValue: target.price,
      newValue: target.price + 500,
    });
    // The live fetch stored the listing too (with its own change events).
    const stored = await t.store.db
      .selectFrom('listings')
      .select('price')
      .where('id', '=', target.id)
      .executeTakeFirstOrThrow();
    expect(stored.price).toBe(target.price + 500);
  });

  it('tells the stream when the live fetch fails, records nothing, and keeps polling', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'p-fail', tier: 'INTERNAL' })).key;
    const target = listings[1]!;
    const { body } = await send(key, 'POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: target.id,
      pollInterval: 60,
    });
    const id = body.data.id;
    const errors: string[] = [];
    let connected = false;
    const es = new EventSource(`${t.url}/v1/watchers/${id}/stream`, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${key}` },
        }),
    });
    es.addEventListener('connected', () => {
      connected = true;
    });
    es.addEventListener('error', (event) => {
      if ('data' in event) errors.push(String(event.data));
    });
    try {
      await until(() => connected);
      source.fail = true;
      await pollAfter(61);
      await until(() => errors.length > 0);
      expect(JSON.parse(errors[0]!)).toMatchObject({ code: 'fetch_failed' });
      expect((await t.ctx.watchers.get('p-fail', id)).status).toBe('active');
      source.fail = false;
      source.prices.set(target.id, target.price + 1);
      expect((await pollAfter(61)).changed).toBeGreaterThanOrEqual(1);
      expect((await t.ctx.watchers.get('p-fail', id)).lastSequence).toBe(1);
    } finally {
      es.close();
    }
  });
});

async function until(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('watcher changes on webhooks', () => {
  it('delivers each recorded change to the owner’s watcher.change subscriptions, signed, and to nobody else', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'p-hook', tier: 'INTERNAL' })).key;
    const other = (await t.ctx.subscriptions.issue({ accountId: 'p-hook-other', tier: 'INTERNAL' })).key;
    const rx = await startReceiver(t.clock);
    const subscribe = async (as: string, events: string[]) => {
      const created = await send(as, 'POST', '/v1/webhooks', { url: rx.url, events });
      expect(created.status).toBe(200);
      const data = created.body.data as unknown as { secret: string };
      rx.secrets.push(data.secret);
    };
    try {
      await subscribe(key, ['watcher.change']);
      // Same account, listing events only; another account asking for watcher.change: neither gets it.
      await subscribe(key, ['listing.price_increased']);
      await subscribe(other, ['watcher.change']);
      const target = listings[4]!;
      const { body } = await send(key, 'POST', '/v1/watchers', {
        watchType: 'listing',
        listingId: target.id,
        pollInterval: 60,
      });
      source.prices.set(target.id, target.price + 250);
      await pollAfter(61);
      await t.ctx.webhookDelivery.drain();
      const changes = rx.received.filter((r) => r.headers['webhook-id']?.startsWith(body.data.id));
      expect(changes).toHaveLength(1);
      expect(changes[0]!.verifiedWith).toBe(0);
      const payload = changes[0]!.verified as WatcherChange;
      expect(payload.type).toBe('watcher.change');
      expect(payload.data.watcherId).toBe(body.data.id);
      expect(payload.data.changes).toContainEqual(
        expect.objectContaining({ field: 'price', oldValue: target.price, newValue: target.price + 250 }),
      );
      // No new change, nothing more to deliver.
      await pollAfter(61);
      await t.ctx.webhookDelivery.drain();
      expect(rx.received.filter((r) => r.headers['webhook-id']?.startsWith(body.data.id))).toHaveLength(1);
    } finally {
      await rx.close();
    }
  });
});

describe('metering', () => {
  it('counts each poll against the owner’s quota and pauses the watcher once quota and overage are used up', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'p-quota', tier: 'BUSINESS' })).key;
    const { body } = await send(key, 'POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: listings[2]!.id,
      pollInterval: 300,
    });
    const id = body.data.id;
    expect(await used('p-quota')).toBe(1);
    // Quota 6 + overage 2: the creation and seven polls fit, the eighth poll does not.
    for (let poll = 1; poll <= 7; poll++) {
      await pollAfter(301);
      expect(await used('p-quota')).toBe(1 + poll);
      expect((await t.ctx.watchers.get('p-quota', id)).status).toBe('active');
    }
    const outcome = await pollAfter(301);
    expect(outcome.paused).toBe(1);
    const paused = await t.ctx.watchers.get('p-quota', id);
    expect(paused).toMatchObject({ status: 'paused', pausedReason: 'quota_exceeded' });
    expect(await used('p-quota')).toBe(8);
    // Paused: no more polls, nothing more counted.
    await pollAfter(301);
    expect(await used('p-quota')).toBe(8);
    // Polls show in the account's usage like requests.
    const usage = await t.getAs(key, '/v1/usage');
    expect(((await usage.json()) as { data: { used: number } }).data.used).toBe(8);
  });

  it('pauses the watchers of an account left without a Business or Internal key', async () => {
    const issued = await t.ctx.subscriptions.issue({ accountId: 'p-tier', tier: 'BUSINESS' });
    const { body } = await send(issued.key, 'POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: listings[3]!.id,
      pollInterval: 300,
    });
    await t.ctx.subscriptions.setTier(issued.id, 'PRO');
    await pollAfter(301);
    expect(await t.ctx.watchers.get('p-tier', body.data.id)).toMatchObject({
      status: 'paused',
      pausedReason: 'tier_restricted',
    });
  });
});

describe('several pollers over one store', () => {
  it('polls each watcher once per interval however many pollers run', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'p-multi', tier: 'INTERNAL' })).key;
    const ids: string[] = [];
    for (const target of listings.slice(5, 15)) {
      const { body } = await send(key, 'POST', '/v1/watchers', {
        watchType: 'listing',
        listingId: target.id,
        pollInterval: 60,
      });
      ids.push(body.data.id);
    }
    // Other watchers of earlier tests are due too: pause them so the counts are this test's own.
    await t.store.db.updateTable('watchers').set({ status: 'paused' }).where('id', 'not in', ids).execute();
    const pollers = [1, 2, 3].map(
      () =>
        new WatcherPoller({
          db: t.store.db,
          wallClock: t.clock,
          watchers: t.ctx.watchers,
          targets: new WatcherTargets({
            db: t.store.db,
            refresher: t.ctx.refresher,
            building: () => t.ctx.building,
            search: t.ctx.search,
            liveTimeoutMs: 10_000,
          }),
          quota: t.ctx.limits.quota,
          tierLimits: t.config.tierLimits,
          log: { warn: () => {}, error: () => {} },
        }),
    );
    const before = await used('p-multi');
    for (let interval = 1; interval <= 3; interval++) {
      t.clock.advance(61_000);
      const outcomes = await Promise.all([...pollers, t.ctx.watcherPoller].map((p) => p.pollDue()));
      expect(
        outcomes.reduce((sum, o) => sum + o.polled, 0),
        `interval ${interval}`,
      ).toBe(ids.length);
      expect(await used('p-multi')).toBe(before + interval * ids.length);
    }
    expect(source.fetches).toBe(3 * ids.length);
  });
});

describe('the change sink', () => {
  function targets() {
    return new WatcherTargets({
      db: t.store.db,
      refresher: t.ctx.refresher,
      building: () => t.ctx.building,
      search: t.ctx.search,
      liveTimeoutMs: 10_000,
    });
  }

  it('is given each change inside the recording transaction, then after commit; a failing record is retried by the next poll', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'p-sink', tier: 'INTERNAL' })).key;
    const target = listings[16]!;
    const { body } = await send(key, 'POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: target.id,
      pollInterval: 60,
    });
    const id = body.data.id;
    await t.store.db.updateTable('watchers').set({ status: 'paused' }).where('id', '!=', id).execute();
    let failRecord = true;
    const recorded: RecordedWatcherChange[] = [];
    const notified: RecordedWatcherChange[] = [];
    const watchers = new WatchersService({
      db: t.store.db,
      wallClock: t.clock,
      targets: targets(),
      search: t.ctx.search,
      streams: new WatcherStreams(),
      sink: {
        record: async (change, trx) => {
          // The change row is visible in the transaction the sink writes in.
          const row = await trx
            .selectFrom('watcher_changes')
            .select('sequence')
            .where('watcher_id', '=', change.payload.data.watcherId)
            .where('sequence', '=', change.payload.data.sequence)
            .executeTakeFirst();
          expect(row).toBeDefined();
          if (failRecord) throw new Error('outbox unavailable');
          recorded.push(change);
        },
        watcherChanged: async (change) => {
          notified.push(change);
        },
      },
    });
    const poller = new WatcherPoller({
      db: t.store.db,
      wallClock: t.clock,
      watchers,
      targets: targets(),
      quota: t.ctx.limits.quota,
      tierLimits: t.config.tierLimits,
      log: { warn: () => {}, error: () => {} },
    });
    source.prices.set(target.id, target.price + 7);
    t.clock.advance(61_000);
    await poller.pollDue();
    // Rolled back: no change row, no notification, the baseline left as it was.
    expect(
      await t.store.db
        .selectFrom('watcher_changes')
        .select('sequence')
        .where('watcher_id', '=', id)
        .execute(),
    ).toEqual([]);
    expect(notified).toEqual([]);
    expect((await watchers.get('p-sink', id)).lastSequence).toBe(0);
    failRecord = false;
    t.clock.advance(61_000);
    await poller.pollDue();
    expect(recorded.map((c) => c.payload.id)).toEqual([`${id}:1`]);
    expect(notified).toEqual(recorded);
    expect(recorded[0]).toMatchObject({ accountId: 'p-sink', payload: { type: 'watcher.change' } });
    expect(recorded[0]!.payload.data.changes).toContainEqual(
      expect.objectContaining({ field: 'price', oldValue: target.price, newValue: target.price + 7 }),
    );
  });
});

describe('the poller’s own schedule', () => {
  it('polls due watchers by itself once started, and not after it stopped', async () => {
    const key = (await t.ctx.subscriptions.issue({ accountId: 'p-timer', tier: 'INTERNAL' })).key;
    const target = listings[17]!;
    const { body } = await send(key, 'POST', '/v1/watchers', {
      watchType: 'listing',
      listingId: target.id,
      pollInterval: 60,
    });
    const id = body.data.id;
    await t.store.db.updateTable('watchers').set({ status: 'paused' }).where('id', '!=', id).execute();
    const poller = new WatcherPoller({
      db: t.store.db,
      wallClock: t.clock,
      watchers: t.ctx.watchers,
      targets: new WatcherTargets({
        db: t.store.db,
        refresher: t.ctx.refresher,
        building: () => t.ctx.building,
        search: t.ctx.search,
        liveTimeoutMs: 10_000,
      }),
      quota: t.ctx.limits.quota,
      tierLimits: t.config.tierLimits,
      log: { warn: () => {}, error: () => {} },
      tickMs: 5,
    });
    poller.start();
    try {
      source.prices.set(target.id, target.price + 3);
      t.clock.advance(61_000);
      // Recorded by the poller's own timer: no pollDue() here.
      const deadline = Date.now() + 10_000;
      while ((await t.ctx.watchers.get('p-timer', id)).lastSequence < 1) {
        if (Date.now() > deadline) throw new Error('the started poller did not poll');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(source.fetches).toBe(1);
    } finally {
      await poller.stop();
    }
    t.clock.advance(61_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(source.fetches).toBe(1);
  });
});
