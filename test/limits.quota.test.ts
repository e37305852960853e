import { describe, expect, it } from 'vitest';
import { limitsApp, TEST_NOW } from './support/app.ts';

const SEARCH = '/v1/search/rentals?perPage=1';
const NEXT_MONTH = Date.parse('2026-12-01T00:00:00.000Z');

interface ErrorJson {
  error: { code: string; retryAfter?: number; details?: { retryAfter?: number } };
}

function quotaHeaders(response: Response): { used: number; remaining: number; overage: string | null } {
  return {
    used: Number(response.headers.get('x-quota-used')),
    remaining: Number(response.headers.get('x-quota-remaining')),
    overage: response.headers.get('x-quota-overage'),
  };
}

describe('monthly quota with overage (STARTER: quota 5, overage 2)', () => {
  const app = limitsApp({
    MONTHLY_QUOTA_STARTER: '5',
    OVERAGE_LIMIT_STARTER: '2',
    RATE_LIMIT_STARTER: '1000',
  });

  it('serves the quota, flags the overage, then refuses until the next UTC month', async () => {
    const t = app.get();
    t.clock.set(TEST_NOW);
    const { key } = await t.ctx.subscriptions.issue({ accountId: 'quota', tier: 'STARTER' });

    for (let n = 1; n <= 5; n++) {
      const response = await t.getAs(key, SEARCH);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-quota-limit')).toBe('5');
      expect(quotaHeaders(response)).toEqual({ used: n, remaining: 5 - n, overage: null });
    }
    for (let n = 6; n <= 7; n++) {
      const response = await t.getAs(key, SEARCH);
      expect(response.status).toBe(200);
      expect(quotaHeaders(response)).toEqual({ used: n, remaining: 0, overage: 'true' });
    }

    const expectedRetry = Math.ceil((NEXT_MONTH - TEST_NOW.getTime()) / 1000);
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await t.getAs(key, SEARCH);
      expect(refused.status).toBe(429);
      const body = (await refused.json()) as ErrorJson;
      expect(body.error.code).toBe('QUOTA_EXCEEDED');
      expect(refused.headers.get('retry-after')).toBe(String(expectedRetry));
      expect(body.error.retryAfter).toBe(expectedRetry);
      // Refused requests are not counted, and are not flagged as overage.
      expect(quotaHeaders(refused)).toEqual({ used: 7, remaining: 0, overage: null });
      expect(refused.headers.get('x-ratelimit-limit')).toBe('1000');
    }

    // The last millisecond of November is still November.
    t.clock.set(NEXT_MONTH - 1);
    const lastMoment = await t.getAs(key, SEARCH);
    expect(lastMoment.status).toBe(429);
    expect(lastMoment.headers.get('retry-after')).toBe('1');

    t.clock.set(NEXT_MONTH);
    const december = await t.getAs(key, SEARCH);
    expect(december.status).toBe(200);
    expect(quotaHeaders(december)).toEqual({ used: 1, remaining: 4, overage: null });
  });

  it('gives every account its own budget', async () => {
    const t = app.get();
    t.clock.set(TEST_NOW);
    const a = (await t.ctx.subscriptions.issue({ accountId: 'quota-a', tier: 'STARTER' })).key;
    const b = (await t.ctx.subscriptions.issue({ accountId: 'quota-b', tier: 'STARTER' })).key;
    for (let n = 0; n < 7; n++) expect((await t.getAs(a, SEARCH)).status).toBe(200);
    expect((await t.getAs(a, SEARCH)).status).toBe(429);
    const other = await t.getAs(b, SEARCH);
    expect(other.status).toBe(200);
    expect(quotaHeaders(other)).toEqual({ used: 1, remaining: 4, overage: null });
    // An anonymous caller from the same machine is a third budget (Free tier, by IP).
    const anonymous = await t.getAs(null, SEARCH);
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get('x-quota-limit')).toBe('100');
    expect(quotaHeaders(anonymous)).toEqual({ used: 1, remaining: 99, overage: null });
  });

  it('does not count /v1/usage against the quota', async () => {
    const t = app.get();
    t.clock.set(TEST_NOW);
    const { key } = await t.ctx.subscriptions.issue({ accountId: 'quota-usage', tier: 'STARTER' });
    expect((await t.getAs(key, SEARCH)).status).toBe(200);
    for (let n = 0; n < 10; n++) {
      const usage = await t.getAs(key, '/v1/usage');
      expect(usage.status).toBe(200);
      expect(quotaHeaders(usage)).toEqual({ used: 1, remaining: 4, overage: null });
      expect(((await usage.json()) as { data: { used: number } }).data.used).toBe(1);
    }
    // Usage still answers once the quota is spent: it is how a caller finds out.
    for (let n = 0; n < 6; n++) expect((await t.getAs(key, SEARCH)).status).toBe(200);
    expect((await t.getAs(key, SEARCH)).status).toBe(429);
    const usage = await t.getAs(key, '/v1/usage');
    expect(usage.status).toBe(200);
    expect(((await usage.json()) as { data: { used: number; remaining: number } }).data).toMatchObject({
      used: 7,
      remaining: 0,
    });
  });
});

