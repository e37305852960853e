import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type AreaAlias, AreaNames, readAreaAliases } from './area-names.ts';
import { parseCsv } from './csv.ts';

/** One row of the area tree with its reference centroid (null for the root and Unassigned). */
export interface AreaRecord {
  id: number;
  name: string;
  parentId: number | null;
  level: number;
  slug: string;
  latitude: number | null;
  longitude: number | null;
  /** How the centroid was obtained: exact, alias, parent (rough), none. */
  centroidMatch: string;
}

const RESOURCES = fileURLToPath(new URL('../../resources/', import.meta.url));

/**
 * Reads the shipped copies of `areas.csv` and `area-centroids.csv` (from the
 * project's shared reference data; a test keeps them identical).
 */
export function readAreaRecords(dir = RESOURCES): AreaRecord[] {
  const areas = parseCsv(readFileSync(`${dir}/areas.csv`, 'utf8'));
  const centroids = new Map(
    parseCsv(readFileSync(`${dir}/area-centroids.csv`, 'utf8')).map((row) => [Number(row.id), row]),
  );
  return areas.map((row) => {
    const id = Number(row.id);
    const centroid = centroids.get(id);
    const lat = centroid?.latitude ? Number(centroid.latitude) : null;
    const lon = centroid?.longitude ? Number(centroid.longitude) : null;
    return {
      id,
      name: row.name!,
      parentId: row.parent_id ? Number(row.parent_id) : null,
      level: Number(row.level),
      slug: row.slug!,
      latitude: lat,
      longitude: lon,
      centroidMatch: centroid?.match ?? 'none',
    };
  });
}

export { foldName } from './area-names.ts';

export const NYC_BOROUGH_IDS = [100, 200, 300, 400, 500] as const;
export const NEW_JERSEY_ID = 1000000;
export const UNASSIGNED_ID = 9999999;
export const ROOT_ID = 1;

/** Immutable in-memory view of the area tree: ancestry, descendants, leaves, and names. */
export class AreaTree {
  private readonly byId = new Map<number, AreaRecord>();
  private readonly childrenOf = new Map<number, AreaRecord[]>();
  private readonly descendantCache = new Map<number, readonly number[]>();
  /** Names, slugs and aliases of the areas, indexed once with the tree. */
  readonly names: AreaNames;

  constructor(
    readonly records: readonly AreaRecord[],
    aliases: readonly AreaAlias[] = readAreaAliases(),
  ) {
    this.names = new AreaNames(records, aliases);
    for (const record of records) {
      this.byId.set(record.id, record);
      if (record.parentId !== null) {
        const siblings = this.childrenOf.get(record.parentId) ?? [];
        siblings.push(record);
        this.childrenOf.set(record.parentId, siblings);
      }
    }
  }

  get(id: number): AreaRecord | undefined {
    return this.byId.get(id);
  }

  has(id: number): boolean {
    return this.byId.has(id);
  }

  children(id: number): readonly AreaRecord[] {
    return this.childrenOf.get(id) ?? [];
  }

  /** The area itself and every area below it, ascending by id. */
  descendantsAndSelf(id: number): readonly number[] {
    let cached = this.descendantCache.get(id);
    if (!cached) {
      const out: number[] = [];
      const stack = [id];
      while (stack.length > 0) {
        const next = stack.pop()!;
        if (!this.byId.has(next)) continue;
        out.push(next);
        for (const child of this.children(next)) stack.push(child.id);
      }
      cached = Object.freeze(out.sort((a, b) => a - b));
      this.descendantCache.set(id, cached);
    }
    return cached;
  }

  /** Ancestors from the root down to the direct parent. */
  ancestors(id: number): AreaRecord[] {
    const chain: AreaRecord[] = [];
    let current = this.byId.get(id);
    while (current && current.parentId !== null) {
      const parent = this.byId.get(current.parentId);
      if (!parent) break;
      chain.unshift(parent);
      current = parent;
    }
    return chain;
  }

  /** The level-1 area (borough, New Jersey, Unassigned) an area belongs to. */
  borough(id: number): AreaRecord | undefined {
    const area = this.byId.get(id);
    if (!area) return undefined;
    if (area.level <= 1) return area;
    return this.ancestors(id).find((a) => a.level === 1);
  }

  /** Areas with no children: where listings are placed. */
  leaves(): AreaRecord[] {
    return this.records.filter((r) => this.children(r.id).length === 0);
  }
}
