import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Sizes and access order of the files in the photo cache, in memory: a Map in
 * least-recently-used-first order (a Map iterates in insertion order, so moving
 * an entry to the end is a delete and a set). Every operation but `prependOlder`
 * is O(1); none does I/O, which keeps a cache hit as cheap as the file read.
 *
 * Names are paths relative to the cache root. Memory is about 120 bytes per
 * entry, so the index stays proportional to the bounded cache, not to the
 * number of photos.
 */
export class LruIndex {
  private entries = new Map<string, number>();
  private total = 0;

  /** Bytes of every indexed file. */
  get bytes(): number {
    return this.total;
  }

  get files(): number {
    return this.entries.size;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** Marks an entry most recently used; false when it is not indexed. */
  touch(name: string): boolean {
    const bytes = this.entries.get(name);
    if (bytes === undefined) return false;
    this.entries.delete(name);
    this.entries.set(name, bytes);
    return true;
  }

  /** Adds (or replaces) an entry as the most recently used. */
  add(name: string, bytes: number): void {
    this.remove(name);
    this.entries.set(name, bytes);
    this.total += bytes;
  }

  /** Forgets an entry; true when it was indexed. */
  remove(name: string): boolean {
    const bytes = this.entries.get(name);
    if (bytes === undefined) return false;
    this.entries.delete(name);
    this.total -= bytes;
    return true;
  }

  /** Removes and returns the least recently used entry, or undefined when the index is empty. */
  takeOldest(): string | undefined {
    const oldest = this.entries.keys().next();
    if (oldest.done) return undefined;
    this.remove(oldest.value);
    return oldest.value;
  }

  /**
   * Puts entries found on disk (oldest first, built by the caller) before
   * every entry already indexed: what this process has read or written since
   * it started is more recent than anything a directory scan can tell. The map
   * is taken over, not copied; O(entries already indexed).
   */
  prependOlder(older: Map<string, number>): void {
    let total = 0;
    for (const bytes of older.values()) total += bytes;
    for (const [name, bytes] of this.entries) {
      // A live entry goes after every scanned one, replacing a scanned copy of the same file.
      const scanned = older.get(name);
      if (scanned !== undefined) {
        older.delete(name);
        total -= scanned;
      }
      older.set(name, bytes);
      total += bytes;
    }
    this.entries = older;
    this.total = total;
  }
}

/** Items compared per turn of the event loop by `sortInSlices`. */
const SORT_SLICE = 4096;

/**
 * A stable sort that yields to the event loop every few thousand comparisons:
 * sorted runs, then bottom-up merges. For orderings too large to sort in one
 * turn without stalling requests (the start-up scan of a large cache).
 */
export async function sortInSlices<T>(items: readonly T[], compare: (a: T, b: T) => number): Promise<T[]> {
  let from = items.slice();
  for (let start = 0; start < from.length; start += SORT_SLICE) {
    const run = from.slice(start, start + SORT_SLICE).sort(compare);
    for (const [i, item] of run.entries()) from[start + i] = item;
    await nextTurn();
  }
  let to = new Array<T>(from.length);
  let sinceYield = 0;
  for (let width = SORT_SLICE; width < from.length; width *= 2) {
    for (let left = 0; left < from.length; left += 2 * width) {
      const middle = Math.min(left + width, from.length);
      const right = Math.min(left + 2 * width, from.length);
      let i = left;
      let j = middle;
      for (let k = left; k < right; k++) {
        // Ties take the left run first: stable.
        to[k] = j >= right || (i < middle && compare(from[i]!, from[j]!) <= 0) ? from[i++]! : from[j++]!;
        if (++sinceYield === SORT_SLICE) {
          sinceYield = 0;
          await nextTurn();
        }
      }
    }
    [from, to] = [to, from];
  }
  return from;
}
