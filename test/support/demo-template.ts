import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { sql } from 'kysely';
import { loadDemoMarket } from '../../src/demo/market/load.ts';
import type { Store } from '../../src/platform/db/database.ts';
import { syncAreas } from '../../src/reference/areas-store.ts';
import { createSharedTestStore } from './store.ts';

/** Which demo market: what `loadDemoMarket` is given. */
export interface DemoMarketKey {
  seed: number;
  scale: number;
  now: Date;
}

/**
 * Where one loaded market's rows are kept for copying (a SQLite file to
 * attach, or a PostgreSQL schema), and what to copy, read once when it was
 * made: its tables but the migrator's, in creation order, and (PostgreSQL) the
 * identity columns whose counters the copy moves on.
 */
type Template =
  | { dialect: 'sqlite'; file: string; tables: readonly string[] }
  | {
      dialect: 'postgres';
      schema: string;
      tables: readonly string[];
      identities: readonly { table: string; column: string }[];
    };

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
  if (made.dialect === 'sqlite') await copyFromSqliteFile(store, made);
  else await copyFromPostgresSchema(store, made);
}

/**
 * A store another connection can read (`createSharedTestStore`: a SQLite file,
 * or a `t_<run>_…` PostgreSQL schema the run's global teardown drops) with the
 * market loaded, closed again.
 */
async function buildTemplate(key: DemoMarketKey): Promise<Template> {
  const { store } = await createSharedTestStore('stoop-demo-template-');
  try {
    await syncAreas(store);
    await loadDemoMarket(store, key);
    if (store.dialect === 'postgres') {
      const { rows: tables } = await sql<{ name: string }>`
        SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(store.db);
      const { rows: identities } = await sql<{ table: string; column: string }>`
        SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns
        WHERE table_schema = current_schema() AND is_identity = 'YES'`.execute(store.db);
      return {
        dialect: 'postgres',
        schema: store.schema!,
        tables: tables.map((t) => t.name).filter(isCopied),
        identities: identities.filter((identity) => isCopied(identity.table)),
      };
    }
    const { rows: tables } = await sql<{ name: string }>`
      SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid`.execute(
      store.db,
    );
    // A SQLite store's location is its file; the file is kept until the test process ends.
    const file = store.location;
    process.once('exit', () => rmSync(dirname(file), { recursive: true, force: true }));
    return { dialect: 'sqlite', file, tables: tables.map((t) => t.name).filter(isCopied) };
  } finally {
    await store.close();
  }
}

/** Every table but the migrator's (the store is migrated already). */
const isCopied = (table: string) => !table.startsWith('kysely_');

function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function copyFromSqliteFile(
  store: Store,
  template: Extract<Template, { dialect: 'sqlite' }>,
): Promise<void> {
  // One connection throughout: an in-memory store has only the one, and ATTACH is per connection.
  await store.db.connection().execute(async (connection) => {
    await sql`ATTACH DATABASE ${template.file} AS demo_template`.execute(connection);
    try {
      await connection.transaction().execute(async (trx) => {
        for (const name of template.tables) {
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

async function copyFromPostgresSchema(
  store: Store,
  template: Extract<Template, { dialect: 'postgres' }>,
): Promise<void> {
  await store.db.transaction().execute(async (trx) => {
    for (const name of template.tables) {
      // Unqualified names are the store's own schema (first on its connections' search path).
      const table = sql.raw(quoted(name));
      const source = sql.raw(`${quoted(template.schema)}.${quoted(name)}`);
      await sql`DELETE FROM ${table}`.execute(trx);
      await sql`INSERT INTO ${table} OVERRIDING SYSTEM VALUE SELECT * FROM ${source}`.execute(trx);
    }
    for (const { table, column } of template.identities) {
      // The next generated value continues above the copied rows, as after the loader's own inserts.
      await sql`
        SELECT setval(pg_get_serial_sequence(${quoted(table)}, ${column}),
          coalesce((SELECT max(${sql.ref(column)}) FROM ${sql.raw(quoted(table))}), 0) + 1, false)`.execute(
        trx,
      );
    }
  });
}
