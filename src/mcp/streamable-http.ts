import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import {
  ErrorCode,
  isInitializeRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { isRequestMessage } from './json-transport.ts';

/** A POST the transport refuses: the HTTP status and the JSON-RPC error it answers with (`id: null`). */
export interface TransportRefusal {
  status: number;
  code: number;
  message: string;
}

/** What a stateless POST carries once the transport's rules have passed. */
export interface AcceptedMessages {
  messages: JSONRPCMessage[];
  /** Whether the body was a JSON array (the answer is then an array too). */
  batch: boolean;
  /** Whether it is an `initialize` request (then the only message). */
  initializing: boolean;
}

/** The request headers the rules read, as Node gives them. */
export interface TransportHeaders {
  accept?: string | undefined;
  'content-type'?: string | undefined;
  'mcp-protocol-version'?: string | string[] | undefined;
}

/**
 * The MCP Streamable HTTP rules for a POST to a stateless server, in the order
 * and with the status codes and texts of the SDK's own transport
 * (`WebStandardStreamableHTTPServerTransport.handlePostRequest`), so a client
 * sees the same answers whichever serves it:
 *
 * - `Accept` must list both `application/json` and `text/event-stream` (406);
 * - `Content-Type` must be `application/json` (415);
 * - a batch holds at most the SDK's `MAX_BATCH_SIZE` messages (400, -32600);
 * - every message must be a JSON-RPC 2.0 message (the SDK's
 *   `JSONRPCMessageSchema`; 400, -32700);
 * - an `initialize` request comes alone (400, -32600);
 * - outside initialization, an `MCP-Protocol-Version` header, when sent, must
 *   name a version the SDK supports (400, -32000).
 *
 * Stateless, so there is no session to check (`Mcp-Session-Id` is ignored).
 * The body arrives parsed (the route's JSON parser answers text that is not
 * JSON); an empty batch is refused there too (JSON-RPC 2.0 §6).
 */
export function acceptMessages(
  headers: TransportHeaders,
  body: unknown,
): AcceptedMessages | TransportRefusal {
  const accept = headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
    return {
      status: 406,
      code: -32000,
      message: 'Not Acceptable: Client must accept both application/json and text/event-stream',
    };
  }
  if (!isJsonContentType(headers['content-type'])) {
    return {
      status: 415,
      code: -32000,
      message: 'Unsupported Media Type: Content-Type must be application/json',
    };
  }
  const batch = Array.isArray(body);
  if (batch && body.length > MAX_BATCH_SIZE) {
    return {
      status: 400,
      code: ErrorCode.InvalidRequest,
      message: `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`,
    };
  }
  const messages: JSONRPCMessage[] = [];
  for (const sent of batch ? body : [body]) {
    const parsed = JSONRPCMessageSchema.safeParse(sent);
    if (!parsed.success) {
      return { status: 400, code: ErrorCode.ParseError, message: 'Parse error: Invalid JSON-RPC message' };
    }
    messages.push(parsed.data);
  }
  // The method first: the SDK's check is a schema parse, and building a failed parse's issues for every
  // other message was a visible part of a tool call's work.
  const initializing = messages.some(
    (message) => 'method' in message && message.method === 'initialize' && isInitializeRequest(message),
  );
  if (initializing && messages.length > 1) {
    return {
      status: 400,
      code: ErrorCode.InvalidRequest,
      message: 'Invalid Request: Only one initialization request is allowed',
    };
  }
  const version = headers['mcp-protocol-version'];
  if (!initializing && version !== undefined) {
    const sent = Array.isArray(version) ? version.join(', ') : version;
    if (!SUPPORTED_PROTOCOL_VERSIONS.includes(sent)) {
      return {
        status: 400,
        code: -32000,
        message: `Bad Request: Unsupported protocol version: ${sent} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      };
    }
  }
  const ids = new Set<unknown>();
  for (const message of messages) {
    if (!isRequestMessage(message)) continue;
    // Answers are matched to requests by id: two requests of one batch with the same id could not be told apart.
    if (ids.has(message.id)) {
      return {
        status: 400,
        code: ErrorCode.InvalidRequest,
        message: `Invalid Request: the batch has two requests with the id ${JSON.stringify(message.id)}`,
      };
    }
    ids.add(message.id);
  }
  return { messages, batch, initializing };
}
