/**
 * The demo market evolving in time: at simulated instant T every listing is
 * exactly what the demo generator observes at T (`DemoMarketGenerator.listingAt`
 * over the building stock drawn at the start instant), so a store loaded by
 * `loadDemoMarket` at the start and then kept in sync by replication equals the
 * simulator's state.
 *
 * Index. Each listing's life is drawn once (`timeline`): its change instants
 * (ListingTimeline.changes) and the status after each. ModificationTimestamp at
 * T is the latest change instant at or before T: lifecycle events, the detail
 * page dropped 14 days off market, an open house announced (10 days ahead),
 * started (+1 ms: it stops being the next one) or dropped (21 days after).
 * Listings sit in an append-only log ordered by (ModificationTimestamp,
 * ListingKey): advancing the clock pops due changes from a heap in that order
 * and appends the listing again (its old entry goes stale), so a query is a
 * binary search plus a forward scan, never a regeneration of the market.
 * Listings arrive day by day as the clock reaches them and leave the feed
 * 24 months after their last lifecycle event, exactly when they leave
 * `marketAt` (`inMarketAt`; by then they are long off market, a replicated
 * store keeps them). Lives that began before the 24 months and still ran at
 * their start are in the index from the first instant, as in `marketAt`.
 *
 * Change log (`changesBetween`), in the pipeline's vocabulary
 * (src/jobs/refresh/listing-diff.ts), for events at from < occurredAt ≤ to:
 * - LISTED → `listing.created` (old null, new { status: 'ACTIVE', price });
 * - PRICE_DECREASE / PRICE_INCREASE → `listing.price_decreased` / `_increased` (old/new price);
 * - IN_CONTRACT → `listing.status_changed` ACTIVE → IN_CONTRACT;
 * - RENTED / SOLD / DELISTED → `listing.status_changed` (old status → OFF_MARKET),
 *   then `listing.rented` / `.sold` / `.delisted` (old: the previous status,
 *   new: the listing's price, i.e. its last ask);
 * - RELISTED → a price event when the price moved, then `listing.status_changed`
 *   OFF_MARKET → ACTIVE;
 * - an open house becoming visible (announced, or visible at arrival or at a
 *   relisting that restored the detail page) → `listing.open_house_added`
 *   (old null, new { id, startsAt, endsAt }).
 * Within one instant a listing's lifecycle events come before its open houses.
 */
import { CLOSE_EVENT_TYPE, type ListingEventType } from '../../domain/events.ts';
import { type Clock, DAY_MS } from '../../platform/clock.ts';
import type { ListingRow } from '../../platform/db/tables.ts';
import { yieldToEventLoop } from '../../platform/yield.ts';
import type { UpstreamBuilding, UpstreamListing } from '../../upstream/source.ts';
import {
  arrivalsOn,
  dayNumber,
  firstMarketDay,
  HISTORY_DAYS,
  type ListingKind,
} from '../market/lifecycle.ts';
import {
  DemoMarketGenerator,
  detailKeptAt,
  type ListingBundle,
  type ListingTimeline,
  lifecycleStateAt,
  OPEN_HOUSE_LOOKAHEAD_DAYS,
  openHouseVisibleAt,
} from '../market/market.ts';
import { upstreamBuilding, upstreamListingFromBundle, withoutDetail } from './observe.ts';

const HISTORY_MS = HISTORY_DAYS * DAY_MS;
const SETTLED: readonly number[] = Object.freeze([]);

/** State after a change: 0 ACTIVE, 1 IN_CONTRACT, 2 RENTED, 3 SOLD, 4 DELISTED. */
type StateCode = 0 | 1 | 2 | 3 | 4;
const CODE_STATUS: readonly ListingRow['status'][] = [
  'ACTIVE',
  'IN_CONTRACT',
  'OFF_MARKET',
  'OFF_MARKET',
  'OFF_MARKET',
];
const SETTLED_CODES: readonly StateCode[] = Object.freeze([]);
/** The RESO StandardStatus the mapping writes for each state (see reso/mapping.ts). */
const CODE_STANDARD_STATUS: readonly string[] = ['Active', 'Pending', 'Closed', 'Closed', 'Withdrawn'];

function stateCode(timeline: ListingTimeline, at: number): StateCode {
  const state = lifecycleStateAt(timeline.events, at);
  if (state.status === 'ACTIVE') return 0;
  if (state.status === 'IN_CONTRACT') return 1;
  return state.closed === 'RENTED' ? 2 : state.closed === 'SOLD' ? 3 : 4;
}

