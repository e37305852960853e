/**
 * The composition root: the one place that builds every service, the
 * background jobs and the HTTP application, and decides which implementation
 * of each port a process uses. Everything else receives what it needs.
 *
 *   config ──┐
 *   store ───┼─► compose() ─► Services (read services, keys, limits, refresher, health)
 *   clocks ──┘              └► Jobs (refresh cycles, market snapshots, building scores)
 *   Services ─► buildApp() ─► Fastify: framework setup (http/server.ts) + route plugins under /v1
 *
 * Two clocks (README "Two clocks"): the market clock drives the market and the
 * times it produces (read services, data version, freshness, jobs, refresher);
 * the wall clock everything about callers (keys, limits, quotas, usage, admin,
 * `health.time`).
 */
import type { TSchema } from '@sinclair/typebox';
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import { type Logger, pino } from 'pino';
import type { Config } from './config.ts';
import { DemoPhotoSource } from './demo/photo-source.ts';
import { createMetering } from './http/access.ts';
import { ResponseSlabs } from './http/response-slabs.ts';
import { SHARED_SCHEMAS } from './http/schemas.ts';
import { createHttpServer, type HttpApp, type HttpServerOptions, loggerOptions } from './http/server.ts';
import { type DeliveryWorkerOptions, WebhookDeliveryWorker } from './jobs/deliveries/delivery-worker.ts';
import { watcherChangeSink } from './jobs/deliveries/watcher-deliveries.ts';
import { withWebhookDelivery } from './jobs/deliveries/with-deliveries.ts';
import { createJobs, type Jobs } from './jobs/jobs.ts';
import { MarketSnapshotJob, readCoverage } from './jobs/market-snapshots.ts';
import { SERVING_BATCH_SIZE } from './jobs/refresh/listing-writer.ts';
import { Refresher, type RefresherOptions } from './jobs/refresh/refresher.ts';
import { ScoresJob } from './jobs/scores.ts';
import { WatcherPoller } from './jobs/watchers/watcher-poller.ts';
import { createWorkerJobs } from './jobs/worker/worker-jobs.ts';
import { mcpRoutes } from './mcp/mcp.routes.ts';
import { adminRoutes } from './modules/admin/admin.routes.ts';
import { ADMIN_SCHEMAS } from './modules/admin/admin.schema.ts';
import { listAreas } from './modules/areas/areas.repository.ts';
import { areaRoutes } from './modules/areas/areas.routes.ts';
import { AreaRefSchema, AreaSchema } from './modules/areas/areas.schema.ts';
import { AreasService } from './modules/areas/areas.service.ts';
import { buildingRoutes } from './modules/building/building.routes.ts';
import { BUILDING_SCHEMAS } from './modules/building/building.schema.ts';
import { BuildingService } from './modules/building/building.service.ts';
import { ListingEventPayloadSchema } from './modules/events/event-catalogue.ts';
import { eventRoutes } from './modules/events/events.routes.ts';
import { EVENTS_SCHEMAS } from './modules/events/events.schema.ts';
import { EventFeedService } from './modules/events/events.service.ts';
import { DataVersion } from './modules/freshness/data-version.ts';
import { FreshnessPolicy } from './modules/freshness/freshness-policy.ts';
import { noUpstream, type RefreshPort } from './modules/freshness/refresh-port.ts';
import { healthRoutes } from './modules/health/health.routes.ts';
import {
  type BackgroundJobStatus,
  HealthService,
  type HealthSources,
} from './modules/health/health.service.ts';
import { marketCachesProbe, ReadinessRegistry, searchIndexProbe } from './modules/health/readiness.ts';
import { homeRoutes } from './modules/home/home.routes.ts';
import { ApiKeyResolver } from './modules/keys/api-key-resolver.ts';
import { CachingSubscriptionProvider } from './modules/keys/key-cache.ts';
import { LocalSubscriptionProvider, type SubscriptionProvider } from './modules/keys/subscriptions.ts';
import { listingStreamRoutes } from './modules/listings/listing-stream.routes.ts';
import { ListingStreamService } from './modules/listings/listing-stream.service.ts';
import { marketRoutes } from './modules/market/market.routes.ts';
import { MARKET_SCHEMAS } from './modules/market/market.schema.ts';
import { MarketService } from './modules/market/market.service.ts';
import { InProcessMarketEngine } from './modules/market/market-engine.ts';
import { MarketWorkerClient } from './modules/market/market-worker-client.ts';
import { MarketTrends } from './modules/market/trends.ts';
import type { PhotoSource } from './modules/photos/photo-source.ts';
import { photoApiRoutes, photoFileRoutes } from './modules/photos/photos.routes.ts';
import { ListingPhotoSchema } from './modules/photos/photos.schema.ts';
import { PhotoService } from './modules/photos/photos.service.ts';
import { propertyRoutes } from './modules/property/property.routes.ts';
import { PROPERTY_SCHEMAS } from './modules/property/property.schema.ts';
import { PropertyService } from './modules/property/property.service.ts';
import { IndexWorkerClient } from './modules/search/index-worker-client.ts';
import { searchRoutes } from './modules/search/search.routes.ts';
import { SEARCH_SCHEMAS } from './modules/search/search.schema.ts';
import { SearchService, type SummaryWarmStatus } from './modules/search/search.service.ts';
import { usageRoutes } from './modules/usage/usage.routes.ts';
import { UsageSchema } from './modules/usage/usage.schema.ts';
import { UsageService } from './modules/usage/usage.service.ts';
import { WatcherStreams } from './modules/watchers/watcher-streams.ts';
import { WatcherTargets } from './modules/watchers/watcher-targets.ts';
import { watcherRoutes } from './modules/watchers/watchers.routes.ts';
import { WATCHER_SCHEMAS } from './modules/watchers/watchers.schema.ts';
import { WatchersService } from './modules/watchers/watchers.service.ts';
import { webhookRoutes } from './modules/webhooks/webhooks.routes.ts';
import { WEBHOOK_SCHEMAS } from './modules/webhooks/webhooks.schema.ts';
import { WebhooksService } from './modules/webhooks/webhooks.service.ts';
import { oauthRoutes } from './oauth/oauth.routes.ts';
import { OAUTH_SCHEMAS } from './oauth/oauth.schema.ts';
import { OAuthService } from './oauth/oauth.service.ts';
import { BearerResolver, OAuthTokenResolver } from './oauth/token-resolver.ts';
import { type Clock, systemClock } from './platform/clock.ts';
import type { Store } from './platform/db/database.ts';
import { createLimits, type Limits } from './platform/limits/limits.ts';
import type { ProcessLease } from './platform/limits/process-lease.ts';
import { systemResolver } from './platform/outbound/destination.ts';
import { configureBackgroundPriority } from './platform/worker/threads.ts';
import { AreaTree } from './reference/areas.ts';
import type { ListingSource } from './upstream/source.ts';

