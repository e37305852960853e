import type { Kysely } from 'kysely';

/**
 * Named leases held by one process at a time and renewed by a heartbeat
 * (src/platform/limits/process-lease.ts). Instants are ISO 8601 UTC text, so
 * they compare as strings on both dialects.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are written against an untyped schema by design
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('process_leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('renewed_at', 'text', (c) => c.notNull())
    .execute();
}
