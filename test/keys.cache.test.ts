import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tier } from '../src/domain/tiers.ts';
import { hashApiKey } from '../src/modules/keys/api-key.ts';
import { CachingSubscriptionProvider } from '../src/modules/keys/key-cache.ts';
import {
  type ApiKeyRecord,
  type IssuedKey,
  type IssueKeyInput,
  judgeKey,
  type KeyCheck,
  type KeyStatus,
  LocalSubscriptionProvider,
  type SubscriptionProvider,
} from '../src/modules/keys/subscriptions.ts';
import { createTestApp, type TestApp } from './support/app.ts';

const NOW = new Date('2026-11-01T15:00:00.000Z');
const at = (ms: number) => new Date(NOW.getTime() + ms);
const TTL = 1_000;

/** Keys in a map, counting the reads the cache lets through; a read can be held open to race a change. */
class CountingProvider implements SubscriptionProvider {
  readonly records = new Map<string, ApiKeyRecord>();
  checks = 0;
  hold: Promise<void> | null = null;

  add(key: string, changes: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
    const record: ApiKeyRecord = {
      id: `id-${this.records.size + 1}`,
      accountId: 'acme',
      hint: 'STOOP-…',
      tier: 'PRO',
      status: 'active',
      subscriptionEndsAt: null,
      createdAt: NOW.toISOString(),
      updatedAt: NOW.toISOString(),
      ...changes,
    };
    this.records.set(hashApiKey(key), record);
    return record;
  }

  async check(key: string, now: Date): Promise<KeyCheck> {
    this.checks++;
    const stored = this.records.get(hashApiKey(key));
    const read = stored && { ...stored };
    if (this.hold) await this.hold;
    return judgeKey(read, now);
  }
  checkById(id: string, now: Date): Promise<KeyCheck> {
    return Promise.resolve(
      judgeKey(
        [...this.records.values()].find((r) => r.id === id),
        now,
      ),
    );
  }
  issue(_input: IssueKeyInput): Promise<IssuedKey> {
    throw new Error('not used');
  }
  list(): Promise<ApiKeyRecord[]> {
    return Promise.resolve([...this.records.values()]);
  }
  find(): Promise<ApiKeyRecord | undefined> {
    return Promise.resolve(undefined);
  }
  setTier(id: string, tier: Tier) {
    return this.update(id, { tier });
  }
  setStatus(id: string, status: KeyStatus) {
    return this.update(id, { status });
  }
  setSubscriptionEnd(id: string, subscriptionEndsAt: string | null) {
    return this.update(id, { subscriptionEndsAt });
  }
  private update(id: string, changes: Partial<ApiKeyRecord>): Promise<ApiKeyRecord | undefined> {
    const record = [...this.records.values()].find((r) => r.id === id);
    if (record) Object.assign(record, changes);
    return Promise.resolve(record && { ...record });
  }
}

const KEY = 'STOOP-0b8e5a3c-2f51-4c59-9d0e-6a1c7b2d4e5f';
const OTHER = 'STOOP-7d2f1e0a-9c4b-4b8a-8e1f-3a5c6d7e8f90';

