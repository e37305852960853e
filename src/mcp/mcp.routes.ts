/**
 * `/mcp`: the Model Context Protocol endpoint (Streamable HTTP, stateless), and
 * `/.well-known/mcp/server.json`, its server card.
 *
 * Stateless: no session id, every POST is answered on its own (JSON, not an
 * SSE stream), so any node behind a load balancer can take any request. The
 * access hook authenticates the HTTP request and charges it one rate-window
 * token (`metering: 'rate'`); each tool call or resource read is then charged
 * like the REST call it mirrors (`Metering.charge`: tier gate, monthly quota).
 */

import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type AccessPolicy, type CallCharge, type Metering, UNMETERED_ROUTE } from '../http/access.ts';
import { isTrustedBrowserOrigin } from '../http/cors.ts';
import { joinBuffers } from '../http/envelope.ts';
import { ApiError, errorDocsUrl } from '../http/errors.ts';
import type { BodyMemory, ResponseSlabs } from '../http/response-slabs.ts';
import { ErrorResponse } from '../http/schemas.ts';
import { toAreaRef } from '../modules/areas/areas.service.ts';
// The OAuth module serves this document (RFC 9728); a 401 from /mcp points at it.
import { MCP_RESOURCE_METADATA_PATH } from '../oauth/metadata.ts';
import { isRequestMessage, JsonAnswerTransport } from './json-transport.ts';
import { PROMPTS, renderPrompt } from './prompts.ts';
import { buildServerCard, MCP_SERVER_NAME, ServerCardSchema } from './server-card.ts';
import { acceptMessages } from './streamable-http.ts';
import {
  asApiError,
  buildToolCatalogue,
  serializedToolBody,
  type ToolCall,
  type ToolDefinition,
  type ToolServices,
} from './tools.ts';

/** Any key (or OAuth token) may connect; the HTTP request costs a rate-window token, tool calls their quota. */
export const MCP_ROUTE: AccessPolicy = {
  minTier: 'FREE',
  requiresKey: true,
  metering: 'rate',
  resourceMetadataPath: MCP_RESOURCE_METADATA_PATH,
};

export interface McpRouteServices extends ToolServices {
  metering: Pick<Metering, 'charge'>;
  version: string;
  /** Memory answers with spliced tool bodies are assembled in. */
  slabs: ResponseSlabs;
}

/** Servers kept connected for the next request (see `lendServer`); about one per request in flight. */
const MAX_IDLE_SERVERS = 32;

/** What the handlers of a lent server act for: one HTTP request's caller, charges and answer. */
interface Exchange {
  request: FastifyRequest;
  splices: BodySplices;
  call: ToolCall;
  charge(minTier: ToolDefinition['minTier']): Promise<CallCharge>;
}

/** A server with its transport, and the request it is answering (none while idle). */
interface LentServer {
  server: Server;
  transport: JsonAnswerTransport;
  exchange: Exchange | undefined;
}

/** Sentinel for a body that is not JSON: answered with a JSON-RPC parse error rather than the API envelope. */
const NOT_JSON: unique symbol = Symbol('not JSON');

const JsonRpcErrorSchema = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Union([Type.String(), Type.Number(), Type.Null()]),
    error: Type.Object({ code: Type.Integer(), message: Type.String() }),
  },
  { description: 'A JSON-RPC 2.0 error response.' },
);

function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.code(status).send({ jsonrpc: '2.0', id: null, error: { code, message } });
}

/** What an expected failure says to a model: the REST error's message, with what to do about it. */
function errorText(error: ApiError, subject: string): string {
  const details = error.details ?? {};
  if (error.code === 'TIER_RESTRICTED') {
    return `${subject} requires the ${String(details.requiredTier)} tier or above; this credential is ${String(details.currentTier)}. Use a key of the ${String(details.requiredTier)} tier (or higher) to call it.`;
  }
  if (details.retryAfter !== undefined) return `${error.message}. Retry after ${details.retryAfter} s.`;
  return error.message;
}

function toolError(error: ApiError, toolName: string, publicUrl: string): CallToolResult {
  const text = errorText(error, toolName);
  const details = error.details ?? {};
  const docs = errorDocsUrl(publicUrl, error.code);
  return {
    isError: true,
    content: [{ type: 'text', text }],
    structuredContent: { error: { code: error.code, message: text, status: error.status, docs, ...details } },
  };
}

