/**
 * Webhook measurements (issue 13, "Tests and measurements"), run after the
 * pipeline's with the service stopped:
 *
 * 1. **Delivery throughput**: a fresh temporary SQLite store (see
 *    bench/README.md for why), 1,000 subscriptions on one loopback receiver,
 *    10 events appended to the log the way the refresh pipeline appends them,
 *    then the real `WebhookDeliveryWorker` (the server's options, the real
 *    `nodeConnector`) delivers all 10,000. Reported: deliveries/s from the
 *    first attempt to the last success, as the delivery log records them.
 *    The receiver verifies every signature with `standardwebhooks`.
 * 2. **Change-to-delivery latency**: the bench store (its demo market), the
 *    market simulator (`stoop origin`) at the default simulation speed, the
 *    refresh pipeline's scheduled cycle (`replicate()`) and the delivery worker
 *    in this process, one subscription to every event type on a loopback
 *    receiver. Latency = received − committed, where "committed" is the first
 *    moment the event is visible in the store (see `CommitWatch`).
 *
 * The receiver runs on a worker thread, so its parsing and verification do not
 * share an event loop with the worker being measured.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { readDemoRecord } from '../src/demo/market/load.ts';
import { LISTING_EVENT_TYPES } from '../src/domain/events.ts';
import { WebhookDeliveryWorker } from '../src/jobs/deliveries/delivery-worker.ts';
import { SERVING_BATCH_SIZE } from '../src/jobs/refresh/listing-writer.ts';
import { Refresher } from '../src/jobs/refresh/refresher.ts';
import { listAreas } from '../src/modules/areas/areas.repository.ts';
import { appendEvents, latestSequence, lockEventLog, readCursor } from '../src/modules/events/event-log.ts';
import { DataVersion } from '../src/modules/freshness/data-version.ts';
import { deleteSubscription } from '../src/modules/webhooks/webhooks.repository.ts';
import { WEBHOOK_CURSOR, WebhooksService } from '../src/modules/webhooks/webhooks.service.ts';
import { HOUR_MS, ScaledClock, systemClock } from '../src/platform/clock.ts';
import { openStore, type Store } from '../src/platform/db/database.ts';
import { migrateToLatest } from '../src/platform/db/migrate.ts';
import { type OutboundPolicy, systemResolver } from '../src/platform/outbound/destination.ts';
import { openConfiguredStore, prepareStore } from '../src/prepared-store.ts';
import { AreaTree } from '../src/reference/areas.ts';
import { syncAreas } from '../src/reference/areas-store.ts';
import { ResoListingSource } from '../src/upstream/reso/source.ts';
import { type BenchConfig, REPO_ROOT } from './config.ts';
import { startOriginProcess } from './pipeline.ts';
import type { TargetCheck } from './report.ts';

export const THROUGHPUT_SUBSCRIPTIONS = 1_000;
export const THROUGHPUT_EVENTS = 10;
/** Issue 13: deliveries/s on SQLite. */
export const THROUGHPUT_TARGET = 1_000;
/** Issue 13: p99 change-to-delivery, ms after the refresh that detected the change committed. */
export const LATENCY_P99_TARGET_MS = 2_000;
/** Deliveries the latency figure wants at least (the run stops early once it has them and the minimum time passed). */
export const LATENCY_MIN_DELIVERIES = 100;

/** The receiver is on loopback: let it through the public-address check, over plain http. */
const LOOPBACK_POLICY: OutboundPolicy = Object.freeze({ allowHttp: true, allowedHosts: ['127.0.0.1'] });

export interface WebhookThroughputResult {
  store: string;
  subscriptions: number;
  events: number;
  deliveries: number;
  succeeded: number;
  /** Requests the receiver got (retries included). */
  received: number;
  signatureFailures: number;
  /** The same (subscription, webhook-id) received more than once. */
  duplicates: number;
  /** From the worker's start to the fan-out's last delivery row: the outbox's producer. */
  fanOutSeconds: number;
  /** From the first attempt to the last success, as the delivery log records them. */
  seconds: number;
  deliveriesPerSecond: number;
}

