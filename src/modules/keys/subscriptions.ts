import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Tier } from '../../domain/tiers.ts';
import type { Clock } from '../../platform/clock.ts';
import type { ApiKeyRow, Database } from '../../platform/db/tables.ts';
import { apiKeyHint, generateApiKey, hashApiKey, looksLikeApiKey } from './api-key.ts';
import {
  ensureAccount,
  findKeyByHash,
  findKeyById,
  insertKey,
  listKeys,
  updateKey,
} from './keys.repository.ts';
import { subscriptionEnded } from './keys.service.ts';

export type KeyStatus = ApiKeyRow['status'];

/** An API key as operators see it: never the key itself. */
export interface ApiKeyRecord {
  id: string;
  accountId: string;
  hint: string;
  tier: Tier;
  status: KeyStatus;
  subscriptionEndsAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A freshly issued key: the only time the key is ever returned. */
export interface IssuedKey extends ApiKeyRecord {
  key: string;
}

export type KeyCheck =
  | { ok: true; record: ApiKeyRecord }
  | { ok: false; reason: 'INVALID_API_KEY' | 'EXPIRED_API_KEY' };

export interface IssueKeyInput {
  accountId: string;
  tier: Tier;
  subscriptionEndsAt?: string | null;
  /** The billing provider's subscription id, when one provisioned the key. */
  externalRef?: string | null;
}

/**
 * Where keys and their subscriptions live. The built-in provider is the local
 * database (driven by the CLI and the admin API); a billing integration would
 * implement the same interface, or call `issue`/`setTier`/`setStatus` from its
 * subscription webhooks.
 *
 * Contract: `check` reads the store every time; the server wraps it in a
 * CachingSubscriptionProvider (./key-cache.ts), so a change takes effect at
 * once on the process that made it and within `API_KEY_CACHE_MS` elsewhere.
 */
export interface SubscriptionProvider {
  check(key: string, now: Date): Promise<KeyCheck>;
  /**
   * The same judgement for a key known by id (an OAuth refresh re-validates the
   * key behind its grant, which never holds the key itself).
   */
  checkById(id: string, now: Date): Promise<KeyCheck>;
  issue(input: IssueKeyInput): Promise<IssuedKey>;
  list(accountId?: string): Promise<ApiKeyRecord[]>;
  /** By id, or by the key itself. */
  find(keyOrId: string): Promise<ApiKeyRecord | undefined>;
  setTier(id: string, tier: Tier): Promise<ApiKeyRecord | undefined>;
  setStatus(id: string, status: KeyStatus): Promise<ApiKeyRecord | undefined>;
  setSubscriptionEnd(id: string, endsAt: string | null): Promise<ApiKeyRecord | undefined>;
}

/** Expiry is compared as ISO text, so every stored instant must be UTC (`…Z`). */
function toUtc(at: string | null): string | null {
  if (at === null) return null;
  const ms = Date.parse(at);
  if (Number.isNaN(ms)) throw new RangeError(`Not a valid date-time: ${at}`);
  return new Date(ms).toISOString();
}

/** Whether a key (as read, or absent) admits a request at `now`: only an active key whose subscription has not ended. */
export function judgeKey(record: ApiKeyRecord | undefined, now: Date): KeyCheck {
  if (record?.status !== 'active') return { ok: false, reason: 'INVALID_API_KEY' };
  if (subscriptionEnded(record.subscriptionEndsAt, now)) return { ok: false, reason: 'EXPIRED_API_KEY' };
  return { ok: true, record };
}

export function toApiKeyRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    hint: row.key_hint,
    tier: row.tier,
    status: row.status,
    subscriptionEndsAt: row.subscription_ends_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export class LocalSubscriptionProvider implements SubscriptionProvider {
  constructor(
    private readonly db: Kysely<Database>,
    /** The wall clock: creation and change times (expiry is checked against the caller's `now`). */
    private readonly wallClock: Clock,
    private readonly keyPrefix: string,
  ) {}

  async check(key: string, now: Date): Promise<KeyCheck> {
    if (!looksLikeApiKey(key, this.keyPrefix)) return { ok: false, reason: 'INVALID_API_KEY' };
    const row = await findKeyByHash(this.db, hashApiKey(key));
    return judgeKey(row && toApiKeyRecord(row), now);
  }

  async checkById(id: string, now: Date): Promise<KeyCheck> {
    const row = await findKeyById(this.db, id);
    return judgeKey(row && toApiKeyRecord(row), now);
  }

  async issue(input: IssueKeyInput): Promise<IssuedKey> {
    const now = this.wallClock.now().toISOString();
    const key = generateApiKey(this.keyPrefix);
    const row: ApiKeyRow = {
      id: randomUUID(),
      account_id: input.accountId,
      key_hash: hashApiKey(key),
      key_hint: apiKeyHint(key),
      tier: input.tier,
      status: 'active',
      subscription_ends_at: toUtc(input.subscriptionEndsAt ?? null),
      external_ref: input.externalRef ?? null,
      created_at: now,
      updated_at: now,
    };
    await this.db.transaction().execute(async (trx) => {
      await ensureAccount(trx, input.accountId, now);
      await insertKey(trx, row);
    });
    return { ...toApiKeyRecord(row), key };
  }

  async list(accountId?: string): Promise<ApiKeyRecord[]> {
    return (await listKeys(this.db, accountId)).map(toApiKeyRecord);
  }

  async find(keyOrId: string): Promise<ApiKeyRecord | undefined> {
    const row = looksLikeApiKey(keyOrId, this.keyPrefix)
      ? await findKeyByHash(this.db, hashApiKey(keyOrId))
      : await findKeyById(this.db, keyOrId);
    return row ? toApiKeyRecord(row) : undefined;
  }

  setTier(id: string, tier: Tier): Promise<ApiKeyRecord | undefined> {
    return this.update(id, { tier });
  }

  setStatus(id: string, status: KeyStatus): Promise<ApiKeyRecord | undefined> {
    return this.update(id, { status });
  }

  setSubscriptionEnd(id: string, endsAt: string | null): Promise<ApiKeyRecord | undefined> {
    return this.update(id, { subscription_ends_at: toUtc(endsAt) });
  }

  private async update(
    id: string,
    changes: { tier?: Tier; status?: KeyStatus; subscription_ends_at?: string | null },
  ): Promise<ApiKeyRecord | undefined> {
    // Revocation is final: nothing but another revocation may touch a revoked key,
    // enforced in the UPDATE itself so a concurrent enable cannot undo it.
    const row = await updateKey(
      this.db,
      id,
      { ...changes, updated_at: this.wallClock.now().toISOString() },
      { unlessRevoked: changes.status !== 'revoked' },
    );
    return row ? toApiKeyRecord(row) : undefined;
  }
}
