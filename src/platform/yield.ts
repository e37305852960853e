import type { BackgroundPacer } from './worker/serving-activity.ts';

/** Set on a background worker thread (`runBehindRequests`): its slices rest while requests arrive. */
let pacer: BackgroundPacer | null = null;

/**
 * Resolves after the event loop has run what was waiting (I/O callbacks,
 * timers): work cut into slices awaits it between slices so no slice holds
 * the request thread for long. On a background worker thread that paces
 * itself (./worker/serving-activity.ts) it also rests there while the request
 * thread serves.
 */
export function yieldToEventLoop(): Promise<void> {
  const rest = pacer?.restMs() ?? 0;
  return new Promise<void>((resolve) => {
    if (rest > 0) setTimeout(resolve, rest);
    else setImmediate(resolve);
  });
}

/** Makes this thread's slices of work pace themselves by `next` (null: never rest). */
export function paceThisThread(next: BackgroundPacer | null): void {
  pacer = next;
}
