/**
 * The four building scores: 0–100 integers, higher is better. Each is a
 * non-increasing function of its nuisance count (and transit a non-decreasing
 * function of station access), so one more complaint or violation can never
 * raise a score and one more station can never lower transit.
 *
 * health  = 100 · exp(−W / U)
 *           W = open HPD violations weighted by class (A 1, B 3, C 6, I 0:
 *           class I are information orders, not defects); U = the building's
 *           units when known (at least HEALTH_MIN_UNITS: the housing code's
 *           multiple dwellings start at 3 units, and a smaller divisor would
 *           make one violation in a house weigh like a building's worth), else
 *           HEALTH_DEFAULT_UNITS. W / U is the weighted open-violation load
 *           per unit: 0.1 → 90, 0.5 → 61, 1 → 37, 2 → 14.
 * noise   = 100 − 12 · ln(1 + N), clamped to 0–100
 *           N = 311 noise complaints within 200 m in the last 12 months.
 *           10 → 71, 100 → 45, 1,000 → 17; 0 at ~4,150.
 * safety  = 100 − 10 · ln(1 + S), clamped to 0–100
 *           S = NYPD complaints within 400 m in the last 12 months weighted by
 *           law category (felony 3, misdemeanor 2, violation 1).
 *           50 → 61, 500 → 38, 5,000 → 15; 0 at ~22,000.
 * transit = 100 · (0.7 · P + 0.3 · D)
 *           P = 1 within 200 m of a station, falling linearly to 0 at 1,600 m
 *           (a 20-minute walk); D = min(stations within 800 m, 5) / 5.
 */

export type ViolationClass = 'A' | 'B' | 'C' | 'I';

export const VIOLATION_WEIGHTS: Readonly<Record<ViolationClass, number>> = { A: 1, B: 3, C: 6, I: 0 };
/** Units assumed when a building's unit count is unknown (a typical small walk-up). */
export const HEALTH_DEFAULT_UNITS = 10;
export const HEALTH_MIN_UNITS = 3;

export const NOISE_RADIUS_M = 200;
export const SAFETY_RADIUS_M = 400;
export const CRIME_WEIGHTS: Readonly<Record<string, number>> = { FELONY: 3, MISDEMEANOR: 2, VIOLATION: 1 };
/** Days counted back from today for "the last 12 months". */
export const WINDOW_DAYS = 365;

export const TRANSIT_FULL_M = 200;
export const TRANSIT_ZERO_M = 1600;
export const TRANSIT_DENSITY_RADIUS_M = 800;
export const TRANSIT_DENSITY_CAP = 5;

function clampScore(x: number): number {
  return Math.max(0, Math.min(100, Math.round(x)));
}

export function violationLoad(open: Readonly<Partial<Record<ViolationClass, number>>>): number {
  let w = 0;
  for (const cls of Object.keys(VIOLATION_WEIGHTS) as ViolationClass[])
    w += VIOLATION_WEIGHTS[cls] * (open[cls] ?? 0);
  return w;
}

export function healthScore(
  open: Readonly<Partial<Record<ViolationClass, number>>>,
  units: number | null,
): number {
  const perUnit = units !== null && units > 0 ? Math.max(units, HEALTH_MIN_UNITS) : HEALTH_DEFAULT_UNITS;
  return clampScore(100 * Math.exp(-violationLoad(open) / perUnit));
}

export function noiseScore(complaints: number): number {
  return clampScore(100 - 12 * Math.log1p(complaints));
}

export function safetyScore(weightedComplaints: number): number {
  return clampScore(100 - 10 * Math.log1p(weightedComplaints));
}

/** `nearestM` null: no station within TRANSIT_ZERO_M. */
export function transitScore(nearestM: number | null, stationsWithin800m: number): number {
  const proximity =
    nearestM === null
      ? 0
      : Math.max(0, Math.min(1, (TRANSIT_ZERO_M - nearestM) / (TRANSIT_ZERO_M - TRANSIT_FULL_M)));
  const density = Math.min(stationsWithin800m, TRANSIT_DENSITY_CAP) / TRANSIT_DENSITY_CAP;
  return clampScore(100 * (0.7 * proximity + 0.3 * density));
}
