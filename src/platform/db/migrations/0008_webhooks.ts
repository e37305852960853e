import type { Kysely } from 'kysely';

/**
 * Webhook subscriptions and their delivery outbox (src/modules/webhooks,
 * src/jobs/deliveries). Instants are ISO 8601 UTC text, flags 0/1 integers.
 *
 * `webhook_deliveries` is the outbox: the dispatcher inserts rows for the
 * subscriptions an event matches and advances its `event_cursors` row in the
 * same transaction, so an event is fanned out exactly once; the unique
 * (subscription, event) pair makes a repeated fan-out harmless as well.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    // JSON: event type names.
    .addColumn('events', 'text', (c) => c.notNull())
    // JSON: the optional filters, or null.
    .addColumn('filters', 'text')
    .addColumn('active', 'integer', (c) => c.notNull())
    // Kept usable for signing (not hashed); the previous one stays valid for a while after a rotation.
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'text')
    // Events with a sequence above this one are delivered (the log's end at creation).
    .addColumn('after_sequence', 'bigint', (c) => c.notNull())
    // First failure of the current run of failures; null while deliveries succeed.
    .addColumn('failing_since', 'text')
    .addColumn('disabled_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_subscriptions_account')
    .on('webhook_subscriptions')
    .columns(['account_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    // The exact JSON body sent (and signed) on every attempt.
    .addColumn('payload', 'text', (c) => c.notNull())
    // pending | delivering | succeeded | failed | cancelled
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('response_status', 'integer')
    .addColumn('latency_ms', 'integer')
    .addColumn('last_error', 'text')
    // While `delivering`: until when the claim holds (a crashed worker's claims lapse).
    .addColumn('claimed_until', 'text')
    .addColumn('claimed_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('webhook_deliveries_subscription_event', ['subscription_id', 'event_id'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  // One subscription's next due delivery (the worker claims per subscription).
  await db.schema
    .createIndex('webhook_deliveries_claim')
    .on('webhook_deliveries')
    .columns(['subscription_id', 'status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_subscription')
    .on('webhook_deliveries')
    .columns(['subscription_id', 'created_at'])
    .execute();
}
