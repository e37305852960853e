import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { TSchema } from '@sinclair/typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerFactory,
  type FastifyServerOptions,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import type { Config } from '../config.ts';
import { eventWebhooks } from '../modules/events/event-catalogue.ts';
import { noteServingRequest } from '../platform/worker/serving-activity.ts';
import { type AccessOptions, installAccessControl } from './access.ts';
import { AccessLogController } from './access-log.ts';
import { installCors } from './cors.ts';
import { docsIntro } from './docs-intro.ts';
import { docsPageOptions } from './docs-page.ts';
import { httpEdge } from './edge.ts';
import { ERRORS_TAG, errorsTagDescription } from './error-catalogue.ts';
import { installErrorHandling } from './error-handler.ts';
import { ApiError, errorBody } from './errors.ts';
import { completeOpenApiDocument, loadOpenApiExamples, openApiServers } from './openapi-document.ts';
import { redactingLogOptions } from './redact.ts';
import { requestLoggerFactory } from './request-logger.ts';
import { buildResponseSerializer } from './serializer.ts';
import { buildRequestValidator, rejectQueryWithoutDeclaredParameters } from './validation.ts';

/** The HTTP application with the TypeBox type provider, set once here: route plugins get it typed. */
export type HttpApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface HttpServerOptions {
  config: Config;
  /** Logger options (pino), or false; ignored when `loggerInstance` is given. */
  logger?: FastifyServerOptions['logger'];
  /** A logger shared with the rest of the process (background jobs log through it too). */
  loggerInstance?: FastifyBaseLogger;
  access: AccessOptions;
  /** Every schema with an `$id`, published as OpenAPI components. */
  componentSchemas: readonly TSchema[];
  /**
   * A server already listening to build the app over (`npm start`: ./starting.ts);
   * the app then is never `listen`ed, and its owner closes the server.
   */
  serverFactory?: FastifyServerFactory<RawServerDefault>;
}

/**
 * The one set of logger options: the request logger's and the process
 * logger's (`src/app.ts` builds it from these), so both redact alike.
 */
export function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  if (config.logLevel === 'silent') return false;
  return {
    level: config.logLevel,
    // Credentials never reach the log, whatever a future serializer includes.
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.apiKey', '*.secret'],
      censor: '[redacted]',
    },
    // …nor when a client puts them in a URL, or an error message quotes one.
    ...redactingLogOptions(config.apiKeyPrefix),
  };
}

/**
 * The framework part of the HTTP application, before any route: request ids,
 * the one error envelope (router and validation errors included), access
 * control, schemas and the OpenAPI document with its docs page. Routes are
 * registered by the composition root (`src/app.ts`).
 */
