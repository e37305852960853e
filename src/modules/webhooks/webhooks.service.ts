/**
 * Webhook subscriptions of an account: create, read, change, delete, rotate
 * the secret, read the delivery log, retry a delivery and send a test ping.
 *
 * Owner scoping: every lookup is by (account, id); another account's
 * subscription is reported exactly like a missing one (404).
 * URLs are vetted (shape, then every resolved address) at registration and
 * again by the delivery worker at each connection (src/platform/outbound).
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../domain/events.ts';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database, WebhookDeliveryRow, WebhookDeliveryStatus } from '../../platform/db/tables.ts';
import {
  type OutboundPolicy,
  type Resolver,
  resolveDestination,
} from '../../platform/outbound/destination.ts';
import type { AreaTree } from '../../reference/areas.ts';
import { resolveAreaInput } from '../areas/area-input.ts';
import { latestSequence } from '../events/event-log.ts';
import { newSigningSecret } from './signing.ts';
import { subscriptionFromRow, type WebhookSubscription } from './webhook.mapper.ts';
import * as repo from './webhooks.repository.ts';
import {
  type CreateWebhookInput,
  MAX_SUBSCRIPTIONS_PER_ACCOUNT,
  type UpdateWebhookInput,
  type WebhookFilters,
  type WebhookFiltersInput,
} from './webhooks.schema.ts';

/** The dispatcher's cursor in `event_cursors`. */
export const WEBHOOK_CURSOR = 'webhooks';
/** How long a rotated-out secret keeps signing deliveries (wall clock). */
export const PREVIOUS_SECRET_VALIDITY_MS = 24 * 60 * 60 * 1000;
/** The type of a test delivery (`POST /webhooks/{id}/test`). */
export const PING_EVENT_TYPE = 'webhook.ping';

export interface WebhooksServiceOptions {
  db: Kysely<Database>;
  /** Real time: createdAt/updatedAt, secret validity, delivery scheduling. */
  wallClock: Clock;
  areaTree: AreaTree;
  policy: OutboundPolicy;
  resolver: Resolver;
  /** Told when a delivery was queued by hand (test, retry), so the worker looks at once. */
  onQueued?: () => void;
}

export interface Page<T> {
  items: T[];
  total: number;
}

export interface PageWindow {
  page: number;
  perPage: number;
}

let lastIdMs = 0;
let idCounter = 0;

/**
 * A delivery id that sorts in creation order within a process (time, then a
 * counter, then randomness): a fan-out batch's deliveries are attempted, and
 * listed, in event order.
 */
export function newDeliveryId(): string {
  const ms = Date.now();
  idCounter = ms === lastIdMs ? idCounter + 1 : 0;
  lastIdMs = ms;
  const time = ms.toString(36).padStart(9, '0');
  const counter = idCounter.toString(36).padStart(4, '0');
  return `whd_${time}${counter}${randomBytes(6).toString('hex')}`;
}

function invalidField(field: string, rule: string, message: string): ApiError {
  return new ApiError('INVALID_BODY', `Invalid field "${field}": ${message}`, {
    params: [{ parameter: field, location: 'body', rule, message }],
  });
}

export class WebhooksService {
  private readonly db: Kysely<Database>;

  constructor(private readonly options: WebhooksServiceOptions) {
    this.db = options.db;
  }

  private now(): string {
    return this.options.wallClock.now().toISOString();
  }

  /** Event names checked one by one, so the 400 names the bad one and lists every valid name. */
  private checkEvents(events: readonly string[]): WebhookEventType[] {
    const unknown = events.filter((e) => !isWebhookEventType(e));
    if (unknown.length > 0) {
      throw invalidField(
        'events',
        'enum',
        `unknown event type${unknown.length > 1 ? 's' : ''} ${unknown.map((e) => JSON.stringify(e)).join(', ')}; valid: ${WEBHOOK_EVENT_TYPES.join(', ')}`,
      );
    }
    return [...new Set(events)] as WebhookEventType[];
  }