/** What a refresh pipeline built by a caller (tests) shares with the read paths. */
export interface RefresherParts {
  store: Store;
  /** The market clock. */
  clock: Clock;
  /** Shared with the read paths, so the pipeline's writes show at once on this node. */
  dataVersion: DataVersion;
}

/** Where listing changes come from: an operator's RESO feed or the demo's simulator. */
export interface UpstreamPort {
  source: ListingSource;
  kind: 'reso' | 'simulator';
  /** Clock milliseconds per real millisecond (the demo's SIM_SPEED); scales job intervals. */
  speed: number;
}

export interface ComposeOptions {
  config: Config;
  /** An open, migrated store. */
  store: Store;
  /**
   * The market clock: simulated (SIM_SPEED × real time) in the live demo, else
   * resumed at 1× from the store's latest instant (boot.ts); default: the wall clock.
   */
  marketClock?: Clock;
  /** The wall clock: real time for everything about callers (tests inject a manual one). */
  wallClock?: Clock;
  /** Prefix of this deployment's keys in Redis (tests isolate runs with their own). */
  limitsNamespace?: string;
  /**
   * Without Redis: the store's embedded-limits lease the server claimed
   * (boot.ts), so health can say when it is lost; released on close.
   */
  limitsLease?: ProcessLease;
  /**
   * Where the starting process marks its steps (schema, demo load) for
   * readiness (boot.ts); a new one when not given (the store is then prepared).
   */
  readiness?: ReadinessRegistry;
  /** The upstream the refresh pipeline replicates from; none: a read-only store. */
  upstream?: UpstreamPort;
  /**
   * Runs the background jobs on a worker thread with its own store connection
   * (boot.ts: a serving process), so they never hold the request thread; an
   * in-memory store keeps them in-process. `upstreamUrl`: the upstream's
   * address, for the worker's refresh cycles (without it they stay in-process).
   */
  jobsWorker?: { upstreamUrl?: () => Promise<string> };
  /**
   * A refresh pipeline built by the caller instead (tests: a fake port, or a
   * real pipeline over a test source); takes precedence over `upstream`.
   */
  refresher?: RefreshPort | ((parts: RefresherParts) => RefreshPort);
  /** Where photo originals come from; the demo's drawn photos when not given. */
  photoSource?: PhotoSource;
  /** The process logger; one is made from the configuration when not given. */
  log?: Logger;
  /** Webhook delivery seams (tests: a resolver and connector that never leave loopback, jitter, polling). */
  webhookDelivery?: Partial<
    Pick<DeliveryWorkerOptions, 'resolver' | 'connector' | 'random' | 'pollMs' | 'concurrency' | 'timeoutMs'>
  >;
}

