/**
 * A real third-party client: `mcp-remote` (the stdio ↔ remote bridge Claude
 * Desktop users run) spawned as a child process against `/mcp` with a bearer
 * header, driven over its stdio by the SDK's stdio client. It must connect
 * without OAuth (the header authorizes), so it never opens a browser; its
 * config lives in a temporary directory and it talks to loopback only.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';

/** `mcp-remote`'s bin (package.json `bin.mcp-remote`), run with this Node. */
const PROXY = fileURLToPath(new URL('../node_modules/mcp-remote/dist/proxy.js', import.meta.url));

let t: TestApp;
let configDir: string;
let key: string;

beforeAll(async () => {
  t = await createTestApp({ scale: 0.002, env: { RATE_LIMIT_FREE: '100000' } });
  key = (await t.ctx.subscriptions.issue({ accountId: 'mcp-remote', tier: 'FREE' })).key;
  configDir = await mkdtemp(join(tmpdir(), 'stoop-mcp-remote-'));
});
afterAll(async () => {
  await t?.close();
  if (configDir) await rm(configDir, { recursive: true, force: true });
});

it('initializes, lists the tools and calls search_rentals through mcp-remote', async () => {
  // A header file keeps the key out of the process list (mcp-remote's README).
  const headerFile = join(configDir, 'headers');
  await writeFile(headerFile, `Authorization: Bearer ${key}\n`, { mode: 0o600 });
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    // HTTP is accepted on loopback without --allow-http; http-only: the endpoint offers no SSE transport.
    args: [PROXY, `${t.url}/mcp`, '--header-file', headerFile, '--transport', 'http-only'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: configDir,
      MCP_REMOTE_CONFIG_DIR: configDir,
      // Nothing may open a browser: the header authorizes, so no OAuth flow starts.
      BROWSER: 'false',
    },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const client = new Client({ name: 'stoop-remote-test', version: '1.0.0' });
  try {
    await client.connect(transport);
    expect(client.getServerVersion()?.name).toBe('dev.stoop/stoop');

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('search_rentals');
    expect(tools).toHaveLength(15);

    const result = (await client.callTool({
      name: 'search_rentals',
      arguments: { areas: '100', perPage: 3 },
    })) as CallToolResult;
    expect(result.isError, stderr.join('')).toBeFalsy();
    const rest = await (await t.getAs(key, '/v1/search/rentals?areas=100&perPage=3')).json();
    expect(result.structuredContent).toEqual(rest);
    expect(result.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('rentals in Manhattan'),
    });
  } finally {
    await client.close();
  }
  expect(stderr.join('')).not.toMatch(/authoriz(e|ation) (url|required)|open(ing)? (the )?browser/i);
}, 30_000);
