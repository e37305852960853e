import type { Jobs } from '../jobs.ts';
import type { WebhookDeliveryWorker } from './delivery-worker.ts';

/**
 * The process's jobs with the webhook delivery worker started and stopped
 * alongside them: it runs where the server runs (after listen), never in tools
 * or tests that do not start the jobs. Stopped first, so no attempt outlives
 * the store.
 */
export function withWebhookDelivery(jobs: Jobs, worker: Pick<WebhookDeliveryWorker, 'start' | 'stop'>): Jobs {
  const combined: Jobs = {
    start: async () => {
      await jobs.start();
      worker.start();
    },
    stop: async () => {
      await worker.stop();
      await jobs.stop();
    },
    status: () => jobs.status(),
    trigger: (name) => jobs.trigger(name),
  };
  wrapped.set(combined, jobs);
  return combined;
}

const wrapped = new WeakMap<Jobs, Jobs>();

/** The jobs runtime under `withWebhookDelivery` (its worker thread, restarts): for operators' tools and tests. */
export function baseJobs(jobs: Jobs): Jobs {
  return wrapped.get(jobs) ?? jobs;
}
