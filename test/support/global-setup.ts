import pg from 'pg';

/**
 * PostgreSQL test schemas (`t_…`) are dropped once before and once after the
 * whole run, never while test files run: Kysely's migrator introspects every
 * schema in the database, and a schema dropped concurrently by another test
 * file makes that introspection fail ("relation t_….buildings does not exist").
 */
async function dropTestSchemas(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url || !/^postgres/.test(url)) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(
      "select nspname from pg_namespace where nspname like 't\\_%'",
    );
    for (const { nspname } of rows) await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
  } finally {
    await client.end();
  }
}

export async function setup(): Promise<() => Promise<void>> {
  await dropTestSchemas();
  return dropTestSchemas;
}
