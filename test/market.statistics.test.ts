import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  distribution,
  MIN_SAMPLE,
  mean,
  median,
  medianInPlace,
  quantileSorted,
  share,
} from '../src/modules/market/statistics.ts';

describe('market statistics', () => {
  it('quantiles interpolate linearly between closest ranks (R type 7)', () => {
    // R: quantile(c(1, 2, 3, 4, 10), c(.1, .25, .5, .75, .9)) = 1.4 2 3 4 7.6
    const sorted = [1, 2, 3, 4, 10];
    expect([0.1, 0.25, 0.5, 0.75, 0.9].map((p) => quantileSorted(sorted, p))).toEqual([
      1.4,
      2,
      3,
      4,
      expect.closeTo(7.6, 10),
    ]);
    expect(quantileSorted([5], 0.5)).toBe(5);
    expect(quantileSorted([0, 10], 0)).toBe(0);
    expect(quantileSorted([0, 10], 1)).toBe(10);
    // Even counts: the median is the mean of the middle two.
    expect(median([4, 1, 3, 2, 6, 5]).value).toBe(3.5);
  });

  it('distribution sorts its input, rounds to cents and carries n', () => {
    expect(distribution([10, 4, 3, 2, 1])).toEqual({
      n: 5,
      mean: 4,
      p10: 1.4,
      p25: 2,
      median: 3,
      p75: 4,
      p90: 7.6,
    });
    expect(mean([1, 2, 2, 2, 3.333]).value).toBe(2.07);
  });

  it(`figures from fewer than ${MIN_SAMPLE} observations are null, never 0`, () => {
    expect(distribution([1, 2, 3, 4])).toEqual({
      n: 4,
      mean: null,
      p10: null,
      p25: null,
      median: null,
      p75: null,
      p90: null,
    });
    expect(median([])).toEqual({ value: null, n: 0 });
    expect(mean([1, 2])).toEqual({ value: null, n: 2 });
    expect(share(0, 4)).toEqual({ value: null, n: 4 });
    expect(share(0, 5)).toEqual({ value: 0, n: 5 });
    expect(share(1, 3 * MIN_SAMPLE)).toEqual({ value: 0.0667, n: 15 });
  });

  it('the in-place median is the sorted median, for any sample (duplicates, ties, even and odd counts)', () => {
    const samples = fc.oneof(
      fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 60 }),
      fc.array(fc.double({ min: -1e7, max: 1e7, noNaN: true }), { maxLength: 300 }),
      fc.array(fc.constantFrom(1500, 2250.5, 2250.5, 3100, 99), { maxLength: 40 }),
    );
    fc.assert(
      fc.property(samples, (values) => {
        // Selection does not order -0 before 0 as a sort does: the same number either way.
        const signless = ({ value, n }: { value: number | null; n: number }) => ({
          value: value === 0 ? 0 : value,
          n,
        });
        expect(signless(medianInPlace(Float64Array.from(values)))).toEqual(signless(median(values)));
      }),
      { numRuns: 2000 },
    );
    // Already sorted, reversed and all equal: the pivot's worst cases stay correct.
    const ramp = Array.from({ length: 1001 }, (_, i) => i);
    expect(medianInPlace(Float64Array.from(ramp)).value).toBe(500);
    expect(medianInPlace(Float64Array.from(ramp.reverse())).value).toBe(500);
    expect(medianInPlace(new Float64Array(1000).fill(7))).toEqual({ value: 7, n: 1000 });
  });
});
