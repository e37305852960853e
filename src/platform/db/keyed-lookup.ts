import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from './tables.ts';

/**
 * A query with a single bound parameter (an id), built and compiled once per
 * database; each call only swaps the parameter. Detail reads run on every
 * request, and Kysely's query building and compiling cost more than the indexed
 * lookup itself (same SQL each time also reuses the prepared statement).
 *
 * `build` must bind exactly one parameter: the key (any placeholder value).
 */
export function keyedLookup<R>(
  build: (db: Kysely<Database>) => { compile(): CompiledQuery<R> },
): (db: Kysely<Database>, key: string) => Promise<R[]> {
  const compiled = new WeakMap<Kysely<Database>, CompiledQuery<R>>();
  return async (db, key) => {
    let query = compiled.get(db);
    if (!query) {
      query = build(db).compile();
      if (query.parameters.length !== 1) {
        throw new Error(`a keyed lookup binds exactly one parameter (got ${query.parameters.length})`);
      }
      compiled.set(db, query);
    }
    return (await db.executeQuery<R>({ ...query, parameters: [key] })).rows;
  };
}
