import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { loadDemoMarket } from '../../src/demo/market/load.ts';
import { openStore, type Store } from '../../src/platform/db/database.ts';
import { migrateToLatest } from '../../src/platform/db/migrate.ts';
import { syncAreas } from '../../src/reference/areas-store.ts';
import { createTestStore, TEST_DIALECT } from './store.ts';

/** Which demo market: what `loadDemoMarket` is given. */
export interface DemoMarketKey {
  seed: number;
  scale: number;
  now: Date;
}

/** Where one loaded market's rows are kept for copying: a SQLite file to attach, or a PostgreSQL schema. */
type Template = { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; schema: string };

/**
 * Templates of this test process (a vitest fork runs file after file in one
 * module graph, so a template serves every file of the fork), by market key.
 */
const templates = new Map<string, Promise<Template>>();

/**
 * Fills a fresh, migrated store with the area tree and the demo market
 * `key` names: the same rows `syncAreas` and `loadDemoMarket` write, copied
 * table by table from a store they loaded once per test process.
 *
 * Why: a test app's market took ~500 ms of CPU to generate and insert
 * (11,000 listings and 65,000 rows at scale 0.02), for every one of the
 * suite's few hundred apps; the copy is native SQL. The loader itself is the
 * subject of its own tests (demo-market, pipeline.demo, boot.*), and it is
 * what made the template, so the rows are the loader's.
 *
 * Contract: `store` holds no market rows (fresh from `createTestStore`, or with
 * the areas only); every table but the migrator's own ends with exactly the
 * template's rows, and identity counters continue above them. The `areas`
 * scope's time is the template's (when its tree was written, on the wall
 * clock), as `syncAreas` leaves an unchanged tree's.
 */
export async function loadDemoMarketFromTemplate(store: Store, key: DemoMarketKey): Promise<void> {
  const id = `${key.seed}:${key.scale}:${key.now.toISOString()}`;
  let template = templates.get(id);
  if (!template) {
    template = buildTemplate(key);
    templates.set(id, template);
    // A failed build is not kept: the next caller sees its own failure.
    template.catch(() => templates.delete(id));
  }
  const made = await template;
  if (made.dialect === 'sqlite') await copyFromSqliteFile(store, made.file);
  else await copyFromPostgresSchema(store, made.schema);
}

async function buildTemplate(key: DemoMarketKey): Promise<Template> {
  if (TEST_DIALECT === 'postgres') {
    // A test schema like any other (t_<run>_…): the run's global teardown drops it.
    const store = await createTestStore();
    try {
      await syncAreas(store);
      await loadDemoMarket(store, key);
      return { dialect: 'postgres', schema: store.schema! };
    } finally {
      await store.close();
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'stoop-demo-template-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'template.sqlite');
  const store = await openStore({ dialect: 'sqlite', databaseUrl: `sqlite:${file}` });
  try {
    await migrateToLatest(store);
    await syncAreas(store);
    await loadDemoMarket(store, key);
  } finally {
    await store.close();
  }
  return { dialect: 'sqlite', file };
}

/** Tables the copy leaves alone: the migrator's (the store is migrated already). */
const isMigratorTable = (name: string) => name.startsWith('kysely_');

function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function copyFromSqliteFile(store: Store, file: string): Promise<void> {
  // One connection throughout: an in-memory store has only the one, and ATTACH is per connection.
  await store.db.connection().execute(async (connection) => {
    await sql`ATTACH DATABASE ${file} AS demo_template`.execute(connection);
    try {
      const { rows } = await sql<{ name: string }>`
        SELECT name FROM demo_template.sqlite_master
        WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid`.execute(connection);
      await connection.transaction().execute(async (trx) => {
        for (const { name } of rows) {
          if (isMigratorTable(name)) continue;
          const table = sql.raw(quoted(name));
          await sql`DELETE FROM main.${table}`.execute(trx);
          await sql`INSERT INTO main.${table} SELECT * FROM demo_template.${table}`.execute(trx);
        }
      });
    } finally {
      await sql`DETACH DATABASE demo_template`.execute(connection);
    }
  });
}

async function copyFromPostgresSchema(store: Store, templateSchema: string): Promise<void> {
  const { rows: tables } = await sql<{ name: string }>`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = ${templateSchema} AND table_type = 'BASE TABLE'`.execute(store.db);
  const { rows: identities } = await sql<{ table: string; column: string }>`
    SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns
    WHERE table_schema = ${templateSchema} AND is_identity = 'YES'`.execute(store.db);
  await store.db.transaction().execute(async (trx) => {
    for (const { name } of tables) {
      if (isMigratorTable(name)) continue;
      // Unqualified names are the store's own schema (first on its connections' search path).
      const table = sql.raw(quoted(name));
      const source = sql.raw(`${quoted(templateSchema)}.${quoted(name)}`);
      await sql`DELETE FROM ${table}`.execute(trx);
      await sql`INSERT INTO ${table} OVERRIDING SYSTEM VALUE SELECT * FROM ${source}`.execute(trx);
    }
    for (const { table, column } of identities) {
      if (isMigratorTable(table)) continue;
      // The next generated value continues above the copied rows, as after the loader's own inserts.
      await sql`
        SELECT setval(pg_get_serial_sequence(${quoted(table)}, ${column}),
          coalesce((SELECT max(${sql.ref(column)}) FROM ${sql.raw(quoted(table))}), 0) + 1, false)`.execute(
        trx,
      );
    }
  });
}