export async function createHttpServer(options: HttpServerOptions): Promise<HttpApp> {
  const { config } = options;
  const edge = httpEdge(config.http, config.publicUrl);
  const app = Fastify({
    ...(options.loggerInstance
      ? { loggerInstance: options.loggerInstance }
      : { logger: options.logger ?? loggerOptions(config) }),
    genReqId: () => randomUUID(),
    logController: new AccessLogController(),
    childLoggerFactory: requestLoggerFactory,
    ...(options.serverFactory ? { serverFactory: options.serverFactory } : {}),
    // X-Forwarded-For is believed only from configured proxies.
    trustProxy: config.trustedProxies.length > 0 ? [...config.trustedProxies] : false,
    // Timeouts, body and header limits, and the error envelope for what
    // Node's parser rejects: what one connection may hold (./edge.ts).
    ...edge.fastifyOptions,
    // Router-level rejections (undecodable URL, over-long path parameter) use the one envelope too.
    frameworkErrors: (error, request, reply) => {
      const apiError = ApiError.invalidParam({
        parameter: 'path',
        location: 'path',
        rule: error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'max_length' : 'encoding',
        message:
          error.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? 'a path segment is too long'
            : 'the URL is not validly percent-encoded',
      });
      void (reply as FastifyReply)
        .code(apiError.status)
        .header('X-Request-Id', request.id)
        .send(errorBody(apiError, request.id, config.publicUrl));
    },
    // Query strings and path parameters are coerced from text (numbers must be finite decimals,
    // no NUL characters); JSON bodies are never coerced. See src/http/validation.ts.
    // Responses are serialized by fast-json-stringify with unions it can decide without a validator (./serializer.ts).
    schemaController: {
      compilersFactory: { buildValidator: buildRequestValidator, buildSerializer: buildResponseSerializer },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorateRequest('caller', null as never);
  // A callback hook: it runs on every request, and an async one costs a promise and a microtask turn.
  app.addHook('onRequest', (request, reply, done) => {
    // Background worker threads rest while requests arrive (platform/worker/serving-activity.ts).
    noteServingRequest();
    reply.header('X-Request-Id', request.id);
    done();
  });
  edge.install(app);
  installCors(app, options.config.publicUrl);
  installAccessControl(app, options.access);
  installErrorHandling(app, config.publicUrl);
  app.addHook('preValidation', rejectQueryWithoutDeclaredParameters);

  for (const schema of options.componentSchemas) app.addSchema(schema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Stoop API',
        version: '1.0.0',
        description: docsIntro(config.tierLimits),
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Absolute, from PUBLIC_URL: generated clients and validating proxies take the base URL from here.
      servers: openApiServers(config.publicUrl),
      webhooks: {
        ...eventWebhooks(),
        'webhook.ping': {
          post: {
            summary: 'A test delivery',
            description:
              'Sent by `POST /v1/webhooks/{id}/test` through the same outbox, signing and retries as real events: `{id: "evt_ping_…", type: "webhook.ping", timestamp, data: {subscriptionId}}`.',
            operationId: 'event_webhook_ping',
            tags: ['Webhooks'],
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['id', 'type', 'timestamp', 'data'],
                    properties: {
                      id: { type: 'string' },
                      type: { const: 'webhook.ping' },
                      timestamp: { type: 'string', format: 'date-time' },
                      data: {
                        type: 'object',
                        required: ['subscriptionId'],
                        properties: { subscriptionId: { type: 'string' } },
                      },
                    },
                  },
                },
              },
            },
            responses: { '2XX': { description: 'Any 2xx acknowledges the delivery.' } },
          },
        },
        'watcher.change': {
          post: {
            summary: 'One of your watchers saw a change',
            description:
              'Sent to subscriptions of the account that owns the watcher and asked for `watcher.change` (`filters` do not apply). `data.changes` lists what changed (field, old and new value; listings added to or removed from a building or search). Queued in the transaction that records the change, so the stream (`GET /v1/watchers/{id}/stream`) and the webhook see the same changes; signed and retried like every delivery.',
            operationId: 'event_watcher_change',
            tags: ['Watchers'],
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/WatcherChange' } } },
            },
            responses: { '2XX': { description: 'Any 2xx acknowledges the delivery.' } },
          },
        },
      },
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key (`STOOP-<uuid>`) or an OAuth access token (`stoop_at_…`, see the OAuth endpoints): `Authorization: Bearer <credential>`. Public endpoints accept no credential and apply Free-tier limits by client IP.',
          },
        },
      },
      tags: [
        { name: 'Search', description: 'Rental and sale listing search.' },
        {
          name: 'Listings',
          description: 'One listing: detail, price history, fees and open houses (API key, Starter+).',
        },
        {
          name: 'Buildings',
          description: 'One building: detail, listings, scores and HPD violations (API key, Starter+).',
        },
        { name: 'Areas', description: 'The area tree.' },
        { name: 'Market', description: 'Market statistics: snapshots, comparisons and trends.' },
        { name: 'Service', description: 'Health and service metadata.' },
        { name: 'Admin', description: 'Key administration for operators (INTERNAL tier).' },
        {
          name: 'Events',
          description:
            'Listing change events, detected by the refresh pipeline and kept in a durable log (see `webhooks`); read them with the change feed, paged or as a stream.',
        },
        { name: 'Photos', description: 'Listing and building photos (WebP), by key and size.' },
        {
          name: 'MCP',
          description:
            'Model Context Protocol endpoint for AI clients (Streamable HTTP, stateless) and its server card. JSON-RPC errors on `/mcp` use the JSON-RPC shape, not the REST envelope.',
        },
        {
          name: 'OAuth',
          description:
            'OAuth 2.1 authorization server (PKCE S256, public clients, dynamic registration) and discovery (RFC 8414, RFC 9728). Errors use the RFC 6749 family (`{error, error_description}`), not the REST envelope.',
        },
        {
          name: 'Webhooks',
          description:
            'Push delivery of listing events to your URL (Business+): signed per Standard Webhooks, retried, at least once.',
        },
        {
          name: 'Watchers',
          description:
            'Persistent monitoring of one listing, one building or one search (Business+): polled on an interval, each poll counted against the quota; changes recorded as `watcher.change` events, streamed (SSE) and delivered to the account’s webhooks that ask for them.',
        },
        { name: ERRORS_TAG, description: errorsTagDescription() },
      ],
    },
    // Headers, every error status, examples and webhook security: ./openapi-document.ts.
    transformObject: (generated) =>
      'openapiObject' in generated
        ? completeOpenApiDocument(generated.openapiObject, {
            publicUrl: config.publicUrl,
            examples: loadOpenApiExamples(),
          })
        : generated.swaggerObject,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  });
  // The OpenAPI document states each route's access policy, from the same
  // declaration the access hook enforces.
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if (!access || !route.schema) return;
    const schema = route.schema as Record<string, unknown>;
    schema.security =
      access.metering === 'none' ? [] : access.requiresKey ? [{ apiKey: [] }] : [{}, { apiKey: [] }];
    schema['x-min-tier'] = access.minTier;
    schema['x-metering'] = access.metering;
  });
  await app.register(swaggerUi, docsPageOptions());
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
