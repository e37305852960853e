/**
 * The JSON answer transport under the SDK's own Server: answers come back in
 * the order the requests were sent, one request after another on the same
 * connection, notifications get no answer, and closing the transport while a
 * request is still running rejects its wait instead of leaving it pending
 * forever (the route closes a server whose client went away).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type JSONRPCMessage,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { JsonAnswerTransport } from '../src/mcp/json-transport.ts';

async function connected(callTool: (name: string) => Promise<string>) {
  const server = new Server({ name: 'test', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => ({
    content: [{ type: 'text', text: await callTool(params.name) }],
  }));
  const transport = new JsonAnswerTransport();
  await server.connect(transport);
  return { server, transport };
}

const call = (id: number | string, name: string): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name },
});

describe('JsonAnswerTransport', () => {
  it('answers a batch in the order sent, even when later requests finish first', async () => {
    const { transport } = await connected(async (name) => {
      await new Promise((resolve) => setTimeout(resolve, name === 'slow' ? 30 : 1));
      return name;
    });
    const answers = await transport.deliver([
      call('a', 'slow'),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      call(2, 'fast'),
      { jsonrpc: '2.0', id: 3, method: 'no/such/method' },
    ]);
    expect(answers.map((a) => ('id' in a ? a.id : undefined))).toEqual(['a', 2, 3]);
    expect(answers[0]).toMatchObject({ result: { content: [{ text: 'slow' }] } });
    expect(answers[2]).toMatchObject({ error: { code: -32601 } });
  });

  it('serves one request after another on the same connection, reusing request ids', async () => {
    const { transport } = await connected(async (name) => name);
    for (const name of ['first', 'second', 'third']) {
      const [answer] = await transport.deliver([call(1, name)]);
      expect(answer).toMatchObject({ id: 1, result: { content: [{ text: name }] } });
    }
  });

  it('resolves at once with no answers when only notifications were sent', async () => {
    const { transport } = await connected(async (name) => name);
    expect(await transport.deliver([{ jsonrpc: '2.0', method: 'notifications/initialized' }])).toEqual([]);
  });

  it('rejects a waiting delivery when the server closes (its handler aborted), and takes nothing after', async () => {
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const { server, transport } = await connected(async () => {
      started();
      return new Promise<string>(() => {});
    });
    const waiting = transport.deliver([call(1, 'never')]);
    await running;
    await server.close();
    await expect(waiting).rejects.toThrow(/closed before every request was answered/);
    // A late answer to a closed transport is dropped, not an error.
    await expect(transport.send({ jsonrpc: '2.0', id: 1, result: {} })).resolves.toBeUndefined();
  });

  it('does not wait for a request the same delivery cancels (the protocol sends it no answer)', async () => {
    const { transport } = await connected(async (name) => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      return name;
    });
    const cancel = (requestId: number): JSONRPCMessage => ({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId },
    });
    const answers = await transport.deliver([call(5, 'cancelled'), cancel(5), call(6, 'kept')]);
    expect(answers).toEqual([
      { jsonrpc: '2.0', id: 6, result: { content: [{ type: 'text', text: 'kept' }] } },
    ]);
    // Cancelled before its handler could run, or answered at once (an unknown method): nothing to wait for.
    expect(await transport.deliver([cancel(7), { jsonrpc: '2.0', id: 7, method: 'no/such/method' }])).toEqual(
      [],
    );
  });

  it('refuses an answer no request waits for', async () => {
    const { transport } = await connected(async (name) => name);
    await expect(transport.send({ jsonrpc: '2.0', id: 99, result: {} })).rejects.toThrow(/No request awaits/);
  });
});
