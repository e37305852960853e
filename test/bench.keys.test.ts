import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCH_ACCOUNT, type BenchKeyStore, BenchKeys } from '../bench/bench-key.ts';
import { LocalSubscriptionProvider } from '../src/modules/keys/subscriptions.ts';
import { systemClock } from '../src/platform/clock.ts';
import type { Store } from '../src/platform/db/database.ts';
import { createTestStore } from './support/store.ts';

let store: Store;
let provider: LocalSubscriptionProvider;
beforeAll(async () => {
  store = await createTestStore();
  provider = new LocalSubscriptionProvider(store.db, systemClock, 'STOOP');
});
afterAll(async () => {
  await store?.close();
});

/** The bench's key store over the test store; `failOpen` makes the next opens fail, as an unreachable store would. */
function opener(state: { opens: number; failOpen: boolean }): () => Promise<BenchKeyStore> {
  return async () => {
    if (state.failOpen) throw new Error('store unreachable');
    state.opens++;
    // The test owns the store: closing a session must not close it.
    return { provider, close: async () => {} };
  };
}

async function works(key: string): Promise<boolean> {
  return (await provider.check(key, new Date())).ok;
}

describe('bench keys', () => {
  it('revokes every key it issued (INTERNAL and PRO), once', async () => {
    const keys = new BenchKeys(opener({ opens: 0, failOpen: false }));
    const internal = await keys.issue();
    const pro = await keys.issue('PRO');
    expect(await works(internal)).toBe(true);
    expect(await works(pro)).toBe(true);
    const records = await provider.list(BENCH_ACCOUNT);
    expect(
      records
        .filter((r) => r.status === 'active')
        .map((r) => r.tier)
        .sort(),
    ).toEqual(['INTERNAL', 'PRO']);
    expect(keys.outstanding).toHaveLength(2);

    expect(await keys.revokeAll()).toBe(2);
    expect(await works(internal)).toBe(false);
    expect(await works(pro)).toBe(false);
    expect((await provider.list(BENCH_ACCOUNT)).every((r) => r.status === 'revoked')).toBe(true);
    expect(keys.outstanding).toEqual([]);
    // Nothing left: a second cleanup (signal after failure) does nothing.
    expect(await keys.revokeAll()).toBe(0);
  });

  it('keeps the keys it could not revoke for a later attempt, and says so', async () => {
    const state = { opens: 0, failOpen: false };
    const keys = new BenchKeys(opener(state));
    const key = await keys.issue();
    state.failOpen = true;
    await expect(keys.revokeAll()).rejects.toThrow('store unreachable');
    expect(keys.outstanding).toHaveLength(1);
    expect(await works(key)).toBe(true);

    state.failOpen = false;
    expect(await keys.revokeAll()).toBe(1);
    expect(await works(key)).toBe(false);
  });

  it('opens the store once for all revocations', async () => {
    const state = { opens: 0, failOpen: false };
    const keys = new BenchKeys(opener(state));
    for (let i = 0; i < 3; i++) await keys.issue(i === 0 ? 'INTERNAL' : 'PRO');
    state.opens = 0;
    await keys.revokeAll();
    expect(state.opens).toBe(1);
  });
});
