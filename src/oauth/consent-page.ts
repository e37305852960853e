/**
 * The consent page's HTML: server-rendered, no script, usable with a keyboard
 * and a screen reader (a `lang`, one heading, every input labelled, errors
 * announced with role="alert"). Every dynamic value is HTML-escaped. The only
 * style is one inline sheet, allowed by its hash in the Content-Security-Policy.
 */
import { createHash } from 'node:crypto';

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f5f4;color:#1c1917}
main{max-width:32rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002}
h1{font-size:1.4rem;margin-top:0}
label{display:block;font-weight:600;margin-top:1rem}
input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;margin-top:.25rem}
.help{color:#57534e;font-size:.9rem;margin:.25rem 0 0}
.error{color:#991b1b;background:#fef2f2;border:1px solid #fecaca;padding:.5rem .75rem;border-radius:4px}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin-top:1.25rem}
button{font:inherit;padding:.5rem 1rem;border-radius:4px;border:1px solid #44403c;background:#fff;cursor:pointer}
button.primary{background:#1c1917;color:#fff}
button:focus-visible,input:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
`;

/** `'sha256-…'` of the inline style, for the page's CSP. */
export const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · Stoop</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

export interface ConsentPageInput {
  /** The client as the user should know it. */
  clientLabel: string;
  /** Where the user is sent back to (host, with port when not the default). */
  redirectHost: string;
  /** The authorize parameters and the CSRF token, carried through as hidden fields. */
  hidden: Readonly<Record<string, string>>;
  /** Shown above the form (a wrong key, a stale form). */
  error?: string;
  /** Which MCP/API resource the tokens will be for, in words. */
  resourceLabel: string;
}

export function consentPage(input: ConsentPageInput): string {
  const hidden = Object.entries(input.hidden)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const error = input.error
    ? `<p class="error" role="alert" id="error">${escapeHtml(input.error)}</p>\n`
    : '';
  const describedBy = input.error ? 'key-help error' : 'key-help';
  return page(
    `Authorize ${input.clientLabel}`,
    `<h1>Authorize access to Stoop</h1>
<p><strong id="client">${escapeHtml(input.clientLabel)}</strong> wants to call ${escapeHtml(input.resourceLabel)} for you.
When you decide, you will be sent back to <strong id="redirect-host">${escapeHtml(input.redirectHost)}</strong>.</p>
${error}<form method="post" action="/oauth/authorize">
${hidden}
<label for="api_key">Stoop API key</label>
<input id="api_key" name="api_key" type="password" autocomplete="off" spellcheck="false" aria-describedby="${describedBy}"${input.error ? ' aria-invalid="true"' : ''}>
<p class="help" id="key-help">The application gets the tier of this key and shares its quota; it never sees the key itself. No key? Continue as Free (Free-tier limits, counted by your network address).</p>
<div class="actions">
<button type="submit" name="action" value="approve" class="primary">Authorize with this key</button>
<button type="submit" name="action" value="free">Continue as Free</button>
<button type="submit" name="action" value="deny">Deny</button>
</div>
</form>`,
  );
}

/** A request that cannot be sent back to the client: explained here, never redirected. */
export function errorPage(title: string, message: string): string {
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>
<p role="alert">${escapeHtml(message)}</p>
<p>Return to the application and start again. If this keeps happening, the application may be misconfigured.</p>`,
  );
}
