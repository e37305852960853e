/**
 * Listing lifecycles. A listing's whole life (arrival, price changes, contract,
 * close or delisting) is drawn once, at arrival, from a stream keyed by its id;
 * the market at any instant t is every lifecycle that began at or before t and
 * whose last event is less than 24 months before t (`inMarketAt`), cut at t.
 * So the 24-month history is in steady state from its first day: lives that
 * began before the window and were still running at its start are there,
 * burned in. Advancing t therefore only reveals more of the same lives plus the
 * arrivals of the new days: the contract a later simulator relies on.
 */
import { DAY_MS } from '../../platform/clock.ts';
import type { PriceEventsTable } from '../../platform/db/tables.ts';
import { Rng } from './random.ts';

/** Day numbers count from this instant; listing ids embed them. */
export const EPOCH_MS = Date.UTC(2015, 0, 1);
/** How far back the market's history reaches: a listing leaves it this long after its last event. */
export const HISTORY_DAYS = 730;
/** Listing-id slots per day: rentals use [0, RENTAL_SLOTS), sales the rest. */
export const SLOTS_PER_DAY = 2000;
export const RENTAL_SLOTS = 1400;

/** Mean daily arrivals at scale 1 (about 25k active rentals / 16k sales at scale 1 through the year). */
export const RENTAL_ARRIVALS_PER_DAY = 590;
export const SALE_ARRIVALS_PER_DAY = 109;
/** New York's FARE Act: from this day landlords, not tenants, pay the broker they hire. */
export const FARE_ACT_MS = Date.UTC(2025, 5, 11);

export const MAX_SCALE = 1.25;

/** Longest a rental stays listed before it rents, and before it is taken down unrented (days). */
export const RENTAL_MAX_DAYS = 240;
export const RENTAL_MAX_DELISTED_DAYS = 330;

export type ListingKind = 'rental' | 'sale';

/** Longest contract-to-closing a sale draws (days): sponsor closings wait on a certificate of occupancy. */
export const MAX_CLOSING_DAYS = 200;

/**
 * Upper bound of a lifecycle's length, arrival to last event (days), per kind:
 * rentals end by RENTAL_MAX_DELISTED_DAYS (+1 for the lease after a contract),
 * sales by 540 days delisted or 420 to contract plus MAX_CLOSING_DAYS (+1), each
 * with a few days' margin. It sets
 * how far before the window the generator and the simulator look for lives
 * still running at the window's start.
 */
export const MAX_LIFE_DAYS: Readonly<Record<ListingKind, number>> = {
  rental: RENTAL_MAX_DELISTED_DAYS + 5,
  sale: 420 + MAX_CLOSING_DAYS + 10,
};

/**
 * Whether a lifecycle (its arrival and the instant of its last event, which
 * may lie after `at`) is part of the market observed at `at`: arrived by then,
 * and ended less than HISTORY_DAYS before. Monotone in `at`: a listing enters
 * at arrival and leaves HISTORY_DAYS after its last event, never to return.
 */
export function inMarketAt(listedAt: number, lastEventAt: number, at: number): boolean {
  return listedAt <= at && lastEventAt > at - HISTORY_DAYS * DAY_MS;
}

/** First day whose arrivals of `kind` can still be in the market at `at`. */
export function firstMarketDay(kind: ListingKind, at: number): number {
  return dayNumber(at - (HISTORY_DAYS + MAX_LIFE_DAYS[kind]) * DAY_MS);
}

/** A lifecycle event is exactly a price-history event kind. */
export type LifeEventKind = PriceEventsTable['event'];

export interface LifeEvent {
  at: number;
  kind: LifeEventKind;
  price: number;
}

export function dayNumber(ms: number): number {
  return Math.floor((ms - EPOCH_MS) / DAY_MS);
}

export function dayStart(day: number): number {
  return EPOCH_MS + day * DAY_MS;
}

function dayOfYear(ms: number): number {
  const d = new Date(ms);
  return (ms - Date.UTC(d.getUTCFullYear(), 0, 1)) / DAY_MS;
}

/** Weekday arrival weights, Sunday first: brokers post on weekdays, least on Sunday. */
const WEEKDAY = [0.45, 1.22, 1.18, 1.12, 1.12, 1.08, 0.83];

