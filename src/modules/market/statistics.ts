/**
 * The one statistics module behind every market figure (snapshots, comparisons,
 * trends). Contract:
 *
 * - Every figure carries `n`, the number of observations behind it.
 * - A figure computed from fewer than MIN_SAMPLE observations is `null`, never 0:
 *   a median of two listings is noise, and 0 would read as a real value.
 * - Quantiles use linear interpolation between closest ranks (Hyndman & Fan
 *   type 7, the default of R, NumPy and Excel's PERCENTILE.INC): for sorted
 *   x[0..n-1] and p in [0, 1], h = (n − 1)·p and
 *   Q(p) = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋ + 1] − x[⌊h⌋]).
 * - The mean is summed over the sorted values, so it does not depend on input order.
 * - Money, price per sqft and days are rounded to 2 decimals; shares (0–1) to 4.
 */

/** Smallest sample a figure is published from; smaller samples give `value: null`. */
export const MIN_SAMPLE = 5;

/** One published number and the count of observations behind it. */
export interface Figure {
  value: number | null;
  n: number;
}

/** Summary of one numeric column: count, mean and the published quantiles. */
export interface Distribution {
  n: number;
  mean: number | null;
  p10: number | null;
  p25: number | null;
  median: number | null;
  p75: number | null;
  p90: number | null;
}

export function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

/** Type-7 quantile of values already sorted ascending; NaN when empty. */
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const h = (n - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (h - lo) * (b - a);
}

function sortedCopy(values: readonly number[] | Float64Array): Float64Array {
  // Typed-array sort is numeric and much faster than Array#sort with a comparator.
  const sorted = Float64Array.from(values);
  sorted.sort();
  return sorted;
}

function meanSorted(sorted: Float64Array): number {
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i] as number;
  return sum / sorted.length;
}

/** Count, mean and p10/p25/median/p75/p90 of `values`, each null below MIN_SAMPLE. */
export function distribution(values: readonly number[] | Float64Array): Distribution {
  const n = values.length;
  if (n < MIN_SAMPLE) return { n, mean: null, p10: null, p25: null, median: null, p75: null, p90: null };
  const sorted = sortedCopy(values);
  const q = (p: number) => round(quantileSorted(sorted, p), 2);
  return {
    n,
    mean: round(meanSorted(sorted), 2),
    p10: q(0.1),
    p25: q(0.25),
    median: q(0.5),
    p75: q(0.75),
    p90: q(0.9),
  };
}

/** Median (type 7) of `values` as a figure. */
export function median(values: readonly number[] | Float64Array): Figure {
  const n = values.length;
  if (n < MIN_SAMPLE) return { value: null, n };
  return { value: round(quantileSorted(sortedCopy(values), 0.5), 2), n };
}

/**
 * The same figure as `median(values)`, for a scratch array of finite numbers
 * the caller gives up: it is reordered in place (selection, O(n)) instead of
 * copied and sorted. For callers computing many medians over large samples,
 * such as the daily market snapshots.
 */
export function medianInPlace(values: Float64Array): Figure {
  const n = values.length;
  if (n < MIN_SAMPLE) return { value: null, n };
  // Type 7 at p = 0.5: x[lo] for odd n, x[lo] + ½(x[lo + 1] − x[lo]) for even n.
  const lo = (n - 1) >>> 1;
  selectInPlace(values, lo);
  let value = values[lo] as number;
  if (n % 2 === 0) {
    // Selection leaves x[lo + 1] as the smallest value after position lo.
    let next = values[lo + 1] as number;
    for (let i = lo + 2; i < n; i++) if ((values[i] as number) < next) next = values[i] as number;
    value = value + 0.5 * (next - value);
  }
  return { value: round(value, 2), n };
}

/**
 * Reorders `a` so that a[k] is its k-th smallest value, with nothing larger
 * before it and nothing smaller after it (Hoare's FIND, median-of-three pivot).
 */
function selectInPlace(a: Float64Array, k: number): void {
  let left = 0;
  let right = a.length - 1;
  while (left < right) {
    const x = medianOfThree(a[left] as number, a[(left + right) >>> 1] as number, a[right] as number);
    let i = left;
    let j = right;
    do {
      while ((a[i] as number) < x) i++;
      while (x < (a[j] as number)) j--;
      if (i <= j) {
        const swap = a[i] as number;
        a[i] = a[j] as number;
        a[j] = swap;
        i++;
        j--;
      }
    } while (i <= j);
    if (j < k) left = i;
    if (k < i) right = j;
  }
}

function medianOfThree(a: number, b: number, c: number): number {
  if (a < b) return b < c ? b : Math.max(a, c);
  return a < c ? a : Math.max(b, c);
}

/** Arithmetic mean of `values` as a figure. */
export function mean(values: readonly number[] | Float64Array): Figure {
  const n = values.length;
  if (n < MIN_SAMPLE) return { value: null, n };
  return { value: round(meanSorted(sortedCopy(values)), 2), n };
}

/** `hits / n` as a 0–1 share; `n` is the denominator. */
export function share(hits: number, n: number): Figure {
  if (n < MIN_SAMPLE) return { value: null, n };
  return { value: round(hits / n, 4), n };
}
