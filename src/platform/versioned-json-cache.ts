/**
 * Serialized JSON records by id, valid for one data version.
 *
 * Search pages are mostly the same few thousand listings in different orders,
 * and detail reads hit a hot set: serializing a record once and splicing the
 * bytes into each response removes the row fetch, the mapping and the JSON
 * encoding from the hot path.
 *
 * Validity contract: an entry is reused only while
 * - the data version is unchanged: every writer of listings, buildings or
 *   scores moves it (`DataVersion`, a change shows within its one-second
 *   cache), and
 * - its time-dependent fields (days on market) have not rolled over
 *   (`validUntil`).
 */
export interface CachedJson {
  /** UTF-8 JSON of the record: spliced into responses without re-encoding. */
  json: Buffer;
  detailScraped: boolean;
  /** Epoch ms after which the entry's days-on-market value is out of date. */
  validUntil: number;
}

export class VersionedJsonCache {
  private readonly entries = new Map<string, CachedJson>();
  private version: string | null = null;

  constructor(readonly capacity = 100_000) {}

  /** Drops every entry when the data version moved. */
  useVersion(version: string): void {
    if (version !== this.version) {
      this.entries.clear();
      this.version = version;
    }
  }

  get(id: string, nowMs: number): CachedJson | undefined {
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
  set(id: string, entry: CachedJson, version: string): void {
    if (version !== this.version) return;
    // Simple bound: when full, start over (a working set refills in a few requests).
    if (this.entries.size >= this.capacity) this.entries.clear();
    this.entries.set(id, entry);
  }

  get size(): number {
    return this.entries.size;
  }
}
