/**
 * The consent page in headless Chromium: it renders without script, names the
 * client and where it will send the user, labels every control, obeys its own
 * CSP (no violations), cannot be framed, and each decision — a key, a wrong
 * key, Continue as Free, Deny — ends where it should. The redirect URI is a
 * real loopback server, so the browser follows the redirect as a user's would.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { HAS_CHROMIUM, launchChromium } from './support/browser.ts';
import { clientOptions, registerClient } from './support/oauth.ts';

// CI installs Chromium; a developer machine without it skips this file, loudly.
describe.skipIf(!HAS_CHROMIUM && process.env.CI !== 'true')('OAuth consent page in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let callbackServer: Server;
  let callbackBase: string;
  let client: oauth.Client;
  let as: oauth.AuthorizationServer;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp({ scale: 0 });
    browser = await launchChromium();
    // The client's redirect target: a page that says where the browser landed, and a framing page.
    callbackServer = createServer((request, response) => {
      if (request.url?.startsWith('/frame')) {
        const target = new URL(request.url, 'http://x').searchParams.get('src') ?? '';
        response.setHeader('content-type', 'text/html');
        response.end(
          `<!doctype html><title>framer</title><iframe id="f" src="${target.replaceAll('"', '&quot;')}"></iframe>`,
        );
        return;
      }
      response.setHeader('content-type', 'text/html');
      response.end('<!doctype html><title>callback</title><p>back at the client</p>');
    });
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    callbackBase = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}`;
    const response = await oauth.discoveryRequest(new URL('http://stoop.test'), {
      algorithm: 'oauth2',
      ...clientOptions(t),
    });
    as = await oauth.processDiscoveryResponse(new URL('http://stoop.test'), response);
    client = await registerClient(t, as, [`${callbackBase}/callback`], 'Claude Desktop');
    key = (await t.ctx.subscriptions.issue({ accountId: 'oauth-browser', tier: 'STARTER' })).key;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => callbackServer?.close(resolve));
    await t?.close();
  });

  async function openConsent(): Promise<{
    page: Page;
    verifier: string;
    state: string;
    violations: string[];
  }> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: `${callbackBase}/callback`,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') violations.push(message.text());
    });
    const response = await page.goto(`${t.url}/oauth/authorize?${params}`);
    expect(response?.status()).toBe(200);
    const headers = response!.headers();
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['x-frame-options']).toBe('DENY');
    return { page, verifier, state, violations };
  }

  async function landed(page: Page): Promise<URL> {
    await page.waitForURL(`${callbackBase}/callback**`, { timeout: 10_000 });
    return new URL(page.url());
  }

  it('renders an accessible page naming the client and the redirect host; a key gets a code', async () => {
    const { page, verifier, state, violations } = await openConsent();
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('en');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Authorize');
    await expect(page.locator('#client').textContent()).resolves.toBe('Claude Desktop');
    await expect(page.locator('#redirect-host').textContent()).resolves.toBe(new URL(callbackBase).host);
    // Accessibility of labels: every visible input has a label; every button has a name.
    const unlabelled = await page
      .locator('input:not([type=hidden]), select, textarea')
      .evaluateAll((inputs) =>
        inputs
          .filter((input) => {
            const labels = (input as unknown as { labels: { length: number } | null }).labels;
            return (labels === null || labels.length === 0) && !input.getAttribute('aria-label');
          })
          .map((input) => input.outerHTML),
      );
    expect(unlabelled).toEqual([]);
    const nameless = await page
      .locator('button')
      .evaluateAll((buttons) => buttons.filter((button) => (button.textContent ?? '').trim() === '').length);
    expect(nameless).toBe(0);
    const keyField = page.getByLabel('Stoop API key');
    await expect(keyField.getAttribute('type')).resolves.toBe('password');

    await keyField.fill(key);
    await page.getByRole('button', { name: 'Authorize with this key' }).click();
    const callback = await landed(page);
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.get('iss')).toBe('http://stoop.test');
    expect(violations).toEqual([]);

    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        params,
        `${callbackBase}/callback`,
        verifier,
        clientOptions(t),
      ),
    );
    expect(tokens.tier).toBe('STARTER');
    await page.context().close();
  });

  it('shows an error for a wrong key, then accepts the right one from the same page', async () => {
    const { page, state } = await openConsent();
    await page.getByLabel('Stoop API key').fill('STOOP-00000000-0000-4000-8000-000000000000');
    await page.getByRole('button', { name: 'Authorize with this key' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('not valid');
    await expect(page.getByLabel('Stoop API key').getAttribute('aria-invalid')).resolves.toBe('true');
    expect(page.url()).toBe(`${t.url}/oauth/authorize`);
    await page.getByLabel('Stoop API key').fill(key);
    await page.getByRole('button', { name: 'Authorize with this key' }).click();
    const callback = await landed(page);
    expect(callback.searchParams.get('code')).toMatch(/^stoop_ac_/);
    expect(callback.searchParams.get('state')).toBe(state);
    await page.context().close();
  });

  it('continues as Free without a key, and denies', async () => {
    const free = await openConsent();
    await free.page.getByRole('button', { name: 'Continue as Free' }).click();
    const callback = await landed(free.page);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        oauth.validateAuthResponse(as, client, callback, free.state),
        `${callbackBase}/callback`,
        free.verifier,
        clientOptions(t),
      ),
    );
    expect(tokens.tier).toBe('FREE');
    await free.page.context().close();

    const deny = await openConsent();
    await deny.page.getByRole('button', { name: 'Deny' }).click();
    const denied = await landed(deny.page);
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('code')).toBeNull();
    await deny.page.context().close();
  });

  it('cannot be framed by another site', async () => {
    const src = `${t.url}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: `${callbackBase}/callback`,
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
    })}`;
    const context = await browser.newContext();
    const page = await context.newPage();
    const framed = page.waitForEvent('response', (response) =>
      response.url().startsWith(`${t.url}/oauth/authorize`),
    );
    await page.goto(`${callbackBase}/frame?src=${encodeURIComponent(src)}`);
    expect((await framed).status()).toBe(200);
    await page.waitForTimeout(300);
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
    const content = frame ? await frame.content().catch(() => '') : '';
    expect(content).not.toContain('Authorize access to Stoop');
    await context.close();
  });
});