  /** Filters as stored: areas resolved to ids (names included), each once, in the order given. */
  private checkFilters(input: WebhookFiltersInput | null | undefined): WebhookFilters | null {
    if (input === undefined || input === null) return null;
    const { areas, ...rest } = input;
    const filters: WebhookFilters = { ...rest };
    if (areas !== undefined) {
      const ids = areas.map(
        (area) => resolveAreaInput(this.options.areaTree, 'filters.areas', area, 'body').id,
      );
      filters.areas = [...new Set(ids)];
    }
    const ranges: [keyof WebhookFilters, keyof WebhookFilters][] = [
      ['minPrice', 'maxPrice'],
      ['minBeds', 'maxBeds'],
    ];
    for (const [low, high] of ranges) {
      const a = filters[low];
      const b = filters[high];
      if (typeof a === 'number' && typeof b === 'number' && a > b) {
        throw invalidField(`filters.${low}`, 'range', `must not exceed filters.${high} (${a} > ${b})`);
      }
    }
    return Object.keys(filters).length === 0 ? null : filters;
  }

  /** The URL vetted as the delivery worker will vet it; the 400 says why it is refused. */
  private async checkUrl(url: string): Promise<string> {
    const destination = await resolveDestination(url, this.options.policy, this.options.resolver);
    if (!destination.ok)
      throw invalidField('url', destination.kind === 'url' ? 'format' : 'destination', destination.reason);
    return url;
  }

  private async owned(accountId: string, id: string): Promise<WebhookSubscription> {
    const row = await repo.findOwnedSubscription(this.db, accountId, id);
    if (!row) throw ApiError.notFound('Webhook', id);
    return subscriptionFromRow(row);
  }

  async create(accountId: string, input: CreateWebhookInput): Promise<WebhookSubscription> {
    const events = this.checkEvents(input.events);
    const filters = this.checkFilters(input.filters);
    const url = await this.checkUrl(input.url);
    if ((await repo.countSubscriptions(this.db, accountId)) >= MAX_SUBSCRIPTIONS_PER_ACCOUNT) {
      throw new ApiError(
        'CONFLICT',
        `An account may hold at most ${MAX_SUBSCRIPTIONS_PER_ACCOUNT} webhook subscriptions; delete one first`,
      );
    }
    const now = this.now();
    const id = `wh_${randomBytes(12).toString('hex')}`;
    await this.db.transaction().execute(async (trx) => {
      // Events after the log's end now are delivered; the dispatcher's cursor is
      // created here (never moved) so no event after this point can be skipped.
      const after = await latestSequence(trx);
      await repo.ensureCursor(trx, WEBHOOK_CURSOR, after, now);
      await repo.insertSubscription(trx, {
        id,
        account_id: accountId,
        url,
        events: JSON.stringify(events),
        filters: filters === null ? null : JSON.stringify(filters),
        active: 1,
        secret: newSigningSecret(),
        previous_secret: null,
        previous_secret_expires_at: null,
        after_sequence: after,
        failing_since: null,
        disabled_reason: null,
        created_at: now,
        updated_at: now,
      });
    });
    return this.owned(accountId, id);
  }

  async list(accountId: string, window: PageWindow): Promise<Page<WebhookSubscription>> {
    const total = await repo.countSubscriptions(this.db, accountId);
    const rows = await repo.listSubscriptions(
      this.db,
      accountId,
      (window.page - 1) * window.perPage,
      window.perPage,
    );
    return { items: rows.map(subscriptionFromRow), total };
  }

  get(accountId: string, id: string): Promise<WebhookSubscription> {
    return this.owned(accountId, id);
  }

