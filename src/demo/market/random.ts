/**
 * Seeded randomness for the demo market. Every draw comes from a stream keyed by
 * a hash of (seed, purpose, ids…), never from a shared sequence, so adding or
 * dropping one listing never shifts the values of any other: the generator stays a
 * pure function of its keys, which is what lets a simulator advance time later.
 */

/** 32-bit avalanche mix (murmur3 finalizer). */
function mix32(h: number): number {
  let x = h >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Order-sensitive hash of keys: integers (up to 2^53) and strings. */
export function hashKeys(...keys: readonly (number | string)[]): number {
  let h = 0x9e3779b9;
  for (const key of keys) {
    if (typeof key === 'string') h = mix32(h ^ Math.imul(fnv1a(key), 0x9e3779b1));
    else {
      h = mix32(h ^ Math.imul(key | 0, 0x9e3779b1));
      // Keys above 2^32 (epoch milliseconds) also fold their high part.
      h = mix32(h ^ Math.floor(key / 4294967296));
    }
  }
  return h;
}

/**
 * 128-bit key as 32 lowercase hex characters, unique per distinct key list.
 * Two independent 32-bit hash lanes give a 64-bit intermediate, so millions of
 * keys do not collide the way a single 32-bit stream state would (birthday bound).
 */
export function hexKey(...keys: readonly (number | string)[]): string {
  let a = 0x9e3779b9;
  let b = 0x7f4a7c15;
  for (const key of keys) {
    const k = typeof key === 'string' ? fnv1a(key) : key | 0;
    const high = typeof key === 'string' ? key.length : Math.floor(key / 4294967296);
    a = mix32(a ^ Math.imul(k, 0x9e3779b1) ^ high);
    b = mix32(Math.imul(b ^ k, 0x85ebca6b) + Math.imul(high, 0xc2b2ae35) + 0x165667b1);
    if (typeof key === 'string') b = mix32(b ^ fnv1aAlt(key));
  }
  let out = '';
  for (let i = 0; i < 4; i++) {
    const v = mix32(a ^ mix32(b + Math.imul(i + 1, 0x27d4eb2f)));
    out += HEX[v >>> 24]! + HEX[(v >>> 16) & 255]! + HEX[(v >>> 8) & 255]! + HEX[v & 255]!;
    a = mix32(a + 0x6d2b79f5);
  }
  return out;
}

/** FNV-1a with a different offset basis: a second, independent string lane for hexKey. */
function fnv1aAlt(text: string): number {
  let h = 0x01000193;
  for (let i = text.length - 1; i >= 0; i--) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) ^ (h >>> 15);
  }
  return h >>> 0;
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A small deterministic stream (mulberry32) with the distributions the generator needs. */
export class Rng {
  private state: number;

  constructor(...keys: readonly (number | string)[]) {
    this.state = hashKeys(...keys);
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Raw 32-bit value, for keys and ids. */
  u32(): number {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }

  /** Integer in [min, max], inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  range(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Index drawn with probability proportional to `weights`. */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i]!;
      if (r < 0) return i;
    }
    return weights.length - 1;
  }

  /** Standard normal (Box–Muller; one value per call keeps streams simple). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Log-normal with the given median and log-space sigma: prices and durations are right-skewed. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** Poisson count (Knuth for small means, normal approximation above 30). */
  poisson(mean: number): number {
    if (mean <= 0) return 0;
    if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * this.normal()));
    const limit = Math.exp(-mean);
    let k = 0;
    let p = this.next();
    while (p > limit) {
      k++;
      p *= this.next();
    }
    return k;
  }

  /** 32 lowercase hex characters: the photo key format. */
  hex32(): string {
    let out = '';
    for (let i = 0; i < 4; i++) {
      const v = this.u32();
      out += HEX[v >>> 24]! + HEX[(v >>> 16) & 255]! + HEX[(v >>> 8) & 255]! + HEX[v & 255]!;
    }
    return out;
  }
}

/** Cumulative-weight table for fast repeated weighted picks (binary search). */
export class WeightedTable<T> {
  private readonly cumulative: Float64Array;
  readonly total: number;

  constructor(
    readonly items: readonly T[],
    weights: readonly number[],
  ) {
    this.cumulative = new Float64Array(items.length);
    let sum = 0;
    for (let i = 0; i < items.length; i++) {
      sum += Math.max(0, weights[i] ?? 0);
      this.cumulative[i] = sum;
    }
    this.total = sum;
  }

  pick(rng: Rng): T {
    const r = rng.next() * this.total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! > r) hi = mid;
      else lo = mid + 1;
    }
    return this.items[lo]!;
  }
}
