/**
 * What each housing-stock archetype looks like. Mixes are shares of listings by
 * building type; `eras` are [fromYear, toYear, weight] bands of construction.
 */
import type { BuildingType } from '../../domain/listing.ts';
import type { Archetype } from './geography.ts';

export type TypeMix = Partial<Record<BuildingType, number>>;

export interface ArchetypeSpec {
  rentMix: TypeMix;
  saleMix: TypeMix;
  /** Sales volume relative to rental volume in the same area. */
  saleRatio: number;
  eras: readonly (readonly [number, number, number])[];
  /** Share of RENTAL buildings that are walk-ups (no elevator). */
  walkupShare: number;
  /** Elevator-building height range, floors. */
  floors: readonly [number, number];
  doorman: number;
  /** Probability of months-free concessions in post-2005 rental buildings. */
  concession: number;
  /** Median rental days on market. */
  domRent: number;
  domSale: number;
  /** Bedroom weights [studio, 1, 2, 3, 4+] for rentals and sales. */
  bedsRent: readonly number[];
  bedsSale: readonly number[];
  /** Unit size multiplier against Manhattan norms. */
  sizeFactor: number;
  /**
   * Rent against the area's 1BR level by bedrooms [studio, 1, 2, 3, 4+]. Outer-borough
   * family-size apartments (old walk-ups, two-family houses) ask far less over a 1BR
   * than Manhattan's (northwest Queens 3BR ≈ 1.25 × 1BR in 2025 against ≈ 1.9 in Manhattan).
   */
  bedRent: readonly number[];
  /** Pre-2025 share of no-fee rentals (landlord pays the broker). */
  noFee: number;
  /** Baseline building scores: transit, noise (high = quiet), safety. */
  transit: number;
  quiet: number;
  safety: number;
}