export interface LatencySample {
  sequence: number;
  type: string;
  latencyMs: number;
}

export interface WebhookLatencyResult {
  speed: number;
  /** How long the market ran ahead of the store before the first cycle (simulated hours). */
  firstCycleSimulatedHours: number;
  cycles: number;
  /** Events the cycles wrote (all types; the subscription takes every type). */
  events: number;
  deliveries: number;
  signatureFailures: number;
  seconds: number;
  /** Over every delivery of the run. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The first cycle's deliveries alone: a scheduled cycle's worth of changes at once. */
  firstCycle: { deliveries: number; p50Ms: number; p99Ms: number; maxMs: number };
  /** The later cycles (one a second at most): changes a minute of market time apart. */
  steady: { deliveries: number; p50Ms: number; p99Ms: number; maxMs: number };
  /** Resolution of "committed": how often the store is polled for new events. */
  commitPollMs: number;
}

export type WebhookBenchResult = {
  throughput: WebhookThroughputResult;
  latency: WebhookLatencyResult | { skipped: string };
};

// ---------------------------------------------------------------------------
// The receiver (worker thread).
// ---------------------------------------------------------------------------

/*
 * Plain CommonJS because an eval'd worker does not go through tsx.
 * `standardwebhooks` is required from the repository (the worker's own
 * resolution starts elsewhere). Secrets are keyed by path (/hook/<n>): one
 * receiver serves every subscription and knows which secret signs which.
 */
const RECEIVER_SOURCE = `
const { createServer } = require('node:http');
const { createRequire } = require('node:module');
const { parentPort, workerData } = require('node:worker_threads');
const { Webhook } = createRequire(workerData.root + '/package.json')('standardwebhooks');
const hooks = new Map();
const seen = new Set();
let arrivals = [];
let received = 0, failures = 0, duplicates = 0, first = null, last = null;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    received++;
    if (first === null) first = at;
    last = at;
    const body = Buffer.concat(chunks).toString('utf8');
    const id = String(req.headers['webhook-id']);
    const hook = hooks.get(req.url);
    try {
      if (!hook) throw new Error('no secret for ' + req.url);
      hook.verify(body, req.headers);
    } catch {
      failures++;
    }
    const key = req.url + ' ' + id;
    if (seen.has(key)) duplicates++;
    else seen.add(key);
    if (workerData.record) arrivals.push([id, at]);
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 60000;
parentPort.on('message', (m) => {
  if (m.type === 'secrets') {
    for (const [path, secret] of m.secrets) hooks.set(path, new Webhook(secret));
    parentPort.postMessage({ type: 'secrets' });
  } else if (m.type === 'stats') {
    parentPort.postMessage({ type: 'stats', received, failures, duplicates, first, last, arrivals });
    arrivals = [];
  }
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'port', port: server.address().port }));
`;

interface ReceiverStats {
  received: number;
  failures: number;
  duplicates: number;
  first: number | null;
  last: number | null;
  /** [webhook-id, received at (epoch ms)] since the last call, when recording. */
  arrivals: [string, number][];
}

interface BenchReceiver {
  /** `http://127.0.0.1:<port>`; subscriptions use `<url>/hook/<n>`. */
  url: string;
  setSecrets(secrets: readonly (readonly [path: string, secret: string])[]): Promise<void>;
  stats(): Promise<ReceiverStats>;
  close(): Promise<void>;
}

async function startBenchReceiver(record: boolean): Promise<BenchReceiver> {
  const worker = new Worker(RECEIVER_SOURCE, { eval: true, workerData: { root: REPO_ROOT, record } });
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: { type: string } & T) => {
        if (m.type !== type) return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve(m);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  const { port } = await next<{ port: number }>('port');
  return {
    url: `http://127.0.0.1:${port}`,
    setSecrets: async (secrets) => {
      const done = next('secrets');
      worker.postMessage({ type: 'secrets', secrets });
      await done;
    },
    stats: async () => {
      const done = next<ReceiverStats>('stats');
      worker.postMessage({ type: 'stats' });
      return done;
    },
    close: async () => {
      await worker.terminate();
    },
  };
}

