import { type Kysely, sql } from 'kysely';
import type { Database } from '../../platform/db/tables.ts';

/** Bounded: health must answer (as degraded) even when the database hangs. */
const PROBE_TIMEOUT_MS = 2000;

/** Round-trips a trivial statement; resolves with the latency in ms, rejects when unreachable or past the bound. */
export async function probeDatabase(db: Kysely<Database>): Promise<number> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      sql`select 1`.execute(db),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('database probe timed out')), PROBE_TIMEOUT_MS);
        timer.unref();
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
  return Math.round((performance.now() - started) * 100) / 100;
}
