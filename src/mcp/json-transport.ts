import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type {
  JSONRPCMessage,
  JSONRPCRequest,
  MessageExtraInfo,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * HTTP requests' messages, one request at a time, each answered as one JSON
 * body: the Streamable HTTP transport's JSON response mode
 * (`enableJsonResponse`) reduced to what a stateless POST needs, as an SDK
 * `Transport` (the interface the SDK's own transports implement;
 * `Server.connect` drives it).
 *
 * The SDK's web-standard transport builds a Web `Request` (with its
 * `AbortSignal`), a `Response` and a `ReadableStream` per call and parses every
 * answer back with its message schemas to route it; over a Node request that
 * was about 30% of an MCP call's work on the request thread (650 → 460 µs).
 * The HTTP rules it applies before handing messages on are applied by the
 * route (./streamable-http.ts), with the SDK's own status codes and texts.
 *
 * Contract: `deliver` hands the messages to the connected protocol and
 * resolves with the answers to its requests, in the order they were sent, once
 * every one has been answered, except those the same delivery cancels (a
 * request the protocol never answers otherwise leaves it pending until
 * `close`, which rejects it: the route closes the server when its client goes
 * away). The next `deliver` may follow once it has resolved (a
 * server is lent to one HTTP request after another). Messages the server
 * sends that are not answers (progress, logging, server-to-client requests)
 * have no stream to go to in JSON mode and are dropped, as the SDK's JSON mode
 * drops them.
 */
export class JsonAnswerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private readonly answers = new Map<RequestId, JSONRPCMessage | undefined>();
  /** Requests of the current delivery that it also cancels: the protocol need not answer them. */
  private readonly cancelled = new Set<RequestId>();
  private waiting = 0;
  private settle: ((answers: JSONRPCMessage[]) => void) | undefined;
  private fail: ((error: Error) => void) | undefined;
  private closed = false;

  async start(): Promise<void> {}

  /**
   * Hands `messages` to the protocol; resolves with the answers to those that
   * are requests (empty when none is: notifications and responses only).
   */
  deliver(messages: readonly JSONRPCMessage[], extra?: MessageExtraInfo): Promise<JSONRPCMessage[]> {
    if (this.waiting > 0) throw new Error('The transport is still answering an earlier request');
    this.answers.clear();
    this.cancelled.clear();
    this.settle = undefined;
    this.fail = undefined;
    for (const message of messages) {
      const requestId = cancelledRequestId(message);
      if (requestId !== undefined) this.cancelled.add(requestId);
    }
    for (const message of messages) {
      if (isRequestMessage(message) && !this.cancelled.has(message.id)) {
        this.answers.set(message.id, undefined);
        this.waiting++;
      }
    }
    const answered =
      this.waiting === 0
        ? Promise.resolve([])
        : new Promise<JSONRPCMessage[]>((resolve, reject) => {
            this.settle = resolve;
            this.fail = reject;
          });
    for (const message of messages) this.onmessage?.(message, extra);
    return answered;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed || 'method' in message || !('id' in message)) return;
    const id = message.id;
    // A cancelled request answered before its cancellation was read: nobody waits for it.
    if (id !== undefined && this.cancelled.has(id) && !this.answers.has(id)) return;
    if (id === undefined || !this.answers.has(id) || this.answers.get(id) !== undefined) {
      throw new Error(`No request awaits an answer with id ${String(id)}`);
    }
    this.answers.set(id, message);
    if (--this.waiting === 0) this.settle?.([...this.answers.values()] as JSONRPCMessage[]);
  }

  /** Ends the transport; a `deliver` still waiting for answers rejects (they will not come). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.waiting > 0)
      this.fail?.(new Error('The MCP transport closed before every request was answered'));
    this.onclose?.();
  }
}

/**
 * Whether a message (already checked against the SDK's `JSONRPCMessageSchema`)
 * is a request, i.e. expects an answer: it has both a method and an id. The
 * SDK's `isJSONRPCRequest` answers the same by parsing the message again.
 */
export function isRequestMessage(message: JSONRPCMessage): message is JSONRPCRequest {
  return 'method' in message && 'id' in message;
}

/**
 * The request a `notifications/cancelled` names. The protocol aborts that
 * request's handler and sends no answer for it (as the MCP cancellation rules
 * ask), so a delivery that waited for one would never resolve.
 */
function cancelledRequestId(message: JSONRPCMessage): RequestId | undefined {
  if (!('method' in message) || 'id' in message || message.method !== 'notifications/cancelled')
    return undefined;
  const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
  return typeof requestId === 'string' || typeof requestId === 'number' ? requestId : undefined;
}
