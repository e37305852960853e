import {
  type ColumnMetadata,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  type QueryExecutorProvider,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';

interface ColumnRow {
  table: string;
  table_type: string;
  schema: string;
  column: string;
  type: string;
  type_schema: string;
  not_null: boolean;
  has_default: boolean;
  auto_incrementing: boolean;
  comment: string | null;
}

/**
 * Kysely's introspection for PostgreSQL, of the tables of the connection's
 * own schema (`current_schema()`, the first of the `search_path` the store
 * sets) instead of every schema the role can use.
 *
 * The migrator asks for the tables several times a run to find its own
 * bookkeeping tables; Kysely's PostgreSQL introspector answers with every
 * column of every schema in the database, calling `pg_get_serial_sequence`
 * and `col_description` for each. On a database shared by many schemas (the
 * test suite gives each test store one, beside an operator's other
 * applications) one answer took 17 ms with 6 schemas and 171 ms with 22, so
 * every migration run cost more than the last. The store never reads another
 * schema's tables; schemas are still listed whole (`getSchemas`), as the
 * migrator checks its schema exists that way.
 */
export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(
    private readonly db: QueryExecutorProvider,
    private readonly schemas: DatabaseIntrospector,
  ) {}

  getSchemas(): Promise<SchemaMetadata[]> {
    return this.schemas.getSchemas();
  }

  async getTables(
    options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
  ): Promise<TableMetadata[]> {
    const internal = options.withInternalKyselyTables
      ? sql``
      : sql`and c.relname not in (${DEFAULT_MIGRATION_TABLE}, ${DEFAULT_MIGRATION_LOCK_TABLE})`;
    const { rows } = await sql<ColumnRow>`
      select c.relname as "table", c.relkind as table_type, ns.nspname as "schema",
             a.attname as "column", typ.typname as "type", tns.nspname as type_schema,
             a.attnotnull as not_null, a.atthasdef as has_default,
             pg_get_serial_sequence(format('%I.%I', ns.nspname, c.relname), a.attname) is not null as auto_incrementing,
             col_description(a.attrelid, a.attnum) as "comment"
        from pg_catalog.pg_attribute a
        join pg_catalog.pg_class c on c.oid = a.attrelid
        join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
        join pg_catalog.pg_type typ on typ.oid = a.atttypid
        join pg_catalog.pg_namespace tns on tns.oid = typ.typnamespace
       where ns.nspname = current_schema()
         and c.relkind in ('r', 'v', 'p')
         and a.attnum >= 0 and not a.attisdropped
         ${internal}
       order by c.relname, a.attnum`.execute(this.db);
    const tables = new Map<string, { table: TableMetadata; columns: ColumnMetadata[] }>();
    for (const row of rows) {
      let entry = tables.get(row.table);
      if (entry === undefined) {
        const columns: ColumnMetadata[] = [];
        entry = {
          columns,
          table: { name: row.table, schema: row.schema, isView: row.table_type === 'v', columns },
        };
        tables.set(row.table, entry);
      }
      entry.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.auto_incrementing,
        ...(row.comment === null ? {} : { comment: row.comment }),
      });
    }
    return [...tables.values()].map((entry) => entry.table);
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
