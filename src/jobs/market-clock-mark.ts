import type { Clock } from '../platform/clock.ts';
import type { Store } from '../platform/db/database.ts';
import { writeMarketClockMark } from './refresh/pipeline-state.repository.ts';

/** Real milliseconds between two recorded readings of the market clock. */
const MARK_EVERY_MS = 30_000;

export interface MarketClockMark {
  /** Records a last reading and stops; call before the store closes. */
  stop(): Promise<void>;
}

/**
 * Keeps the market clock's reading in the store (every 30 s and at shutdown),
 * so the next start resumes from it: without it a run that wrote no data (a
 * static restart, a quiet feed) would leave nothing later than the data, and
 * the restarted market clock would step back by that run's length. A failed
 * write (store away) is skipped: the next one catches up.
 */
export function keepMarketClockMark(store: Store, marketClock: Clock, wallClock: Clock): MarketClockMark {
  const record = async () => {
    try {
      await writeMarketClockMark(store.db, marketClock.now(), wallClock.now());
    } catch {
      // Store away: the next reading catches up.
    }
  };
  const timer = setInterval(() => void record(), MARK_EVERY_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await record();
    },
  };
}