/** Expected arrivals on a day, before scaling. */
export function expectedArrivals(kind: ListingKind, day: number): number {
  const ms = dayStart(day);
  const doy = dayOfYear(ms);
  const weekday = WEEKDAY[new Date(ms).getUTCDay()]!;
  if (kind === 'rental') {
    // Rentals peak with the summer moving season (mid-July) and bottom out at the holidays.
    return RENTAL_ARRIVALS_PER_DAY * weekday * (1 + 0.16 * Math.cos((2 * Math.PI * (doy - 196)) / 365));
  }
  // Sales list into the spring market and again after Labor Day; December is dead.
  const spring = 0.14 * Math.cos((2 * Math.PI * (doy - 105)) / 365);
  const december = doy > 340 ? -0.35 : 0;
  return SALE_ARRIVALS_PER_DAY * weekday * (1 + spring + december);
}

/** Number of listings of a kind arriving on a day (deterministic per seed, day and scale). */
export function arrivalsOn(seed: number, scale: number, kind: ListingKind, day: number): number {
  const rng = new Rng(seed, 'arrivals', kind, day);
  const n = rng.poisson(expectedArrivals(kind, day) * scale);
  return Math.min(n, kind === 'rental' ? RENTAL_SLOTS : SLOTS_PER_DAY - RENTAL_SLOTS);
}

export function listingId(kind: ListingKind, day: number, index: number): string {
  return String(day * SLOTS_PER_DAY + (kind === 'rental' ? index : RENTAL_SLOTS + index));
}

/** Asking-price level against early 2026 (the profiles' reference): steady growth plus the seasonal swing. */
export function marketIndex(kind: ListingKind, ms: number): number {
  const years = (ms - Date.UTC(2026, 0, 1)) / (365.25 * DAY_MS);
  const doy = dayOfYear(ms);
  if (kind === 'rental') {
    // Landlords folded the broker fees the FARE Act shifted to them into rents.
    const fare = ms >= FARE_ACT_MS ? 1 : 0.975;
    return Math.exp(0.035 * years) * (1 + 0.03 * Math.cos((2 * Math.PI * (doy - 196)) / 365)) * fare;
  }
  return Math.exp(0.025 * years) * (1 + 0.02 * Math.cos((2 * Math.PI * (doy - 105)) / 365));
}

/** Winter listings sit longer; summer ones go fast. */
export function seasonalDom(kind: ListingKind, ms: number): number {
  const doy = dayOfYear(ms);
  const amplitude = kind === 'rental' ? 0.25 : 0.15;
  return 1 + amplitude * Math.cos((2 * Math.PI * (doy - 15)) / 365);
}

/** Rounds an asking price the way brokers price: $3,495, $899,000, $1,295,000. */
export function brokerRound(kind: ListingKind, price: number, rng: Rng): number {
  if (kind === 'rental') {
    const base = Math.round(price / 25) * 25;
    return base >= 1500 && rng.chance(0.4) ? base - 5 : Math.max(900, base);
  }
  if (price < 1_000_000) {
    const base = Math.round(price / 5000) * 5000;
    return rng.chance(0.35) ? base - 1000 : Math.max(75_000, base);
  }
  const base = Math.round(price / 25_000) * 25_000;
  return rng.chance(0.35) ? base - 5000 : base;
}

export interface LifecycleInput {
  kind: ListingKind;
  listedAt: number;
  askingPrice: number;
  /** Standard-normal overpricing of this listing against its market (drives cuts, delays, delisting). */
  overpricing: number;
  /** Median days on market for this area and season. */
  medianDom: number;
  /** Days from contract to closing (sales). */
  closingDays: number;
  coop: boolean;
}

/**
 * Draws a listing's complete timeline. Events are strictly increasing in time
 * and at least a day apart, so a `YYYY-MM-DD` date still orders them.
 */
