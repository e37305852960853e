import { PostgresIntrospector } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/platform/db/database.ts';
import { migrateToLatest } from '../src/platform/db/migrate.ts';
import { createTestStore, TEST_DIALECT } from './support/store.ts';

/**
 * PostgreSQL stores introspect their own schema only
 * (src/platform/db/current-schema-introspector.ts): what Kysely's own
 * introspector says of that schema, and nothing of the others in the database.
 */
describe.skipIf(TEST_DIALECT !== 'postgres')('a PostgreSQL store’s introspection', () => {
  let mine: Store;
  let other: Store;
  beforeAll(async () => {
    mine = await createTestStore();
    other = await createTestStore();
    await other.db.schema.createTable('only_in_the_other_schema').addColumn('id', 'integer').execute();
  });
  afterAll(async () => {
    await mine?.close();
    await other?.close();
  });

  it('lists the tables of its own schema, as Kysely’s introspector describes them, and no other schema’s', async () => {
    const everywhere = await new PostgresIntrospector(mine.db).getTables({ withInternalKyselyTables: true });
    const expected = everywhere.filter((table) => table.schema === mine.schema);
    const listed = await mine.db.introspection.getTables({ withInternalKyselyTables: true });
    expect(listed.length).toBeGreaterThan(20);
    expect(listed).toEqual(expected);
    expect(everywhere.some((table) => table.name === 'only_in_the_other_schema')).toBe(true);
    expect(listed.some((table) => table.schema !== mine.schema)).toBe(false);
    expect((await other.db.introspection.getTables()).map((table) => table.name)).toContain(
      'only_in_the_other_schema',
    );
  });

  it('leaves out the migrator’s own tables unless asked, and lists every schema', async () => {
    const names = (await mine.db.introspection.getTables()).map((table) => table.name);
    expect(names).toContain('api_keys');
    expect(names).not.toContain('kysely_migration');
    expect(names).not.toContain('kysely_migration_lock');
    const schemas = (await mine.db.introspection.getSchemas()).map((schema) => schema.name);
    expect(schemas).toEqual(expect.arrayContaining([mine.schema, other.schema]));
  });

  it('migrates a store that is already at the latest version without applying anything', async () => {
    expect((await migrateToLatest(mine)).applied).toEqual([]);
  });
});
