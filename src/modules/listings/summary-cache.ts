/**
 * Serialized ListingSummary JSON by listing id.
 *
 * Search pages are mostly the same few thousand listings in different orders;
 * serializing them once and splicing the strings into each response removes
 * the row fetch, the mapping and the JSON encoding from the hot path.
 *
 * Validity contract: an entry is reused only while
 * - the data version is unchanged: every writer of listings, buildings or
 *   scores bumps a `sync_state` scope, and the version is derived from those
 *   scopes (so a change shows within the data version cache's one second), and
 * - its time-dependent fields (days on market) have not rolled over.
 */
export interface CachedSummary {
  /** UTF-8 JSON of the ListingSummary: spliced into responses without re-encoding. */
  json: Buffer;
  detailScraped: boolean;
  /** Epoch ms after which the entry's days-on-market value is out of date. */
  validUntil: number;
}

export class SummaryCache {
  private readonly entries = new Map<string, CachedSummary>();
  private version: string | null = null;

  constructor(private readonly capacity = 100_000) {}

  /** Drops every entry when the data version moved. */
  useVersion(version: string): void {
    if (version !== this.version) {
      this.entries.clear();
      this.version = version;
    }
  }

  get(id: string, nowMs: number): CachedSummary | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (entry.validUntil <= nowMs) {
      this.entries.delete(id);
      return undefined;
    }
    return entry;
  }

  /**
   * Stores an entry built from data read under `version`; ignored when the cache
   * has moved on meanwhile (old rows must not outlive their version).
   */
  set(id: string, entry: CachedSummary, version: string): void {
    if (version !== this.version) return;
    // Simple bound: when full, start over (a working set refills in a few requests).
    if (this.entries.size >= this.capacity) this.entries.clear();
    this.entries.set(id, entry);
  }

  get size(): number {
    return this.entries.size;
  }
}