/** One listing of the index. */
export interface SimListing {
  readonly id: string;
  readonly kind: ListingKind;
  readonly day: number;
  readonly index: number;
  readonly buildingId: string;
  readonly listedAt: number;
  /** When the listing leaves the feed: HISTORY_MS after its last lifecycle event. */
  readonly leavesAt: number;
  /**
   * Change instants, ascending, and the state after each. A listing whose
   * life was over when the index was built keeps none (`settled`: its last
   * change is `modifiedAt`); the change log regenerates its timeline when asked.
   */
  changes: readonly number[];
  codes: readonly StateCode[];
  settled: boolean;
  /** Index of the next change not yet applied. */
  next: number;
  /** The applied ModificationTimestamp (ms); -Infinity before arrival. */
  modifiedAt: number;
  code: StateCode;
  /** Position of the listing's live log entry; -1 before arrival. */
  logPos: number;
}

export interface SimulatorEvent {
  type: ListingEventType;
  listingId: string;
  buildingId: string;
  listingType: ListingKind;
  oldValue: unknown;
  newValue: unknown;
  occurredAt: string;
}

export interface MarketSimulatorOptions {
  seed: number;
  scale: number;
  /** The instant the simulated market starts from: the demo load's `now` (T0). */
  start: Date;
  /** Simulated time (a ScaledClock in the demo, a ManualClock in tests). */
  clock: Clock;
}

export interface PageRequest {
  /** Only listings with ModificationTimestamp at or after this instant (a scan start, not a filter). */
  since: number | null;
  /** Continue after this (ModificationTimestamp, ListingKey). */
  after: { at: number; id: string } | null;
  top: number;
  predicate: (listing: SimListing) => boolean;
}

/** Min-heap of pending changes, ordered like the log: (instant, ListingKey). */
class ChangeHeap {
  private readonly items: SimListing[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): SimListing | undefined {
    return this.items[0];
  }

  private static less(a: SimListing, b: SimListing): boolean {
    const x = a.changes[a.next]!;
    const y = b.changes[b.next]!;
    return x < y || (x === y && a.id < b.id);
  }

  push(item: SimListing): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!ChangeHeap.less(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): SimListing | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && ChangeHeap.less(items[l]!, items[m]!)) m = l;
        if (r < items.length && ChangeHeap.less(items[r]!, items[m]!)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    return top;
  }
}

export class MarketSimulator {
  readonly seed: number;
  readonly scale: number;
  readonly start: Date;
  readonly generator: DemoMarketGenerator;
  private readonly clock: Clock;
  private readonly startIso: string;
  private listings = new Map<string, SimListing>();
  private heap = new ChangeHeap();
  private log: SimListing[] = [];
  private logAt: number[] = [];
  private stale = 0;
  private current = Number.NEGATIVE_INFINITY;
  private plannedThrough = 0;
  private buildingList: UpstreamBuilding[] | null = null;

  /** Builds the index synchronously (about a second per 0.1 of scale); see `create` for the async build. */
  constructor(options: MarketSimulatorOptions, build = true) {
    this.seed = options.seed;
    this.scale = options.scale;
    this.start = options.start;
    this.startIso = options.start.toISOString();
    this.clock = options.clock;
    this.generator = new DemoMarketGenerator({
      seed: options.seed,
      scale: options.scale,
      now: options.start,
    });
    if (build) for (const _ of this.rebuild(options.start.getTime()));
  }

  /** Builds the index in slices, yielding to the event loop between them (boot stays responsive). */
  static async create(options: MarketSimulatorOptions): Promise<MarketSimulator> {
    const simulator = new MarketSimulator(options, false);
    for (const _ of simulator.rebuild(options.start.getTime())) {
      await yieldToEventLoop();
    }
    return simulator;
  }

  /** The simulated instant now (ms). */
  now(): number {
    return this.clock.now().getTime();
  }

  /** Brings the index to instant `t` (default: the clock's now) and returns it. */
  at(t: number = this.now()): number {
    if (t < this.current) for (const _ of this.rebuild(t));
    else if (t > this.current) this.advance(t);
    return t;
  }

