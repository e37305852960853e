import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { HAS_CHROMIUM, launchChromium } from './support/browser.ts';

/** What Swagger UI's lock button says (its aria-label), or null when an operation shows none. */
type LockState = 'authorization button locked' | 'authorization button unlocked' | null;

// CI installs Chromium; a developer machine without it skips this file, loudly.
describe.skipIf(!HAS_CHROMIUM && process.env.CI !== 'true')('API reference page in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let proKey: string;
  beforeAll(async () => {
    t = await createTestApp({ scale: 0 });
    browser = await launchChromium();
    proKey = (await t.ctx.subscriptions.issue({ accountId: 'docs-browser', tier: 'PRO' })).key;
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const operation = (page: Page, path: string) =>
    page.locator(`.opblock-summary-path[data-path="${path}"]`).first();
  const summary = (page: Page, method: string, path: string) =>
    page.locator(`.opblock-summary-${method}`).filter({ has: page.locator(`[data-path="${path}"]`) });

  async function lockState(page: Page, method: string, path: string): Promise<LockState> {
    const lock = summary(page, method, path).locator('.authorization__btn');
    if ((await lock.count()) === 0) return null;
    return (await lock.getAttribute('aria-label')) as LockState;
  }

  async function openDocs(): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${t.url}/docs`);
    await operation(page, '/v1/search/rentals').waitFor({ timeout: 15_000 });
    return { page, errors };
  }

  /** Authorizes the page with `key`, as a reader would: Authorize, paste, apply, close. */
  async function authorize(page: Page, key: string): Promise<void> {
    await page.locator('.auth-wrapper .btn.authorize').click();
    const dialog = page.locator('.dialog-ux');
    await dialog.locator('input').first().fill(key);
    await dialog.getByRole('button', { name: 'Apply credentials' }).click();
    await dialog.getByRole('button', { name: 'Close' }).click();
  }

  it('renders every operation from /openapi.json and runs a request from the page', async () => {
    const { page } = await openDocs();
    for (const path of ['/v1/search/sales', '/v1/areas', '/v1/health']) {
      await expect(operation(page, path).isVisible()).resolves.toBe(true);
    }
    // Try the health operation from the page: the browser calls the API and shows the answer.
    await operation(page, '/v1/health').click();
    await page.getByRole('button', { name: 'Try it out' }).click();
    await page.getByRole('button', { name: 'Execute' }).click();
    await page
      .locator('.responses-wrapper .live-responses-table')
      .getByText('"status": "ok"')
      .first()
      .waitFor({ timeout: 15_000 });
    await page.close();
  });

  it('is titled "Stoop API reference" and opens with the introduction, without console errors', async () => {
    const { page, errors } = await openDocs();
    await expect(page.title()).resolves.toBe('Stoop API reference');
    const heading = page.locator('.information-container .info .title');
    await expect(heading.textContent()).resolves.toContain('Stoop API reference');
    const headings = await page.locator('.information-container .info .description h2').allTextContents();
    expect(headings).toEqual([
      'Getting a key',
      'Reading the locks on this page',
      'Finding area ids',
      'Errors',
      'Limits and quotas',
      'Freshness',
    ]);
    const intro = (await page.locator('.information-container .info .description').textContent()) ?? '';
    expect(intro).toContain('demo market is synthetic');
    expect(intro).toContain('npx stoop keys create');
    expect(intro).toContain('GET /v1/areas?q=');
    // The tier table states this deployment's limits, as configured.
    const free = t.config.tierLimits.FREE;
    const freeRow = page.locator('.information-container .info .description tr', {
      hasText: 'Free (and anonymous callers)',
    });
    await expect(freeRow.locator('td').allTextContents()).resolves.toEqual([
      'Free (and anonymous callers)',
      free.ratePerMinute.toLocaleString('en-US'),
      free.monthlyQuota.toLocaleString('en-US'),
      free.overageLimit.toLocaleString('en-US'),
      free.maxPerPage.toLocaleString('en-US'),
    ]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a lock on keyed operations only: open before authorizing, closed after', async () => {
    const { page } = await openDocs();
    await operation(page, '/v1/property/{id}').waitFor();
    const keyed: [string, string][] = [
      ['get', '/v1/property/{id}'],
      ['get', '/v1/building/{id}'],
      ['post', '/v1/webhooks'],
    ];
    const open: [string, string][] = [
      ['get', '/v1/search/rentals'],
      ['get', '/v1/areas'],
      ['get', '/v1/usage'],
      ['get', '/v1/health'],
    ];
    for (const [method, path] of keyed) {
      await expect(lockState(page, method, path), `${method} ${path}`).resolves.toBe(
        'authorization button unlocked',
      );
    }
    for (const [method, path] of open) {
      await expect(lockState(page, method, path), `${method} ${path}`).resolves.toBeNull();
    }

    await authorize(page, proKey);

    for (const [method, path] of keyed) {
      await expect(lockState(page, method, path), `${method} ${path}`).resolves.toBe(
        'authorization button locked',
      );
    }
    for (const [method, path] of open) {
      await expect(lockState(page, method, path), `${method} ${path}`).resolves.toBeNull();
    }
    await page.close();
  });

  it('sends the key with a public operation once authorized (the document still says it is optional)', async () => {
    const { page } = await openDocs();
    await authorize(page, proKey);

    await operation(page, '/v1/usage').click();
    const block = page.locator('#operations-Service-getUsage');
    await block.getByRole('button', { name: 'Try it out' }).click();
    await block.getByRole('button', { name: 'Execute' }).click();
    // /v1/usage answers the caller's own tier: PRO, the key's, not the anonymous FREE.
    await block
      .locator('.live-responses-table')
      .getByText('"tier": "PRO"')
      .first()
      .waitFor({ timeout: 15_000 });
    await page.close();
  });
});
