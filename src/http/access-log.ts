import type { FastifyReply, FastifyRequest } from 'fastify';
import { LogController } from 'fastify';

/**
 * One access-log line per request, written when the response is done: the
 * request (method, redacted URL, host, client address: see ./redact.ts), the
 * status and the response time, under the request's `reqId`. Fastify's default
 * writes an "incoming request" line as well, which says nothing the completion
 * line does not and doubled the logging cost of every request (two serialized,
 * redacted lines; ~4% of a search's throughput). A request that never
 * completes is still seen: its error, timeout or aborted connection is logged
 * where it happens.
 */
export class AccessLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return;
    if (error) {
      reply.log.error(
        { req: request, res: reply, err: error, responseTime: reply.elapsedTime },
        'request errored',
      );
    } else {
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    }
  }
}