  /** Number of listings in the feed at the index's instant. */
  get size(): number {
    let n = 0;
    for (let i = 0; i < this.log.length; i++) if (this.isLive(i, this.current)) n++;
    return n;
  }

  // ---- index maintenance -------------------------------------------------

  /** Rebuilds the index at t; yields after every few days drawn. */
  private *rebuild(t: number): Generator<void> {
    this.listings = new Map();
    this.heap = new ChangeHeap();
    this.log = [];
    this.logAt = [];
    // The sale bound is the longer: the oldest day any still-present life can have begun.
    this.plannedThrough = Math.min(firstMarketDay('rental', t), firstMarketDay('sale', t)) - 1;
    this.current = t;
    // Nothing is pushed while drawing: the loop below places every listing once.
    yield* this.planDays(dayNumber(t), Number.POSITIVE_INFINITY);
    const live: SimListing[] = [];
    for (const listing of this.listings.values()) {
      while (listing.next < listing.changes.length && listing.changes[listing.next]! <= t) {
        listing.modifiedAt = listing.changes[listing.next]!;
        listing.code = listing.codes[listing.next]!;
        listing.next++;
      }
      if (listing.next > 0) live.push(listing);
      if (listing.next < listing.changes.length) this.heap.push(listing);
      else if (listing.next > 0) {
        // Nothing left to apply: modifiedAt and code say all the index needs.
        listing.changes = SETTLED;
        listing.codes = SETTLED_CODES;
        listing.next = 0;
        listing.settled = true;
      }
    }
    live.sort((a, b) => a.modifiedAt - b.modifiedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.log = live;
    this.logAt = live.map((l) => l.modifiedAt);
    for (let i = 0; i < live.length; i++) live[i]!.logPos = i;
    this.stale = 0;
  }

  private planThrough(day: number, now: number): void {
    for (const _ of this.planDays(day, now));
  }

  /** Draws the arrivals of every day up to `day`; arrivals after `now` wait in the heap. */
  private *planDays(day: number, now: number): Generator<void> {
    // Rentals live shorter than sales: their burn-in starts later.
    const firstRental = firstMarketDay('rental', this.current);
    for (let d = this.plannedThrough + 1; d <= day; d++) {
      if ((d & 7) === 0) yield;
      for (const kind of ['rental', 'sale'] as const) {
        if (kind === 'rental' && d < firstRental) continue;
        const n = arrivalsOn(this.seed, this.scale, kind, d);
        for (let index = 0; index < n; index++) {
          const timeline = this.generator.timeline(kind, d, index);
          const leavesAt = timeline.events[timeline.events.length - 1]!.at + HISTORY_MS;
          // Ended 24 months or more before the index's instant: never in the feed again.
          if (leavesAt <= this.current) continue;
          const codes = timeline.changes.map((c) => stateCode(timeline, c));
          const listing: SimListing = {
            id: timeline.id,
            kind,
            day: d,
            index,
            buildingId: timeline.buildingId,
            listedAt: timeline.listedAt,
            leavesAt,
            changes: timeline.changes,
            codes,
            settled: false,
            next: 0,
            modifiedAt: Number.NEGATIVE_INFINITY,
            code: 0,
            logPos: -1,
          };
          this.listings.set(listing.id, listing);
          if (timeline.listedAt > now) this.heap.push(listing);
        }
      }
      this.plannedThrough = d;
    }
  }

  private advance(t: number): void {
    this.planThrough(dayNumber(t), this.current);
    for (let top = this.heap.peek(); top !== undefined; top = this.heap.peek()) {
      const at = top.changes[top.next]!;
      if (at > t) break;
      this.heap.pop();
      top.modifiedAt = at;
      top.code = top.codes[top.next]!;
      top.next++;
      if (top.logPos >= 0) this.stale++;
      top.logPos = this.log.length;
      this.log.push(top);
      this.logAt.push(at);
      if (top.next < top.changes.length) this.heap.push(top);
    }
    this.current = t;
    if (this.stale > 4096 && this.stale > this.log.length / 2) this.compact();
  }

  private compact(): void {
    const log: SimListing[] = [];
    const logAt: number[] = [];
    for (let i = 0; i < this.log.length; i++) {
      const listing = this.log[i]!;
      if (listing.logPos !== i) continue;
      if (listing.leavesAt <= this.current) {
        // Out of the feed for good.
        listing.logPos = -1;
        this.listings.delete(listing.id);
        continue;
      }
      listing.logPos = log.length;
      log.push(listing);
      logAt.push(this.logAt[i]!);
    }
    this.log = log;
    this.logAt = logAt;
    this.stale = 0;
  }

  private isLive(i: number, t: number): boolean {
    const listing = this.log[i]!;
    return listing.logPos === i && listing.leavesAt > t;
  }

  /** First log position whose (instant, key) is after (at, id); `id` null: at or after `at`. */
  private seek(at: number, id: string | null): number {
    let lo = 0;
    let hi = this.log.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const midAt = this.logAt[mid]!;
      const before = id === null ? midAt < at : midAt < at || (midAt === at && this.log[mid]!.id <= id);
      if (before) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // ---- reads ---------------------------------------------------------------

  /**
   * One page of listings in (ModificationTimestamp, ListingKey) order at the
   * index's instant (call `at()` first). `more`: another match exists.
   */
  page(request: PageRequest): { items: SimListing[]; more: boolean } {
    const t = this.current;
    let i = 0;
    if (request.after) i = this.seek(request.after.at, request.after.id);
    if (request.since !== null) i = Math.max(i, this.seek(request.since, null));
    const items: SimListing[] = [];
    for (; i < this.log.length; i++) {
      if (!this.isLive(i, t)) continue;
      const listing = this.log[i]!;
      if (!request.predicate(listing)) continue;
      if (items.length === request.top) return { items, more: true };
      items.push(listing);
    }
    return { items, more: false };
  }

  /** A listing in the feed at the index's instant, or null. */
  find(id: string): SimListing | null {
    const listing = this.listings.get(id);
    if (!listing || listing.logPos < 0) return null;
    return this.isLive(listing.logPos, this.current) ? listing : null;
  }

  status(listing: SimListing): ListingRow['status'] {
    return CODE_STATUS[listing.code]!;
  }

  standardStatus(listing: SimListing): string {
    return CODE_STANDARD_STATUS[listing.code]!;
  }

  /** The listing as upstream serves it at the index's instant, detail page included. */
  observe(listing: SimListing): UpstreamListing {
    return upstreamListingFromBundle(this.bundle(listing, 'all'), listing.modifiedAt);
  }

  /**
   * The listing without its detail page (cheaper: details, fees and photos are
   * not generated), with the starts of the open houses it shows.
   */
  observeSummary(listing: SimListing): { listing: UpstreamListing; openHouseStarts: string[] } {
    const bundle = this.bundle(listing, 'listing');
    return {
      listing: withoutDetail(upstreamListingFromBundle(bundle, listing.modifiedAt)),
      openHouseStarts: bundle.openHouses.map((oh) => oh.starts_at),
    };
  }

  private bundle(listing: SimListing, parts: 'all' | 'listing'): ListingBundle {
    const bundle = this.generator.listingAt(listing.kind, listing.day, listing.index, this.current, parts);
    if (!bundle) {
      throw new Error(`listing ${listing.id} is not in the feed at ${new Date(this.current).toISOString()}`);
    }
    return bundle;
  }

  /** Every listing in the feed at instant `t` (default now), detail included, in ListingKey order. */
  snapshot(t?: number): UpstreamListing[] {
    this.at(t);
    const out: UpstreamListing[] = [];
    for (let i = 0; i < this.log.length; i++)
      if (this.isLive(i, this.current)) out.push(this.observe(this.log[i]!));
    return out.sort((a, b) => (a.listing.id < b.listing.id ? -1 : a.listing.id > b.listing.id ? 1 : 0));
  }

  /** The building stock (fixed: drawn at the start instant, modified then). */
  buildings(): readonly UpstreamBuilding[] {
    if (!this.buildingList) {
      this.buildingList = this.generator.buildings
        .map((b) => upstreamBuilding(b, this.startIso))
        .sort((a, b) => (a.building.id < b.building.id ? -1 : a.building.id > b.building.id ? 1 : 0));
    }
    return this.buildingList;
  }

  // ---- change log ----------------------------------------------------------

  /**
   * Domain events that occurred at from < occurredAt ≤ to (see the module
   * comment), ordered by (occurredAt, listingId). Known from the window the
   * simulator started with (24 months before its start, plus the lives then running) on.
   */
  changesBetween(fromMs: number, toMs: number): SimulatorEvent[] {
    this.planThrough(dayNumber(toMs), this.current);
    const out: { at: number; seq: number; event: SimulatorEvent }[] = [];
    let seq = 0;
    for (const listing of this.listings.values()) {
      const candidate = listing.settled
        ? listing.listedAt <= toMs && listing.modifiedAt > fromMs
        : changedWithin(listing.changes, fromMs, toMs);
      if (!candidate) continue;
      const timeline = this.generator.timeline(listing.kind, listing.day, listing.index);
      for (const [at, event] of timelineEvents(timeline, fromMs, toMs)) out.push({ at, seq: seq++, event });
    }
    out.sort(
      (a, b) =>
        a.at - b.at ||
        (a.event.listingId < b.event.listingId ? -1 : a.event.listingId > b.event.listingId ? 1 : 0) ||
        a.seq - b.seq,
    );
    return out.map((e) => e.event);
  }
}

/** Whether some change instant c satisfies from < c ≤ to. */
function changedWithin(changes: readonly number[], from: number, to: number): boolean {
  let lo = 0;
  let hi = changes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (changes[mid]! <= from) lo = mid + 1;
    else hi = mid;
  }
  return lo < changes.length && changes[lo]! <= to;
}

/** The events of one listing at from < instant ≤ to, in occurrence order. */
export function timelineEvents(
  timeline: ListingTimeline,
  from: number,
  to: number,
): [number, SimulatorEvent][] {
  const out: [number, SimulatorEvent][] = [];
  const emit = (at: number, type: ListingEventType, oldValue: unknown, newValue: unknown) =>
    out.push([
      at,
      {
        type,
        listingId: timeline.id,
        buildingId: timeline.buildingId,
        listingType: timeline.kind,
        oldValue,
        newValue,
        occurredAt: new Date(at).toISOString(),
      },
    ]);
  let price = timeline.events[0]!.price;
  let status: ListingRow['status'] = 'ACTIVE';
  const relistings: number[] = [];
  for (const event of timeline.events) {
    // Observed at whole milliseconds, like the change instants.
    const e = { ...event, at: Math.ceil(event.at) };
    if (e.at > to) break;
    const inRange = e.at > from;
    switch (e.kind) {
      case 'LISTED':
        if (inRange) emit(e.at, 'listing.created', null, { status: 'ACTIVE', price: e.price });
        break;
      case 'PRICE_DECREASE':
      case 'PRICE_INCREASE':
        if (inRange) {
          emit(
            e.at,
            e.kind === 'PRICE_DECREASE' ? 'listing.price_decreased' : 'listing.price_increased',
            price,
            e.price,
          );
        }
        price = e.price;
        break;
      case 'IN_CONTRACT':
        if (inRange) emit(e.at, 'listing.status_changed', status, 'IN_CONTRACT');
        status = 'IN_CONTRACT';
        break;
      case 'RENTED':
      case 'SOLD':
      case 'DELISTED':
        if (inRange) {
          emit(e.at, 'listing.status_changed', status, 'OFF_MARKET');
          emit(e.at, CLOSE_EVENT_TYPE[e.kind], status, price);
        }
        status = 'OFF_MARKET';
        break;
      case 'RELISTED':
        if (inRange) {
          if (e.price !== price) {
            emit(
              e.at,
              e.price < price ? 'listing.price_decreased' : 'listing.price_increased',
              price,
              e.price,
            );
          }
          emit(e.at, 'listing.status_changed', status, 'ACTIVE');
        }
        relistings.push(e.at);
        price = e.price;
        status = 'ACTIVE';
        break;
    }
  }
  const visible = (start: number, t: number) =>
    t >= timeline.listedAt &&
    openHouseVisibleAt(start, t, detailKeptAt(lifecycleStateAt(timeline.events, t), t));
  const lookahead = OPEN_HOUSE_LOOKAHEAD_DAYS * DAY_MS;
  for (const oh of timeline.openHouses) {
    // Visibility turns on at the announcement, at arrival, or when a relisting restores the detail page.
    const candidates = [Math.max(timeline.listedAt, oh.start - lookahead), ...relistings];
    for (const at of candidates) {
      if (at <= from || at > to) continue;
      if (!visible(oh.start, at) || visible(oh.start, at - 1)) continue;
      emit(at, 'listing.open_house_added', null, {
        id: oh.id,
        startsAt: new Date(oh.start).toISOString(),
        endsAt: new Date(oh.end).toISOString(),
      });
    }
  }
  return out;
}
