import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AreaRecord } from './areas.ts';
import { parseCsv } from './csv.ts';

/**
 * Area names as people type them: by id, slug, name or a common alias
 * (`resources/area-aliases.csv`), ignoring case, accents, punctuation and
 * spacing, so `Bed-Stuy`, `bed stuy` and `bedstuy` are one name. Every key is
 * computed once when the tree is loaded; resolving or searching is a map
 * lookup or a bounded edit-distance pass over ~450 short keys.
 */

const RESOURCES = fileURLToPath(new URL('../../resources/', import.meta.url));

/** Lowercase and strip diacritics, so "Bedford-Stuyvesant" ≈ "bedford stuyvesant" and "Côte" ≈ "cote". */
export function foldName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/**
 * The matching key of a name: folded, `&` read as "and", every character
 * other than a letter or digit dropped (`Hell's Kitchen` → `hellskitchen`).
 */
export function compactKey(text: string): string {
  return foldName(text.replaceAll('&', ' and ')).replaceAll(' ', '');
}

/** The slug of a name: folded, apostrophes dropped, other runs of punctuation and spaces as one hyphen. */
export function slugOf(name: string): string {
  return foldName(name.replace(/['’]/g, '')).replaceAll(' ', '-');
}

/**
 * A unique slug per area, derived from its name. When names collide, the
 * lowest id keeps the plain slug and each other area appends its parent's
 * slug (then its id, should even that collide): deterministic, and stable as
 * long as the colliding areas keep their ids.
 */
export function assignSlugs(
  records: readonly Pick<AreaRecord, 'id' | 'name' | 'parentId'>[],
): Map<number, string> {
  const byId = new Map(records.map((r) => [r.id, r]));
  const slugs = new Map<number, string>();
  const taken = new Set<string>();
  for (const record of [...records].sort((a, b) => a.id - b.id)) {
    let slug = slugOf(record.name);
    if (taken.has(slug)) {
      const parent = record.parentId === null ? undefined : byId.get(record.parentId);
      if (parent) slug = `${slug}-${slugOf(parent.name)}`;
      if (taken.has(slug)) slug = `${slug}-${record.id}`;
    }
    taken.add(slug);
    slugs.set(record.id, slug);
  }
  return slugs;
}

export const ALIAS_KINDS = ['abbreviation', 'alternate', 'part'] as const;
export type AliasKind = (typeof ALIAS_KINDS)[number];

/** One row of `resources/area-aliases.csv`. */
export interface AreaAlias {
  areaId: number;
  alias: string;
  /** `abbreviation` (UWS), `alternate` (another name for the area), `part` (a place within it). */
  kind: AliasKind;
}

/** Reads the hand-maintained alias list shipped beside the area tree. */
export function readAreaAliases(dir = RESOURCES): AreaAlias[] {
  return parseCsv(readFileSync(`${dir}/area-aliases.csv`, 'utf8')).map((row, i) => {
    const kind = row.kind as AliasKind;
    const areaId = Number(row.area_id);
    if (!Number.isInteger(areaId) || !row.alias || !ALIAS_KINDS.includes(kind)) {
      throw new Error(`area-aliases.csv row ${i + 2} is malformed: ${JSON.stringify(row)}`);
    }
    return { areaId, alias: row.alias, kind };
  });
}

/** How a name search matched an area, best first. */
export const MATCH_RANKS = ['exact', 'prefix', 'substring', 'fuzzy'] as const;
export type MatchRank = (typeof MATCH_RANKS)[number];

export interface NameMatch {
  record: AreaRecord;
  rank: MatchRank;
  /** Edit distance of a fuzzy match (0 otherwise). */
  distance: number;
}

export type Resolution =
  | { kind: 'found'; record: AreaRecord }
  | { kind: 'unknown'; suggestions: AreaRecord[] }
  | { kind: 'ambiguous'; candidates: AreaRecord[] };

/** Typos tolerated for a key of this length: none up to 3 characters, 1 up to 7, then 2. */
export function typoBudget(length: number): number {
  return length <= 3 ? 0 : length <= 7 ? 1 : 2;
}

/** Rows of the distance table, reused across calls (searches run on one thread, one at a time). */
let rows: [Int32Array, Int32Array, Int32Array] = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/**
 * Optimal-string-alignment distance (insertions, deletions, substitutions and
 * adjacent transpositions), or `max + 1` as soon as it must exceed `max`.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (rows[0].length <= b.length) {
    const size = b.length + 1;
    rows = [new Int32Array(size), new Int32Array(size), new Int32Array(size)];
  }
  let [before, previous, current] = rows;
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, before[j - 2]! + 1);
      }
      current[j] = value;
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  return Math.min(previous[b.length]!, max + 1);
}

/** Stable order among equally good matches: broader areas (lower level) first, then id. */
function byLevelThenId(a: AreaRecord, b: AreaRecord): number {
  return a.level - b.level || a.id - b.id;
}

/** Most suggestions an unknown name's error offers. */
const MAX_SUGGESTIONS = 3;

export class AreaNames {
  private readonly byId = new Map<number, AreaRecord>();
  /** Every key (name, slug, alias) → the areas it names; more than one is an ambiguous name. */
  private readonly exact = new Map<string, Set<number>>();
  /** Per area, its distinct keys (for prefix, substring and fuzzy matching). */
  private readonly keysOf = new Map<number, readonly string[]>();
  private readonly aliasesById = new Map<number, string[]>();

  /** Aliases of areas that are not in `records` are ignored (a test tree may be partial). */
  constructor(records: readonly AreaRecord[], aliases: readonly AreaAlias[]) {
    for (const record of records) this.byId.set(record.id, record);
    for (const { areaId, alias } of aliases) {
      if (!this.byId.has(areaId)) continue;
      const list = this.aliasesById.get(areaId) ?? [];
      list.push(alias);
      this.aliasesById.set(areaId, list);
    }
    for (const record of records) {
      const keys = new Set(
        [record.name, record.slug, ...(this.aliasesById.get(record.id) ?? [])]
          .map(compactKey)
          .filter((key) => key !== ''),
      );
      this.keysOf.set(record.id, [...keys]);
      for (const key of keys) {
        const ids = this.exact.get(key) ?? new Set<number>();
        ids.add(record.id);
        this.exact.set(key, ids);
      }
    }
  }

  /** The aliases of an area, in file order (empty when it has none). */
  aliasesOf(id: number): readonly string[] {
    return this.aliasesById.get(id) ?? [];
  }

  /** Keys naming more than one area (a data error the tests keep at zero). */
  ambiguousKeys(): string[] {
    return [...this.exact].filter(([, ids]) => ids.size > 1).map(([key]) => key);
  }

  /**
   * One area from what a caller typed: a numeric id, or a slug, name or alias
   * in any case, spacing and punctuation. An unknown name comes back with the
   * closest names as suggestions.
   */
  resolve(token: string): Resolution {
    const trimmed = token.trim();
    if (/^\d+$/.test(trimmed)) {
      const record = this.byId.get(Number(trimmed));
      return record ? { kind: 'found', record } : { kind: 'unknown', suggestions: [] };
    }
    const key = compactKey(trimmed);
    const ids = this.exact.get(key);
    if (ids && ids.size === 1) return { kind: 'found', record: this.byId.get([...ids][0]!)! };
    if (ids && ids.size > 1) {
      return { kind: 'ambiguous', candidates: [...ids].map((id) => this.byId.get(id)!).sort(byLevelThenId) };
    }
    const suggestions = key === '' ? [] : this.search(key).slice(0, MAX_SUGGESTIONS);
    return { kind: 'unknown', suggestions: suggestions.map((m) => m.record) };
  }

  /**
   * Name search over names, slugs and aliases: exact matches first, then
   * prefix, then substring, then fuzzy (within the typo budget of the query's
   * length; closer first); equally good matches by level, then id.
   * `within` limits the search to those areas (default: all).
   */
  search(q: string, within?: readonly AreaRecord[]): NameMatch[] {
    const needle = compactKey(q);
    if (needle === '') return [];
    const budget = typoBudget(needle.length);
    const matches: NameMatch[] = [];
    for (const record of within ?? this.byId.values()) {
      const keys = this.keysOf.get(record.id);
      if (!keys) continue;
      let best: { rank: number; distance: number } | null = null;
      for (const key of keys) {
        let rank = -1;
        let distance = 0;
        if (key === needle) rank = 0;
        else if (key.startsWith(needle)) rank = 1;
        else if (key.includes(needle)) rank = 2;
        else if (budget > 0) {
          distance = editDistance(needle, key, budget);
          if (distance <= budget) rank = 3;
        }
        if (
          rank >= 0 &&
          (best === null || rank < best.rank || (rank === best.rank && distance < best.distance))
        ) {
          best = { rank, distance };
        }
      }
      if (best) matches.push({ record, rank: MATCH_RANKS[best.rank]!, distance: best.distance });
    }
    const order = (m: NameMatch) => MATCH_RANKS.indexOf(m.rank);
    matches.sort(
      (a, b) => order(a) - order(b) || a.distance - b.distance || byLevelThenId(a.record, b.record),
    );
    return matches;
  }
}
