import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TSchema } from '@sinclair/typebox';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { AppContext } from './app-context.ts';
import type { Config } from './config.ts';
import { installAccessControl } from './http/access.ts';
import { installErrorHandling, rejectNonFiniteQueryNumbers } from './http/error-handler.ts';
import { ApiError, errorBody } from './http/errors.ts';
import { SHARED_SCHEMAS } from './http/schemas.ts';
import { MarketSnapshotJob } from './jobs/market-snapshots.ts';
import { registerAdminRoutes } from './modules/admin/admin.routes.ts';
import { ADMIN_SCHEMAS } from './modules/admin/admin.schema.ts';
import { listAreas } from './modules/areas/areas.repository.ts';
import { registerAreaRoutes } from './modules/areas/areas.routes.ts';
import { AreaRefSchema, AreaSchema } from './modules/areas/areas.schema.ts';
import { AreasService } from './modules/areas/areas.service.ts';
import { registerBuildingRoutes } from './modules/building/building.routes.ts';
import { BUILDING_SCHEMAS } from './modules/building/building.schema.ts';
import { eventWebhooks, ListingEventPayloadSchema } from './modules/events/event-catalogue.ts';
import { DataVersion } from './modules/freshness/data-version.ts';
import { noUpstream, type RefreshPort } from './modules/freshness/refresh-port.ts';
import { registerHealthRoutes } from './modules/health/health.routes.ts';
import { ApiKeyResolver } from './modules/keys/api-key-resolver.ts';
import { LocalSubscriptionProvider } from './modules/keys/subscriptions.ts';
import { registerMarketRoutes, registerMarketTrendRoutes } from './modules/market/market.routes.ts';
import { MARKET_SCHEMAS } from './modules/market/market.schema.ts';
import { MarketService } from './modules/market/market.service.ts';
import { MarketTrends } from './modules/market/trends.ts';
import { registerPhotoRoutes } from './modules/photos/photos.routes.ts';
import { registerPropertyRoutes } from './modules/property/property.routes.ts';
import { PROPERTY_SCHEMAS } from './modules/property/property.schema.ts';
import { registerSearchRoutes } from './modules/search/search.routes.ts';
import { SEARCH_SCHEMAS } from './modules/search/search.schema.ts';
import { SearchService } from './modules/search/search.service.ts';
import { registerUsageRoutes, UsageSchema } from './modules/usage/usage.routes.ts';
import { type Clock, systemClock } from './platform/clock.ts';
import type { Store } from './platform/db/database.ts';
import { createLimits } from './platform/limits/limits.ts';
import { AreaTree } from './reference/areas.ts';

export interface RefresherParts {
  store: Store;
  clock: Clock;
  dataVersion: DataVersion;
}

export interface ContextOptions {
  config: Config;
  store: Store;
  clock?: Clock;
  /** Prefix of this deployment's keys in Redis (tests isolate runs with their own). */
  limitsNamespace?: string;
  /**
   * The refresh pipeline; none (read-only store) when absent. A factory gets the
   * context's data version, which the pipeline must share with the read
   * paths so its writes show at once on this node.
   */
  refresher?: RefreshPort | ((parts: RefresherParts) => RefreshPort);
}

/** Wires services over an open, migrated store. Reads the area tree once. */
export async function createContext({
  config,
  store,
  clock = systemClock,
  limitsNamespace = config.redisPrefix,
  refresher = noUpstream,
}: ContextOptions): Promise<AppContext> {
  const areaTree = new AreaTree(await listAreas(store.db));
  const dataVersion = new DataVersion(store.db, clock);
  const search = new SearchService(store.db, store.dialect, areaTree, clock, config.searchIndex);
  await search.prepareIndex(await dataVersion.version());
  const market = new MarketService(store.db, areaTree, clock);
  await market.warm(await dataVersion.version());
  const subscriptions = new LocalSubscriptionProvider(store.db, clock, config.apiKeyPrefix);
  const limits = createLimits({
    redisUrl: config.redisUrl,
    namespace: limitsNamespace,
    db: store.db,
  });
  return {
    config,
    store,
    clock,
    areaTree,
    dataVersion,
    areas: new AreasService(areaTree, store.db, clock),
    search,
    market,
    marketTrends: new MarketTrends(store.db, areaTree, clock),
    marketSnapshots: new MarketSnapshotJob(store.db, areaTree, clock),
    subscriptions,
    limits,
    refresher: typeof refresher === 'function' ? refresher({ store, clock, dataVersion }) : refresher,
  };
}