export const ARCHETYPES: Readonly<Record<Archetype, ArchetypeSpec>> = {
  luxe: {
    rentMix: { RENTAL: 52, CONDO: 26, COOP: 6, CONDOP: 3, TOWNHOUSE: 9, MULTI_FAMILY: 4 },
    saleMix: { CONDO: 55, COOP: 25, CONDOP: 6, TOWNHOUSE: 11, MULTI_FAMILY: 3 },
    saleRatio: 0.6,
    eras: [
      [1870, 1925, 50],
      [1950, 1999, 15],
      [2000, 2024, 35],
    ],
    walkupShare: 0.35,
    floors: [6, 22],
    doorman: 0.65,
    concession: 0.12,
    domRent: 36,
    domSale: 132,
    bedsRent: [14, 36, 30, 14, 6],
    bedsSale: [6, 24, 32, 24, 14],
    sizeFactor: 1.15,
    bedRent: [0.7, 1, 1.4, 1.85, 2.5],
    noFee: 0.4,
    transit: 94,
    quiet: 55,
    safety: 82,
  },
  newdev: {
    rentMix: { RENTAL: 80, CONDO: 16, CONDOP: 2, MULTI_FAMILY: 2 },
    saleMix: { CONDO: 84, COOP: 6, CONDOP: 10 },
    saleRatio: 0.35,
    eras: [
      [1900, 1930, 10],
      [1960, 2004, 20],
      [2005, 2025, 70],
    ],
    walkupShare: 0.05,
    floors: [8, 60],
    doorman: 0.7,
    concession: 0.45,
    domRent: 34,
    domSale: 126,
    bedsRent: [26, 38, 26, 8, 2],
    bedsSale: [12, 34, 34, 16, 4],
    sizeFactor: 1,
    bedRent: [0.7, 1, 1.4, 1.85, 2.5],
    noFee: 0.8,
    transit: 88,
    quiet: 55,
    safety: 78,
  },
  prewar: {
    rentMix: { RENTAL: 70, CONDO: 12, COOP: 8, TOWNHOUSE: 8, MULTI_FAMILY: 2 },
    saleMix: { COOP: 66, CONDO: 24, CONDOP: 3, TOWNHOUSE: 7 },
    saleRatio: 0.65,
    eras: [
      [1900, 1939, 65],
      [1945, 1979, 25],
      [1980, 2024, 10],
    ],
    walkupShare: 0.35,
    floors: [6, 20],
    doorman: 0.6,
    concession: 0.08,
    domRent: 32,
    domSale: 121,
    bedsRent: [20, 38, 26, 12, 4],
    bedsSale: [10, 30, 30, 20, 10],
    sizeFactor: 1.05,
    bedRent: [0.7, 1, 1.4, 1.85, 2.5],
    noFee: 0.45,
    transit: 90,
    quiet: 64,
    safety: 86,
  },
  core: {
    rentMix: { RENTAL: 80, CONDO: 12, COOP: 4, CONDOP: 2, TOWNHOUSE: 2 },
    saleMix: { COOP: 46, CONDO: 44, CONDOP: 10 },
    saleRatio: 0.35,
    eras: [
      [1910, 1939, 25],
      [1950, 1979, 45],
      [1980, 2024, 30],
    ],
    walkupShare: 0.2,
    floors: [8, 45],
    doorman: 0.55,
    concession: 0.2,
    domRent: 31,
    domSale: 126,
    bedsRent: [26, 40, 24, 8, 2],
    bedsSale: [18, 38, 28, 12, 4],
    sizeFactor: 0.95,
    bedRent: [0.7, 1, 1.4, 1.85, 2.5],
    noFee: 0.55,
    transit: 96,
    quiet: 40,
    safety: 72,
  },
  walkup: {
    rentMix: { RENTAL: 76, MULTI_FAMILY: 14, CONDO: 7, COOP: 3 },
    saleMix: { CONDO: 42, COOP: 30, MULTI_FAMILY: 18, TOWNHOUSE: 10 },
    saleRatio: 0.2,
    eras: [
      [1880, 1930, 85],
      [1931, 2004, 5],
      [2005, 2024, 10],
    ],
    walkupShare: 0.8,
    floors: [6, 14],
    doorman: 0.15,
    concession: 0.1,
    domRent: 30,
    domSale: 109,
    bedsRent: [12, 36, 32, 16, 4],
    bedsSale: [10, 34, 34, 16, 6],
    sizeFactor: 0.9,
    bedRent: [0.7, 1, 1.4, 1.85, 2.5],
    noFee: 0.35,
    transit: 88,
    quiet: 45,
    safety: 72,
  },
  brownstone: {
    rentMix: { RENTAL: 46, MULTI_FAMILY: 32, TOWNHOUSE: 10, CONDO: 10, COOP: 2 },
    saleMix: { TOWNHOUSE: 24, CONDO: 36, COOP: 18, MULTI_FAMILY: 22 },
    saleRatio: 0.35,
    eras: [
      [1860, 1910, 70],
      [1920, 1970, 15],
      [2005, 2024, 15],
    ],
    walkupShare: 0.65,
    floors: [5, 14],
    doorman: 0.15,
    concession: 0.12,
    domRent: 36,
    domSale: 103,
    bedsRent: [8, 32, 34, 20, 6],
    bedsSale: [4, 24, 34, 22, 16],
    sizeFactor: 1.1,
    bedRent: [0.7, 1, 1.4, 1.85, 2.5],
    noFee: 0.35,
    transit: 82,
    quiet: 66,
    safety: 70,
  },
  outer: {
    rentMix: { RENTAL: 70, MULTI_FAMILY: 24, COOP: 3, CONDO: 3 },
    saleMix: { COOP: 45, CONDO: 15, MULTI_FAMILY: 25, HOUSE: 10, TOWNHOUSE: 5 },
    saleRatio: 0.3,
    eras: [
      [1910, 1940, 50],
      [1945, 1975, 35],
      [1980, 2024, 15],
    ],
    walkupShare: 0.45,
    floors: [5, 16],
    doorman: 0.06,
    concession: 0.1,
    domRent: 43,
    domSale: 121,
    bedsRent: [8, 32, 34, 21, 5],
    bedsSale: [8, 30, 32, 20, 10],
    sizeFactor: 1.1,
    bedRent: [0.72, 1, 1.4, 1.5, 1.9],
    noFee: 0.3,
    transit: 74,
    quiet: 62,
    safety: 60,
  },
  coopbelt: {
    rentMix: { RENTAL: 66, MULTI_FAMILY: 20, COOP: 8, CONDO: 6 },
    saleMix: { COOP: 66, CONDO: 12, HOUSE: 14, MULTI_FAMILY: 8 },
    saleRatio: 0.8,
    eras: [
      [1925, 1940, 30],
      [1945, 1975, 60],
      [1980, 2024, 10],
    ],
    walkupShare: 0.25,
    floors: [6, 20],
    doorman: 0.15,
    concession: 0.06,
    domRent: 42,
    domSale: 115,
    bedsRent: [10, 38, 34, 15, 3],
    bedsSale: [12, 40, 30, 12, 6],
    sizeFactor: 1.12,
    bedRent: [0.72, 1, 1.4, 1.5, 1.9],
    noFee: 0.3,
    transit: 66,
    quiet: 72,
    safety: 76,
  },
  suburban: {
    rentMix: { MULTI_FAMILY: 54, HOUSE: 16, RENTAL: 24, CONDO: 6 },
    saleMix: { HOUSE: 46, MULTI_FAMILY: 26, TOWNHOUSE: 10, CONDO: 11, COOP: 7 },
    saleRatio: 1.4,
    eras: [
      [1920, 1960, 50],
      [1961, 2000, 40],
      [2001, 2024, 10],
    ],
    walkupShare: 0.8,
    floors: [4, 8],
    doorman: 0.02,
    concession: 0.03,
    domRent: 48,
    domSale: 103,
    bedsRent: [4, 28, 38, 24, 6],
    bedsSale: [2, 10, 26, 36, 26],
    sizeFactor: 1.25,
    bedRent: [0.7, 1, 1.4, 1.85, 2.5],
    noFee: 0.25,
    transit: 42,
    quiet: 86,
    safety: 84,
  },
  nj: {
    rentMix: { RENTAL: 64, CONDO: 22, MULTI_FAMILY: 14 },
    saleMix: { CONDO: 68, COOP: 10, MULTI_FAMILY: 12, HOUSE: 6, TOWNHOUSE: 4 },
    saleRatio: 0.4,
    eras: [
      [1900, 1940, 30],
      [1950, 1990, 30],
      [1995, 2024, 40],
    ],
    walkupShare: 0.4,
    floors: [6, 40],
    doorman: 0.3,
    concession: 0.25,
    domRent: 36,
    domSale: 69,
    bedsRent: [12, 40, 34, 12, 2],
    bedsSale: [6, 34, 38, 16, 6],
    sizeFactor: 1.1,
    bedRent: [0.7, 1, 1.4, 1.85, 2.5],
    noFee: 0.6,
    transit: 72,
    quiet: 68,
    safety: 76,
  },
};
