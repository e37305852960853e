import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/platform/db/database.ts';
import { BufferedQuotaStore } from '../src/platform/limits/buffered-quota.ts';
import { createTestStore } from './support/store.ts';

let store: Store;
beforeAll(async () => {
  store = await createTestStore();
});
afterAll(async () => {
  await store?.close();
});

describe('BufferedQuotaStore (embedded quotas)', () => {
  it('counts exactly under concurrency, refuses at the ceiling, and persists on close', async () => {
    const quota = new BufferedQuotaStore(store.db, 60_000);
    const decisions = await Promise.all(
      Array.from({ length: 50 }, () => quota.increment('key:a', '2026-11', 30)),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(30);
    expect(
      decisions
        .filter((d) => d.allowed)
        .map((d) => d.used)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    await quota.close();
    const row = await store.db
      .selectFrom('usage_counters')
      .selectAll()
      .where('bucket', '=', 'key:a')
      .executeTakeFirst();
    expect(row?.used).toBe(30);

    // A restarted process continues from the stored count.
    const again = new BufferedQuotaStore(store.db, 60_000);
    expect(await again.used('key:a', '2026-11')).toBe(30);
    expect((await again.increment('key:a', '2026-11', 31)).used).toBe(31);
    expect((await again.increment('key:a', '2026-11', 31)).allowed).toBe(false);
    await again.close();
    const after = await store.db
      .selectFrom('usage_counters')
      .selectAll()
      .where('bucket', '=', 'key:a')
      .executeTakeFirst();
    expect(after?.used).toBe(31);
  });

  it('flushes in the background on its interval', async () => {
    const quota = new BufferedQuotaStore(store.db, 20);
    await quota.increment('ip:1.2.3.4', '2026-11', 100);
    // Poll (bounded) rather than sleep a fixed time: CI machines can be slow.
    const read = () =>
      store.db.selectFrom('usage_counters').selectAll().where('bucket', '=', 'ip:1.2.3.4').executeTakeFirst();
    let row = await read();
    for (let i = 0; i < 100 && row === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      row = await read();
    }
    expect(row?.used).toBe(1);
    await quota.close();
  });
});