/** Every service, built once. Route plugins receive only the ones they use. */
export interface Services {
  readonly config: Config;
  /** Drives the market and the times it produces. */
  readonly marketClock: Clock;
  /** Real time: keys, limits, quotas, usage, admin, `health.time`. */
  readonly wallClock: Clock;
  readonly log: Logger;
  readonly areaTree: AreaTree;
  readonly dataVersion: DataVersion;
  readonly freshness: FreshnessPolicy;
  readonly areas: AreasService;
  readonly search: SearchService;
  readonly property: PropertyService;
  readonly building: BuildingService;
  readonly market: MarketService;
  readonly marketTrends: MarketTrends;
  /** The daily market snapshot work (scheduled by `Jobs`, run directly by tests). */
  readonly marketSnapshots: MarketSnapshotJob;
  readonly photos: PhotoService;
  readonly subscriptions: SubscriptionProvider;
  readonly limits: Limits;
  readonly usage: UsageService;
  /** The refresh pipeline as read paths see it (background and live refreshes). */
  readonly refresher: RefreshPort;
  readonly health: HealthService;
  /** The HTTP change feed over the event log (`GET /v1/events`, `/v1/events/stream`). */
  readonly events: EventFeedService;
  /** The listing SSE stream (`GET /v1/listing/{id}`): stored, then live through the refresher. */
  readonly listingStream: ListingStreamService;
  /** Webhook subscriptions (`/v1/webhooks`). */
  readonly webhooks: WebhooksService;
  /** Fans events out to subscriptions and delivers them; started and stopped with the jobs. */
  readonly webhookDelivery: WebhookDeliveryWorker;
  /** Watchers (`/v1/watchers`): CRUD, recorded changes and their streams. */
  readonly watchers: WatchersService;
  /** Polls due watchers; started and stopped with the jobs (tests call `pollDue()`). */
  readonly watcherPoller: WatcherPoller;
  /** The OAuth 2.1 authorization server (`/oauth/*`, discovery) and its access tokens. */
  readonly oauth: OAuthService;
}

export interface Composition {
  readonly services: Services;
  /** Every background job; started by the server once it listens, never by tests unless they ask. */
  readonly jobs: Jobs;
  /** Stops the jobs, waits for background refreshes and closes the limits backend (not the store). */
  close(): Promise<void>;
}

/** The refresh pipeline over an upstream: the server's, and the one `stoop refresh` runs. */
export function createRefresher(
  parts: RefresherParts,
  upstream: Pick<UpstreamPort, 'source' | 'kind'>,
  log?: Logger,
  options: Pick<RefresherOptions, 'writeBatchSize' | 'searchCycle'> = {},
): Refresher {
  return new Refresher({
    ...parts,
    ...options,
    source: upstream.source,
    upstreamKind: upstream.kind,
    ...(log ? { log } : {}),
  });
}

/** The summary warm-up (SearchService) as health lists background jobs: it runs after each index swap. */
function summaryWarmJob(status: SummaryWarmStatus): BackgroundJobStatus {
  return {
    name: 'search-summaries',
    running: status.running,
    lastRunAt: status.lastWarmedAt,
    nextRunAt: null,
    lastError: null,
    progress: { warmed: status.warmed, of: status.of },
  };
}