  async update(accountId: string, id: string, input: UpdateWebhookInput): Promise<WebhookSubscription> {
    const current = await this.owned(accountId, id);
    const events = input.events === undefined ? undefined : this.checkEvents(input.events);
    const filters = input.filters === undefined ? undefined : this.checkFilters(input.filters);
    const url = input.url === undefined ? undefined : await this.checkUrl(input.url);
    const now = this.now();
    await this.db.transaction().execute(async (trx) => {
      await repo.updateSubscription(trx, id, {
        ...(url !== undefined ? { url } : {}),
        ...(events !== undefined ? { events: JSON.stringify(events) } : {}),
        ...(filters !== undefined ? { filters: filters === null ? null : JSON.stringify(filters) } : {}),
        ...(input.active === true && !current.active
          ? { active: 1, disabled_reason: null, failing_since: null }
          : {}),
        ...(input.active === false ? { active: 0 } : {}),
        updated_at: now,
      });
      if (input.active === false) {
        await repo.cancelQueuedDeliveries(trx, id, now, 'cancelled: the subscription was deactivated');
      }
    });
    return this.owned(accountId, id);
  }

  async remove(accountId: string, id: string): Promise<void> {
    await this.owned(accountId, id);
    await this.db.transaction().execute((trx) => repo.deleteSubscription(trx, id));
  }

  /** A new secret; the old one keeps signing (as a second signature) for 24 hours. */
  async rotateSecret(accountId: string, id: string): Promise<WebhookSubscription> {
    const current = await this.owned(accountId, id);
    const now = this.options.wallClock.now();
    await repo.updateSubscription(this.db, id, {
      secret: newSigningSecret(),
      previous_secret: current.secret,
      previous_secret_expires_at: new Date(now.getTime() + PREVIOUS_SECRET_VALIDITY_MS).toISOString(),
      updated_at: now.toISOString(),
    });
    return this.owned(accountId, id);
  }

  async deliveries(
    accountId: string,
    id: string,
    window: PageWindow,
    status?: WebhookDeliveryStatus,
  ): Promise<Page<WebhookDeliveryRow>> {
    await this.owned(accountId, id);
    const total = await repo.countDeliveries(this.db, id, status);
    const items = await repo.listDeliveries(
      this.db,
      id,
      (window.page - 1) * window.perPage,
      window.perPage,
      status,
    );
    return { items, total };
  }

  /** A failed (or cancelled) delivery queued for one more attempt now. */
  async retry(accountId: string, id: string, deliveryId: string): Promise<WebhookDeliveryRow> {
    const subscription = await this.owned(accountId, id);
    const delivery = await repo.findDelivery(this.db, id, deliveryId);
    if (!delivery) throw ApiError.notFound('Delivery', deliveryId);
    if (!subscription.active) {
      throw new ApiError(
        'CONFLICT',
        'The subscription is inactive: reactivate it (PATCH active: true) first',
      );
    }
    if (!(await repo.requeueDelivery(this.db, deliveryId, this.now()))) {
      throw new ApiError(
        'CONFLICT',
        `Only a failed or cancelled delivery can be retried; this one is ${delivery.status}`,
        { currentStatus: delivery.status },
      );
    }
    this.options.onQueued?.();
    return (await repo.findDelivery(this.db, id, deliveryId)) as WebhookDeliveryRow;
  }

  /** A signed `webhook.ping` queued through the same outbox and worker as real events. */
  async test(accountId: string, id: string): Promise<WebhookDeliveryRow> {
    const subscription = await this.owned(accountId, id);
    if (!subscription.active) {
      throw new ApiError(
        'CONFLICT',
        'The subscription is inactive: reactivate it (PATCH active: true) first',
      );
    }
    const now = this.now();
    const eventId = `evt_ping_${randomBytes(8).toString('hex')}`;
    const deliveryId = newDeliveryId();
    const payload = JSON.stringify({
      id: eventId,
      type: PING_EVENT_TYPE,
      timestamp: now,
      data: { subscriptionId: id },
    });
    await repo.insertDeliveries(this.db, [
      repo.pendingDelivery({
        id: deliveryId,
        subscriptionId: id,
        eventId,
        eventType: PING_EVENT_TYPE,
        payload,
        now,
      }),
    ]);
    this.options.onQueued?.();
    return (await repo.findDelivery(this.db, id, deliveryId)) as WebhookDeliveryRow;
  }
}
