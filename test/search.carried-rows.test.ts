import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { carriedRows, type PartitionIdentity } from '../src/modules/search/active-index.ts';

/** A partition's identity from listings given in row order, with its id order as the store would sort them. */
function identity(
  rows: readonly { id: string; revision: number }[],
  order: 'bytes' | 'locale',
): PartitionIdentity {
  const bytes = rows.map((r) => Buffer.from(r.id));
  const idOffsets = new Uint32Array(rows.length + 1);
  bytes.forEach((b, i) => {
    idOffsets[i + 1] = idOffsets[i]! + b.length;
  });
  const byId = rows
    .map((_, row) => row)
    .sort((a, b) =>
      order === 'bytes' ? Buffer.compare(bytes[a]!, bytes[b]!) : rows[a]!.id.localeCompare(rows[b]!.id),
    );
  return {
    idBytes: Buffer.concat(bytes),
    idOffsets,
    rowOfId: Int32Array.from(byId),
    revision: Float64Array.from(rows, (r) => r.revision),
  };
}

const listings = fc.uniqueArray(
  fc.record({ id: fc.stringMatching(/^[0-9A-Za-z-]{1,6}$/), revision: fc.integer({ min: 1, max: 3 }) }),
  { selector: (l) => l.id, maxLength: 60 },
);

describe('carriedRows (a rebuilt index row → the previous build row of the same listing and revision)', () => {
  it('pairs every listing kept at the same revision when both builds list ids in byte order', () => {
    fc.assert(
      fc.property(listings, listings, fc.array(fc.nat()), (before, added, shuffle) => {
        // The next build: some listings kept (some at a new revision), some gone, some new, in another row order.
        const kept = before
          .filter((_, i) => i % 3 !== 0)
          .map((l, i) => ({ ...l, revision: l.revision + (i % 4 === 0 ? 1 : 0) }));
        const fresh = added.filter((l) => !before.some((b) => b.id === l.id));
        const after = [...kept, ...fresh].sort(
          (a, b) => ((shuffle[a.id.length] ?? 0) % 3) - ((shuffle[b.id.length] ?? 0) % 3),
        );
        const map = carriedRows(identity(before, 'bytes'), identity(after, 'bytes'));
        after.forEach((listing, row) => {
          const previous = before.findIndex((b) => b.id === listing.id && b.revision === listing.revision);
          expect(map[row]).toBe(previous);
        });
      }),
      { numRuns: 300, seed: 20261128 },
    );
  });

  it('never pairs two different listings, whatever order the store listed ids in', () => {
    fc.assert(
      fc.property(listings, listings, (before, afterRaw) => {
        const map = carriedRows(identity(before, 'locale'), identity(afterRaw, 'locale'));
        afterRaw.forEach((listing, row) => {
          const previous = map[row]!;
          if (previous >= 0) {
            expect(before[previous]!.id).toBe(listing.id);
            expect(before[previous]!.revision).toBe(listing.revision);
          }
        });
      }),
      { numRuns: 300, seed: 20261129 },
    );
  });
});
