/** Rows of the webhook tables → API objects: the one mapping of each. */
import type { WebhookEventType } from '../../domain/events.ts';
import type { WebhookDeliveryRow, WebhookSubscriptionRow } from '../../platform/db/tables.ts';
import type {
  WebhookDeliveryView,
  WebhookFilters,
  WebhookView,
  WebhookWithSecretView,
} from './webhooks.schema.ts';

/** A subscription as the services use it (secrets included; never serialized as is). */
export interface WebhookSubscription {
  id: string;
  accountId: string;
  url: string;
  events: WebhookEventType[];
  filters: WebhookFilters | null;
  active: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
  afterSequence: number;
  failingSince: string | null;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export function subscriptionFromRow(row: WebhookSubscriptionRow): WebhookSubscription {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    events: JSON.parse(row.events) as WebhookEventType[],
    filters: row.filters === null ? null : (JSON.parse(row.filters) as WebhookFilters),
    active: row.active === 1,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    afterSequence: Number(row.after_sequence),
    failingSince: row.failing_since,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toWebhookView(subscription: WebhookSubscription): WebhookView {
  return {
    id: subscription.id,
    url: subscription.url,
    events: subscription.events,
    filters: subscription.filters,
    active: subscription.active,
    disabledReason: subscription.disabledReason,
    failingSince: subscription.failingSince,
    createdAt: subscription.createdAt,
    updatedAt: subscription.updatedAt,
  };
}

/** Only the create and rotate-secret answers carry the secret. */
export function toWebhookWithSecretView(subscription: WebhookSubscription): WebhookWithSecretView {
  return {
    ...toWebhookView(subscription),
    secret: subscription.secret,
    previousSecretExpiresAt: subscription.previousSecretExpiresAt,
  };
}

export function toDeliveryView(row: WebhookDeliveryRow): WebhookDeliveryView {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    responseStatus: row.response_status,
    latencyMs: row.latency_ms,
    nextAttemptAt: row.next_attempt_at,
    lastAttemptAt: row.last_attempt_at,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
