/**
 * The webhook delivery worker of a serving process: fans new events out into
 * the outbox (fan-out.ts), claims due deliveries and POSTs them, signed.
 *
 * - **Claims** are rows in the store (`delivering` until `claimed_until`), so
 *   several processes can deliver from one store (PostgreSQL claims skip rows
 *   another worker is locking); a crashed worker's claims lapse and the
 *   deliveries are attempted again: at-least-once, deduplicated by receivers
 *   on `webhook-id`.
 * - **Isolation**: each subscription has a window of attempts in flight in
 *   this process (endpoint-windows.ts: one, opening up to eight while the
 *   endpoint answers 2xx quickly, back to one on a failure or slow answer),
 *   within a bounded pool; claims are per subscription, earliest due first,
 *   so a slow or failing endpoint only ever occupies one slot.
 * - **Every attempt re-checks** the subscription (gone: dropped; inactive:
 *   cancelled) and its URL (shape and resolved addresses; the connection goes
 *   to the vetted address), then signs with the current secret, plus the
 *   previous one while it is valid.
 * - **Outcomes**: only a 2xx succeeds; anything else (a 3xx included: redirects
 *   are never followed) is retried on RETRY_SCHEDULE_MS, then `failed`. An
 *   endpoint failing for 5 days is deactivated, and the delivery log says why.
 *
 * Attempts are I/O on the main thread; every query here is a small one.
 * Writes are grouped: a pass claims its deliveries in one transaction, and
 * outcomes finishing together are recorded in one transaction (an attempt
 * ends only once its outcome is committed), so a burst costs a few commits
 * rather than two per delivery. While the pool is full, freed slots are
 * shared out by a pass once a quarter of the pool is free, not one pass per
 * finished attempt.
 * Times (scheduling, signatures) are on the wall clock.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { signDelivery } from '../../modules/webhooks/signing.ts';
import { subscriptionFromRow, type WebhookSubscription } from '../../modules/webhooks/webhook.mapper.ts';
import * as repo from '../../modules/webhooks/webhooks.repository.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Dialect } from '../../platform/db/database.ts';
import type { Database, WebhookDeliveryRow } from '../../platform/db/tables.ts';
import { type Connector, nodeConnector, OutboundError } from '../../platform/outbound/connector.ts';
import {
  type OutboundPolicy,
  type Resolver,
  resolveDestination,
  systemResolver,
} from '../../platform/outbound/destination.ts';
import { yieldToEventLoop } from '../../platform/yield.ts';
import type { AreaTree } from '../../reference/areas.ts';
import { ENDPOINT_WINDOW_MAX, type EndpointSignal, EndpointWindows } from './endpoint-windows.ts';
import { fanOutBatch } from './fan-out.ts';
import { DISABLE_AFTER_FAILING_MS, nextRetryDelay, RETRY_SCHEDULE_MS, retryAfterMs } from './retry-policy.ts';

export const DELIVERY_TIMEOUT_MS = 15_000;
export const MAX_RESPONSE_BYTES = 4096;

export interface DeliveryWorkerOptions {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Real time: scheduling, claims and the `webhook-timestamp`. */
  wallClock: Clock;
  areaTree: AreaTree;
  policy: OutboundPolicy;
  resolver?: Resolver;
  connector?: Connector;
  log: Pick<Logger, 'warn' | 'error' | 'info'>;
  /** Uniform in [0, 1): retry jitter. */
  random?: () => number;
  schedule?: readonly number[];
  /** Attempts in flight at once in this process (the pool). */
  concurrency?: number;
  /** Most attempts in flight to one subscription (its window's ceiling); ENDPOINT_WINDOW_MAX unless told. */
  endpointWindowMax?: number;
  /** How often the worker looks for new events and due deliveries while there is work, real ms. */
  pollMs?: number;
  /**
   * The longest gap between looks while passes find nothing (real ms): idle
   * passes double the gap from `pollMs` up to this. A nudge (new events in this
   * process, a delivery queued by hand) looks at once and resets it.
   */
  idlePollMs?: number;
  timeoutMs?: number;
  userAgent?: string;
}

interface InFlight {
  subscriptionId: string;
  abort: AbortController;
  done: Promise<void>;
}

/** Outcomes recorded in one transaction at most. */
const RECORD_BATCH = 128;

