/**
 * Queries of the webhook tables: subscriptions, the delivery outbox and its
 * claims. Every function takes the store (or a transaction) first. Claims are
 * small single-row statements (grouped, at most a pool's worth, in one
 * transaction), so neither the request thread nor a writer ever waits long
 * on them.
 */
import type { Kysely } from 'kysely';
import type { Dialect } from '../../platform/db/database.ts';
import type {
  Database,
  NewWebhookDelivery,
  WebhookDeliveryRow,
  WebhookDeliveryStatus,
  WebhookSubscriptionRow,
  WebhookSubscriptionsTable,
} from '../../platform/db/tables.ts';

type Db = Kysely<Database>;

export async function insertSubscription(db: Db, row: WebhookSubscriptionsTable): Promise<void> {
  await db.insertInto('webhook_subscriptions').values(row).execute();
}

export function findSubscription(db: Db, id: string): Promise<WebhookSubscriptionRow | undefined> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The subscription when `accountId` owns it; another account's is as absent as a missing one. */
export function findOwnedSubscription(
  db: Db,
  accountId: string,
  id: string,
): Promise<WebhookSubscriptionRow | undefined> {
  return db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export async function countSubscriptions(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function listSubscriptions(
  db: Db,
  accountId: string,
  offset: number,
  limit: number,
): Promise<WebhookSubscriptionRow[]> {
  return db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .offset(offset)
    .limit(limit)
    .execute();
}

/** Every active subscription: the fan-out's candidates (bounded by the per-account limit). */
export function activeSubscriptions(db: Db): Promise<WebhookSubscriptionRow[]> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('active', '=', 1).execute();
}

export async function updateSubscription(
  db: Db,
  id: string,
  changes: Partial<Omit<WebhookSubscriptionsTable, 'id' | 'account_id' | 'created_at'>>,
): Promise<void> {
  await db.updateTable('webhook_subscriptions').set(changes).where('id', '=', id).execute();
}

/** Removes a subscription and its whole delivery log. */
export async function deleteSubscription(db: Db, id: string): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('subscription_id', '=', id).execute();
  await db.deleteFrom('webhook_subscriptions').where('id', '=', id).execute();
}

export async function deleteDelivery(db: Db, id: string): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('id', '=', id).execute();
}

/** Queued deliveries of a subscription are cancelled (it was deactivated). */
export async function cancelQueuedDeliveries(db: Db, subscriptionId: string, at: string, reason: string) {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'cancelled', next_attempt_at: null, last_error: reason, updated_at: at })
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'pending')
    .execute();
}

/** A delivery due at once: every producer (fan-out, watcher changes, test pings) queues through this. */
export function pendingDelivery(fields: {
  id: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  payload: string;
  now: string;
}): NewWebhookDelivery {
  return {
    id: fields.id,
    subscription_id: fields.subscriptionId,
    event_id: fields.eventId,
    event_type: fields.eventType,
    payload: fields.payload,
    status: 'pending',
    attempts: 0,
    next_attempt_at: fields.now,
    last_attempt_at: null,
    response_status: null,
    latency_ms: null,
    last_error: null,
    claimed_until: null,
    claimed_by: null,
    created_at: fields.now,
    updated_at: fields.now,
  };
}

export async function insertDeliveries(db: Db, rows: readonly NewWebhookDelivery[]): Promise<void> {
  const CHUNK = 200;
  for (let i = 0; i < rows.length; i += CHUNK) {
    // The (subscription, event) pair is unique: a repeated fan-out inserts nothing twice.
    await db
      .insertInto('webhook_deliveries')
      .values(rows.slice(i, i + CHUNK))
      .onConflict((oc) => oc.columns(['subscription_id', 'event_id']).doNothing())
      .execute();
  }
}

export async function countDeliveries(
  db: Db,
  subscriptionId: string,
  status?: WebhookDeliveryStatus,
): Promise<number> {
  let query = db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('subscription_id', '=', subscriptionId);
  if (status) query = query.where('status', '=', status);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

/** Newest first. */
export function listDeliveries(
  db: Db,
  subscriptionId: string,
  offset: number,
  limit: number,
  status?: WebhookDeliveryStatus,
): Promise<WebhookDeliveryRow[]> {
  let query = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(offset)
    .limit(limit);
  if (status) query = query.where('status', '=', status);
  return query.execute();
}

export function findDelivery(
  db: Db,
  subscriptionId: string,
  deliveryId: string,
): Promise<WebhookDeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', deliveryId)
    .where('subscription_id', '=', subscriptionId)
    .executeTakeFirst();
}

/**
 * A failed or cancelled delivery queued again for one attempt now; false when
 * it is not in one of those states (any more).
 */
