import type { Kysely } from 'kysely';
import type { Freshness } from '../../domain/freshness.ts';
import type { Tier } from '../../domain/tiers.ts';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { AreaRecord, AreaTree } from '../../reference/areas.ts';
import type { DataVersion } from '../freshness/data-version.ts';
import type { FreshnessPolicy } from '../freshness/freshness-policy.ts';
import { countActiveListingsByArea } from './areas.repository.ts';
import type { Area, AreaInclude } from './areas.schema.ts';

export interface AreaQuery {
  level?: number | undefined;
  parentId?: number | undefined;
  q?: string | undefined;
  include: ReadonlySet<AreaInclude>;
  page: number;
  perPage: number;
  tier: Tier;
}

export interface AreaPage {
  /** Shared between requests: never to be changed. */
  items: readonly Area[];
  /** The same areas as JSON, when they do not move with the data (no `counts`): cached, like the tree. */
  json: readonly Buffer[] | null;
  total: number;
  meta: Freshness;
}

/** An area as presented with includes that never change (the tree is static), and its JSON. */
interface PresentedArea {
  area: Area;
  json: Buffer;
}

/** Rolled-up counts are cached this long: they change only as the market refreshes. */
const COUNTS_TTL_MS = 60_000;

export function toAreaRef(record: AreaRecord) {
  return {
    id: record.id,
    name: record.name,
    level: record.level,
    parentId: record.parentId,
    slug: record.slug,
  };
}

/**
 * Area tree queries. The tree is static reference data held in memory (349
 * rows), so filtering and name matching never touch the database; only
 * listing counts do, through a short-lived cache.
 */
export class AreasService {
  /**
   * Areas presented with each set of static includes (all but `counts`), by
   * id: at most 349 per set, 8 sets. A page of them costs no object or
   * serialization per request.
   */
  private readonly presented = new Map<string, Map<number, PresentedArea>>();
  private countsCache: {
    at: number;
    version: string;
    counts: Map<number, { rentals: number; sales: number }>;
  } | null = null;

  constructor(
    private readonly tree: AreaTree,
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly dataVersion: DataVersion,
    private readonly freshness: FreshnessPolicy,
  ) {}

  async list(query: AreaQuery): Promise<AreaPage> {
    if (query.parentId !== undefined && !this.tree.has(query.parentId)) {
      throw ApiError.invalidParam({
        parameter: 'parentId',
        rule: 'unknown_area',
        message: `no area has id ${query.parentId}`,
      });
    }
    const { level, parentId } = query;
    // Unfiltered (the commonest call, paging the whole tree) reads the tree's own array: no copy a request.
    let matches: readonly AreaRecord[] =
      level === undefined && parentId === undefined
        ? this.tree.records
        : this.tree.records.filter(
            (r) =>
              (level === undefined || r.level === level) &&
              (parentId === undefined || r.parentId === parentId),
          );
    if (query.q !== undefined) matches = rankByName(this.tree, matches, query.q);

    const total = matches.length;
    const start = (query.page - 1) * query.perPage;
    const pageRecords = matches.slice(start, start + query.perPage);
    const meta = await this.freshness.ofReference(query.tier, 'areas');
    if (query.include.has('counts')) {
      const counts = await this.rolledUpCounts(await this.dataVersion.version());
      const items = pageRecords.map((record) => this.present(record, query.include, counts));
      return { items, json: null, total, meta };
    }
    const presented = pageRecords.map((record) => this.presentStatic(record, query.include));
    return { items: presented.map((p) => p.area), json: presented.map((p) => p.json), total, meta };
  }

  private presentStatic(record: AreaRecord, include: ReadonlySet<AreaInclude>): PresentedArea {
    const key = [...include].sort().join(',');
    let byId = this.presented.get(key);
    if (!byId) {
      byId = new Map();
      this.presented.set(key, byId);
    }
    let presented = byId.get(record.id);
    if (!presented) {
      const area = this.present(record, include, null);
      presented = { area, json: Buffer.from(JSON.stringify(area)) };
      byId.set(record.id, presented);
    }
    return presented;
  }

  private present(
    record: AreaRecord,
    include: ReadonlySet<AreaInclude>,
    counts: Map<number, { rentals: number; sales: number }> | null,
  ): Area {
    const area: Area = { ...toAreaRef(record), aliases: [...this.tree.names.aliasesOf(record.id)] };
    if (include.has('children')) area.children = this.tree.children(record.id).map(toAreaRef);
    if (include.has('ancestors')) area.ancestors = this.tree.ancestors(record.id).map(toAreaRef);
    if (counts) area.listingCounts = counts.get(record.id) ?? { rentals: 0, sales: 0 };
    if (include.has('centroid')) {
      area.centroid =
        record.latitude !== null && record.longitude !== null
          ? { latitude: record.latitude, longitude: record.longitude }
          : null;
    }
    return area;
  }

  /** Cached per data version (and at most COUNTS_TTL_MS): a refresh shows at once. */
  private async rolledUpCounts(version: string): Promise<Map<number, { rentals: number; sales: number }>> {
    const now = this.clock.now().getTime();
    const cached = this.countsCache;
    if (cached && cached.version === version && now - cached.at < COUNTS_TTL_MS) return cached.counts;
    const perArea = await countActiveListingsByArea(this.db);
    const counts = new Map<number, { rentals: number; sales: number }>();
    for (const { areaId, listingType, count } of perArea) {
      // Credit the listing's own area and every ancestor.
      for (const id of [areaId, ...this.tree.ancestors(areaId).map((a) => a.id)]) {
        const entry = counts.get(id) ?? { rentals: 0, sales: 0 };
        if (listingType === 'rental') entry.rentals += count;
        else entry.sales += count;
        counts.set(id, entry);
      }
    }
    this.countsCache = { at: now, version, counts };
    return counts;
  }
}

/** `q`: exact, prefix, substring, then typo matches over names, slugs and aliases (see AreaNames.search). */
export function rankByName(tree: AreaTree, records: readonly AreaRecord[], q: string): AreaRecord[] {
  return tree.names.search(q, records).map((match) => match.record);
}
