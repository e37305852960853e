/**
 * The front page (`GET /`): what the service is, where its reference lives,
 * and how to make a first call — server-rendered, no script. Absolute URLs in
 * the snippets are built from the configured public URL; every inserted value
 * is HTML-escaped. The only style is one inline sheet, allowed by its hash in
 * the Content-Security-Policy (as on the OAuth consent page).
 */
import { createHash } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { escapeHtml } from '../../oauth/consent-page.ts';

const STYLE = `
body{font:16px/1.55 system-ui,sans-serif;margin:0;background:#f5f5f4;color:#1c1917}
main{max-width:46rem;margin:2.5rem auto;padding:2rem 2.25rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002}
h1{font-size:1.8rem;margin:0 0 .25rem}
h2{font-size:1.2rem;margin:2rem 0 .5rem}
.lede{font-size:1.1rem;margin-top:0}
.notice{background:#fffbeb;border:1px solid #fcd34d;border-radius:4px;padding:.75rem 1rem}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.5rem 1.25rem}
a{color:#1d4ed8}
a:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
pre{background:#1c1917;color:#f5f5f4;padding:1rem;border-radius:6px;overflow-x:auto;font-size:.85rem;line-height:1.5}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
p code,li code{background:#f5f5f4;padding:0 .25rem;border-radius:3px}
.small{color:#57534e;font-size:.9rem}
`;

/** `'sha256-…'` of the inline style, for the page's CSP. */
export const HOME_STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

const SUMMARY =
  'An open-source, self-hostable New York City real estate listings data service: search rental and sale listings; read listings, buildings, the area tree and market statistics; follow listing changes through webhooks, watchers, a change feed and live streams; connect AI clients over MCP.';

/** The places the page links to, by role: relative to the service's root. */
const LINKS = {
  docs: '/docs',
  openapi: '/openapi.json',
  health: '/v1/health',
  mcp: '/mcp',
  mcpServerCard: '/.well-known/mcp/server.json',
} as const;

/** The front page as JSON (`Accept: application/json`): the same links, absolute. */
export const HomeIndexSchema = Type.Object(
  {
    name: Type.Literal('Stoop'),
    description: Type.String(),
    version: Type.String(),
    demoData: Type.Boolean({ description: 'True when the service runs the built-in synthetic demo market.' }),
    links: Type.Object({
      self: Type.String(),
      docs: Type.String({ description: 'The API reference (HTML).' }),
      openapi: Type.String({ description: 'The OpenAPI 3.1 document.' }),
      health: Type.String(),
      mcp: Type.String({ description: 'The MCP endpoint (Streamable HTTP).' }),
      mcpServerCard: Type.String({ description: "The MCP server's server.json." }),
    }),
  },
  { additionalProperties: false },
);
export type HomeIndex = Static<typeof HomeIndexSchema>;

export interface HomePageInput {
  /** The configured public origin (PUBLIC_URL), without a trailing slash. */
  publicUrl: string;
  version: string;
  /** The service runs the built-in demo market (synthetic data). */
  demoData: boolean;
}

export function homeIndex(input: HomePageInput): HomeIndex {
  const absolute = (path: string) => `${input.publicUrl}${path}`;
  return {
    name: 'Stoop',
    description: SUMMARY,
    version: input.version,
    demoData: input.demoData,
    links: {
      self: absolute('/'),
      docs: absolute(LINKS.docs),
      openapi: absolute(LINKS.openapi),
      health: absolute(LINKS.health),
      mcp: absolute(LINKS.mcp),
      mcpServerCard: absolute(LINKS.mcpServerCard),
    },
  };
}

/** A shell-quoted word: single quotes, so `$` and `&` in a URL stay literal. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function quickStart(publicUrl: string): string {
  return [
    '# Without a key: Free-tier limits, counted by your IP address',
    `curl ${shellQuote(`${publicUrl}/v1/areas?q=williamsburg`)}`,
    `curl ${shellQuote(`${publicUrl}/v1/search/rentals?maxPrice=4000&perPage=5`)}`,
    '',
    '# With a key: put it in $KEY, send it as a bearer token',
    "KEY='STOOP-…'   # your key (see “Getting a key” in the API reference)",
    `curl -H "Authorization: Bearer $KEY" ${shellQuote(`${publicUrl}/v1/usage`)}`,
    `curl -H "Authorization: Bearer $KEY" ${shellQuote(`${publicUrl}/v1/search/sales?perPage=5`)}`,
  ].join('\n');
}

/** Claude Desktop's `claude_desktop_config.json` (any stdio-only client), through mcp-remote. */
function mcpConfig(publicUrl: string): string {
  const config = {
    mcpServers: {
      stoop: {
        command: 'npx',
        args: [
          '-y',
          'mcp-remote',
          `${publicUrl}${LINKS.mcp}`,
          '--header',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-remote expands ${STOOP_KEY} from `env`, literally so
          'Authorization: Bearer ${STOOP_KEY}',
        ],
        env: { STOOP_KEY: 'STOOP-…' },
      },
    },
  };
  // Arrays of strings on one line: the snippet reads like the file people keep.
  return JSON.stringify(config, null, 2).replace(
    /\[\n\s*((?:"[^"\n]*",?\s*)+?)\n\s*\]/g,
    (_, items: string) => `[${items.split(/,\n\s*/).join(', ')}]`,
  );
}

export function homePage(input: HomePageInput): string {
  const { publicUrl } = input;
  const notice = input.demoData
    ? `<p class="notice" id="demo-notice"><strong>The data here is synthetic.</strong> This service runs Stoop’s built-in demo market: every listing, price, agent, fee, photo and score is generated by a seeded program and changed continuously by a market simulator; no listing describes a real apartment. The area tree and the building lots are real reference data.</p>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Stoop: NYC real estate listings data</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Stoop</h1>
<p class="lede">${escapeHtml(SUMMARY)}</p>
${notice}
<nav aria-label="Service">
<ul>
<li><a href="${LINKS.docs}">API reference</a></li>
<li><a href="${LINKS.openapi}">OpenAPI document</a></li>
<li><a href="${LINKS.health}">Service health</a></li>
<li><a href="${LINKS.mcpServerCard}">MCP server card</a></li>
</ul>
</nav>

<h2 id="quick-start">Quick start</h2>
<p>Search and area look-ups work without a key. Other operations (listings, buildings, the change feed, webhooks, watchers) need an API key, sent as <code>Authorization: Bearer &lt;key&gt;</code>; a key also raises your limits to its tier. Keys come from the operator of this service.</p>
<pre id="curl"><code>${escapeHtml(quickStart(publicUrl))}</code></pre>

<h2 id="mcp">Connect an AI client (MCP)</h2>
<p>The MCP endpoint is <code>${escapeHtml(`${publicUrl}${LINKS.mcp}`)}</code> (Streamable HTTP). Clients that speak OAuth (remote connectors) can use that URL directly and authorize in the browser, with a key or at the Free tier. For Claude Desktop or another stdio-only client, add this to its configuration (<code>claude_desktop_config.json</code>):</p>
<pre id="mcp-config"><code>${escapeHtml(mcpConfig(publicUrl))}</code></pre>
<p class="small"><code>mcp-remote</code> accepts plain HTTP only on localhost; for another host use an HTTPS URL, or add <code>--allow-http</code> on a network you trust.</p>

<p class="small">Stoop ${escapeHtml(input.version)} · this page as JSON: <code>Accept: application/json</code></p>
</main>
</body>
</html>
`;
}