/** How long a claim outlives its attempt's deadline before another worker may take the delivery. */
const CLAIM_MARGIN_MS = 45_000;
/** How often lapsed claims (a crashed worker's) are released. */
const LAPSED_CLAIMS_EVERY_MS = 5_000;
/** How long finished deliveries stay in the delivery log (a failed one can be retried by hand until then). */
export const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** How often the delivery log is pruned. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

export class WebhookDeliveryWorker {
  private readonly id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  /** Attempts in flight, by delivery id. */
  private readonly inFlight = new Map<string, InFlight>();
  /** Slots per endpoint: attempts in flight and claims being made, within each one's window. */
  private readonly windows: EndpointWindows;
  private readonly resolver: Resolver;
  private readonly connector: Connector;
  private readonly random: () => number;
  private readonly schedule: readonly number[];
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly idlePollMs: number;
  /** The gap before the next pass: pollMs while there is work, growing while there is none. */
  private gapMs: number;
  /** When the last scheduled pass started (performance.now()). */
  private lastPassAt = Number.NEGATIVE_INFINITY;
  private readonly timeoutMs: number;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private ticking: Promise<void> | null = null;
  /** A pass asked for while one runs: `now` (the pool has room) or `nudged` (rate-limited to one per pollMs). */
  private again: 'now' | 'nudged' | null = null;
  private lastLapsedCheck = 0;
  private lastPrune = 0;
  /** Whether the last pass filled the pool: other endpoints may be waiting for a slot. */
  private saturated = false;
  /** Whether the last pass failed for want of a store: logged once per outage. */
  private unavailable = false;
  /** Outcomes waiting for the next group commit, each with its attempt's waiter. */
  private outcomes: { outcome: repo.AttemptOutcome; resolve: () => void; reject: (e: unknown) => void }[] =
    [];
  private flushing = false;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.resolver = options.resolver ?? systemResolver;
    this.connector = options.connector ?? nodeConnector;
    this.random = options.random ?? Math.random;
    this.schedule = options.schedule ?? RETRY_SCHEDULE_MS;
    this.concurrency = options.concurrency ?? 128;
    this.windows = new EndpointWindows(options.endpointWindowMax ?? ENDPOINT_WINDOW_MAX);
    this.pollMs = options.pollMs ?? 250;
    this.idlePollMs = Math.max(this.pollMs, options.idlePollMs ?? 1000);
    this.gapMs = this.pollMs;
    this.timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  }

  /** Starts polling (idempotent). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.arm(0);
  }

  /** Stops polling, aborts attempts in flight and gives their claims back; resolves when all have ended. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    for (const flight of this.inFlight.values()) flight.abort.abort();
    await Promise.all([...this.inFlight.values()].map((f) => f.done));
  }

  /** Something was queued: look now rather than at the next poll. */
  nudge(): void {
    this.gapMs = this.pollMs;
    // At most one nudged pass per pollMs however often it is nudged (a refresh
    // cycle moves the data version once per written batch).
    if (this.running) this.arm(this.sinceLastPassWait(), 'nudged');
  }

  /** The pool has room again while deliveries wait: a pass now, however recent the last one. */
  private passNow(): void {
    this.gapMs = this.pollMs;
    if (this.running) this.arm(0, 'now');
  }

  /** How long until a pass may start: pollMs after the previous one started. */
  private sinceLastPassWait(): number {
    return Math.max(0, this.lastPassAt + this.pollMs - performance.now());
  }

  /**
   * Tests and tools: fans out every pending event and delivers everything due
   * now, waiting for the attempts, until nothing due is left (bounded).
   */
  async drain(maxRounds = 10_000): Promise<void> {
    for (let round = 0; round < maxRounds; round++) {
      await this.pass();
      if (this.inFlight.size === 0) {
        const due = await repo.subscriptionsWithDueDeliveries(
          this.options.db,
          this.options.wallClock.now().toISOString(),
          [],
          1,
        );
        if (due.length === 0) return;
        continue;
      }
      await Promise.race([...this.inFlight.values()].map((f) => f.done));
    }
  }

  /** How many attempts this process has in flight. */
  inFlightCount(): number {
    return this.inFlight.size;
  }

  private arm(delayMs: number, again: 'now' | 'nudged' = 'now'): void {
    if (!this.running) return;
    if (this.ticking) {
      // Remembered for when the pass in progress ends: `now` wins over `nudged`.
      if (this.again !== 'now') this.again = again;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.lastPassAt = performance.now();
      this.ticking = this.pass()
        .then((worked) => {
          // An idle store costs a few small queries a second at most, not four.
          this.gapMs =
            worked || this.inFlight.size > 0 ? this.pollMs : Math.min(this.idlePollMs, this.gapMs * 2);
        })
        .finally(() => {
          this.ticking = null;
          const again = this.again;
          this.again = null;
          if (again === 'now') this.arm(0);
          else if (again === 'nudged') this.arm(this.sinceLastPassWait(), 'nudged');
          else this.arm(this.gapMs);
        });
    }, delayMs);
    this.timer.unref();
  }

  /**
   * One pass: fan out, release lapsed claims, then claim and launch what the
   * pool has room for. Never throws; says whether it found any work.
   */
  private async pass(): Promise<boolean> {
    const { db, dialect, areaTree, wallClock, log } = this.options;
    let worked = false;
    try {
      for (let i = 0; i < 20; i++) {
        if ((await fanOutBatch(db, dialect, areaTree, wallClock.now().toISOString())) === 0) break;
        worked = true;
        // SQLite runs on this thread: let requests in between two batches.
        await yieldToEventLoop();
      }
      const nowMs = wallClock.now().getTime();
      if (Math.abs(nowMs - this.lastLapsedCheck) >= LAPSED_CLAIMS_EVERY_MS) {
        this.lastLapsedCheck = nowMs;
        await repo.releaseLapsedClaims(db, new Date(nowMs).toISOString());
      }
      if (Math.abs(nowMs - this.lastPrune) >= PRUNE_EVERY_MS) {
        this.lastPrune = nowMs;
        await repo.pruneFinishedDeliveries(db, new Date(nowMs - DELIVERY_LOG_RETENTION_MS).toISOString());
      }
      const room = this.concurrency - this.windows.used;
      if (room > 0) {
        const now = wallClock.now();
        const candidates = await repo.subscriptionsWithDueDeliveries(
          db,
          now.toISOString(),
          this.windows.full(),
          room,
        );
        this.saturated = candidates.length >= room;
        if ((await this.claimAndLaunch(this.shareOut(candidates, room), now, false)) > 0) worked = true;
      }
      if (this.unavailable) log.info('webhook deliveries resumed');
      this.unavailable = false;
    } catch (error) {
      if (!this.unavailable) log.warn({ err: error }, 'webhook delivery pass failed; retrying');
      this.unavailable = true;
    }
    return worked;
  }

  /**
   * The pool's room shared among `candidates` (earliest due first): a slot
   * each, then what is left, one at a time in turn, up to each one's window.
   */
  private shareOut(candidates: readonly string[], room: number): repo.ClaimRequest[] {
    const requests = candidates
      .slice(0, room)
      .map((subscriptionId) => ({ subscriptionId, count: 1, free: this.windows.free(subscriptionId) }))
      .filter((r) => r.free > 0);
    let left = room - requests.length;
    for (let grew = true; left > 0 && grew; ) {
      grew = false;
      for (const r of requests) {
        if (left === 0) break;
        if (r.count < r.free) {
          r.count++;
          left--;
          grew = true;
        }
      }
    }
    return requests.map(({ subscriptionId, count }) => ({ subscriptionId, count }));
  }

  /**
   * Claims what `requests` ask for and launches each claimed delivery. The
   * slots are taken before the claim's queries, so claims made at the same
   * time never overfill a window or the pool. A refill (`whileRunning`) that
   * finds the worker stopped meanwhile gives its claims back; a pass launches
   * what it claimed either way (drain() runs passes on a stopped worker).
   * Resolves to how many launched.
   */
  private async claimAndLaunch(
    requests: readonly repo.ClaimRequest[],
    now: Date,
    whileRunning: boolean,
  ): Promise<number> {
    const { db, dialect } = this.options;
    for (const r of requests) this.windows.take(r.subscriptionId, r.count);
    let rows: WebhookDeliveryRow[] = [];
    try {
      rows = await repo.claimNextDeliveries(
        db,
        dialect,
        requests,
        now.toISOString(),
        new Date(now.getTime() + this.timeoutMs + CLAIM_MARGIN_MS).toISOString(),
        this.id,
      );
    } finally {
      for (const r of requests) this.windows.give(r.subscriptionId, r.count);
    }
    if (whileRunning && !this.running) {
      await repo.releaseClaims(
        db,
        rows.map((r) => r.id),
        this.id,
        now.toISOString(),
      );
      return 0;
    }
    for (const row of rows) this.launch(row);
    return rows.length;
  }

  /** Claims and launches the next due deliveries of one subscription, as many as its window has room for. Never throws. */
  private async claimNextOf(subscriptionId: string): Promise<void> {
    const count = Math.min(this.windows.free(subscriptionId), this.concurrency - this.windows.used);
    if (count <= 0) return;
    try {
      await this.claimAndLaunch([{ subscriptionId, count }], this.options.wallClock.now(), true);
    } catch (error) {
      this.options.log.warn(
        { err: error, webhook: subscriptionId },
        'claiming a webhook delivery failed; the next pass retries',
      );
    }
  }

  private launch(row: WebhookDeliveryRow): void {
    const subscriptionId = row.subscription_id;
    const abort = new AbortController();
    this.windows.take(subscriptionId);
    const done = this.attempt(row, abort.signal)
      .catch((error: unknown): undefined => {
        this.options.log.error({ err: error, delivery: row.id }, 'webhook delivery attempt failed');
      })
      .then((said) => {
        this.inFlight.delete(row.id);
        this.windows.give(subscriptionId);
        if (said) this.windows.signal(subscriptionId, said);
        else this.windows.forget(subscriptionId);
        // While others may be waiting for a slot, a full pass shares the pool
        // out (earliest due first) once a quarter of it is free: one pass's
        // queries per many attempts; otherwise this endpoint's next deliveries
        // follow at once, without a pass's queries.
        if (this.saturated) {
          if (this.concurrency - this.windows.used >= Math.max(1, Math.floor(this.concurrency / 4)))
            this.passNow();
        } else if (this.running) void this.claimNextOf(subscriptionId);
      });
    this.inFlight.set(row.id, { subscriptionId, abort, done });
  }

  /** One attempt, its outcome recorded; says what it learnt of the endpoint (nothing when none was called). */
  private async attempt(row: WebhookDeliveryRow, signal: AbortSignal): Promise<EndpointSignal | undefined> {
    const { db, wallClock } = this.options;
    const found = await repo.findSubscription(db, row.subscription_id);
    const startedAt = wallClock.now();
    const stamp = startedAt.toISOString();
    if (!found) {
      // Deleted: its log went with it; nothing more is sent.
      await repo.deleteDelivery(db, row.id);
      return;
    }
    const subscription = subscriptionFromRow(found);
    if (!subscription.active) {
      await this.record(
        row.id,
        {
          ...unchanged(row),
          status: 'cancelled',
          nextAttemptAt: null,
          lastError: 'cancelled: the subscription is inactive',
        },
        stamp,
      );
      return;
    }

    const destination = await resolveDestination(subscription.url, this.options.policy, this.resolver);
    if (!destination.ok) {
      await this.recordFailure(
        row,
        subscription,
        startedAt,
        null,
        null,
        `refused: ${destination.reason}`,
        undefined,
      );
      return 'failed';
    }
    const headers = {
      ...signDelivery(signingSecrets(subscription, startedAt), row.event_id, startedAt, row.payload),
      'content-type': 'application/json',
      'user-agent': this.options.userAgent ?? 'Stoop-Webhooks/1',
    };
    const began = performance.now();
    try {
      const response = await this.connector({
        url: destination.url,
        pinned: destination.pinned,
        headers,
        body: row.payload,
        timeoutMs: this.timeoutMs,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        signal,
      });
      const latency = Math.round(performance.now() - began);
      if (response.status >= 200 && response.status < 300) {
        const at = wallClock.now().toISOString();
        await this.record(
          row.id,
          {
            status: 'succeeded',
            attempts: row.attempts + 1,
            nextAttemptAt: null,
            lastAttemptAt: stamp,
            responseStatus: response.status,
            latencyMs: latency,
            lastError: null,
          },
          at,
        );
        if (subscription.failingSince !== null) {
          await repo.updateSubscription(db, subscription.id, { failing_since: null });
        }
        return this.windows.classifyAnswer(latency);
      }
      const redirect =
        response.status >= 300 && response.status < 400
          ? ` (redirect${response.location ? ` to ${response.location.slice(0, 200)}` : ''} not followed)`
          : '';
      const snippet = response.bodySnippet.trim().slice(0, 200);
      await this.recordFailure(
        row,
        subscription,
        startedAt,
        response.status,
        latency,
        `HTTP ${response.status}${redirect}${snippet ? `: ${snippet}` : ''}`,
        retryAfterMs(response.retryAfter, wallClock.now()),
      );
      return 'failed';
    } catch (error) {
      if (error instanceof OutboundError && error.kind === 'aborted') {
        // Stopping: not an attempt; another pass (or process) takes it again.
        await repo.releaseClaims(db, [row.id], this.id, wallClock.now().toISOString());
        return;
      }
      const latency = Math.round(performance.now() - began);
      const message =
        error instanceof OutboundError
          ? error.kind === 'timeout'
            ? `timeout: ${error.message}`
            : `network error: ${error.message}`
          : `error: ${error instanceof Error ? error.message : String(error)}`;
      await this.recordFailure(row, subscription, startedAt, null, latency, message, undefined);
      return 'failed';
    }
  }

  /**
   * Records an attempt's outcome with those finishing at the same time, in
   * one transaction; resolves once it is committed.
   */
  private record(id: string, record: repo.AttemptRecord, now: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.outcomes.push({ outcome: { id, record, now }, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // After the current turn: outcomes arriving meanwhile join this commit.
        setImmediate(() => void this.flushOutcomes());
      }
    });
  }

  private async flushOutcomes(): Promise<void> {
    while (this.outcomes.length > 0) {
      const batch = this.outcomes.splice(0, RECORD_BATCH);
      try {
        await repo.recordAttempts(
          this.options.db,
          this.id,
          batch.map((b) => b.outcome),
        );
        for (const b of batch) b.resolve();
      } catch (error) {
        for (const b of batch) b.reject(error);
      }
    }
    this.flushing = false;
  }

  private async recordFailure(
    row: WebhookDeliveryRow,
    subscription: WebhookSubscription,
    startedAt: Date,
    responseStatus: number | null,
    latencyMs: number | null,
    reason: string,
    retryAfter: number | undefined,
  ): Promise<void> {
    const { db, wallClock } = this.options;
    const now = wallClock.now();
    const attempts = row.attempts + 1;
    const delay = nextRetryDelay(attempts, retryAfter, this.random, this.schedule);
    const failingSince = subscription.failingSince ?? startedAt.toISOString();
    const disable = now.getTime() - Date.parse(failingSince) >= DISABLE_AFTER_FAILING_MS;
    const disabledReason = disable
      ? `deactivated: deliveries to this endpoint have failed since ${failingSince} (5 days); fix it, then PATCH active: true`
      : null;
    await this.record(
      row.id,
      {
        status: disable || delay === null ? 'failed' : 'pending',
        attempts,
        nextAttemptAt: disable || delay === null ? null : new Date(now.getTime() + delay).toISOString(),
        lastAttemptAt: startedAt.toISOString(),
        responseStatus,
        latencyMs,
        lastError: disabledReason ? `${reason}; ${disabledReason}` : reason,
      },
      now.toISOString(),
    );
    if (disabledReason) {
      await db.transaction().execute(async (trx) => {
        await repo.updateSubscription(trx, subscription.id, {
          active: 0,
          disabled_reason: disabledReason,
          failing_since: failingSince,
          updated_at: now.toISOString(),
        });
        await repo.cancelQueuedDeliveries(
          trx,
          subscription.id,
          now.toISOString(),
          `cancelled: ${disabledReason}`,
        );
      });
      // Ids only: a URL may carry the receiver's own token.
      this.options.log.warn(
        { webhook: subscription.id },
        'webhook endpoint deactivated after 5 days of failures',
      );
    } else if (subscription.failingSince === null) {
      await repo.updateSubscription(db, subscription.id, { failing_since: failingSince });
    }
  }
}

/** The current secret, then the rotated-out one while it is still valid. */
function signingSecrets(subscription: WebhookSubscription, at: Date): string[] {
  const previousValid =
    subscription.previousSecret !== null &&
    subscription.previousSecretExpiresAt !== null &&
    Date.parse(subscription.previousSecretExpiresAt) > at.getTime();
  return previousValid ? [subscription.secret, subscription.previousSecret as string] : [subscription.secret];
}

function unchanged(row: WebhookDeliveryRow) {
  return {
    attempts: row.attempts,
    lastAttemptAt: row.last_attempt_at,
    responseStatus: row.response_status,
    latencyMs: row.latency_ms,
  };
}