/** Builds every service and job over an open, migrated store. Reads the area tree once. */
export async function compose(options: ComposeOptions): Promise<Composition> {
  const { config, store } = options;
  // Before any worker starts: every background thread of this process runs at it.
  configureBackgroundPriority(config.backgroundPriority);
  const wallClock = options.wallClock ?? systemClock;
  const marketClock = options.marketClock ?? wallClock;
  const log = options.log ?? pino(processLoggerOptions(config));
  const areaTree = new AreaTree(await listAreas(store.db));
  const dataVersion = new DataVersion(store.db, marketClock);

  let pipeline: Refresher | undefined;
  let refresher: RefreshPort = noUpstream;
  const workerJobs = options.jobsWorker
    ? createWorkerJobs({
        ...options.jobsWorker,
        store,
        config,
        upstream: options.refresher ? undefined : options.upstream,
        marketClock,
        dataVersion,
        log,
        onFailure: (failure) => pipeline?.noteFailure(failure),
      })
    : null;
  if (options.refresher) {
    refresher =
      typeof options.refresher === 'function'
        ? options.refresher({ store, clock: marketClock, dataVersion })
        : options.refresher;
  } else if (options.upstream) {
    pipeline = createRefresher({ store, clock: marketClock, dataVersion }, options.upstream, log, {
      writeBatchSize: SERVING_BATCH_SIZE,
      ...(workerJobs?.runsRefresh ? { searchCycle: () => workerJobs.replicate() } : {}),
    });
    refresher = pipeline;
  }

  const freshness = new FreshnessPolicy(refresher, dataVersion, marketClock, config.upstream.liveTimeoutMs);
  const search = new SearchService(
    store.db,
    store.dialect,
    areaTree,
    marketClock,
    dataVersion,
    freshness,
    config.searchIndex,
    // Index builds run on a worker with its own connection when the store allows one.
    store.shared && config.searchIndex ? new IndexWorkerClient(store.shared, log) : null,
  );
  await search.warm();
  const areaIds = areaTree.records.map((area) => area.id);
  const market = new MarketService(
    // The rows and figures live on the market worker when another thread can open the store.
    store.shared
      ? new MarketWorkerClient(store.shared, areaIds, log)
      : new InProcessMarketEngine(store.db, areaIds),
    areaTree,
    marketClock,
    dataVersion,
    freshness,
  );
  await market.warm();
  const limits = await createLimits({
    redisUrl: config.redisUrl,
    namespace: options.limitsNamespace ?? config.redisPrefix,
    db: store.db,
    clock: wallClock,
    lease: options.limitsLease,
    log,
  });
  const marketSnapshots = new MarketSnapshotJob(store.db, areaTree, marketClock);
  const readiness = options.readiness ?? new ReadinessRegistry();
  readiness.register('searchIndex', searchIndexProbe(search));
  readiness.register('marketCaches', marketCachesProbe(market));
  const healthSources: HealthSources = {
    readiness,
    // Jobs are built below, from the services; health is never asked before compose returns.
    // The search service's summary warm-up is background work of this node too.
    jobs: () => [...jobs.status(), summaryWarmJob(search.summaryWarmStatus())],
    coverage: () => readCoverage(store.db),
  };
  const webhookPolicy = config.webhooks;
  const webhookDelivery = new WebhookDeliveryWorker({
    db: store.db,
    dialect: store.dialect,
    wallClock,
    areaTree,
    policy: webhookPolicy,
    log,
    ...options.webhookDelivery,
  });
  // New events from this process's jobs worker move the data version: fan them out now, not at the next idle look.
  dataVersion.onInvalidate(() => webhookDelivery.nudge());
  // Watchers: a recorded change is queued for the owner's `watcher.change`
  // webhooks in the recording transaction, then reaches this process's streams.
  const watcherStreams = new WatcherStreams();
  const watcherTargets = new WatcherTargets({
    db: store.db,
    refresher,
    building: () => services.building,
    search,
    liveTimeoutMs: config.upstream.liveTimeoutMs,
  });
  const watchers = new WatchersService({
    db: store.db,
    wallClock,
    targets: watcherTargets,
    search,
    streams: watcherStreams,
    sink: watcherChangeSink({ streams: watcherStreams, wallClock, nudge: () => webhookDelivery.nudge() }),
    log,
  });
  const watcherPoller = new WatcherPoller({
    db: store.db,
    wallClock,
    watchers,
    targets: watcherTargets,
    quota: limits.quota,
    tierLimits: config.tierLimits,
    log,
  });
  const subscriptions = new CachingSubscriptionProvider(
    new LocalSubscriptionProvider(store.db, wallClock, config.apiKeyPrefix),
    config.apiKeyCacheMs,
  );
  const services: Services = {
    config,
    marketClock,
    wallClock,
    log,
    areaTree,
    dataVersion,
    freshness,
    areas: new AreasService(areaTree, store.db, marketClock, dataVersion, freshness),
    search,
    property: new PropertyService(store.db, areaTree, marketClock, freshness, dataVersion, {
      photoBaseUrl: config.photoBaseUrl,
      publicUrl: config.publicUrl,
    }),
    building: new BuildingService(
      store.db,
      areaTree,
      marketClock,
      freshness,
      dataVersion,
      config.photoBaseUrl,
    ),
    market,
    marketTrends: new MarketTrends(store.db, areaTree, marketClock, freshness),
    marketSnapshots,
    photos: new PhotoService({
      db: store.db,
      source: options.photoSource ?? new DemoPhotoSource(),
      cacheDir: config.photoCacheDir,
      maxCacheBytes: config.photoCacheMaxBytes,
      memoryCacheBytes: config.photoMemoryCacheMaxBytes,
      renderBudget: {
        limiter: limits.rate,
        perMinute: config.photoRendersPerMinute,
        wallClock,
        onLimiterFailure: (error) =>
          log.warn({ err: error }, 'limits backend failed; photo renders counted in this process'),
      },
      onCacheError: (error, operation, file) =>
        log.warn(
          { err: error, operation, file },
          operation === 'read' || operation === 'write'
            ? 'photo cache failed; serving a fresh render'
            : 'photo cache maintenance failed',
        ),
    }),
    subscriptions,
    limits,
    usage: new UsageService(limits.quota, config.tierLimits, wallClock),
    refresher,
    health: new HealthService(
      store.db,
      store.dialect,
      wallClock,
      dataVersion,
      refresher,
      limits,
      healthSources,
      config.version,
      marketClock,
    ),
    events: new EventFeedService(store.db, areaTree, dataVersion),
    listingStream: new ListingStreamService(
      store.db,
      areaTree,
      marketClock,
      refresher,
      { photoBaseUrl: config.photoBaseUrl, publicUrl: config.publicUrl },
      config.upstream.liveTimeoutMs,
    ),
    webhooks: new WebhooksService({
      db: store.db,
      wallClock,
      areaTree,
      policy: webhookPolicy,
      resolver: options.webhookDelivery?.resolver ?? systemResolver,
      onQueued: () => webhookDelivery.nudge(),
    }),
    webhookDelivery,
    watchers,
    watcherPoller,
    oauth: new OAuthService({
      db: store.db,
      wallClock,
      subscriptions,
      publicUrl: config.publicUrl,
      onPruneError: (error) => log.warn({ err: error }, 'pruning expired OAuth rows failed'),
    }),
  };

  const jobs =
    workerJobs ??
    createJobs({
      refresher: pipeline,
      scheduledRefresh: config.refresh,
      dataVersion,
      clock: marketClock,
      speed: options.upstream?.speed ?? 1,
      log,
      marketSnapshots,
      scores: new ScoresJob(store.db, areaTree, marketClock),
    });

  let closing: Promise<void> | null = null;
  return {
    services,
    // The watcher poller starts and stops with the delivery worker (after listen, before the store closes).
    jobs: withWebhookDelivery(jobs, {
      start: () => {
        webhookDelivery.start();
        watcherPoller.start();
      },
      stop: async () => {
        await watcherPoller.stop();
        await webhookDelivery.stop();
      },
    }),
    close: () => {
      closing ??= (async () => {
        await watcherPoller.stop();
        await webhookDelivery.stop();
        await jobs.stop();
        await pipeline?.idle();
        await search.close();
        await market.close();
        await limits.close();
      })();
      return closing;
    },
  };
}

