import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { HAS_CHROMIUM, launchChromium } from './support/browser.ts';

// CI installs Chromium; a developer machine without it skips this file, loudly.
describe.skipIf(!HAS_CHROMIUM && process.env.CI !== 'true')('the front page in a real browser', () => {
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

  it('renders under its CSP with no console error, styled, and every link resolves', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    // A CSP violation (a blocked style or script) is reported on the console as an error.
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    const response = await page.goto(`${t.url}/`);
    expect(response?.status()).toBe(200);
    await expect(page.title()).resolves.toContain('Stoop');
    await expect(page.locator('h1').textContent()).resolves.toBe('Stoop');
    await expect(page.locator('#demo-notice').isVisible()).resolves.toBe(true);
    // The inline sheet applied: allowed by its hash, not blocked.
    // (A string expression: this project's TypeScript has no DOM types.)
    const background = await page.evaluate(
      "getComputedStyle(document.querySelector('main')).backgroundColor",
    );
    expect(background).toBe('rgb(255, 255, 255)');

    const hrefs = (
      await page.locator('a[href]').evaluateAll((links) => links.map((a) => a.getAttribute('href')))
    ).map((href) => new URL(href ?? '', page.url()).href);
    expect(hrefs.map((href) => new URL(href).pathname)).toEqual(
      expect.arrayContaining(['/docs', '/openapi.json', '/v1/health']),
    );
    for (const href of hrefs) {
      const answer = await page.request.get(href);
      expect(answer.status(), href).toBe(200);
    }
    // Following the reference link lands on the reference.
    await page.getByRole('link', { name: 'API reference' }).click();
    await page.waitForURL(/\/docs/);
    await expect(page.title()).resolves.toBe('Stoop API reference');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a quick start and an MCP configuration for the configured public URL', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/`);
    const { publicUrl } = t.config;
    const curl = (await page.locator('#curl').textContent()) ?? '';
    expect(curl).toContain(`curl '${publicUrl}/v1/search/rentals?`);
    expect(curl).toMatch(/^KEY=/m);
    expect(curl).toContain(`curl -H "Authorization: Bearer $KEY" '${publicUrl}/v1/`);
    const mcp = JSON.parse((await page.locator('#mcp-config').textContent()) ?? '') as {
      mcpServers: { stoop: { command: string; args: string[]; env: Record<string, string> } };
    };
    expect(mcp.mcpServers.stoop.command).toBe('npx');
    expect(mcp.mcpServers.stoop.args).toContain(`${publicUrl}/mcp`);
    expect(mcp.mcpServers.stoop.args).toContain('mcp-remote');
    expect(Object.keys(mcp.mcpServers.stoop.env)).toEqual(['STOOP_KEY']);
    await page.close();
  });
});
