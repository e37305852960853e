/**
 * `GET /` over real HTTP: headers (CSP, type, framing), HEAD, the JSON index
 * by content negotiation, and the template's escaping.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HomeIndex, homePage } from '../src/modules/home/home.page.ts';
import { acceptQuality } from '../src/modules/home/home.routes.ts';
import { createTestApp, type TestApp } from './support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0 });
});
afterAll(async () => {
  await t?.close();
});

function inlineStyle(html: string): string {
  const match = /<style>([\s\S]*?)<\/style>/.exec(html);
  expect(match, 'the page has one inline style').not.toBeNull();
  return match![1]!;
}

describe('GET / as HTML', () => {
  it('is a script-free page under a strict CSP that allows exactly its own inline style', async () => {
    const response = await t.getAs(null, '/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await response.text();
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    const csp = response.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      csp.split(';').map((d) => {
        const [name = '', ...values] = d.trim().split(/\s+/);
        return [name, values.join(' ')] as const;
      }),
    );
    expect(directives.get('default-src')).toBe("'none'");
    expect(directives.has('script-src')).toBe(false);
    expect(directives.get('frame-ancestors')).toBe("'none'");
    expect(directives.get('base-uri')).toBe("'none'");
    expect(directives.get('form-action')).toBe("'none'");
    const hash = createHash('sha256').update(inlineStyle(html)).digest('base64');
    expect(directives.get('style-src')).toBe(`'sha256-${hash}'`);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('vary')).toMatch(/\bAccept\b/);
  });

  it('is outside rate limits and quotas, with or without a key', async () => {
    for (const key of [null, t.internalKey]) {
      const response = await t.getAs(key, '/');
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
      expect(response.headers.get('x-quota-used')).toBeNull();
      await response.body?.cancel();
    }
  });

  it('answers HEAD with the same headers and no body', async () => {
    const get = await t.getAs(null, '/');
    const getBody = Buffer.from(await get.arrayBuffer());
    const head = await t.getAs(null, '/', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(head.headers.get('content-security-policy')).toBe(get.headers.get('content-security-policy'));
    expect(Number(head.headers.get('content-length'))).toBe(getBody.length);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it('ignores a query string rather than refusing it', async () => {
    const response = await t.getAs(null, '/?utm_source=x&perPage=9999&%zz=1');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    await response.body?.cancel();
  });

  it('uses the configured public URL in its snippets, and shows the demo-data notice', async () => {
    const html = await (await t.getAs(null, '/')).text();
    const { publicUrl } = t.config;
    expect(html).toContain(`curl &#39;${publicUrl}/v1/search/rentals?`);
    expect(html).toContain(`&quot;${publicUrl}/mcp&quot;`);
    expect(html).toContain('id="demo-notice"');
  });

  it('is not an operation of the OpenAPI document', async () => {
    const document = (await (await t.get('/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).not.toContain('/');
  });

  it('other methods get the JSON 404 envelope', async () => {
    const response = await t.getAs(null, '/', { method: 'POST' });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
  });
});

describe('GET / as JSON', () => {
  it('answers a small index of absolute links when JSON is preferred', async () => {
    for (const accept of ['application/json', 'text/html;q=0.5, application/json', 'application/*']) {
      const response = await t.getAs(null, '/', { headers: { accept } });
      expect(response.status, accept).toBe(200);
      expect(response.headers.get('content-type'), accept).toMatch(/^application\/json/);
      expect(response.headers.get('vary')).toMatch(/\bAccept\b/);
      const index = (await response.json()) as HomeIndex;
      expect(index.name).toBe('Stoop');
      expect(index.demoData).toBe(true);
      for (const link of Object.values(index.links))
        expect(link.startsWith(`${t.config.publicUrl}/`)).toBe(true);
    }
  });

  it('every link of the index resolves on this server (the MCP endpoint by its POST-only 405)', async () => {
    const index = (await (
      await t.getAs(null, '/', { headers: { accept: 'application/json' } })
    ).json()) as HomeIndex;
    for (const [name, link] of Object.entries(index.links)) {
      const path = link.slice(t.config.publicUrl.length);
      // As a key holder: anonymously, the MCP endpoint answers its 401 challenge first.
      const response = await t.get(path);
      expect(response.status, `${name}: ${path}`).toBe(name === 'mcp' ? 405 : 200);
      await response.body?.cancel();
    }
  });

  it('browsers, curl and an explicit refusal of JSON get the HTML page', async () => {
    for (const accept of [
      'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      '*/*',
      'application/json;q=0, */*',
      'application/json;q=0.5, text/html',
      'text/plain',
    ]) {
      const response = await t.getAs(null, '/', { headers: { accept } });
      expect(response.headers.get('content-type'), accept).toBe('text/html; charset=utf-8');
      await response.body?.cancel();
    }
  });
});

describe('the page template', () => {
  it('escapes every inserted value', () => {
    const html = homePage({
      publicUrl: 'http://evil.test/"><script>alert(1)</script>',
      version: '<img src=x onerror=alert(1)>',
      demoData: false,
    });
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('shows the demo-data notice only for the demo market', () => {
    const input = { publicUrl: 'https://stoop.example', version: '1.2.3' };
    expect(homePage({ ...input, demoData: true })).toContain('id="demo-notice"');
    expect(homePage({ ...input, demoData: false })).not.toContain('id="demo-notice"');
  });

  it('reads q-values from the most specific matching range', () => {
    expect(acceptQuality(undefined, 'text/html')).toBe(1);
    expect(acceptQuality('text/*;q=0.4, */*;q=0.1', 'text/html')).toBe(0.4);
    expect(acceptQuality('text/*;q=0.4, text/html;q=0.7', 'text/html')).toBe(0.7);
    expect(acceptQuality('image/png', 'text/html')).toBe(0);
    expect(acceptQuality('application/json;q=nonsense', 'application/json')).toBe(0);
  });
});
