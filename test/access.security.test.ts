import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/http/errors.ts';
import { createTestApp, type TestApp } from './support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0, env: { RATE_LIMIT_FREE: '3' } });
});
afterAll(async () => {
  await t?.close();
});

describe('access control security', () => {
  it('throttles key guessing: bad keys spend the IP window and then get 429, not endless 401s', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await t.getAs(`STOOP-00000000-0000-4000-8000-00000000000${i}`, '/v1/admin/keys');
      statuses.push(response.status);
      if (response.status === 429) {
        const body = (await response.json()) as ErrorBody;
        expect(body.error.code).toBe('RATE_LIMIT_EXCEEDED');
        expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      }
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  });

  it('keeps a revoked key revoked even if it is later set active (revocation is final)', async () => {
    const issued = await t.ctx.subscriptions.issue({ accountId: 'acme', tier: 'PRO' });
    await t.ctx.subscriptions.setStatus(issued.id, 'revoked');
    const after = await t.ctx.subscriptions.setStatus(issued.id, 'active');
    expect(after?.status).toBe('revoked');
    expect(await t.ctx.subscriptions.check(issued.key, t.clock.now())).toEqual({
      ok: false,
      reason: 'INVALID_API_KEY',
    });
  });

  it('stores subscription ends in UTC whatever offset they were given in', async () => {
    const issued = await t.ctx.subscriptions.issue({
      accountId: 'acme',
      tier: 'PRO',
      subscriptionEndsAt: '2026-11-01T20:00:00+05:00',
    });
    expect(issued.subscriptionEndsAt).toBe('2026-11-01T15:00:00.000Z');
  });
});
