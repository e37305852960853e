import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

/**
 * One stateless `tools/call` on `/mcp` as an MCP client sends it (accepting
 * JSON or an event stream), with `key` as its bearer credential; the JSON-RPC
 * result. A tool failure is a result with `isError`, not an HTTP error.
 */
export async function callTool(
  t: TestApp,
  key: string | null,
  name: string,
  args: unknown,
): Promise<CallToolResult> {
  const response = await t.getAs(key, '/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { result: CallToolResult }).result;
}