export async function requeueDelivery(db: Db, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: at, updated_at: at })
    .where('id', '=', id)
    .where('status', 'in', ['failed', 'cancelled'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

// ---------------------------------------------------------------------------
// Claims (the delivery worker).
// ---------------------------------------------------------------------------

/**
 * Subscriptions with a delivery due at `now`, earliest due first, leaving out
 * `busy` ones (this worker's window to them is full): each gets its own
 * claim, so one endpoint's backlog never holds up another's.
 */
export async function subscriptionsWithDueDeliveries(
  db: Db,
  now: string,
  busy: readonly string[],
  limit: number,
): Promise<string[]> {
  let query = db
    .selectFrom('webhook_deliveries')
    .select(['subscription_id'])
    .select((eb) => eb.fn.min('next_attempt_at').as('due'))
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .groupBy('subscription_id')
    .orderBy('due')
    .limit(limit);
  if (busy.length > 0) query = query.where('subscription_id', 'not in', busy);
  return (await query.execute()).map((r) => r.subscription_id);
}

/**
 * Claims the earliest due delivery of one subscription until `claimedUntil`.
 * Safe with several workers: on PostgreSQL the row is picked `FOR UPDATE SKIP
 * LOCKED` (a row another worker is claiming is passed over); SQLite has one
 * writer, and the update re-checks the status, so a row is claimed once.
 */
export async function claimNextDelivery(
  db: Db,
  dialect: Dialect,
  subscriptionId: string,
  now: string,
  claimedUntil: string,
  worker: string,
): Promise<WebhookDeliveryRow | undefined> {
  let pick = db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(1);
  if (dialect === 'postgres') pick = pick.forUpdate().skipLocked();
  return (
    db
      .updateTable('webhook_deliveries')
      .set({ status: 'delivering', claimed_until: claimedUntil, claimed_by: worker, updated_at: now })
      // A scalar subquery (one InitPlan): with `IN`, PostgreSQL may run a SKIP
      // LOCKED subquery more than once and claim several rows.
      .where('id', '=', pick)
      .where('status', '=', 'pending')
      .returningAll()
      .executeTakeFirst()
  );
}

/** How many deliveries of one subscription a claim may take. */
export interface ClaimRequest {
  subscriptionId: string;
  count: number;
}

/**
 * Up to `count` of each subscription's earliest due deliveries, claimed with
 * `claimNextDelivery` one row at a time in one transaction: one commit for a
 * whole pass's claims instead of one per delivery (the same per-row
 * guarantees: SKIP LOCKED on PostgreSQL, one writer on SQLite; a row claimed
 * earlier in the transaction is no longer pending, so it is not picked again).
 */
export function claimNextDeliveries(
  db: Db,
  dialect: Dialect,
  requests: readonly ClaimRequest[],
  now: string,
  claimedUntil: string,
  worker: string,
): Promise<WebhookDeliveryRow[]> {
  if (requests.length === 0) return Promise.resolve([]);
  return db.transaction().execute(async (trx) => {
    const claimed: WebhookDeliveryRow[] = [];
    for (const { subscriptionId, count } of requests) {
      for (let i = 0; i < count; i++) {
        const row = await claimNextDelivery(trx, dialect, subscriptionId, now, claimedUntil, worker);
        if (!row) break;
        claimed.push(row);
      }
    }
    return claimed;
  });
}

/** Finished deliveries (succeeded, failed, cancelled) last changed before `before` are forgotten. */
export async function pruneFinishedDeliveries(db: Db, before: string): Promise<number> {
  const result = await db
    .deleteFrom('webhook_deliveries')
    .where('status', 'in', ['succeeded', 'failed', 'cancelled'])
    .where('updated_at', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Claims whose worker died (or stalled past the claim) are due again: at-least-once. */
export async function releaseLapsedClaims(db: Db, now: string): Promise<number> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', claimed_until: null, claimed_by: null, updated_at: now })
    .where('status', '=', 'delivering')
    .where('claimed_until', '<', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** A worker stopping gives its in-flight claims back, to be attempted again (not counted as an attempt). */
export async function releaseClaims(db: Db, ids: readonly string[], worker: string, now: string) {
  if (ids.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', claimed_until: null, claimed_by: null, updated_at: now })
    .where('id', 'in', ids)
    .where('status', '=', 'delivering')
    .where('claimed_by', '=', worker)
    .execute();
}

export interface AttemptRecord {
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  responseStatus: number | null;
  latencyMs: number | null;
  lastError: string | null;
}

/** The outcome of an attempt, written only while this worker still holds the claim. */
export async function recordAttempt(
  db: Db,
  id: string,
  worker: string,
  record: AttemptRecord,
  now: string,
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({
      status: record.status,
      attempts: record.attempts,
      next_attempt_at: record.nextAttemptAt,
      last_attempt_at: record.lastAttemptAt,
      response_status: record.responseStatus,
      latency_ms: record.latencyMs,
      last_error: record.lastError,
      claimed_until: null,
      claimed_by: null,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('status', '=', 'delivering')
    .where('claimed_by', '=', worker)
    .execute();
}

/** One attempt's outcome, for `recordAttempts`. */
export interface AttemptOutcome {
  id: string;
  record: AttemptRecord;
  now: string;
}

/**
 * Several attempts' outcomes in one transaction (one commit): each written, as
 * by `recordAttempt`, only while this worker still holds its claim.
 */
export async function recordAttempts(
  db: Db,
  worker: string,
  outcomes: readonly AttemptOutcome[],
): Promise<void> {
  if (outcomes.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const o of outcomes) await recordAttempt(trx, o.id, worker, o.record, o.now);
  });
}

/**
 * Creates a consumer's cursor at `sequence` unless it exists: a new cursor
 * starts at the log's end, an existing one is never moved (unlike
 * `commitCursor`, which would skip events still waiting for fan-out).
 */
export async function ensureCursor(db: Db, consumer: string, sequence: number, at: string): Promise<void> {
  await db
    .insertInto('event_cursors')
    .values({ consumer, sequence, updated_at: at })
    .onConflict((oc) => oc.column('consumer').doNothing())
    .execute();
}