describe('anonymous callers: Free limits by IP (defaults: 10/min)', () => {
  const app = limitsApp({});

  it('allows 10 requests a minute, then 429 RATE_LIMIT_EXCEEDED; /v1/health is never limited', async () => {
    const t = app.get();
    for (let n = 1; n <= 10; n++) {
      const response = await t.getAs(null, SEARCH);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBe('10');
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(10 - n));
      expect(response.headers.get('x-quota-limit')).toBe('100');
      expect(response.headers.get('x-quota-used')).toBe(String(n));
    }
    const refused = await t.getAs(null, '/v1/areas');
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as ErrorJson;
    expect(body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(body.error.retryAfter).toBe(Number(refused.headers.get('retry-after')));
    expect(refused.headers.get('x-quota-used')).toBe('10');

    // The window is spent, and /usage is rate-limited too.
    const usage = await t.getAs(null, '/v1/usage');
    expect(usage.status).toBe(429);
    expect(((await usage.json()) as ErrorJson).error.code).toBe('RATE_LIMIT_EXCEEDED');

    for (let n = 0; n < 15; n++) {
      const health = await t.getAs(null, '/v1/health');
      expect(health.status).toBe(200);
      for (const name of health.headers.keys())
        expect(name).not.toMatch(/^x-(ratelimit|quota)-|^retry-after$/);
    }
    // A key is not an IP: its own window is untouched.
    const { key } = await t.ctx.subscriptions.issue({ accountId: 'free-key', tier: 'FREE' });
    expect((await t.getAs(key, SEARCH)).status).toBe(200);
  });
});

describe('anonymous callers: 100 requests a month', () => {
  const app = limitsApp({ RATE_LIMIT_FREE: '1000' });

  it('refuses the 101st counted request with QUOTA_EXCEEDED (Free has no overage)', async () => {
    const t = app.get();
    t.clock.set(TEST_NOW);
    const answers = await Promise.all(Array.from({ length: 100 }, () => t.getAs(null, SEARCH)));
    expect(answers.map((r) => r.status)).toEqual(Array(100).fill(200));
    expect(answers.some((r) => r.headers.has('x-quota-overage'))).toBe(false);
    const refused = await t.getAs(null, SEARCH);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as ErrorJson).error.code).toBe('QUOTA_EXCEEDED');
    expect(refused.headers.get('retry-after')).toBe(String((NEXT_MONTH - TEST_NOW.getTime()) / 1000));
    expect(quotaHeaders(refused)).toEqual({ used: 100, remaining: 0, overage: null });
  });
});

describe('/v1/usage is rate-limited (RATE_LIMIT_FREE=3)', () => {
  const app = limitsApp({ RATE_LIMIT_FREE: '3' });

  it('answers 3 times a minute, then 429, without ever counting', async () => {
    const t = app.get();
    for (let n = 1; n <= 3; n++) {
      const usage = await t.getAs(null, '/v1/usage');
      expect(usage.status).toBe(200);
      expect(usage.headers.get('x-ratelimit-remaining')).toBe(String(3 - n));
      expect(usage.headers.get('x-quota-used')).toBe('0');
    }
    const refused = await t.getAs(null, '/v1/usage');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('3');
    expect(refused.headers.get('x-quota-used')).toBe('0');
    const body = (await refused.json()) as ErrorJson;
    expect(body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(body.error.retryAfter).toBe(Number(refused.headers.get('retry-after')));
  });
});
