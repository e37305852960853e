import type { Tier } from '../../domain/tiers.ts';
import { hashApiKey } from './api-key.ts';
import {
  type ApiKeyRecord,
  type IssuedKey,
  type IssueKeyInput,
  judgeKey,
  type KeyCheck,
  type KeyStatus,
  type SubscriptionProvider,
} from './subscriptions.ts';

/** Keys remembered at most: an account's keys are few; this bounds what a flood of valid keys can pin. */
const DEFAULT_CAPACITY = 10_000;

interface Remembered {
  record: ApiKeyRecord;
  /** Wall-clock ms after which the key is read again. */
  until: number;
}

/**
 * A subscription provider that reuses what it read for a short time. Reading
 * the key on every request was the single largest cost of an authenticated
 * request (a store round trip through the query builder, ~18% of a search's
 * throughput), for an answer that changes a few times in a key's life.
 *
 * Contract (see `API_KEY_CACHE_MS`):
 * - A change made through this provider (revoke, disable, re-tier, new end)
 *   takes effect on the very next request of this process: the key is
 *   forgotten before the change is answered.
 * - A change made elsewhere (another node, the CLI) takes effect within
 *   `ttlMs`: no record is served older than that.
 * - Expiry is judged on every request against the record, never cached as a
 *   verdict, so a subscription ends at its instant exactly.
 * - Only active keys are remembered, by their hash (the cache holds no key):
 *   an unknown, revoked, disabled or ended key is read every time, so a key
 *   issued or re-enabled elsewhere works on its first request.
 * - Concurrent first requests with one key share one read.
 */
export class CachingSubscriptionProvider implements SubscriptionProvider {
  private readonly byHash = new Map<string, Remembered>();
  private readonly reading = new Map<string, Promise<KeyCheck>>();
  /** Bumped by every change through this provider: a read begun before it is not remembered. */
  private generation = 0;

  constructor(
    private readonly inner: SubscriptionProvider,
    private readonly ttlMs: number,
    private readonly capacity = DEFAULT_CAPACITY,
  ) {}

  async check(key: string, now: Date): Promise<KeyCheck> {
    if (this.ttlMs <= 0) return this.inner.check(key, now);
    const hash = hashApiKey(key);
    const remembered = this.byHash.get(hash);
    if (remembered && now.getTime() < remembered.until) return judgeKey(remembered.record, now);
    return this.read(key, hash, now);
  }

  checkById(id: string, now: Date): Promise<KeyCheck> {
    return this.inner.checkById(id, now);
  }

  issue(input: IssueKeyInput): Promise<IssuedKey> {
    return this.inner.issue(input);
  }

  list(accountId?: string): Promise<ApiKeyRecord[]> {
    return this.inner.list(accountId);
  }

  find(keyOrId: string): Promise<ApiKeyRecord | undefined> {
    return this.inner.find(keyOrId);
  }

  setTier(id: string, tier: Tier): Promise<ApiKeyRecord | undefined> {
    return this.changing(id, () => this.inner.setTier(id, tier));
  }

  setStatus(id: string, status: KeyStatus): Promise<ApiKeyRecord | undefined> {
    return this.changing(id, () => this.inner.setStatus(id, status));
  }

  setSubscriptionEnd(id: string, endsAt: string | null): Promise<ApiKeyRecord | undefined> {
    return this.changing(id, () => this.inner.setSubscriptionEnd(id, endsAt));
  }

  /** Keys remembered now (for tests and health figures). */
  get size(): number {
    return this.byHash.size;
  }

  private read(key: string, hash: string, now: Date): Promise<KeyCheck> {
    const pending = this.reading.get(hash);
    if (pending) return pending;
    const generation = this.generation;
    const read = this.inner
      .check(key, now)
      .then((check) => {
        // A change through this provider while the read was out may have come after it.
        if (check.ok && generation === this.generation) this.remember(hash, check.record, now.getTime());
        return check;
      })
      .finally(() => this.reading.delete(hash));
    this.reading.set(hash, read);
    return read;
  }

  private remember(hash: string, record: ApiKeyRecord, nowMs: number): void {
    this.byHash.delete(hash);
    if (this.byHash.size >= this.capacity) this.byHash.delete(this.byHash.keys().next().value!);
    this.byHash.set(hash, { record, until: nowMs + this.ttlMs });
  }

  /** Forgets the key before and after the change, so no request after the answer sees the old record. */
  private async changing(
    id: string,
    change: () => Promise<ApiKeyRecord | undefined>,
  ): Promise<ApiKeyRecord | undefined> {
    this.forget(id);
    try {
      return await change();
    } finally {
      this.forget(id);
    }
  }

  private forget(id: string): void {
    this.generation++;
    for (const [hash, remembered] of this.byHash) if (remembered.record.id === id) this.byHash.delete(hash);
  }
}
