import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { HAS_CHROMIUM, launchChromium } from './support/browser.ts';

// CI installs Chromium; a developer machine without it skips this file, loudly.
describe.skipIf(!HAS_CHROMIUM && process.env.CI !== 'true')('API reference page in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    t = await createTestApp({ scale: 0 });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('renders every operation from /openapi.json and runs a request from the page', async () => {
    const page = await browser.newPage();
    // The document's server is PUBLIC_URL (http://stoop.test here): the page is opened there, and
    // the browser's requests to that origin are answered by the test server, as DNS would route them.
    await page.route(`${t.config.publicUrl}/**`, async (route) => {
      const url = route.request().url().replace(t.config.publicUrl, t.url);
      await route.fulfill({ response: await route.fetch({ url }) });
    });
    await page.goto(`${t.config.publicUrl}/docs`);
    const operation = (path: string) => page.locator(`.opblock-summary-path[data-path="${path}"]`);
    await operation('/v1/search/rentals').waitFor({ timeout: 15_000 });
    for (const path of ['/v1/search/sales', '/v1/areas', '/v1/health']) {
      await expect(operation(path).isVisible()).resolves.toBe(true);
    }
    // Try the health operation from the page: the browser calls the API and shows the answer.
    await operation('/v1/health').click();
    await page.getByRole('button', { name: 'Try it out' }).click();
    await page.getByRole('button', { name: 'Execute' }).click();
    await page
      .locator('.responses-wrapper .live-responses-table')
      .getByText('"status": "ok"')
      .first()
      .waitFor({ timeout: 15_000 });
    await page.close();
  });
});