/**
 * Tool bodies that arrive as JSON text (./tools.ts, `serializedToolBody`) go
 * into the answer as those bytes. The handler hands the SDK a stand-in,
 * `{"<token>":true}` with a random token, as `structuredContent`; the SDK
 * serializes the JSON-RPC answer around it, and `splicedAnswer` puts the body
 * where the stand-in is. The answer is then byte for byte what the SDK would
 * have written for the parsed body (the same JSON), without serializing 50
 * listings a second time.
 */
class BodySplices {
  private readonly bodies = new Map<string, readonly Buffer[]>();

  /** The stand-in for one body (unique to this answer: a token no data can contain). */
  standIn(json: readonly Buffer[]): Record<string, unknown> {
    const token = `stoop-body-${randomUUID()}`;
    this.bodies.set(token, json);
    return { [token]: true };
  }

  /**
   * The answer with every stand-in replaced, copied once into `allocate`'s
   * memory; a stand-in the SDK did not write as expected is an error.
   */
  splicedAnswer(answer: Buffer, allocate: BodyMemory): Buffer {
    if (this.bodies.size === 0) return answer;
    const parts: Buffer[] = [];
    let from = 0;
    const found = [...this.bodies].map(([token, json]) => {
      const standIn = Buffer.from(`{"${token}":true}`);
      const at = answer.indexOf(standIn);
      if (at < 0) throw new Error('MCP answer: a tool body stand-in is missing from the serialized answer');
      return { at, end: at + standIn.length, json };
    });
    for (const { at, end, json } of found.sort((a, b) => a.at - b.at)) {
      parts.push(answer.subarray(from, at), ...json);
      from = end;
    }
    parts.push(answer.subarray(from));
    return joinBuffers(parts, allocate);
  }
}

/** Static answers of the list methods, built once. */
interface Catalogue {
  tools: readonly ToolDefinition[];
  byName: ReadonlyMap<string, ToolDefinition>;
  listed: Tool[];
  instructions: string;
}

function buildCatalogue(services: ToolServices): Catalogue {
  const tools = buildToolCatalogue(services);
  return {
    tools,
    byName: new Map(tools.map((t) => [t.name, t])),
    listed: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: {
        title: t.title,
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
      _meta: { 'dev.stoop/minTier': t.minTier },
    })),
    instructions:
      'Stoop serves NYC rental and sale listings, buildings, areas and market statistics. Turn place names into area ids with list_areas, then search_rentals / search_sales (Free), market tools for prices and trends (Free), and the listing and building tools for details (Starter+; price history Pro+). Each tool call counts one request against the monthly quota of the key.',
  };
}