// ---------------------------------------------------------------------------
// Shared pieces.
// ---------------------------------------------------------------------------

function benchLog(log: (line: string) => void) {
  const write =
    (level: string) =>
    (obj: unknown, message?: string): void => {
      const err = (obj as { err?: unknown } | undefined)?.err;
      log(`  [delivery worker ${level}] ${message ?? ''}${err instanceof Error ? `: ${err.message}` : ''}`);
    };
  return { warn: write('warn'), error: write('error'), info: write('info') };
}

/** The worker with the options the server gives it (compose in src/app.ts): only the policy differs. */
function serverLikeWorker(
  store: Store,
  areaTree: AreaTree,
  log: (line: string) => void,
): WebhookDeliveryWorker {
  return new WebhookDeliveryWorker({
    db: store.db,
    dialect: store.dialect,
    wallClock: systemClock,
    areaTree,
    policy: LOOPBACK_POLICY,
    log: benchLog(log),
  });
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summary(latencies: readonly number[]) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    deliveries: sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length > 0 ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

// ---------------------------------------------------------------------------
// 1. Throughput.
// ---------------------------------------------------------------------------

export async function runThroughputBench(log: (line: string) => void): Promise<WebhookThroughputResult> {
  const dir = await mkdtemp(join(tmpdir(), 'stoop-bench-webhooks-'));
  const store = await openStore({ dialect: 'sqlite', databaseUrl: `sqlite:${join(dir, 'stoop.sqlite')}` });
  const receiver = await startBenchReceiver(false);
  let worker: WebhookDeliveryWorker | undefined;
  try {
    await migrateToLatest(store);
    await syncAreas(store);
    const areaTree = new AreaTree(await listAreas(store.db));
    const webhooks = new WebhooksService({
      db: store.db,
      wallClock: systemClock,
      areaTree,
      policy: LOOPBACK_POLICY,
      resolver: systemResolver,
    });
    log(`▶ webhook throughput: ${THROUGHPUT_SUBSCRIPTIONS} subscriptions × ${THROUGHPUT_EVENTS} events…`);
    const secrets: [string, string][] = [];
    for (let i = 0; i < THROUGHPUT_SUBSCRIPTIONS; i++) {
      // At most 100 subscriptions per account: ten bench accounts.
      const hook = await webhooks.create(`stoop-bench-${Math.floor(i / 100)}`, {
        url: `${receiver.url}/hook/${i}`,
        events: [...LISTING_EVENT_TYPES],
      });
      secrets.push([`/hook/${i}`, hook.secret]);
    }
    await receiver.setSecrets(secrets);
    const at = systemClock.now().toISOString();
    // As the refresh pipeline appends (listing-writer.ts): locked, in one transaction.
    await store.db.transaction().execute(async (trx) => {
      await lockEventLog(trx, store.dialect);
      await appendEvents(
        trx,
        Array.from({ length: THROUGHPUT_EVENTS }, (_, i) => ({
          type: LISTING_EVENT_TYPES[i % LISTING_EVENT_TYPES.length]!,
          listingId: `bench-listing-${i}`,
          buildingId: 'bench-building',
          listingType: 'rental' as const,
          areaId: null,
          oldValue: 3000,
          newValue: 2900,
          occurredAt: at,
        })),
        at,
      );
    });

    const expected = THROUGHPUT_SUBSCRIPTIONS * THROUGHPUT_EVENTS;
    worker = serverLikeWorker(store, areaTree, log);
    const startedAt = Date.now();
    worker.start();
    const deadline = Date.now() + 180_000;
    let fanOutDoneAt: number | null = null;
    for (;;) {
      await sleep(100);
      const counts = await store.db
        .selectFrom('webhook_deliveries')
        .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('status')
        .execute();
      const total = counts.reduce((sum, c) => sum + Number(c.n), 0);
      if (fanOutDoneAt === null && total >= expected) fanOutDoneAt = Date.now();
      const finished = counts
        .filter((c) => c.status === 'succeeded' || c.status === 'failed' || c.status === 'cancelled')
        .reduce((sum, c) => sum + Number(c.n), 0);
      if (finished >= expected) break;
      if (Date.now() > deadline) {
        log(`  ⚠ gave up after 180 s with ${finished} of ${expected} deliveries finished`);
        break;
      }
    }
    await worker.stop();
    worker = undefined;
    const span = await store.db
      .selectFrom('webhook_deliveries')
      .select((eb) => [
        eb.fn.min('last_attempt_at').as('first'),
        eb.fn.max('updated_at').as('last'),
        eb.fn.max('created_at').as('fannedOut'),
        eb.fn.countAll<number>().as('n'),
      ])
      .where('status', '=', 'succeeded')
      .executeTakeFirstOrThrow();
    const deliveries = await store.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const stats = await receiver.stats();
    const succeeded = Number(span.n);
    const seconds =
      span.first && span.last ? Math.max(0.001, (Date.parse(span.last) - Date.parse(span.first)) / 1000) : 0;
    const result: WebhookThroughputResult = {
      store: 'sqlite (fresh temporary file)',
      subscriptions: THROUGHPUT_SUBSCRIPTIONS,
      events: THROUGHPUT_EVENTS,
      deliveries: Number(deliveries.n),
      succeeded,
      received: stats.received,
      signatureFailures: stats.failures,
      duplicates: stats.duplicates,
      fanOutSeconds: span.fannedOut ? (Date.parse(span.fannedOut) - startedAt) / 1000 : Number.NaN,
      seconds,
      deliveriesPerSecond: seconds > 0 ? Math.round(succeeded / seconds) : 0,
    };
    log(
      `  ${succeeded} of ${expected} delivered in ${seconds.toFixed(2)} s = ${result.deliveriesPerSecond}/s ` +
        `(fan-out ${result.fanOutSeconds.toFixed(2)} s; ${stats.failures} signature failures, ${stats.duplicates} duplicates)`,
    );
    return result;
  } finally {
    await worker?.stop();
    await receiver.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// 2. Change-to-delivery latency.
// ---------------------------------------------------------------------------

/**
 * When each event became visible in the store: polls the log's highest
 * sequence every `everyMs` on the store's own connection. On SQLite the
 * connection is held by a transaction until it commits, so a poll sees a
 * refresh batch's events only once they are committed: the first poll that
 * sees a sequence dates its commit (at most `everyMs` plus a poll late, which
 * makes the latency look at most that much shorter).
 */
class CommitWatch {
  readonly committedAt = new Map<number, number>();
  private last = 0;
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly store: Store,
    from: number,
    readonly everyMs: number,
  ) {
    this.last = from;
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const top = await latestSequence(this.store.db);
      const at = Date.now();
      for (let s = this.last + 1; s <= top; s++) this.committedAt.set(s, at);
      if (top > this.last) this.last = top;
      await sleep(this.everyMs);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

export interface LatencyOptions {
  /** Simulated ms per real ms of the market: SIM_SPEED's default unless told. */
  speed?: number;
  minDeliveries?: number;
  minSeconds?: number;
  maxSeconds?: number;
  /** Simulated hours the market runs ahead of the store before the first measured cycle. */
  firstCycleHours?: number;
}

export async function runLatencyBench(
  config: Pick<BenchConfig, 'dataDir' | 'databaseUrl'>,
  log: (line: string) => void,
  options: LatencyOptions = {},
): Promise<WebhookLatencyResult | { skipped: string }> {
  const appConfig = loadConfig({
    ...process.env,
    DATA_DIR: config.dataDir,
    ...(config.databaseUrl ? { DATABASE_URL: config.databaseUrl } : {}),
    LOG_LEVEL: 'silent',
  });
  const speed = options.speed ?? appConfig.simulator.speed;
  const minDeliveries = options.minDeliveries ?? LATENCY_MIN_DELIVERIES;
  const minSeconds = options.minSeconds ?? 30;
  const maxSeconds = options.maxSeconds ?? 150;
  const firstCycleHours = options.firstCycleHours ?? 4;
  const store = await openConfiguredStore(appConfig);
  const origins: { child: { kill(signal: NodeJS.Signals): boolean } }[] = [];
  const receiver = await startBenchReceiver(true);
  let worker: WebhookDeliveryWorker | undefined;
  let watch: CommitWatch | undefined;
  let hookId: string | undefined;
  let cursorExisted = true;
  try {
    await prepareStore(store);
    const demo = await readDemoRecord(store);
    if (!demo) return { skipped: 'the bench store holds no demo market' };
    // The worker delivers everything the store holds: never to subscriptions the bench did not make.
    const others = await store.db
      .selectFrom('webhook_subscriptions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('active', '=', 1)
      .executeTakeFirstOrThrow();
    if (Number(others.n) > 0)
      return {
        skipped: `the bench store holds ${others.n} active webhook subscription(s) of its own; the bench does not deliver to them`,
      };
    cursorExisted = (await readCursor(store.db, WEBHOOK_CURSOR)) !== null;
    const areaTree = new AreaTree(await listAreas(store.db));

    // Catch up with the market first (unmeasured, no subscription yet): the
    // measured cycles then carry only what the market does from here on.
    const syncedTo = await new DataVersion(store.db, systemClock).refreshedAt('search:rental');
    const base = new Date(Math.max(Date.parse(syncedTo ?? demo.generatedAt), 0));
    log(`▶ webhook latency: catching up with the market (simulator at ${base.toISOString()})…`);
    const catchUp = await startOriginProcess(demo, base);
    origins.push(catchUp);
    const catchUpClock = new ScaledClock({ anchor: base, speed: 0.001 });
    await new Refresher({
      store,
      clock: catchUpClock,
      source: new ResoListingSource({ url: catchUp.url, timeoutMs: 60_000 }),
      dataVersion: new DataVersion(store.db, catchUpClock),
      writeBatchSize: SERVING_BATCH_SIZE,
    }).replicate();
    catchUp.child.kill('SIGTERM');

    // The market from here moves at `speed`, `firstCycleHours` ahead of the
    // store: the first cycle carries what a scheduled cycle (every 4–6 h) would.
    const anchor = new Date(base.getTime() + firstCycleHours * HOUR_MS);
    const origin = await startOriginProcess(demo, anchor, speed);
    origins.push(origin);
    const clock = new ScaledClock({ anchor, speed });
    const dataVersion = new DataVersion(store.db, clock);
    const refresher = new Refresher({
      store,
      clock,
      source: new ResoListingSource({ url: origin.url, timeoutMs: 60_000 }),
      dataVersion,
      writeBatchSize: SERVING_BATCH_SIZE,
    });

    const webhooks = new WebhooksService({
      db: store.db,
      wallClock: systemClock,
      areaTree,
      policy: LOOPBACK_POLICY,
      resolver: systemResolver,
    });
    const hook = await webhooks.create('stoop-bench', {
      url: `${receiver.url}/hook/0`,
      events: [...LISTING_EVENT_TYPES],
    });
    hookId = hook.id;
    await receiver.setSecrets([['/hook/0', hook.secret]]);
    const firstSequence = await latestSequence(store.db);
    watch = new CommitWatch(store, firstSequence, 5);
    worker = serverLikeWorker(store, areaTree, log);
    // As in the server (src/app.ts), each batch a refresh commits nudges the
    // deliveries; without it the first delivery waited for the next poll.
    const nudged = worker;
    dataVersion.onInvalidate(() => nudged.nudge());
    worker.start();

    log(
      `  market at ${speed}× from ${firstCycleHours} simulated h ahead; refresh cycles back to back (one a second at most) ` +
        `until ${minDeliveries} deliveries (at least ${minSeconds} s, at most ${maxSeconds} s)…`,
    );
    const started = Date.now();
    let cycles = 0;
    let firstCycleLast = firstSequence;
    const latencies: { sequence: number; ms: number }[] = [];
    let failures = 0;
    const collect = async () => {
      const stats = await receiver.stats();
      failures = stats.failures;
      for (const [id, at] of stats.arrivals) {
        const sequence = Number(id.replace(/^evt_/, ''));
        const committed = watch?.committedAt.get(sequence);
        if (committed !== undefined) latencies.push({ sequence, ms: at - committed });
      }
    };
    for (;;) {
      const cycleStart = Date.now();
      await refresher.replicate();
      cycles++;
      if (cycles === 1) firstCycleLast = await latestSequence(store.db);
      await collect();
      const elapsed = (Date.now() - started) / 1000;
      if ((latencies.length >= minDeliveries && elapsed >= minSeconds) || elapsed >= maxSeconds) break;
      await sleep(Math.max(0, 1000 - (Date.now() - cycleStart)));
    }
    // Let what the last cycle wrote arrive (bounded).
    const lastSequence = await latestSequence(store.db);
    const waitUntil = Date.now() + 10_000;
    while (Date.now() < waitUntil) {
      await collect();
      const pending = await store.db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('subscription_id', '=', hook.id)
        .where('status', 'in', ['pending', 'delivering'])
        .executeTakeFirstOrThrow();
      const cursor = (await readCursor(store.db, WEBHOOK_CURSOR)) ?? 0;
      if (Number(pending.n) === 0 && cursor >= lastSequence) break;
      await sleep(100);
    }
    await collect();
    const seconds = (Date.now() - started) / 1000;
    const all = latencies.map((l) => l.ms);
    const result: WebhookLatencyResult = {
      speed,
      firstCycleSimulatedHours: firstCycleHours,
      cycles,
      events: lastSequence - firstSequence,
      signatureFailures: failures,
      seconds,
      ...summary(all),
      firstCycle: summary(latencies.filter((l) => l.sequence <= firstCycleLast).map((l) => l.ms)),
      steady: summary(latencies.filter((l) => l.sequence > firstCycleLast).map((l) => l.ms)),
      commitPollMs: watch.everyMs,
    };
    log(
      `  ${result.deliveries} deliveries over ${cycles} cycles in ${seconds.toFixed(0)} s: ` +
        `p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, max ${result.maxMs} ms ` +
        `(first cycle: ${result.firstCycle.deliveries}, p99 ${result.firstCycle.p99Ms} ms)`,
    );
    return result;
  } finally {
    await worker?.stop();
    await watch?.stop();
    for (const o of origins) o.child.kill('SIGTERM');
    await receiver.close();
    // Leave the store's webhooks as they were: no bench subscription, no cursor it created.
    if (hookId) await deleteSubscription(store.db, hookId);
    if (!cursorExisted) {
      const left = await store.db
        .selectFrom('webhook_subscriptions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      if (Number(left.n) === 0)
        await sql`delete from event_cursors where consumer = ${WEBHOOK_CURSOR}`.execute(store.db);
    }
    await store.close();
  }
}

// ---------------------------------------------------------------------------
// Report.
// ---------------------------------------------------------------------------

export async function runWebhookBench(
  config: Pick<BenchConfig, 'dataDir' | 'databaseUrl'>,
  log: (line: string) => void,
): Promise<WebhookBenchResult> {
  const throughput = await runThroughputBench(log);
  // A failure here (the simulator would not start, the store is busy) loses this figure, not the run's report.
  const latency = await runLatencyBench(config, log).catch((error: unknown) => ({
    skipped: `failed: ${error instanceof Error ? error.message : String(error)}`,
  }));
  if ('skipped' in latency) log(`  ⚠ webhook latency skipped: ${latency.skipped}`);
  return { throughput, latency };
}

function ms(value: number): string {
  return Number.isFinite(value) ? `${Math.round(value)} ms` : 'n/a';
}

export function checkWebhookTargets(result: WebhookBenchResult): TargetCheck[] {
  const t = result.throughput;
  const checks: TargetCheck[] = [
    {
      name: `webhook deliveries >= ${THROUGHPUT_TARGET}/s (SQLite, ${t.subscriptions} subscriptions × ${t.events} events), every signature verified`,
      pass:
        t.deliveriesPerSecond >= THROUGHPUT_TARGET &&
        t.succeeded === t.subscriptions * t.events &&
        t.signatureFailures === 0 &&
        t.duplicates === 0,
      detail: `${t.deliveriesPerSecond} deliveries/s (${t.succeeded}/${t.subscriptions * t.events} in ${t.seconds.toFixed(2)} s); ${t.signatureFailures} signature failures, ${t.duplicates} duplicates`,
    },
  ];
  const l = result.latency;
  checks.push(
    'skipped' in l
      ? { name: 'webhook change-to-delivery p99 < 2 s', pass: false, detail: `not measured: ${l.skipped}` }
      : {
          name: `webhook change-to-delivery p99 < ${LATENCY_P99_TARGET_MS / 1000} s after the refresh commit (SIM_SPEED ${l.speed})`,
          pass: l.deliveries > 0 && l.p99Ms < LATENCY_P99_TARGET_MS && l.signatureFailures === 0,
          detail: `p99 ${ms(l.p99Ms)}, p50 ${ms(l.p50Ms)} over ${l.deliveries} deliveries (first cycle p99 ${ms(l.firstCycle.p99Ms)}, later cycles p99 ${ms(l.steady.p99Ms)}); ${l.signatureFailures} signature failures`,
        },
  );
  return checks;
}

export function formatWebhooks(result: WebhookBenchResult): string {
  const t = result.throughput;
  const l = result.latency;
  const rows = [
    '| webhooks | figure |',
    '|---|---|',
    `| deliveries/s (${t.store}, ${t.subscriptions} subscriptions × ${t.events} events, loopback receiver) | ${t.deliveriesPerSecond}/s: ${t.succeeded} delivered in ${t.seconds.toFixed(2)} s after a ${t.fanOutSeconds.toFixed(2)} s fan-out; ${t.signatureFailures} signature failures, ${t.duplicates} duplicates |`,
  ];
  if ('skipped' in l) rows.push(`| change-to-delivery | not measured: ${l.skipped} |`);
  else
    rows.push(
      `| change-to-delivery (SIM_SPEED ${l.speed}, refresh commit → received) | p50 ${ms(l.p50Ms)}, p99 ${ms(l.p99Ms)}, max ${ms(l.maxMs)} over ${l.deliveries} deliveries, ${l.cycles} cycles, ${l.seconds.toFixed(0)} s |`,
      `| — first cycle (${l.firstCycleSimulatedHours} simulated h of changes at once) | p50 ${ms(l.firstCycle.p50Ms)}, p99 ${ms(l.firstCycle.p99Ms)} over ${l.firstCycle.deliveries} deliveries |`,
      `| — later cycles (one a second at most) | p50 ${ms(l.steady.p50Ms)}, p99 ${ms(l.steady.p99Ms)} over ${l.steady.deliveries} deliveries |`,
    );
  return rows.join('\n');
}

/**
 * `node --import tsx bench/webhooks.ts [throughput|latency]`: one part on its
 * own (latency on BENCH_DATA_DIR's store, the service stopped).
 */
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const part = process.argv[2] ?? 'throughput';
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const { readBenchConfig } = await import('./config.ts');
  const config = readBenchConfig(process.env, []);
  const run = async () => {
    if (part === 'throughput') return { throughput: await runThroughputBench(log) };
    const maxSeconds = process.env.BENCH_WEBHOOK_MAX_S ? Number(process.env.BENCH_WEBHOOK_MAX_S) : undefined;
    return { latency: await runLatencyBench(config, log, maxSeconds ? { maxSeconds, minSeconds: 5 } : {}) };
  };
  run()
    .then((result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`))
    .catch((error: unknown) => {
      log((error as Error).stack ?? String(error));
      process.exitCode = 1;
    });
}
