/** Values per `IN (…)` list: well under both dialects' bind limits. */
export const IN_CHUNK = 500;

/** `items` in consecutive slices of at most `size` (for `IN` lists and multi-row statements). */
export function chunks<T>(items: readonly T[], size = IN_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