/**
 * Every schema with an `$id`: registered once, published as OpenAPI components,
 * and used by the tests to validate bodies the serializer does not see.
 */
export const COMPONENT_SCHEMAS: readonly TSchema[] = [
  ...SHARED_SCHEMAS,
  AreaRefSchema,
  AreaSchema,
  ...SEARCH_SCHEMAS,
  ...PROPERTY_SCHEMAS,
  ...BUILDING_SCHEMAS,
  ...MARKET_SCHEMAS,
  UsageSchema,
  ...ADMIN_SCHEMAS,
  ListingEventPayloadSchema,
];

export interface AppOptions {
  logger?: FastifyServerOptions['logger'];
}

export function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  if (config.logLevel === 'silent') return false;
  return {
    level: config.logLevel,
    // Credentials never reach the log, whatever a future serializer includes.
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.apiKey', '*.secret'],
      censor: '[redacted]',
    },
  };
}

/** Builds the HTTP application: one Fastify instance, every route, the OpenAPI document. */
export async function buildApp(ctx: AppContext, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? loggerOptions(ctx.config),
    genReqId: () => randomUUID(),
    // X-Forwarded-For is believed only from configured proxies.
    trustProxy: ctx.config.trustedProxies.length > 0 ? [...ctx.config.trustedProxies] : false,
    bodyLimit: 64 * 1024,
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
        .send(errorBody(apiError, request.id));
    },
    ajv: {
      customOptions: {
        coerceTypes: 'array',
        removeAdditional: true,
        useDefaults: true,
        allErrors: false,
      },
    },
  });

  app.decorateRequest('caller', null as never);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  installAccessControl(app, {
    resolver: new ApiKeyResolver(ctx.subscriptions, ctx.config.tierLimits, ctx.clock),
    limits: ctx.limits,
    tierLimits: ctx.config.tierLimits,
    clock: ctx.clock,
    publicUrl: ctx.config.publicUrl,
  });
  app.addHook('onClose', async () => {
    await ctx.marketSnapshots.stop();
    await ctx.limits.close();
  });
  app.addHook('preValidation', rejectNonFiniteQueryNumbers);
  installErrorHandling(app);

  for (const schema of COMPONENT_SCHEMAS) app.addSchema(schema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Stoop API',
        version: '1.0.0',
        description:
          'NYC real estate listings data: search, listings, buildings, areas and market statistics. Data in the built-in demo market is synthetic.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Relative: "Try it out" calls the origin the page was loaded from (behind any proxy).
      servers: [{ url: '/' }],
      webhooks: eventWebhooks(),
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key (`STOOP-<uuid>`) or, later, an OAuth access token: `Authorization: Bearer <credential>`. Public endpoints accept no credential and apply Free-tier limits by client IP.',
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
            'Listing change events, detected by the refresh pipeline and kept in a durable log (see `webhooks`).',
        },
        { name: 'Photos', description: 'Listing and building photos (WebP), by key and size.' },
      ],
    },
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
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  registerHealthRoutes(app, ctx);
  registerAreaRoutes(app, ctx);
  registerSearchRoutes(app, ctx);
  registerPropertyRoutes(app, ctx);
  registerBuildingRoutes(app, ctx);
  registerMarketRoutes(app, ctx);
  registerMarketTrendRoutes(app, ctx);
  registerUsageRoutes(app, ctx);
  registerAdminRoutes(app, ctx);
  registerPhotoRoutes(app, ctx);
  return app;
}
