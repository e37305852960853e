import { sql } from 'kysely';
import type { Store } from './database.ts';

/** How often the background checkpointer copies the SQLite write-ahead log into the database. */
export const WAL_CHECKPOINT_EVERY_MS = 2_000;

/** What `PRAGMA wal_checkpoint` reports: pages in the log, and how many of them are now in the database. */
export interface CheckpointResult {
  /** 1 when another connection's checkpoint was running (this one did nothing). */
  busy: number;
  log: number;
  checkpointed: number;
}

export interface WalCheckpoints {
  /** One checkpoint now (shared with one already running). */
  runOnce(): Promise<CheckpointResult>;
  stop(): void;
}

/**
 * Checkpoints a SQLite store's write-ahead log every `everyMs` on this
 * thread's connection: the jobs worker's, so that the request thread, whose
 * connections are opened with `walCheckpoints: 'background'`, never copies
 * the log on a commit. PASSIVE: it never waits for readers or writers and
 * copies what it can; the next writer then restarts the log from its start.
 * Failures (a store away) are reported to `onError` and retried on schedule.
 */
export function startWalCheckpoints(
  store: Store,
  everyMs = WAL_CHECKPOINT_EVERY_MS,
  onError: (error: unknown) => void = () => {},
): WalCheckpoints {
  let running: Promise<CheckpointResult> | null = null;
  const runOnce = (): Promise<CheckpointResult> => {
    running ??= (async () => {
      try {
        const { rows } = await sql<CheckpointResult>`pragma wal_checkpoint(PASSIVE)`.execute(store.db);
        return rows[0] ?? { busy: 0, log: 0, checkpointed: 0 };
      } finally {
        running = null;
      }
    })();
    return running;
  };
  const timer =
    store.dialect === 'sqlite'
      ? setInterval(() => {
          runOnce().catch(onError);
        }, everyMs)
      : null;
  timer?.unref();
  return {
    runOnce,
    stop: () => {
      if (timer) clearInterval(timer);
    },
  };
}
