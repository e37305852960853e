import { describe, expect, it } from 'vitest';
import { limitsApp, TEST_NOW, type TestApp } from './support/app.ts';

/**
 * Limits belong to the account (the subscription), not to the key: every key
 * of an account draws on one rate window and one monthly quota, and each
 * request is judged by its own key's tier against those shared counters.
 */

const SEARCH = '/v1/search/rentals?perPage=1';

interface ErrorJson {
  error: { code: string };
}

async function issue(t: TestApp, accountId: string, tier: 'STARTER' | 'PRO'): Promise<string> {
  return (await t.ctx.subscriptions.issue({ accountId, tier })).key;
}

function rateOf(response: Response): { limit: string | null; remaining: string | null } {
  return {
    limit: response.headers.get('x-ratelimit-limit'),
    remaining: response.headers.get('x-ratelimit-remaining'),
  };
}

async function codeOf(response: Response): Promise<string | undefined> {
  return ((await response.json()) as ErrorJson).error?.code;
}

describe('rate windows per account (STARTER 3/min, PRO 5/min)', () => {
  const app = limitsApp({
    RATE_LIMIT_STARTER: '3',
    RATE_LIMIT_PRO: '5',
    MONTHLY_QUOTA_STARTER: '1000',
    MONTHLY_QUOTA_PRO: '1000',
  });

  it('gives three keys of one account one window, and another account its own', async () => {
    const t = app.get();
    const keys = [
      await issue(t, 'rate-shared', 'STARTER'),
      await issue(t, 'rate-shared', 'STARTER'),
      await issue(t, 'rate-shared', 'STARTER'),
    ];
    const answers: Response[] = [];
    for (const key of keys) answers.push(await t.getAs(key, SEARCH));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(answers.map((r) => rateOf(r).remaining)).toEqual(['2', '1', '0']);
    for (const key of keys) {
      const refused = await t.getAs(key, SEARCH);
      expect(refused.status).toBe(429);
      expect(await codeOf(refused)).toBe('RATE_LIMIT_EXCEEDED');
    }

    const other = await t.getAs(await issue(t, 'rate-other', 'STARTER'), SEARCH);
    expect(other.status).toBe(200);
    expect(rateOf(other)).toEqual({ limit: '3', remaining: '2' });
  });

  it("judges each request by its key's tier against the account's shared window", async () => {
    const t = app.get();
    const pro = await issue(t, 'rate-mixed', 'PRO');
    const starter = await issue(t, 'rate-mixed', 'STARTER');
    for (const remaining of ['4', '3', '2']) {
      const response = await t.getAs(pro, SEARCH);
      expect(response.status).toBe(200);
      expect(rateOf(response)).toEqual({ limit: '5', remaining });
    }
    // The account used 3 this minute: the Starter key's limit of 3 is spent, the Pro key's 5 is not.
    const refused = await t.getAs(starter, SEARCH);
    expect(refused.status).toBe(429);
    expect(rateOf(refused)).toEqual({ limit: '3', remaining: '0' });
    expect(await codeOf(refused)).toBe('RATE_LIMIT_EXCEEDED');
    const last = await t.getAs(pro, SEARCH);
    expect(last.status).toBe(200);
    expect(rateOf(last)).toEqual({ limit: '5', remaining: '0' });
    expect((await t.getAs(pro, SEARCH)).status).toBe(429);
  });
});

describe('monthly quotas per account (STARTER 5 + 1 overage, PRO 8 + 0)', () => {
  const app = limitsApp({
    RATE_LIMIT_STARTER: '1000',
    RATE_LIMIT_PRO: '1000',
    MONTHLY_QUOTA_STARTER: '5',
    OVERAGE_LIMIT_STARTER: '1',
    MONTHLY_QUOTA_PRO: '8',
    OVERAGE_LIMIT_PRO: '0',
  });

  async function usedBy(t: TestApp, key: string): Promise<Record<string, unknown>> {
    const response = await t.getAs(key, '/v1/usage');
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: Record<string, unknown> }).data;
  }

  it('gives three keys of one account one quota', async () => {
    const t = app.get();
    t.clock.set(TEST_NOW);
    const keys = [
      await issue(t, 'quota-shared', 'STARTER'),
      await issue(t, 'quota-shared', 'STARTER'),
      await issue(t, 'quota-shared', 'STARTER'),
    ];
    for (let n = 1; n <= 6; n++) {
      const response = await t.getAs(keys[n % 3]!, SEARCH);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-quota-used')).toBe(String(n));
    }
    for (const key of keys) {
      const refused = await t.getAs(key, SEARCH);
      expect(refused.status).toBe(429);
      expect(await codeOf(refused)).toBe('QUOTA_EXCEEDED');
    }
    for (const key of keys) expect(await usedBy(t, key)).toMatchObject({ tier: 'STARTER', used: 6 });
  });

  it("continues the month's count on a key issued mid-month", async () => {
    const t = app.get();
    t.clock.set(TEST_NOW);
    const first = await issue(t, 'quota-new-key', 'STARTER');
    for (let n = 0; n < 4; n++) expect((await t.getAs(first, SEARCH)).status).toBe(200);
    const second = await issue(t, 'quota-new-key', 'STARTER');
    expect(await usedBy(t, second)).toMatchObject({ used: 4, remaining: 1 });
    const response = await t.getAs(second, SEARCH);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-quota-used')).toBe('5');
    expect(await usedBy(t, first)).toMatchObject({ used: 5, remaining: 0 });
  });

  it('keeps two accounts independent', async () => {
    const t = app.get();
    t.clock.set(TEST_NOW);
    const a = await issue(t, 'quota-independent-a', 'STARTER');
    const b = await issue(t, 'quota-independent-b', 'STARTER');
    for (let n = 0; n < 6; n++) expect((await t.getAs(a, SEARCH)).status).toBe(200);
    expect((await t.getAs(a, SEARCH)).status).toBe(429);
    const other = await t.getAs(b, SEARCH);
    expect(other.status).toBe(200);
    expect(other.headers.get('x-quota-used')).toBe('1');
    expect(await usedBy(t, b)).toMatchObject({ used: 1 });
  });

  it("judges each request by its key's tier against the account's shared count", async () => {
    const t = app.get();
    t.clock.set(TEST_NOW);
    const pro = await issue(t, 'quota-mixed', 'PRO');
    const starter = await issue(t, 'quota-mixed', 'STARTER');
    for (let n = 0; n < 6; n++) expect((await t.getAs(pro, SEARCH)).status).toBe(200);
    // 6 used: past the Starter ceiling (5 + 1), within the Pro one (8).
    const refused = await t.getAs(starter, SEARCH);
    expect(refused.status).toBe(429);
    expect(await codeOf(refused)).toBe('QUOTA_EXCEEDED');
    expect(refused.headers.get('x-quota-limit')).toBe('5');
    expect(refused.headers.get('x-quota-used')).toBe('6');
    for (const used of ['7', '8']) {
      const response = await t.getAs(pro, SEARCH);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-quota-used')).toBe(used);
    }
    expect((await t.getAs(pro, SEARCH)).status).toBe(429);
    // Usage answers with the calling key's tier and the account's count.
    expect(await usedBy(t, starter)).toMatchObject({ tier: 'STARTER', quota: 5, used: 8, remaining: 0 });
    expect(await usedBy(t, pro)).toMatchObject({ tier: 'PRO', quota: 8, used: 8, remaining: 0 });
  });
});
