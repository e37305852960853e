import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type RankInput, rank } from '../src/domain/ranking.ts';

const inputArb: fc.Arbitrary<RankInput> = fc.record({
  photoCount: fc.integer({ min: 0, max: 60 }),
  daysActive: fc.double({ min: 0, max: 800, noNaN: true }),
  has3d: fc.boolean(),
  promoted: fc.boolean(),
  price: fc.integer({ min: 500, max: 30_000_000 }),
  expected: fc.integer({ min: 500, max: 30_000_000 }),
  hasSqft: fc.boolean(),
  scraped: fc.boolean(),
});

const best: RankInput = {
  photoCount: 15,
  daysActive: 0,
  has3d: true,
  promoted: true,
  price: 1_000,
  expected: 2_000,
  hasSqft: true,
  scraped: true,
};

const worst: RankInput = {
  photoCount: 0,
  daysActive: 10_000,
  has3d: false,
  promoted: false,
  price: 3_000,
  expected: 2_000,
  hasSqft: false,
  scraped: false,
};

describe('rank (RECOMMENDED sort key)', () => {
  it('spans exactly 0–1000', () => {
    expect(rank(best)).toBe(1000);
    expect(rank(worst)).toBe(0);
  });

  it('is a whole number within 0–1000 for any listing', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const score = rank(input);
        expect(Number.isInteger(score)).toBe(true);
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(1000);
      }),
    );
  });

  it('weighs each flag at its documented points', () => {
    const base = { ...worst, price: 2_000 }; // neutral value term: 75
    expect(rank(base)).toBe(75);
    expect(rank({ ...base, has3d: true })).toBe(175);
    expect(rank({ ...base, promoted: true })).toBe(175);
    expect(rank({ ...base, hasSqft: true })).toBe(125);
    expect(rank({ ...base, scraped: true })).toBe(125);
  });

  it('never ranks a listing lower for more photos, fresher inventory, a lower price or a flag set', () => {
    fc.assert(
      fc.property(inputArb, fc.integer({ min: 1, max: 20 }), (input, more) => {
        const score = rank(input);
        expect(rank({ ...input, photoCount: input.photoCount + more })).toBeGreaterThanOrEqual(score);
        expect(rank({ ...input, daysActive: input.daysActive / 2 })).toBeGreaterThanOrEqual(score);
        expect(rank({ ...input, price: Math.max(1, input.price - more * 100) })).toBeGreaterThanOrEqual(
          score,
        );
        for (const flag of ['has3d', 'promoted', 'hasSqft', 'scraped'] as const) {
          expect(rank({ ...input, [flag]: true })).toBeGreaterThanOrEqual(score);
        }
      }),
    );
  });

  it('caps the gallery at 15 photos and the value term at ±50 % of the expected price', () => {
    fc.assert(
      fc.property(inputArb, fc.integer({ min: 15, max: 500 }), (input, photos) => {
        expect(rank({ ...input, photoCount: photos })).toBe(rank({ ...input, photoCount: 15 }));
      }),
    );
    expect(rank({ ...best, price: 1 })).toBe(rank(best));
    expect(rank({ ...worst, price: 1_000_000 })).toBe(rank(worst));
  });
});
