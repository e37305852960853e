import { describe, expect, it } from 'vitest';
import type { Tier } from '../src/domain/tiers.ts';
import {
  changeApiKey,
  keyChangeRefusalMessage,
  revokeApiKey,
  subscriptionEnded,
  validateKeyChange,
} from '../src/modules/keys/keys.service.ts';
import type {
  ApiKeyRecord,
  IssuedKey,
  KeyCheck,
  KeyStatus,
  SubscriptionProvider,
} from '../src/modules/keys/subscriptions.ts';

const KEY: ApiKeyRecord = {
  id: '6f1c6a8e-5b0d-4c2e-9a57-3d8e1b7c9f3a',
  accountId: 'acme',
  hint: 'STOOP-…9f3a',
  tier: 'PRO',
  status: 'active',
  subscriptionEndsAt: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

/** An in-memory provider that records the order of its writes; `vanish` deletes the key mid-change. */
class RecordingProvider implements SubscriptionProvider {
  readonly calls: string[] = [];
  vanish = false;
  constructor(private record: ApiKeyRecord | undefined) {}

  check(): Promise<KeyCheck> {
    throw new Error('not used');
  }
  checkById(): Promise<KeyCheck> {
    throw new Error('not used');
  }
  issue(): Promise<IssuedKey> {
    throw new Error('not used');
  }
  async list(): Promise<ApiKeyRecord[]> {
    return this.record ? [this.record] : [];
  }
  async find(): Promise<ApiKeyRecord | undefined> {
    return this.record;
  }
  async setTier(_id: string, tier: Tier): Promise<ApiKeyRecord | undefined> {
    return this.write(`tier:${tier}`, { tier });
  }
  async setStatus(_id: string, status: KeyStatus): Promise<ApiKeyRecord | undefined> {
    return this.write(`status:${status}`, { status });
  }
  async setSubscriptionEnd(_id: string, endsAt: string | null): Promise<ApiKeyRecord | undefined> {
    return this.write(`ends:${endsAt}`, { subscriptionEndsAt: endsAt });
  }
  private write(call: string, patch: Partial<ApiKeyRecord>): ApiKeyRecord | undefined {
    this.calls.push(call);
    if (this.vanish) this.record = undefined;
    if (this.record) this.record = { ...this.record, ...patch };
    return this.record;
  }
}

describe('key lifecycle rules', () => {
  it('applies tightening first and enabling last, skipping fields that do not change', async () => {
    const disabled = { ...KEY, status: 'disabled' as const };
    const enabling = new RecordingProvider(disabled);
    const enabled = await changeApiKey(enabling, disabled, {
      status: 'active',
      tier: 'BUSINESS',
      subscriptionEndsAt: null,
    });
    expect(enabling.calls).toEqual(['tier:BUSINESS', 'status:active']);
    expect(enabled).toEqual({
      ok: true,
      key: expect.objectContaining({ status: 'active', tier: 'BUSINESS' }),
    });

    const disabling = new RecordingProvider(KEY);
    await changeApiKey(disabling, KEY, { status: 'disabled', tier: 'FREE' });
    expect(disabling.calls).toEqual(['status:disabled', 'tier:FREE']);
  });

  it('refuses every change to a revoked key except revoking it again (a no-op)', async () => {
    const revoked = { ...KEY, status: 'revoked' as const };
    for (const change of [
      { status: 'active' as const },
      { tier: 'FREE' as const },
      { subscriptionEndsAt: null },
    ]) {
      const provider = new RecordingProvider(revoked);
      expect(await changeApiKey(provider, revoked, change)).toEqual({
        ok: false,
        reason: 'revoked',
        key: revoked,
      });
      expect(provider.calls).toEqual([]);
    }
    const provider = new RecordingProvider(revoked);
    expect(await revokeApiKey(provider, revoked)).toEqual({ ok: true, key: revoked });
    expect(provider.calls).toEqual([]);
  });

  it('reports a key that vanished mid-change as not found', async () => {
    const provider = new RecordingProvider(KEY);
    provider.vanish = true;
    expect(await changeApiKey(provider, KEY, { tier: 'FREE' })).toEqual({
      ok: false,
      reason: 'not_found',
      id: KEY.id,
    });
  });

  it('words refusals the same for the admin API and the CLI', () => {
    expect(keyChangeRefusalMessage({ ok: false, reason: 'revoked', key: KEY })).toBe(
      `API key STOOP-…9f3a (id ${KEY.id}) is revoked; a revoked key can never be re-enabled or changed. Issue a new key instead.`,
    );
    expect(keyChangeRefusalMessage({ ok: false, reason: 'not_found', id: 'abc' })).toBe(
      'API key "abc" was not found',
    );
  });

  it('validates a requested change: at least one field, and a date-time with an offset', () => {
    expect(validateKeyChange({})).toEqual({ ok: false, reason: 'empty' });
    expect(validateKeyChange({ subscriptionEndsAt: '2027-02-30T00:00:00Z' })).toEqual({
      ok: false,
      reason: 'invalid_date',
      field: 'subscriptionEndsAt',
    });
    expect(validateKeyChange({ subscriptionEndsAt: '2027-01-31T23:59:59' })).toMatchObject({ ok: false });
    expect(validateKeyChange({ subscriptionEndsAt: '2027-01-31T19:00:00-05:00' })).toEqual({
      ok: true,
      change: { tier: undefined, status: undefined, subscriptionEndsAt: '2027-02-01T00:00:00.000Z' },
    });
    expect(validateKeyChange({ subscriptionEndsAt: null })).toMatchObject({
      ok: true,
      change: { subscriptionEndsAt: null },
    });
  });

  it('ends a subscription at its end instant (exclusive), never without an end', () => {
    const at = new Date('2027-01-01T00:00:00.000Z');
    expect(subscriptionEnded('2027-01-01T00:00:00.000Z', at)).toBe(true);
    expect(subscriptionEnded('2026-12-31T23:59:59.999Z', at)).toBe(true);
    expect(subscriptionEnded('2027-01-01T00:00:00.001Z', at)).toBe(false);
    expect(subscriptionEnded(null, at)).toBe(false);
  });
});