export function drawLifecycle(rng: Rng, input: LifecycleInput): LifeEvent[] {
  const { kind, listedAt } = input;
  const events: LifeEvent[] = [{ at: listedAt, kind: 'LISTED', price: input.askingPrice }];
  const over = Math.max(0, input.overpricing);
  const delistP = kind === 'rental' ? 0.14 + 0.08 * over : 0.3 + 0.12 * over;
  const delisted = rng.chance(Math.min(0.7, delistP));
  // Rentals: a 90th percentile of two to three months, and none listed past a
  // year without a relisting (the tail issue 16 asks for).
  const sigma = kind === 'rental' ? 0.55 : 0.65;
  const longest =
    kind === 'rental' ? (delisted ? RENTAL_MAX_DELISTED_DAYS : RENTAL_MAX_DAYS) : delisted ? 540 : 420;
  let dom = rng.logNormal(input.medianDom * Math.exp(0.25 * input.overpricing) * (delisted ? 1.7 : 1), sigma);
  dom = Math.min(longest, Math.max(delisted ? 7 : 1.5, dom));
  const marketEnd = listedAt + dom * DAY_MS;

  // Price changes: brokers reassess every few weeks; overpriced listings get cut more.
  const interval = kind === 'rental' ? 18 : 35;
  const cutP = (kind === 'rental' ? 0.32 : 0.42) * (0.6 + 0.5 * over);
  let price = input.askingPrice;
  let cursor = listedAt + rng.range(kind === 'rental' ? 7 : 14, interval) * DAY_MS;
  // A small share of listings go off market for a while and come back cheaper.
  const pause = dom > 45 && rng.chance(0.05) ? listedAt + rng.range(20, dom - 15) * DAY_MS : null;
  let paused = false;
  while (cursor < marketEnd - 2 * DAY_MS) {
    if (pause !== null && !paused && cursor >= pause) {
      paused = true;
      const gap = rng.range(7, 45);
      events.push({ at: cursor, kind: 'DELISTED', price });
      const back = cursor + gap * DAY_MS;
      // Never came back: the pause was the end of this listing.
      if (back >= marketEnd - 2 * DAY_MS) return events;
      price = brokerRound(kind, price * (1 - rng.range(0.02, 0.07)), rng);
      events.push({ at: back, kind: 'RELISTED', price });
      cursor = back + rng.range(interval * 0.6, interval * 1.4) * DAY_MS;
      continue;
    }
    if (rng.chance(cutP)) {
      const raise = kind === 'rental' && events.length === 1 && rng.chance(0.12);
      const pct = raise
        ? rng.range(0.02, 0.06)
        : -rng.range(kind === 'rental' ? 0.02 : 0.03, kind === 'rental' ? 0.08 : 0.1);
      const next = brokerRound(kind, price * (1 + pct), rng);
      if (next !== price) {
        events.push({ at: cursor, kind: next > price ? 'PRICE_INCREASE' : 'PRICE_DECREASE', price: next });
        price = next;
      }
    }
    cursor += rng.range(interval * 0.6, interval * 1.4) * DAY_MS;
  }

  if (delisted) {
    events.push({ at: marketEnd, kind: 'DELISTED', price });
    return events;
  }
  if (kind === 'rental') {
    // About a third of rentals show "in contract" while the lease is out for signature.
    if (rng.chance(0.3) && dom > 4) {
      const contractAt = Math.max(
        events[events.length - 1]!.at + DAY_MS,
        marketEnd - rng.range(2, 9) * DAY_MS,
      );
      if (contractAt < marketEnd - DAY_MS) events.push({ at: contractAt, kind: 'IN_CONTRACT', price });
    }
    const rentedAt = Math.max(events[events.length - 1]!.at + DAY_MS, marketEnd);
    events.push({
      at: rentedAt,
      kind: 'RENTED',
      price: rng.chance(0.12) ? brokerRound(kind, price * 0.97, rng) : price,
    });
    return events;
  }
  const contractAt = Math.max(events[events.length - 1]!.at + DAY_MS, marketEnd);
  events.push({ at: contractAt, kind: 'IN_CONTRACT', price });
  const closingDays = Math.min(MAX_CLOSING_DAYS, input.closingDays);
  // Negotiated discount off the last ask; co-ops close slower (board approval).
  const discount = Math.min(0.12, Math.max(-0.05, 0.025 + 0.02 * rng.normal() + 0.01 * over));
  const soldPrice = Math.round((price * (1 - discount)) / 1000) * 1000;
  events.push({ at: contractAt + closingDays * DAY_MS, kind: 'SOLD', price: soldPrice });
  return events;
}
