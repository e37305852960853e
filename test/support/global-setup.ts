import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Schemas of runs that started longer ago than this are leftovers (a killed run). */
const STALE_AFTER_S = 6 * 3600;

/**
 * PostgreSQL test schemas (`t_<run>_…`, see testSchemaName) are dropped after
 * the run that made them, never while test files run (a test may still hold
 * a store it made; the stores' introspection reads only their own schema, see
 * src/platform/db/current-schema-introspector.ts). Runs going on at the same
 * time against the same database keep their own schemas; leftovers of runs
 * older than STALE_AFTER_S are removed at the next start.
 */
async function dropSchemas(filter: (run: string, startedAt: number) => boolean): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url || !/^postgres/.test(url)) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(
      "select nspname from pg_namespace where nspname like 't\\_%'",
    );
    for (const { nspname } of rows) {
      const match = /^t_((\d+)x[0-9a-f]+)_/.exec(nspname);
      // Names from before run ids existed are leftovers too.
      if (!match || filter(match[1]!, Number(match[2]))) {
        await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
      }
    }
  } finally {
    await client.end();
  }
}

export async function setup(): Promise<() => Promise<void>> {
  const startedAt = Math.floor(Date.now() / 1000);
  const run = `${startedAt}x${randomBytes(2).toString('hex')}`;
  // Inherited by the test workers, which name their schemas after it.
  process.env.STOOP_TEST_RUN = run;
  // Test files run side by side on few cores, each with its own servers: a background
  // thread in the idle class would get next to nothing while two other files keep
  // the cores busy, and tests that wait for it would time out. Tests run background
  // threads at nice 10 (what they assert is behaviour, not scheduling); the idle class
  // has its own test (background-pacing.test.ts).
  process.env.BACKGROUND_PRIORITY ??= 'nice';
  await dropSchemas((_, at) => at < startedAt - STALE_AFTER_S);
  return () => dropSchemas((other) => other === run);
}