describe('CachingSubscriptionProvider', () => {
  it('reads an active key once per TTL, and again after it', async () => {
    const inner = new CountingProvider();
    inner.add(KEY);
    const cache = new CachingSubscriptionProvider(inner, TTL);
    for (let i = 0; i < 50; i++) expect((await cache.check(KEY, at(i * 10))).ok).toBe(true);
    expect(inner.checks).toBe(1);
    await cache.check(KEY, at(TTL));
    expect(inner.checks).toBe(2);
  });

  it('a change through it takes effect on the next check', async () => {
    const inner = new CountingProvider();
    const { id } = inner.add(KEY);
    const cache = new CachingSubscriptionProvider(inner, TTL);
    expect((await cache.check(KEY, NOW)).ok).toBe(true);
    await cache.setStatus(id, 'revoked');
    expect(await cache.check(KEY, NOW)).toEqual({ ok: false, reason: 'INVALID_API_KEY' });

    const tiered = inner.add(OTHER, { tier: 'STARTER' });
    expect(await cache.check(OTHER, NOW)).toMatchObject({ ok: true, record: { tier: 'STARTER' } });
    await cache.setTier(tiered.id, 'BUSINESS');
    expect(await cache.check(OTHER, NOW)).toMatchObject({ ok: true, record: { tier: 'BUSINESS' } });
  });

  it('a change made elsewhere takes effect within the TTL, never later', async () => {
    const inner = new CountingProvider();
    const record = inner.add(KEY);
    const cache = new CachingSubscriptionProvider(inner, TTL);
    expect((await cache.check(KEY, NOW)).ok).toBe(true);
    record.status = 'disabled'; // as the CLI or another node would, past this process
    expect((await cache.check(KEY, at(TTL - 1))).ok).toBe(true);
    expect(await cache.check(KEY, at(TTL))).toEqual({ ok: false, reason: 'INVALID_API_KEY' });
  });

  it('judges a subscription end on every check, not once per read', async () => {
    const inner = new CountingProvider();
    inner.add(KEY, { subscriptionEndsAt: at(300).toISOString() });
    const cache = new CachingSubscriptionProvider(inner, 60_000);
    expect((await cache.check(KEY, at(299))).ok).toBe(true);
    expect(await cache.check(KEY, at(300))).toEqual({ ok: false, reason: 'EXPIRED_API_KEY' });
    expect(inner.checks).toBe(1);
  });

  it('remembers no unknown or inactive key: one issued or re-enabled elsewhere works at once', async () => {
    const inner = new CountingProvider();
    const cache = new CachingSubscriptionProvider(inner, 60_000);
    expect((await cache.check(KEY, NOW)).ok).toBe(false);
    const record = inner.add(KEY, { status: 'disabled' });
    expect((await cache.check(KEY, NOW)).ok).toBe(false);
    record.status = 'active';
    expect((await cache.check(KEY, NOW)).ok).toBe(true);
    expect(cache.size).toBe(1);
  });

  it('concurrent first checks share one read', async () => {
    const inner = new CountingProvider();
    inner.add(KEY);
    const cache = new CachingSubscriptionProvider(inner, TTL);
    const results = await Promise.all(Array.from({ length: 20 }, () => cache.check(KEY, NOW)));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(inner.checks).toBe(1);
  });

  it('does not remember a read that a change through it overtook', async () => {
    const inner = new CountingProvider();
    const { id } = inner.add(KEY);
    const cache = new CachingSubscriptionProvider(inner, 60_000);
    let release!: () => void;
    inner.hold = new Promise((resolve) => {
      release = resolve;
    });
    const stale = cache.check(KEY, NOW); // reads the record while it is still active
    await Promise.resolve();
    const revoked = cache.setStatus(id, 'revoked');
    release();
    inner.hold = null;
    expect((await stale).ok).toBe(true); // answered before the revocation was
    await revoked;
    expect(await cache.check(KEY, NOW)).toEqual({ ok: false, reason: 'INVALID_API_KEY' });
  });

  it('holds at most its capacity, and keys by hash only', async () => {
    const inner = new CountingProvider();
    const keys = Array.from({ length: 5 }, (_, i) => `STOOP-0b8e5a3c-2f51-4c59-9d0e-6a1c7b2d4e5${i}`);
    for (const key of keys) inner.add(key);
    const cache = new CachingSubscriptionProvider(inner, TTL, 3);
    for (const key of keys) await cache.check(key, NOW);
    expect(cache.size).toBe(3);
    const internals = JSON.stringify([...(cache as unknown as { byHash: Map<string, unknown> }).byHash]);
    for (const key of keys) expect(internals).not.toContain(key.slice(6));
  });

  it('with a TTL of 0 reads on every check', async () => {
    const inner = new CountingProvider();
    inner.add(KEY);
    const cache = new CachingSubscriptionProvider(inner, 0);
    for (let i = 0; i < 5; i++) await cache.check(KEY, NOW);
    expect(inner.checks).toBe(5);
    expect(cache.size).toBe(0);
  });
});

describe('API keys over HTTP, with the key cache (default API_KEY_CACHE_MS)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ scale: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('revoking through the admin API refuses the very next request', async () => {
    const issued = await t.ctx.subscriptions.issue({ accountId: 'acme', tier: 'PRO' });
    expect((await t.getAs(issued.key, '/v1/areas')).status).toBe(200);
    const revoke = await t.get(`/v1/admin/keys/${issued.id}`, { method: 'DELETE' });
    expect(revoke.status).toBe(200);
    const after = await t.getAs(issued.key, '/v1/areas');
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { code: string } }).error.code).toBe('INVALID_API_KEY');
  });

  it('revoking from another process (the CLI) takes effect within API_KEY_CACHE_MS of the wall clock', async () => {
    expect(t.config.apiKeyCacheMs).toBe(1_000);
    const issued = await t.ctx.subscriptions.issue({ accountId: 'acme', tier: 'PRO' });
    expect((await t.getAs(issued.key, '/v1/areas')).status).toBe(200);
    // Another provider over the same store, as `stoop keys revoke` opens it.
    await new LocalSubscriptionProvider(t.store.db, t.clock, 'STOOP').setStatus(issued.id, 'revoked');
    expect((await t.getAs(issued.key, '/v1/areas')).status).toBe(200);
    t.clock.advance(1_000);
    expect((await t.getAs(issued.key, '/v1/areas')).status).toBe(401);
  });
});
