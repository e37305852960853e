/**
 * `watcher.change` on webhooks: a change one of an account's watchers records
 * becomes a delivery to each of that account's active subscriptions that asked
 * for `watcher.change`, written in the transaction that records the change —
 * so a recorded change is always queued and a rolled-back one never is (the
 * outbox guarantee listing events have through the fan-out cursor). The
 * delivery worker then treats it like any other delivery: signed, retried,
 * dead-lettered.
 */
import type { Kysely } from 'kysely';
import type { WatcherStreams } from '../../modules/watchers/watcher-streams.ts';
import type { RecordedWatcherChange, WatcherChangeSink } from '../../modules/watchers/watchers.service.ts';
import { subscriptionFromRow } from '../../modules/webhooks/webhook.mapper.ts';
import { insertDeliveries, pendingDelivery } from '../../modules/webhooks/webhooks.repository.ts';
import { newDeliveryId } from '../../modules/webhooks/webhooks.service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database, NewWebhookDelivery } from '../../platform/db/tables.ts';

const WATCHER_CHANGE = 'watcher.change';

/** Queues the change for the owner's `watcher.change` subscriptions; returns how many deliveries. */
export async function enqueueWatcherChange(
  trx: Kysely<Database>,
  change: RecordedWatcherChange,
  now: string,
): Promise<number> {
  const rows = await trx
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('account_id', '=', change.accountId)
    .where('active', '=', 1)
    .execute();
  const payload = JSON.stringify(change.payload);
  const deliveries: NewWebhookDelivery[] = rows
    .map(subscriptionFromRow)
    .filter((s) => s.events.includes(WATCHER_CHANGE))
    .map((s) =>
      pendingDelivery({
        id: newDeliveryId(),
        subscriptionId: s.id,
        eventId: change.payload.id,
        eventType: WATCHER_CHANGE,
        payload,
        now,
      }),
    );
  await insertDeliveries(trx, deliveries);
  return deliveries.length;
}

/** The watchers' sink in a serving process: the owner's webhooks (durably), then this process's streams. */
export function watcherChangeSink(options: {
  streams: WatcherStreams;
  wallClock: Clock;
  /** Wakes the delivery worker once a change is committed. */
  nudge: () => void;
}): WatcherChangeSink {
  return {
    async record(change, trx) {
      await enqueueWatcherChange(trx, change, options.wallClock.now().toISOString());
    },
    async watcherChanged(change) {
      // A nudge without a queued delivery costs one empty pass of the worker.
      options.nudge();
      await options.streams.watcherChanged(change);
    },
  };
}