/** Process logger: the HTTP server's options, for everything that is not a request. */
function processLoggerOptions(config: Config) {
  const options = loggerOptions(config);
  return options === false || options === undefined || options === true
    ? { level: options === false ? 'silent' : 'info' }
    : options;
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
  ListingPhotoSchema,
  ...PROPERTY_SCHEMAS,
  ...BUILDING_SCHEMAS,
  ...MARKET_SCHEMAS,
  UsageSchema,
  ...ADMIN_SCHEMAS,
  ListingEventPayloadSchema,
  ...EVENTS_SCHEMAS,
  ...WEBHOOK_SCHEMAS,
  ...WATCHER_SCHEMAS,
  ...OAUTH_SCHEMAS,
];

export interface AppOptions {
  /** Request logging: pino options or false (tests); the services' logger when not given. */
  logger?: FastifyServerOptions['logger'];
  /** Build over a server that is already listening (`startServer`): see `HttpServerOptions.serverFactory`. */
  serverFactory?: HttpServerOptions['serverFactory'];
}

/**
 * The HTTP application over the services: the framework setup
 * (`http/server.ts`), then each route plugin once, under `/v1` (photo files
 * keep the image-host layout at `/fp/`), given only the services it uses.
 */
export async function buildApp(services: Services, options: AppOptions = {}): Promise<HttpApp> {
  const { config } = services;
  const app = await createHttpServer({
    config,
    ...(options.logger === undefined
      ? { loggerInstance: services.log as FastifyBaseLogger }
      : { logger: options.logger }),
    componentSchemas: COMPONENT_SCHEMAS,
    ...(options.serverFactory ? { serverFactory: options.serverFactory } : {}),
    access: {
      // API keys, and OAuth access tokens (told apart by their prefix).
      resolver: new BearerResolver(
        new ApiKeyResolver(services.subscriptions, config.tierLimits, services.wallClock),
        new OAuthTokenResolver(services.oauth, config.tierLimits),
      ),
      limits: services.limits,
      tierLimits: config.tierLimits,
      clock: services.wallClock,
      publicUrl: config.publicUrl,
    },
  });
  const { publicUrl } = config;
  // One pool per app: bodies assembled by copying are written into reused slabs.
  const slabs = new ResponseSlabs();
  await app.register(
    async (v1) => {
      await v1.register(healthRoutes, { health: services.health, publicUrl });
      await v1.register(areaRoutes, { areas: services.areas, publicUrl });
      await v1.register(searchRoutes, { search: services.search, publicUrl, slabs });
      await v1.register(propertyRoutes, { property: services.property });
      await v1.register(buildingRoutes, { building: services.building, publicUrl });
      await v1.register(marketRoutes, { market: services.market, trends: services.marketTrends });
      await v1.register(usageRoutes, { usage: services.usage });
      await v1.register(adminRoutes, {
        subscriptions: services.subscriptions,
        apiKeyPrefix: config.apiKeyPrefix,
        wallClock: services.wallClock,
      });
      await v1.register(photoApiRoutes, { photos: services.photos });
      await v1.register(eventRoutes, { events: services.events, idleTimeoutMs: config.http.idleTimeoutMs });
      await v1.register(listingStreamRoutes, { listingStream: services.listingStream });
      await v1.register(webhookRoutes, { webhooks: services.webhooks, publicUrl });
      await v1.register(watcherRoutes, {
        watchers: services.watchers,
        publicUrl,
        idleTimeoutMs: config.http.idleTimeoutMs,
      });
    },
    { prefix: '/v1' },
  );
  await app.register(photoFileRoutes, { photos: services.photos });
  // The OAuth authorization server and discovery live at the root, beside /.well-known.
  await app.register(oauthRoutes, { oauth: services.oauth, limits: services.limits });
  // MCP (issue 14): the same services as the REST routes, charged per tool call like the REST call.
  await app.register(mcpRoutes, {
    search: services.search,
    areas: services.areas,
    market: services.market,
    marketTrends: services.marketTrends,
    property: services.property,
    building: services.building,
    areaTree: services.areaTree,
    publicUrl,
    metering: createMetering({
      limits: services.limits,
      tierLimits: config.tierLimits,
      clock: services.wallClock,
    }),
    version: config.version,
    slabs,
  });
  // The front page: what the service is, where its reference is, a first call (src/modules/home/).
  await app.register(homeRoutes, {
    publicUrl,
    version: config.version,
    demoData: config.demo.enabled && config.upstream.url === undefined,
  });
  return app;
}