export const mcpRoutes: FastifyPluginAsyncTypebox<McpRouteServices> = async (app, services) => {
  const catalogue = buildCatalogue(services);
  const publicOrigin = new URL(services.publicUrl).origin;
  const card = buildServerCard(services.publicUrl, services.version);
  // A Server builds its own Ajv unless given one (most of a Server's construction cost):
  // one for the process. It only checks elicitation answers, which this server never requests.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  let areasJson: string | undefined;

  app.get(
    '/.well-known/mcp/server.json',
    {
      config: { access: UNMETERED_ROUTE },
      schema: {
        operationId: 'getMcpServerCard',
        tags: ['MCP'],
        summary: 'MCP server description (server.json)',
        description:
          'Describes the MCP server in the MCP registry `server.json` format (schema 2025-12-11): name, title, version, description and the remote endpoint (`streamable-http` at `/mcp`), with the Authorization header it needs. Clients and registries read it to connect.',
        response: { 200: ServerCardSchema },
      },
    },
    async () => card,
  );

  // `/mcp` has its own JSON parser (encapsulated here): a body that is not JSON is
  // a JSON-RPC parse error, the answer an MCP client understands.
  await app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      try {
        done(null, JSON.parse(body as string));
      } catch {
        done(null, NOT_JSON);
      }
    });

    const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) => {
      reply.header('Allow', 'POST');
      throw new ApiError(
        'METHOD_NOT_ALLOWED',
        'This MCP endpoint is stateless: send JSON-RPC messages with POST; it offers no SSE stream (GET) and no session to end (DELETE)',
      );
    };
    for (const method of ['GET', 'DELETE'] as const) {
      scope.route({
        method,
        url: '/mcp',
        config: { access: MCP_ROUTE },
        schema: {
          operationId: method === 'GET' ? 'mcpStream' : 'mcpEndSession',
          tags: ['MCP'],
          summary: `${method} /mcp: not offered (405)`,
          description:
            'The endpoint is stateless: no standalone SSE stream and no sessions. Answers 405 with `Allow: POST` (after authentication).',
          response: { 401: ErrorResponse, 405: ErrorResponse, 429: ErrorResponse },
        },
        handler: notAllowed,
      });
    }

    scope.post(
      '/mcp',
      {
        config: { access: MCP_ROUTE },
        schema: {
          operationId: 'mcp',
          tags: ['MCP'],
          summary: 'MCP endpoint (Streamable HTTP, stateless)',
          description:
            'Model Context Protocol over Streamable HTTP: POST one JSON-RPC 2.0 message (initialize, tools/list, tools/call, resources/*, prompts/*) with `Accept: application/json, text/event-stream`; the answer is JSON. Stateless: no `Mcp-Session-Id`, any node answers. Needs a bearer credential (API key or OAuth access token); without one the 401 names the protected-resource metadata (`WWW-Authenticate: Bearer resource_metadata=…`). Each HTTP request costs one rate-limit token; each tool call or resource read counts one request against the monthly quota (like the REST call it mirrors, with the same tier gate). A `tools/call` that fails for an expected reason (tier, quota, invalid arguments, not found) is a tool result with `isError: true`, not a JSON-RPC error. An `Origin` header other than the service’s own or a loopback one is refused (403, DNS-rebinding protection).',
          body: Type.Unknown({
            description: 'One JSON-RPC 2.0 request, notification or response (opaque here).',
          }),
          response: {
            200: Type.Unknown({ description: 'The JSON-RPC response.' }),
            202: Type.Null({ description: 'A notification or response was accepted; no body.' }),
            400: JsonRpcErrorSchema,
            401: ErrorResponse,
            403: JsonRpcErrorSchema,
            406: JsonRpcErrorSchema,
            415: JsonRpcErrorSchema,
            429: ErrorResponse,
            500: JsonRpcErrorSchema,
          },
        },
      },
      async (request, reply) => {
        const origin = request.headers.origin;
        if (origin !== undefined && !isTrustedBrowserOrigin(origin, publicOrigin)) {
          return jsonRpcError(
            reply,
            403,
            -32000,
            `Forbidden: Origin ${JSON.stringify(origin.slice(0, 100))} is not allowed`,
          );
        }
        if (request.body === NOT_JSON) {
          return jsonRpcError(reply, 400, ErrorCode.ParseError, 'Parse error: the body is not valid JSON');
        }
        if (Array.isArray(request.body) && request.body.length === 0) {
          // JSON-RPC 2.0 §6: an empty batch is an invalid request (the SDK would accept it silently).
          return jsonRpcError(reply, 400, ErrorCode.InvalidRequest, 'Invalid Request: an empty batch');
        }
        const accepted = acceptMessages(request.headers, request.body);
        if (!('messages' in accepted)) {
          return jsonRpcError(reply, accepted.status, accepted.code, accepted.message);
        }
        const exchange = newExchange(request, reply);
        // Off the pool: an initialize (the server keeps what a client says of itself), and
        // notifications (a cancellation names a request id, which a later caller's request on
        // a pooled server could reuse before the notification's handler has run).
        const ownServer = accepted.initializing || !accepted.messages.every(isRequestMessage);
        const lent = ownServer ? await newLentServer() : await lendServer();
        lent.exchange = exchange;
        let ended = false;
        // A client gone before its answer was written aborts the handlers still running; that
        // server is closed and not lent again.
        reply.raw.on('close', () => {
          if (reply.raw.writableFinished || ended) return;
          ended = true;
          void lent.server.close();
        });
        try {
          const answers = await lent.transport.deliver(accepted.messages);
          if (answers.length === 0) return reply.code(202).send();
          // A batch is answered with an array, a single message with its one answer (as the SDK does).
          const json = Buffer.from(JSON.stringify(accepted.batch ? answers : answers[0]));
          return reply
            .type('application/json')
            .send(exchange.splices.splicedAnswer(json, services.slabs.memoryFor(reply.raw)));
        } catch (error) {
          // The client went away and its server was closed: nobody is left to answer.
          if (ended) return reply.hijack();
          // Handlers' failures are JSON-RPC errors already (the protocol answers them); this is the rest.
          request.log.error({ err: error }, 'MCP request failed');
          return jsonRpcError(reply, 500, ErrorCode.InternalError, 'Internal error');
        } finally {
          lent.exchange = undefined;
          if (!ended && !ownServer) giveBack(lent);
          ended = true;
        }
      },
    );
  });

  /**
   * Servers connected to their transports, waiting for a request. Building a
   * Server (its protocol state, eight handlers, the connection) was a tenth
   * of a stateless call's own work; a server answers one HTTP request at a
   * time and is lent again once that request has its answers. One that met a
   * client going away is closed instead (its handlers aborted).
   */
  const idleServers: LentServer[] = [];

  async function lendServer(): Promise<LentServer> {
    return idleServers.pop() ?? newLentServer();
  }

  function giveBack(lent: LentServer): void {
    if (idleServers.length < MAX_IDLE_SERVERS) idleServers.push(lent);
  }

  async function newLentServer(): Promise<LentServer> {
    const lent: LentServer = {
      server: undefined as unknown as Server,
      transport: new JsonAnswerTransport(),
      exchange: undefined,
    };
    lent.server = createServer(() => {
      if (lent.exchange === undefined) throw new Error('MCP handler ran outside an HTTP request');
      return lent.exchange;
    });
    await lent.server.connect(lent.transport);
    return lent;
  }

  /** What one HTTP request's calls are charged to and answered with. */
  function newExchange(request: FastifyRequest, reply: FastifyReply): Exchange {
    const caller = request.caller;
    return {
      request,
      splices: new BodySplices(),
      call: {
        caller,
        serialize: (body: object, schema: TSchema) => reply.serializeInput({ ...body }, schema),
      },
      charge: async (minTier) => {
        const charged = await services.metering.charge(request, caller, minTier);
        // The JSON answer is written after the handlers ran: its headers show the count after this call.
        reply.header('X-Quota-Used', charged.used);
        reply.header('X-Quota-Remaining', Math.max(0, charged.limits.monthlyQuota - charged.used));
        if (charged.overage) reply.header('X-Quota-Overage', 'true');
        return charged;
      },
    };
  }

  /** An MCP server whose handlers act for the HTTP request `current` names when they run. */
  function createServer(current: () => Exchange): Server {
    const server = new Server(
      { name: MCP_SERVER_NAME, title: 'Stoop', version: services.version },
      {
        capabilities: { tools: {}, resources: {}, prompts: {} },
        instructions: catalogue.instructions,
        jsonSchemaValidator,
      },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: catalogue.listed }));
    server.setRequestHandler(CallToolRequestSchema, async ({ params }): Promise<CallToolResult> => {
      const tool = catalogue.byName.get(params.name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
      const { charge, call, splices, request } = current();
      try {
        await charge(tool.minTier);
        const args = params.arguments ?? {};
        const body = await tool.call(args, call);
        const json = serializedToolBody(body);
        return {
          content: [{ type: 'text', text: tool.summarize(body, args) }],
          structuredContent: json ? splices.standIn(json) : (body as unknown as Record<string, unknown>),
        };
      } catch (error) {
        return toolError(asApiError(error, request), tool.name, services.publicUrl);
      }
    });

    server.setRequestHandler(ListResourcesRequestSchema, () => ({
      resources: [
        {
          uri: 'stoop://areas',
          name: 'areas',
          title: 'NYC area tree',
          description:
            'Every region, borough and neighborhood (id, name, level, parentId) as JSON: the ids search and market tools take. Counts one request (Free).',
          mimeType: 'application/json',
        },
      ],
    }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: [
        {
          uriTemplate: 'stoop://listing/{id}',
          name: 'listing',
          title: 'Listing detail',
          description:
            'The full record of one listing as JSON (the get_property answer). Starter tier and up; counts one request.',
          mimeType: 'application/json',
        },
      ],
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async ({ params }) => {
      const { uri } = params;
      const listing = /^stoop:\/\/listing\/([^/?#]+)$/.exec(uri);
      if (uri !== 'stoop://areas' && !listing) {
        throw new McpError(-32002, `Resource not found: ${uri}`);
      }
      const { charge, call, request } = current();
      try {
        if (uri === 'stoop://areas') {
          await charge('FREE');
          areasJson ??= JSON.stringify({ data: services.areaTree.records.map(toAreaRef) });
          return { contents: [{ uri, mimeType: 'application/json', text: areasJson }] };
        }
        const tool = catalogue.byName.get('get_property')!;
        await charge(tool.minTier);
        const body = await tool.call({ id: decodeURIComponent(listing![1]!) }, call);
        return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(body) }] };
      } catch (error) {
        const apiError = asApiError(error, request);
        throw new McpError(
          apiError.code === 'NOT_FOUND'
            ? -32002
            : apiError.status >= 500
              ? ErrorCode.InternalError
              : ErrorCode.InvalidRequest,
          errorText(apiError, uri),
          { code: apiError.code, ...apiError.details },
        );
      }
    });

    server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: PROMPTS }));
    server.setRequestHandler(GetPromptRequestSchema, ({ params }) => {
      const rendered = renderPrompt(params.name, params.arguments ?? {});
      if (!rendered) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${params.name}`);
      return rendered;
    });
    return server;
  }
};
