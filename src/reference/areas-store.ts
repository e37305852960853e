import { markChanged, readScope } from '../modules/freshness/data-version.ts';
import type { Store } from '../platform/db/database.ts';
import type { AreasTable } from '../platform/db/tables.ts';
import { type AreaRecord, foldName, readAreaRecords } from './areas.ts';

/**
 * Upserts the shipped area tree into the `areas` table. Idempotent: run at every
 * boot and by tests, it converges the table to the reference files (rows whose
 * ids left the tree are removed) and writes nothing when they already agree.
 */
export async function syncAreas(
  store: Store,
  records: readonly AreaRecord[] = readAreaRecords(),
): Promise<void> {
  const rows: AreasTable[] = records.map((r) => ({
    id: r.id,
    name: r.name,
    parent_id: r.parentId,
    level: r.level,
    slug: r.slug,
    name_folded: foldName(r.name),
    latitude: r.latitude,
    longitude: r.longitude,
  }));
  // Every boot and CLI call runs this; writing only on a real change keeps the
  // `areas` refresh time (part of the data version) stable, so running nodes do
  // not drop their search index and caches for nothing.
  const stored = await store.db.selectFrom('areas').selectAll().orderBy('id').execute();
  const marker = await readScope(store.db, 'areas');
  const byId = (a: AreasTable, b: AreasTable) => a.id - b.id;
  if (marker && JSON.stringify(stored) === JSON.stringify([...rows].sort(byId))) return;
  await store.db.transaction().execute(async (trx) => {
    // 8 columns × 100 rows stays far below either dialect's bind-parameter limit.
    for (let i = 0; i < rows.length; i += 100) {
      await trx
        .insertInto('areas')
        .values(rows.slice(i, i + 100))
        .onConflict((oc) =>
          oc.column('id').doUpdateSet((eb) => ({
            name: eb.ref('excluded.name'),
            parent_id: eb.ref('excluded.parent_id'),
            level: eb.ref('excluded.level'),
            slug: eb.ref('excluded.slug'),
            name_folded: eb.ref('excluded.name_folded'),
            latitude: eb.ref('excluded.latitude'),
            longitude: eb.ref('excluded.longitude'),
          })),
        )
        .execute();
    }
    const ids = rows.map((r) => r.id);
    if (ids.length > 0) await trx.deleteFrom('areas').where('id', 'not in', ids).execute();
    // The area tree's `dataAge` and part of the data version: when this reference data was last loaded.
    await markChanged(trx, 'areas', new Date(), `${rows.length} areas`);
  });
}
