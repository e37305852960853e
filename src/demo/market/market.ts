/**
 * The deterministic demo market: `marketAt(seed, scale, t)` is the state at t of
 * every listing that arrived by t and ended less than 24 months before t (so
 * the 24-month history starts in steady state), over a fixed building stock.
 * Pure: no clock reads, no Math.random; same inputs, same rows.
 */
import { type Amenity, amenityMask } from '../../domain/amenities.ts';
import type { BuildingType } from '../../domain/listing.ts';
import { rank } from '../../domain/ranking.ts';
import { DAY_MS, HOUR_MS } from '../../platform/clock.ts';
import type {
  BuildingScoresTable,
  ListingRow,
  NewBuilding,
  NewFee,
  NewListingDetails,
  NewOpenHouse,
  NewPhoto,
  NewPriceEvent,
} from '../../platform/db/tables.ts';
import { type DemoBuilding, generateBuildings } from './buildings.ts';
import {
  arrivalsOn,
  brokerRound,
  dayNumber,
  dayStart,
  drawLifecycle,
  FARE_ACT_MS,
  firstMarketDay,
  HISTORY_DAYS,
  inMarketAt,
  type LifeEvent,
  type ListingKind,
  listingId,
  MAX_LIFE_DAYS,
  MAX_SCALE,
  marketIndex,
  seasonalDom,
} from './lifecycle.ts';
import { BROKERAGES, EXPOSURES, FIRST_NAMES, LAST_NAMES, VIEWS } from './names.ts';
import { hexKey, Rng, WeightedTable } from './random.ts';

export interface DemoMarketOptions {
  seed: number;
  /** Volume multiplier: 1 = a full city (≈ 25k active rentals), 0.01–0.05 for tests. */
  scale: number;
  /** The instant the market is observed at. */
  now: Date;
}

/** One listing's rows, as of the observation instant. */
export interface ListingBundle {
  listing: ListingRow;
  details: NewListingDetails | null;
  events: NewPriceEvent[];
  fees: NewFee[];
  openHouses: NewOpenHouse[];
  photos: NewPhoto[];
}

export interface DemoMarket {
  buildings: NewBuilding[];
  buildingScores: BuildingScoresTable[];
  listings: ListingRow[];
  listingDetails: NewListingDetails[];
  priceEvents: NewPriceEvent[];
  fees: NewFee[];
  openHouses: NewOpenHouse[];
  photos: NewPhoto[];
}

/** Detail pages of listings that left the market longer ago than this are not kept. */
export const DETAIL_RETENTION_DAYS = 14;
/** Open houses are announced this far ahead and kept this long after. */
export const OPEN_HOUSE_LOOKAHEAD_DAYS = 10;
export const OPEN_HOUSE_HISTORY_DAYS = 21;

const BASE_SQFT = [480, 700, 1050, 1450, 2200];
const RENT_TYPE: Readonly<Record<BuildingType, number>> = {
  RENTAL: 1,
  CONDO: 1.08,
  COOP: 0.97,
  CONDOP: 1.04,
  TOWNHOUSE: 1.1,
  MULTI_FAMILY: 0.9,
  HOUSE: 1,
};
const PPSF_TYPE: Readonly<Record<BuildingType, number>> = {
  RENTAL: 1,
  CONDO: 1,
  COOP: 0.72,
  CONDOP: 0.86,
  TOWNHOUSE: 1,
  MULTI_FAMILY: 0.72,
  HOUSE: 0.8,
};
const WHOLE_BUILDING: ReadonlySet<BuildingType> = new Set(['TOWNHOUSE', 'MULTI_FAMILY', 'HOUSE']);
const SALE_TYPES_OK: ReadonlySet<BuildingType> = new Set([
  'CONDO',
  'COOP',
  'CONDOP',
  'TOWNHOUSE',
  'MULTI_FAMILY',
  'HOUSE',
]);

const SPONSOR_MARKETERS = [
  'Corcoran Sunshine Marketing Group',
  'Compass Development Marketing Group',
  'Douglas Elliman Development Marketing',
  'Serhant New Development',
];

const dateCache = new Map<number, string>();

/** `YYYY-MM-DD` in UTC, memoized by day: the loader formats millions of event dates. */
function isoDate(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  let text = dateCache.get(day);
  if (text === undefined) {
    text = new Date(day * DAY_MS).toISOString().slice(0, 10);
    dateCache.set(day, text);
  }
  return text;
}

/** The image seed stored with a demo photo (derived from the key, so it is stable across loads). */
export function renderSeedForKey(key: string): number {
  return Number.parseInt(key.slice(0, 8), 16) & 0x7fffffff;
}

/** Generator over one (seed, scale, now): buildings up front, listings streamed in id order. */
export class DemoMarketGenerator {
  readonly seed: number;
  readonly scale: number;
  readonly now: Date;
  readonly buildings: readonly DemoBuilding[];
  private readonly nowMs: number;
  private readonly rentalTable: WeightedTable<DemoBuilding>;
  private readonly saleTable: WeightedTable<DemoBuilding>;
  private readonly brokerRental: WeightedTable<string>;
  private readonly brokerSale: WeightedTable<string>;
  private drawn = 0;

  constructor(options: DemoMarketOptions) {
    if (!Number.isInteger(options.seed)) throw new Error('demo market seed must be an integer');
    if (!(options.scale > 0 && options.scale <= MAX_SCALE)) {
      throw new Error(`demo market scale must be in (0, ${MAX_SCALE}]`);
    }
    if (Number.isNaN(options.now.getTime())) throw new Error('demo market time is invalid');
    this.seed = options.seed;
    this.scale = options.scale;
    this.now = options.now;
    this.nowMs = options.now.getTime();
    this.buildings = generateBuildings(this.seed, this.scale, this.now);
    [this.rentalTable, this.saleTable] = listingTables(this.buildings);
    this.brokerRental = new WeightedTable(
      BROKERAGES.map((b) => b[0]),
      BROKERAGES.map((b) => b[1]),
    );
    this.brokerSale = new WeightedTable(
      BROKERAGES.map((b) => b[0]),
      BROKERAGES.map((b) => b[2]),
    );
  }

  /** Days whose arrivals of `kind` can be in the market at `now`, oldest first (burn-in included). */
  private days(kind: ListingKind): number[] {
    const first = firstMarketDay(kind, this.nowMs);
    const last = dayNumber(this.nowMs);
    const out: number[] = [];
    for (let d = first; d <= last; d++) out.push(d);
    return out;
  }

  /**
   * Arrivals `listings()` draws (a bound on its rows: most burn-in arrivals have
   * ended before the window): sizes a progress bar counted in `arrivalsDrawn`.
   */
  plannedListings(): number {
    let total = 0;
    for (const kind of ['rental', 'sale'] as const) {
      for (const day of this.days(kind)) total += arrivalsOn(this.seed, this.scale, kind, day);
    }
    return total;
  }

  /** Arrivals `listings()` has drawn so far, kept or not: progress against `plannedListings()`. */
  get arrivalsDrawn(): number {
    return this.drawn;
  }

  /** Every listing in the market at `now`, in ascending id order (day, then rentals before sales). */
  *listings(): Generator<ListingBundle> {
    const firstRental = firstMarketDay('rental', this.nowMs);
    this.drawn = 0;
    for (const day of this.days('sale')) {
      for (const kind of ['rental', 'sale'] as const) {
        if (kind === 'rental' && day < firstRental) continue;
        const n = arrivalsOn(this.seed, this.scale, kind, day);
        for (let index = 0; index < n; index++) {
          this.drawn++;
          const bundle = this.listing(kind, day, index);
          if (bundle) yield bundle;
        }
      }
    }
  }

  /** One listing as of `now`, or null when it is not in the market then (see `inMarketAt`). */
  listing(kind: ListingKind, day: number, index: number): ListingBundle | null {
    return this.listingAt(kind, day, index, this.nowMs);
  }

  /**
   * One listing observed at instant `at` over this generator's building stock
   * (drawn at `now`), or null when it is not in the market at `at`: not yet
   * arrived, or ended HISTORY_DAYS or more before (`inMarketAt`).
   * Within `now`'s calendar year this equals `listing()` of a generator built at
   * `at`, bookkeeping timestamps (`refreshed_at`, details' `updated_at`) aside:
   * the market simulator observes one stock at a moving instant with it.
   * `parts: 'listing'` skips what only the detail page needs (details, fees,
   * photo rows: empty in the bundle); the listing row and open houses are the same.
   */
  listingAt(
    kind: ListingKind,
    day: number,
    index: number,
    at: number,
    parts: 'all' | 'listing' = 'all',
  ): ListingBundle | null {
    const id = listingId(kind, day, index);
    const rng = new Rng(this.seed, 'listing', id);
    const listedAt = dayStart(day) + Math.round(rng.range(13, 23.5) * 60) * 60_000;
    // Cheap rejections first; a burn-in arrival needs its plan to know when it ended.
    if (listedAt > at || listedAt <= at - (HISTORY_DAYS + MAX_LIFE_DAYS[kind]) * DAY_MS) return null;
    const building = (kind === 'rental' ? this.rentalTable : this.saleTable).pick(rng);
    const plan = this.plan(rng, kind, id, building, listedAt);
    if (!inMarketAt(listedAt, plan.events[plan.events.length - 1]!.at, at)) return null;
    return this.observe(plan, at, parts === 'all');
  }

  /**
   * A listing's whole life, independent of any observation instant: lifecycle
   * events, open-house schedule and the instants at which its observed rows
   * change (see `changeInstants`). The simulator indexes these instead of
   * observing the market anew per request.
   */
  timeline(kind: ListingKind, day: number, index: number): ListingTimeline {
    const id = listingId(kind, day, index);
    const rng = new Rng(this.seed, 'listing', id);
    const listedAt = dayStart(day) + Math.round(rng.range(13, 23.5) * 60) * 60_000;
    const building = (kind === 'rental' ? this.rentalTable : this.saleTable).pick(rng);
    const plan = this.plan(rng, kind, id, building, listedAt);
    const openHouses = this.openHouseSchedule(plan).map((oh) => ({
      id: `${id}-${oh.week}`,
      start: oh.start,
      end: oh.end,
    }));
    return {
      id,
      kind,
      day,
      index,
      buildingId: building.id,
      listedAt,
      events: plan.events,
      openHouses,
      changes: changeInstants(listedAt, plan.events, openHouses),
    };
  }

  private plan(rng: Rng, kind: ListingKind, id: string, b: DemoBuilding, listedAt: number): ListingPlan {
    const area = b.area;
    const spec = b.spec;
    const whole = kind === 'sale' && WHOLE_BUILDING.has(b.type);
    let bedWeights = kind === 'rental' ? spec.bedsRent : spec.bedsSale;
    if (b.type === 'HOUSE') bedWeights = [0, 2, 18, 46, 34];
    else if (whole) bedWeights = [0, 0, 6, 30, 64];
    else if (WHOLE_BUILDING.has(b.type)) bedWeights = [3, 30, 38, 23, 6];
    let beds = rng.weighted(bedWeights);
    if (beds === 4 && rng.chance(whole ? 0.5 : 0.2)) beds += rng.int(1, 2);
    const modern = b.yearBuilt >= 2005;
    const full =
      beds <= 1
        ? 1
        : beds === 2
          ? rng.chance(modern ? 0.75 : 0.4)
            ? 2
            : 1
          : beds === 3
            ? rng.chance(0.15)
              ? 3
              : rng.chance(0.85)
                ? 2
                : 1
            : Math.max(2, beds - rng.int(0, 2));
    const half = rng.chance(whole || beds >= 3 ? 0.45 : 0.07) ? 1 : 0;

    const typical = (BASE_SQFT[Math.min(beds, 4)]! + 380 * Math.max(0, beds - 4)) * spec.sizeFactor;
    const houseFactor = WHOLE_BUILDING.has(b.type) ? (whole ? 1.3 : 1.1) : 1;
    const trueSqft = Math.round((typical * houseFactor * rng.logNormal(1, 0.16)) / 5) * 5;
    const sqftMissingP =
      kind === 'rental' ? (b.elevator ? (modern ? 0.12 : 0.25) : 0.4) : b.type === 'COOP' ? 0.3 : 0.08;
    const sqft = rng.chance(sqftMissingP) ? null : trueSqft;

    const floor = b.floors <= 1 ? 1 : rng.int(b.elevator ? 2 : 1, b.floors);
    const floorPremium = b.elevator ? Math.min(1.3, 1 + 0.006 * (floor - 1)) : 1;
    const quality = rng.normal();
    const overpricing = rng.normal();
    const sizeAdj = (trueSqft / (typical * houseFactor)) ** 0.4;
    const index = marketIndex(kind, listedAt);

    let saleType: 'RESALE' | 'SPONSOR_UNIT' | 'FORECLOSURE' | null = null;
    let asking: number;
    if (kind === 'rental') {
      const raw =
        area.profile.rent *
        (spec.bedRent[Math.min(beds, 4)]! + 0.35 * Math.max(0, beds - 4)) *
        RENT_TYPE[b.type] *
        b.quality *
        floorPremium *
        sizeAdj *
        Math.exp(0.11 * quality + 0.05 * overpricing) *
        index;
      asking = brokerRound('rental', raw, rng);
    } else {
      const newBuild =
        modern && b.yearBuilt >= this.now.getUTCFullYear() - 4 && (b.type === 'CONDO' || b.type === 'CONDOP');
      const foreclosureP = b.type === 'HOUSE' || b.type === 'MULTI_FAMILY' ? 0.03 : 0.004;
      saleType = rng.chance(newBuild ? 0.75 : 0.03)
        ? 'SPONSOR_UNIT'
        : rng.chance(foreclosureP)
          ? 'FORECLOSURE'
          : 'RESALE';
      const raw =
        area.profile.ppsf *
        PPSF_TYPE[b.type] *
        b.quality *
        floorPremium *
        trueSqft *
        Math.exp(0.14 * quality + 0.06 * overpricing) *
        (saleType === 'SPONSOR_UNIT' ? 1.08 : saleType === 'FORECLOSURE' ? 0.78 : 1) *
        index;
      asking = brokerRound('sale', raw, rng);
    }

    const domBase = kind === 'rental' ? spec.domRent : spec.domSale;
    const closingDays =
      b.type === 'COOP'
        ? rng.logNormal(80, 0.25)
        : saleType === 'SPONSOR_UNIT'
          ? rng.logNormal(60, 0.5)
          : rng.logNormal(55, 0.3);
    const events = drawLifecycle(rng, {
      kind,
      listedAt,
      askingPrice: asking,
      overpricing,
      medianDom: domBase * seasonalDom(kind, listedAt) * (asking >= 10_000_000 ? 2 : 1),
      closingDays: Math.round(closingDays),
      coop: b.type === 'COOP',
    });

    // Concessions: new rental towers in soft seasons and submarkets give months free.
    let monthsFree = 0;
    let leaseTerm = 12;
    if (kind === 'rental') {
      const winter = seasonalDom('rental', listedAt) > 1.1 ? 1.3 : 1;
      const p = b.concessions ? 0.65 * winter : 0.025;
      if (rng.chance(Math.min(0.9, p))) {
        monthsFree = [0.5, 1, 1, 1, 1.5, 2, 2][rng.int(0, 6)]!;
        leaseTerm = rng.chance(0.5) ? 12 : monthsFree >= 2 ? rng.pick([14, 16, 24]) : 13;
      } else if (rng.chance(0.05)) leaseTerm = 24;
    }

    const bigLandlord = b.type === 'RENTAL' && b.elevator && b.units >= 60 && b.managementCompany !== null;
    let noFee = false;
    if (kind === 'rental') {
      const fare = listedAt >= FARE_ACT_MS && area.state === 'NY';
      const p = fare
        ? 0.88
        : Math.min(0.97, spec.noFee + (bigLandlord ? 0.35 : 0) + (b.concessions ? 0.2 : 0));
      noFee = rng.chance(p);
    }
    const inHouse = kind === 'rental' && bigLandlord && rng.chance(noFee ? 0.6 : 0.15);
    const source =
      kind === 'sale' && saleType === 'SPONSOR_UNIT'
        ? rng.pick(SPONSOR_MARKETERS)
        : inHouse
          ? `${b.managementCompany} (Owner/Manager)`
          : (kind === 'rental' ? this.brokerRental : this.brokerSale).pick(rng);

    const unitAmenities: Amenity[] = [];
    const addUnit = (a: Amenity, p: number) => {
      if (rng.chance(p)) unitAmenities.push(a);
    };
    addUnit('washer_dryer', whole || b.type === 'HOUSE' ? 0.7 : modern ? 0.7 : b.elevator ? 0.2 : 0.12);
    addUnit('dishwasher', modern ? 0.95 : 0.5);
    addUnit('balcony', modern && b.elevator ? 0.18 : 0.03);
    addUnit('terrace', floor >= b.floors - 1 && b.elevator ? 0.3 : 0.03);
    if (WHOLE_BUILDING.has(b.type) || (!b.elevator && floor === 1)) addUnit('garden', 0.3);
    if (unitAmenities.some((a) => a === 'balcony' || a === 'terrace' || a === 'garden')) {
      unitAmenities.push('private_outdoor_space');
    }
    addUnit('fireplace', b.yearBuilt < 1930 ? 0.12 : 0.02);
    addUnit('central_air', modern && !b.amenities.includes('central_air') ? 0.6 : 0.05);
    if (kind === 'rental') addUnit('furnished', 0.03);
    const mask = b.amenityMask | amenityMask(unitAmenities);

    const has3d = rng.chance(kind === 'sale' ? (asking >= 2_000_000 ? 0.6 : 0.3) : bigLandlord ? 0.35 : 0.1);
    const petsAllowed = b.petsAllowed && (kind === 'sale' || rng.chance(0.92));
    const approx = rng.chance(0.03);
    const unknownListed = rng.chance(0.005);
    const availableAt =
      kind === 'rental'
        ? rng.chance(0.45)
          ? listedAt
          : availableDate(listedAt + rng.range(5, 45) * DAY_MS, rng.chance(0.5))
        : null;

    return {
      id,
      kind,
      b,
      events,
      listedAt,
      beds,
      full,
      half,
      sqft,
      trueSqft,
      floor,
      saleType,
      monthsFree,
      leaseTerm,
      noFee,
      source,
      unitAmenities,
      mask,
      has3d,
      petsAllowed,
      approx,
      unknownListed,
      availableAt,
      typicalSqft: typical * houseFactor,
      monthly: monthlyCharges(rng, kind, b, asking, trueSqft, bigLandlord, petsAllowed),
    };
  }

  private observe(plan: ListingPlan, t: number, detailPage = true): ListingBundle {
    const { b, kind, id } = plan;
    let status: 'ACTIVE' | 'IN_CONTRACT' | 'OFF_MARKET' = 'ACTIVE';
    let closed: 'RENTED' | 'SOLD' | 'DELISTED' | null = null;
    let price = plan.events[0]!.price;
    let previous: number | null = null;
    let contractAt: number | null = null;
    let offMarketAt: number | null = null;
    let updatedAt = plan.listedAt;
    let activeSince = plan.listedAt;
    const events: NewPriceEvent[] = [];
    for (const e of plan.events) {
      if (e.at > t) break;
      let pct: number | null = null;
      switch (e.kind) {
        case 'PRICE_DECREASE':
        case 'PRICE_INCREASE':
        case 'RELISTED':
          pct = Math.round(((e.price - price) / price) * 10_000) / 100;
          previous = price;
          price = e.price;
          if (e.kind === 'RELISTED') {
            status = 'ACTIVE';
            closed = null;
            offMarketAt = null;
            activeSince = e.at;
          }
          break;
        case 'IN_CONTRACT':
          status = 'IN_CONTRACT';
          contractAt = e.at;
          break;
        case 'DELISTED':
        case 'RENTED':
        case 'SOLD':
          status = 'OFF_MARKET';
          closed = e.kind;
          offMarketAt = e.at;
          break;
        default:
          break;
      }
      updatedAt = e.at;
      events.push({ listing_id: id, date: isoDate(e.at), price: e.price, event: e.kind, pct_change: pct });
    }
    if (closed === 'RENTED' || closed === 'DELISTED') {
      // A rental's "in contract" ends with the lease; only sales keep the contract date when closed.
      if (kind === 'rental' || closed === 'DELISTED') contractAt = kind === 'sale' ? contractAt : null;
    }
    const scraped =
      status !== 'OFF_MARKET' || (offMarketAt !== null && t - offMarketAt <= DETAIL_RETENTION_DAYS * DAY_MS);
    const nowIso = new Date(t).toISOString();

    const photoRng = new Rng(this.seed, 'photos', id);
    const photoCount = photoRng.chance(kind === 'rental' ? 0.04 : 0.01)
      ? 0
      : Math.max(
          1,
          Math.min(40, Math.round(photoRng.logNormal(kind === 'rental' ? (b.elevator ? 10 : 7) : 14, 0.35))),
        );
    const photoKeys: string[] = [];
    const photos: NewPhoto[] = [];
    // Photos (rows and the lead key) live with the detail page: old history has none, which
    // keeps a full-scale store hundreds of thousands of rows smaller.
    const kept = scraped ? (detailPage ? photoCount : Math.min(1, photoCount)) : 0;
    const captions = detailPage ? photoCaptions(kept, plan) : [];
    for (let position = 0; position < kept; position++) {
      const key = hexKey(this.seed, 'photo', id, position);
      photoKeys.push(key);
      if (!detailPage) continue;
      photos.push({
        key,
        listing_id: id,
        building_id: null,
        position,
        width: 1200,
        height: position % 5 === 4 ? 1500 : 800,
        caption: captions[position] ?? null,
        render_seed: renderSeedForKey(key),
      });
    }

    const openHouses: NewOpenHouse[] = [];
    let nextOpenHouse: string | null = null;
    if (scraped) {
      for (const oh of this.openHouseSchedule(plan)) {
        if (
          oh.start > t + OPEN_HOUSE_LOOKAHEAD_DAYS * DAY_MS ||
          oh.start < t - OPEN_HOUSE_HISTORY_DAYS * DAY_MS
        )
          continue;
        const startsAt = new Date(oh.start).toISOString();
        openHouses.push({
          id: `${id}-${oh.week}`,
          listing_id: id,
          starts_at: startsAt,
          ends_at: new Date(oh.end).toISOString(),
          kind: oh.virtual ? 'VIRTUAL' : 'IN_PERSON',
          by_appointment: oh.byAppointment ? 1 : 0,
          note: oh.byAppointment ? 'By appointment only' : oh.virtual ? 'Live video tour' : null,
        });
        if (status === 'ACTIVE' && oh.start >= t && nextOpenHouse === null) nextOpenHouse = startsAt;
      }
    }

    const expected = this.expectedPrice(plan, t);
    const daysActive = Math.max(0, (t - activeSince) / DAY_MS);
    const rankScore = rank({
      photoCount,
      daysActive,
      has3d: plan.has3d,
      promoted: kind === 'rental' ? plan.noFee : nextOpenHouse !== null,
      price,
      expected,
      hasSqft: plan.sqft !== null,
      scraped,
    });

    const monthlyFees = plan.monthly.monthlyFees;
    const netEffective =
      kind === 'rental' ? Math.round((price * (plan.leaseTerm - plan.monthsFree)) / plan.leaseTerm) : null;
    const listedAtIso = plan.unknownListed
      ? null
      : plan.approx
        ? `${isoDate(plan.listedAt)}T00:00:00.000Z`
        : new Date(plan.listedAt).toISOString();

    const listing: ListingRow = {
      id,
      listing_type: kind,
      status,
      closed_reason: closed,
      building_id: b.id,
      area_id: b.area.id,
      street: b.street,
      unit: unitLabel(plan),
      city: b.area.city,
      state: b.area.state,
      zip_code: b.zip,
      latitude: b.latitude,
      longitude: b.longitude,
      url_path: `/${kind}/${id}`,
      building_type: b.type,
      price,
      price_delta: previous === null ? 0 : price - previous,
      net_effective: netEffective,
      months_free: kind === 'rental' ? plan.monthsFree : null,
      lease_term_months: kind === 'rental' ? plan.leaseTerm : null,
      monthly_fees: monthlyFees,
      monthly_cost: kind === 'rental' ? price + monthlyFees : monthlyFees,
      no_fee: plan.noFee ? 1 : 0,
      sale_type: plan.saleType,
      bedroom_count: plan.beds,
      full_bathroom_count: plan.full,
      half_bathroom_count: plan.half,
      bathrooms: plan.full + 0.5 * plan.half,
      sqft: plan.sqft,
      price_per_sqft: plan.sqft === null ? null : Math.round((price / plan.sqft) * 100) / 100,
      listed_at: listedAtIso,
      listed_at_is_approximate: plan.approx && !plan.unknownListed ? 1 : 0,
      available_at: plan.availableAt === null ? null : isoDate(plan.availableAt),
      off_market_at: offMarketAt === null ? null : new Date(offMarketAt).toISOString(),
      contract_at: contractAt === null ? null : new Date(contractAt).toISOString(),
      amenity_mask: plan.mask,
      pets_allowed: plan.petsAllowed ? 1 : 0,
      has_3d_tour: plan.has3d ? 1 : 0,
      next_open_house_at: nextOpenHouse,
      lead_photo_key: photoKeys[0] ?? null,
      source_group_label: plan.source,
      rank_score: rankScore,
      detail_scraped: scraped ? 1 : 0,
      refreshed_at: nowIso,
      created_at: new Date(plan.listedAt).toISOString(),
      updated_at: new Date(updatedAt).toISOString(),
      // The store's counter starts at 0 with the loaded market (see migration 0010).
      revision: 0,
      // No refresh wrote its children yet: the first expanded refresh records the hash.
      detail_hash: null,
    };

    const fees = scraped && detailPage ? feeRows(plan, price) : [];
    const details = scraped && detailPage ? this.details(plan, listing, photoKeys, nowIso) : null;
    return { listing, details, events, fees, openHouses, photos };
  }

  /** The typical price of this kind of home in this area today, for the rank's value term. */
  private expectedPrice(plan: ListingPlan, t: number): number {
    const { b, kind } = plan;
    const index = marketIndex(kind, t);
    if (kind === 'rental') {
      return (
        b.area.profile.rent *
        (b.spec.bedRent[Math.min(plan.beds, 4)]! + 0.35 * Math.max(0, plan.beds - 4)) *
        RENT_TYPE[b.type] *
        index
      );
    }
    return b.area.profile.ppsf * PPSF_TYPE[b.type] * plan.typicalSqft * index;
  }

  private openHouseSchedule(plan: ListingPlan): OpenHouseSlot[] {
    const rng = new Rng(this.seed, 'open-houses', plan.id);
    const end = plan.events.find(
      (e, i) => i > 0 && e.kind !== 'PRICE_DECREASE' && e.kind !== 'PRICE_INCREASE',
    )?.at;
    const activeEnd = end ?? Number.POSITIVE_INFINITY;
    const p = plan.kind === 'sale' ? 0.6 : plan.b.units >= 60 ? 0.3 : 0.15;
    const slots: OpenHouseSlot[] = [];
    // Weekends: Sunday for sales, Saturday or Sunday for rentals (12:00–16:00 Eastern ≈ 16:00–20:00 UTC).
    const firstDay = Math.floor(plan.listedAt / DAY_MS) + 1;
    for (let week = 0; week < 40; week++) {
      let day = firstDay + week * 7;
      const weekday = new Date(day * DAY_MS).getUTCDay();
      day += (7 - weekday) % 7;
      if (plan.kind === 'rental' && rng.chance(0.35)) day -= 1;
      const start = day * DAY_MS + (16 + rng.int(0, 3)) * HOUR_MS + (rng.chance(0.3) ? 30 * 60_000 : 0);
      if (start >= activeEnd) break;
      if (!rng.chance(p)) continue;
      const length = plan.kind === 'sale' ? rng.pick([1.5, 2, 2]) : rng.pick([1, 1.5, 2]);
      slots.push({
        week,
        start,
        end: start + length * HOUR_MS,
        virtual: rng.chance(0.05),
        byAppointment: rng.chance(0.1),
      });
    }
    return slots;
  }

  private details(
    plan: ListingPlan,
    listing: ListingRow,
    photoKeys: string[],
    nowIso: string,
  ): NewListingDetails {
    const rng = new Rng(this.seed, 'detail', plan.id);
    const { b, kind } = plan;
    const amenityNames = [...new Set([...b.amenities, ...plan.unitAmenities])];
    const agentCount = rng.chance(0.35) ? 2 : 1;
    const brokerage = plan.source.replace(/ \(Owner\/Manager\)$/, '');
    const domain = brokerage.toLowerCase().replace(/[^a-z0-9]+/g, '');
    const agents = Array.from({ length: agentCount }, () => {
      const first = rng.pick(FIRST_NAMES);
      const last = rng.pick(LAST_NAMES);
      return {
        name: `${first} ${last}`,
        title: rng.chance(0.75) ? 'Licensed Real Estate Salesperson' : 'Associate Real Estate Broker',
        brokerage,
        phone: `(${rng.pick(b.area.state === 'NJ' ? ['201', '551'] : ['212', '646', '917', '718', '347'])}) 555-01${String(rng.int(0, 99)).padStart(2, '0')}`,
        email: `${first}.${last}@${domain}.example`.toLowerCase(),
      };
    });
    const exposure = rng.pick(EXPOSURES);
    const view = b.elevator && plan.floor >= 8 ? rng.pick(VIEWS) : null;
    const laundry = plan.unitAmenities.includes('washer_dryer')
      ? 'IN_UNIT'
      : b.amenities.includes('laundry_in_building')
        ? 'IN_BUILDING'
        : 'NONE';
    const outdoor = plan.unitAmenities.includes('terrace')
      ? 'TERRACE'
      : plan.unitAmenities.includes('balcony')
        ? 'BALCONY'
        : plan.unitAmenities.includes('garden')
          ? 'GARDEN'
          : null;
    const leaseTerms =
      kind === 'rental'
        ? JSON.stringify({
            termMonths: plan.leaseTerm,
            termOptions: plan.leaseTerm === 12 ? [12, 24] : [plan.leaseTerm],
            guarantorsAccepted: rng.chance(0.85),
            thirdPartyGuarantorsAccepted: rng.chance(0.6),
            furnished: plan.unitAmenities.includes('furnished'),
            shortTermAllowed: false,
            rentStabilized: b.row.nyc_data_json.includes('"rentStabilizedUnits":0') ? false : rng.chance(0.3),
          })
        : null;
    const concessions =
      kind === 'rental' && plan.monthsFree > 0
        ? JSON.stringify({
            monthsFree: plan.monthsFree,
            leaseTermMonths: plan.leaseTerm,
            grossRent: listing.price,
            netEffectiveRent: listing.net_effective,
            expiresAt: isoDate(plan.listedAt + 45 * DAY_MS),
          })
        : null;
    const saleDetails =
      kind === 'sale'
        ? JSON.stringify({
            saleType: plan.saleType,
            maintenance: plan.monthly.maintenance,
            commonCharges: plan.monthly.commonCharges,
            monthlyTaxes: plan.monthly.taxes,
            taxAbatement: b.row.tax_abatement_status ?? null,
            financingAllowedPct: b.type === 'COOP' ? rng.pick([50, 70, 75, 80, 80, 90]) : 90,
            flipTaxPct: b.type === 'COOP' && rng.chance(0.5) ? rng.pick([1, 2, 2, 3]) : null,
            downPaymentPct: b.type === 'COOP' ? rng.pick([10, 20, 20, 25, 30]) : 10,
            pricePerSqft: listing.price_per_sqft ?? null,
          })
        : null;
    return {
      listing_id: plan.id,
      description: describe(rng, plan, view, outdoor),
      amenities_json: JSON.stringify(amenityNames),
      unit_features_json: JSON.stringify({
        floor: plan.floor,
        exposure,
        view,
        laundry,
        outdoorSpace: outdoor,
        ceilingHeightFt: b.yearBuilt < 1930 ? rng.pick([9, 10, 11, 12]) : rng.pick([8, 8.5, 9, 10]),
        flooring: rng.pick(['Hardwood', 'Hardwood', 'Wide-plank oak', 'Parquet', 'Laminate']),
        renovated: rng.chance(0.4),
        interiorSqft: plan.sqft,
      }),
      lease_terms_json: leaseTerms,
      concessions_json: concessions,
      sale_details_json: saleDetails,
      agents_json: JSON.stringify(agents),
      pets_policy_json: JSON.stringify({
        allowed: plan.petsAllowed,
        dogs: plan.petsAllowed && b.row.policies_json.includes('"dogsAllowed":true'),
        cats: plan.petsAllowed,
        petRent: plan.monthly.petRent,
        notes: plan.petsAllowed ? (rng.chance(0.3) ? 'Case by case' : null) : 'No pets',
      }),
      photos_json: JSON.stringify(photoKeys),
      floor_plan_key: rng.chance(kind === 'sale' ? 0.85 : 0.6)
        ? hexKey(this.seed, 'floor-plan', plan.id)
        : null,
      virtual_tour_url: plan.has3d ? `https://my.matterport.com/show/?m=${rng.hex32().slice(0, 11)}` : null,
      updated_at: nowIso,
    };
  }
}

/** An open house of a listing's schedule: id `${listingId}-${week}`, start and end instants. */
export interface ScheduledOpenHouse {
  id: string;
  start: number;
  end: number;
}

/** A listing's life as drawn at arrival (see `DemoMarketGenerator.timeline`). */
export interface ListingTimeline {
  id: string;
  kind: ListingKind;
  day: number;
  index: number;
  buildingId: string;
  listedAt: number;
  events: readonly LifeEvent[];
  /** Every open house the listing will hold, ascending by start. */
  openHouses: readonly ScheduledOpenHouse[];
  /**
   * Ascending instants (whole milliseconds) at which what `listingAt`
   * observes at whole-millisecond instants changes, the first being `listedAt`. "Observes" is every row an upstream feed carries: the
   * listing (rank and bookkeeping timestamps aside), details, fees, open houses
   * and photos. Between two consecutive instants those rows are constant, so
   * the listing observed at t equals the listing observed at the latest change
   * instant at or before t. Changes: lifecycle events; the detail page dropped
   * DETAIL_RETENTION_DAYS after leaving the market; an open house announced
   * (OPEN_HOUSE_LOOKAHEAD_DAYS before it starts), starting (it stops being the
   * next one 1 ms after its start) and dropped OPEN_HOUSE_HISTORY_DAYS after it.
   */
  changes: readonly number[];
}

export interface LifecycleState {
  /** Number of lifecycle events at or before the instant. */
  count: number;
  status: ListingRow['status'];
  closed: ListingRow['closed_reason'];
  offMarketAt: number | null;
}

/** The lifecycle state after every event at or before t (the rules `observe` applies). */
export function lifecycleStateAt(events: readonly LifeEvent[], t: number): LifecycleState {
  const state: LifecycleState = { count: 0, status: 'ACTIVE', closed: null, offMarketAt: null };
  for (const e of events) {
    if (e.at > t) break;
    state.count++;
    if (e.kind === 'RELISTED') {
      state.status = 'ACTIVE';
      state.closed = null;
      state.offMarketAt = null;
    } else if (e.kind === 'IN_CONTRACT') state.status = 'IN_CONTRACT';
    else if (e.kind === 'DELISTED' || e.kind === 'RENTED' || e.kind === 'SOLD') {
      state.status = 'OFF_MARKET';
      state.closed = e.kind;
      state.offMarketAt = e.at;
    }
  }
  return state;
}

/** Whether the detail page (details, fees, photos, open houses) is still kept at t. */
export function detailKeptAt(state: LifecycleState, t: number): boolean {
  return (
    state.status !== 'OFF_MARKET' ||
    (state.offMarketAt !== null && t - state.offMarketAt <= DETAIL_RETENTION_DAYS * DAY_MS)
  );
}

/** Whether an open house is listed at t (announced ahead, kept a while after), detail page permitting. */
export function openHouseVisibleAt(start: number, t: number, detailKept: boolean): boolean {
  return (
    detailKept &&
    start <= t + OPEN_HOUSE_LOOKAHEAD_DAYS * DAY_MS &&
    start >= t - OPEN_HOUSE_HISTORY_DAYS * DAY_MS
  );
}

/**
 * The change instants of a listing (see `ListingTimeline.changes`), derived
 * from the rules of `observe`: every lifecycle event; the detail page dropped
 * (unless relisted first); an open house announced while the detail page is
 * kept; an open house's start + 1 ms while the listing is ACTIVE (it stops
 * being `next_open_house_at`); an open house dropped while it was still shown.
 */
export function changeInstants(
  listedAt: number,
  events: readonly LifeEvent[],
  openHouses: readonly ScheduledOpenHouse[],
): number[] {
  // Event times are fractional milliseconds; observations happen at whole ones.
  const out: number[] = [];
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    out.push(Math.ceil(e.at));
    if (e.kind === 'DELISTED' || e.kind === 'RENTED' || e.kind === 'SOLD') {
      const purge = Math.floor(e.at + DETAIL_RETENTION_DAYS * DAY_MS) + 1;
      const next = events[i + 1];
      if (next === undefined || Math.ceil(next.at) > purge) out.push(purge);
    }
  }
  const kept = (t: number) => detailKeptAt(lifecycleStateAt(events, t), t);
  for (const oh of openHouses) {
    const announced = oh.start - OPEN_HOUSE_LOOKAHEAD_DAYS * DAY_MS;
    if (announced > listedAt && kept(announced)) out.push(announced);
    if (oh.start + 1 > listedAt && lifecycleStateAt(events, oh.start).status === 'ACTIVE')
      out.push(oh.start + 1);
    const dropped = oh.start + OPEN_HOUSE_HISTORY_DAYS * DAY_MS + 1;
    if (dropped > listedAt && kept(dropped - 1)) out.push(dropped);
  }
  out.sort((a, b) => a - b);
  let n = 0;
  for (const c of out) if (c >= listedAt && (n === 0 || out[n - 1] !== c)) out[n++] = c;
  out.length = n;
  return out;
}

interface OpenHouseSlot {
  week: number;
  start: number;
  end: number;
  virtual: boolean;
  byAppointment: boolean;
}

interface MonthlyCharges {
  monthlyFees: number;
  maintenance: number | null;
  commonCharges: number | null;
  taxes: number | null;
  amenityFee: number | null;
  petRent: number | null;
}

interface ListingPlan {
  id: string;
  kind: ListingKind;
  b: DemoBuilding;
  events: LifeEvent[];
  listedAt: number;
  beds: number;
  full: number;
  half: number;
  sqft: number | null;
  trueSqft: number;
  floor: number;
  saleType: 'RESALE' | 'SPONSOR_UNIT' | 'FORECLOSURE' | null;
  monthsFree: number;
  leaseTerm: number;
  noFee: boolean;
  source: string;
  unitAmenities: Amenity[];
  mask: number;
  has3d: boolean;
  petsAllowed: boolean;
  approx: boolean;
  unknownListed: boolean;
  availableAt: number | null;
  typicalSqft: number;
  monthly: MonthlyCharges;
}

/** Rental and sale weights per building: area volume × type mix, split by units within a type. */
function listingTables(
  buildings: readonly DemoBuilding[],
): [WeightedTable<DemoBuilding>, WeightedTable<DemoBuilding>] {
  const unitsBy = new Map<string, number>();
  const countBy = new Map<string, number>();
  const typesBy = new Map<number, Set<BuildingType>>();
  for (const b of buildings) {
    const key = `${b.area.id}|${b.type}`;
    unitsBy.set(key, (unitsBy.get(key) ?? 0) + b.units);
    countBy.set(key, (countBy.get(key) ?? 0) + 1);
    const set = typesBy.get(b.area.id) ?? new Set<BuildingType>();
    set.add(b.type);
    typesBy.set(b.area.id, set);
  }
  const rentalWeights: number[] = [];
  const saleWeights: number[] = [];
  for (const b of buildings) {
    const key = `${b.area.id}|${b.type}`;
    const present = typesBy.get(b.area.id)!;
    const { rentMix, saleMix } = b.spec;
    // Renormalize over the types this area actually has, so small scales keep area volumes.
    let rentTotal = 0;
    let saleTotal = 0;
    for (const type of present) {
      rentTotal += rentMix[type] ?? 0;
      if (SALE_TYPES_OK.has(type)) saleTotal += saleMix[type] ?? 0;
    }
    const weight = b.area.profile.weight;
    rentalWeights.push(
      rentTotal > 0 ? (weight * (rentMix[b.type] ?? 0) * b.units) / (rentTotal * unitsBy.get(key)!) : 0,
    );
    saleWeights.push(
      saleTotal > 0 && SALE_TYPES_OK.has(b.type)
        ? (weight *
            b.area.profile.saleVolume *
            b.spec.saleRatio *
            (saleMix[b.type] ?? 0) *
            Math.sqrt(b.units)) /
            (saleTotal * sqrtUnits(buildings, key, countBy.get(key)!))
        : 0,
    );
  }
  return [new WeightedTable(buildings, rentalWeights), new WeightedTable(buildings, saleWeights)];
}

const sqrtUnitsCache = new WeakMap<readonly DemoBuilding[], Map<string, number>>();

function sqrtUnits(buildings: readonly DemoBuilding[], key: string, _count: number): number {
  let cache = sqrtUnitsCache.get(buildings);
  if (!cache) {
    cache = new Map();
    for (const b of buildings) {
      const k = `${b.area.id}|${b.type}`;
      cache.set(k, (cache.get(k) ?? 0) + Math.sqrt(b.units));
    }
    sqrtUnitsCache.set(buildings, cache);
  }
  return cache.get(key)!;
}

function monthlyCharges(
  rng: Rng,
  kind: ListingKind,
  b: DemoBuilding,
  asking: number,
  sqft: number,
  bigLandlord: boolean,
  pets: boolean,
): MonthlyCharges {
  const nj = b.area.state === 'NJ';
  if (kind === 'rental') {
    const amenityFee =
      bigLandlord && b.yearBuilt >= 2000 && rng.chance(0.35)
        ? rng.pick([50, 75, 100, 125, 150, 200, 250])
        : null;
    const petRent = pets && bigLandlord && rng.chance(0.35) ? rng.pick([50, 75, 100]) : null;
    // Pet rent is conditional (only tenants with a pet pay it): it is a CONDITIONAL
    // fee row, not part of monthlyFees, so not of the monthly_cost everyone filters on.
    return {
      monthlyFees: amenityFee ?? 0,
      maintenance: null,
      commonCharges: null,
      taxes: null,
      amenityFee,
      petRent,
    };
  }
  if (b.type === 'COOP') {
    // Co-op maintenance includes the building's real-estate taxes.
    const maintenance = Math.round(asking * rng.range(0.0015, 0.0026));
    return {
      monthlyFees: maintenance,
      maintenance,
      commonCharges: null,
      taxes: null,
      amenityFee: null,
      petRent: null,
    };
  }
  if (b.type === 'CONDO' || b.type === 'CONDOP') {
    const perSqft = b.area.boroughId === 100 ? rng.range(0.9, 1.7) : rng.range(0.45, 0.95);
    const common = Math.round(sqft * perSqft);
    const abated = b.row.tax_abatement_status === '421a' && (b.row.tax_abatement_years_remaining ?? 0) > 0;
    const rate = nj
      ? rng.range(0.0013, 0.0018)
      : abated
        ? rng.range(0.00008, 0.0003)
        : rng.range(0.0006, 0.0011);
    const taxes = Math.round(asking * rate);
    return {
      monthlyFees: common + taxes,
      maintenance: null,
      commonCharges: common,
      taxes,
      amenityFee: null,
      petRent: null,
    };
  }
  const taxes = Math.round(asking * (nj ? rng.range(0.0014, 0.0019) : rng.range(0.0004, 0.0008)));
  return {
    monthlyFees: taxes,
    maintenance: null,
    commonCharges: null,
    taxes,
    amenityFee: null,
    petRent: null,
  };
}

function fee(
  listingId: string,
  typeLabel: string,
  category: string,
  requirement: string,
  refundability: string,
  calcType: string,
  amount: number,
  timing: string,
  occurrence: string,
): NewFee {
  return {
    listing_id: listingId,
    type_label: typeLabel,
    category,
    requirement,
    refundability,
    calc_type: calcType,
    amount,
    timing,
    occurrence,
  };
}

function feeRows(plan: ListingPlan, price: number): NewFee[] {
  const { id, b } = plan;
  const nj = b.area.state === 'NJ';
  const out: NewFee[] = [];
  if (plan.kind === 'rental') {
    if (!plan.noFee) {
      const months = plan.events[0]!.at % 3 === 0;
      out.push(
        months
          ? fee(
              id,
              'Broker fee',
              'BROKER',
              'REQUIRED',
              'NON_REFUNDABLE',
              'MONTHS_OF_RENT',
              1,
              'AT_LEASE_SIGNING',
              'ONE_TIME',
            )
          : fee(
              id,
              'Broker fee',
              'BROKER',
              'REQUIRED',
              'NON_REFUNDABLE',
              'PERCENT_OF_ANNUAL_RENT',
              15,
              'AT_LEASE_SIGNING',
              'ONE_TIME',
            ),
      );
    }
    // New York caps application fees at $20 and deposits at one month's rent.
    out.push(
      fee(
        id,
        'Application fee',
        'APPLICATION',
        'REQUIRED',
        'NON_REFUNDABLE',
        'FLAT',
        nj ? 50 : 20,
        'AT_APPLICATION',
        'ONE_TIME',
      ),
    );
    out.push(
      fee(
        id,
        'Security deposit',
        'DEPOSIT',
        'REQUIRED',
        'REFUNDABLE',
        'MONTHS_OF_RENT',
        nj ? 1.5 : 1,
        'AT_LEASE_SIGNING',
        'ONE_TIME',
      ),
    );
    if (plan.monthly.amenityFee !== null) {
      out.push(
        fee(
          id,
          'Amenity fee',
          'BUILDING',
          'REQUIRED',
          'NON_REFUNDABLE',
          'FLAT',
          plan.monthly.amenityFee,
          'WITH_RENT',
          'MONTHLY',
        ),
      );
    }
    if (plan.monthly.petRent !== null) {
      out.push(
        fee(
          id,
          'Pet rent',
          'PET',
          'CONDITIONAL',
          'NON_REFUNDABLE',
          'FLAT',
          plan.monthly.petRent,
          'WITH_RENT',
          'MONTHLY',
        ),
      );
    }
    if (b.type === 'CONDO' || b.type === 'COOP' || b.type === 'CONDOP') {
      out.push(
        fee(
          id,
          'Move-in deposit',
          'BUILDING',
          'REQUIRED',
          'REFUNDABLE',
          'FLAT',
          1000,
          'BEFORE_MOVE_IN',
          'ONE_TIME',
        ),
      );
      if (b.type !== 'CONDO') {
        out.push(
          fee(
            id,
            'Board application fee',
            'APPLICATION',
            'REQUIRED',
            'NON_REFUNDABLE',
            'FLAT',
            750,
            'AT_APPLICATION',
            'ONE_TIME',
          ),
        );
      }
    }
    return out;
  }
  if (b.type === 'COOP') {
    const policies = b.row.policies_json;
    const flip = (JSON.parse(policies) as { flipTaxPct?: number | null }).flipTaxPct;
    if (flip)
      out.push(
        fee(
          id,
          'Flip tax',
          'TRANSFER',
          'REQUIRED',
          'NON_REFUNDABLE',
          'PERCENT_OF_PRICE',
          flip,
          'AT_CLOSING',
          'ONE_TIME',
        ),
      );
    out.push(
      fee(
        id,
        'Board application fee',
        'APPLICATION',
        'REQUIRED',
        'NON_REFUNDABLE',
        'FLAT',
        1000,
        'AT_APPLICATION',
        'ONE_TIME',
      ),
    );
  }
  if (b.type === 'CONDO' || b.type === 'CONDOP') {
    out.push(
      fee(
        id,
        'Working capital contribution',
        'BUILDING',
        'REQUIRED',
        'NON_REFUNDABLE',
        'MONTHS_OF_COMMON_CHARGES',
        2,
        'AT_CLOSING',
        'ONE_TIME',
      ),
    );
  }
  if (plan.saleType === 'SPONSOR_UNIT') {
    out.push(
      fee(
        id,
        'Transfer taxes (sponsor sale)',
        'TRANSFER',
        'REQUIRED',
        'NON_REFUNDABLE',
        'PERCENT_OF_PRICE',
        1.825,
        'AT_CLOSING',
        'ONE_TIME',
      ),
    );
  }
  if (!nj && price >= 1_000_000) {
    out.push(
      fee(
        id,
        'Mansion tax',
        'TAX',
        'REQUIRED',
        'NON_REFUNDABLE',
        'PERCENT_OF_PRICE',
        mansionTaxPct(price),
        'AT_CLOSING',
        'ONE_TIME',
      ),
    );
  }
  return out;
}

/** New York's graduated mansion tax bands (buyer-paid, residential ≥ $1M). */
function mansionTaxPct(price: number): number {
  if (price < 2_000_000) return 1;
  if (price < 3_000_000) return 1.25;
  if (price < 5_000_000) return 1.5;
  if (price < 10_000_000) return 2.25;
  if (price < 15_000_000) return 3.25;
  if (price < 20_000_000) return 3.5;
  if (price < 25_000_000) return 3.75;
  return 3.9;
}

/** Move-in dates cluster on the 1st and 15th. */
function availableDate(ms: number, snap: boolean): number {
  if (!snap) return ms;
  const d = new Date(ms);
  const day = d.getUTCDate();
  if (day <= 15) return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 15);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

function unitLabel(plan: ListingPlan): string | null {
  const { b } = plan;
  if (b.type === 'HOUSE' || (plan.kind === 'sale' && WHOLE_BUILDING.has(b.type))) return null;
  const rng = new Rng(plan.id, 'unit');
  if (b.type === 'TOWNHOUSE') {
    // Only floors the house has (a two-storey house has no third floor or top-floor unit).
    const labels = ['GARDEN', 'PARLOR', 'TOP FLOOR', '2', '3'].filter(
      (label) => (label !== 'TOP FLOOR' && label !== '3') || b.floors >= 3,
    );
    return rng.pick(b.floors >= 2 ? labels : ['GARDEN']);
  }
  if (b.type === 'MULTI_FAMILY') return String(Math.min(plan.floor, 3));
  if (!b.elevator) return `${plan.floor}${rng.pick(['F', 'R', 'A', 'B', 'C', 'D'])}`;
  if (plan.floor === b.floors && b.floors >= 8) return `PH${rng.pick(['A', 'B', 'C', '1', '2'])}`;
  return `${plan.floor}${String.fromCharCode(65 + rng.int(0, Math.min(11, Math.max(3, Math.round(b.units / b.floors)))))}`;
}

/**
 * Captions of a listing's photos, in display order: the lead (the facade of a
 * whole building for sale, else the living room), the kitchen, one bedroom per
 * bedroom (a studio's sleeping area), one bathroom per full bath, then what the
 * unit and building have (a view from a high floor, a lobby, a roof deck) —
 * never a room the listing does not have. More photos than rooms show the
 * main rooms again.
 */
function photoCaptions(count: number, plan: ListingPlan): string[] {
  const { b, kind } = plan;
  const rooms: string[] =
    kind === 'sale' && WHOLE_BUILDING.has(b.type) ? ['Facade', 'Living room'] : ['Living room'];
  rooms.push('Kitchen');
  if (plan.beds === 0) rooms.push('Sleeping area');
  for (let i = 0; i < plan.beds; i++) rooms.push('Bedroom');
  for (let i = 0; i < plan.full; i++) rooms.push('Bathroom');
  rooms.push('Dining area', 'Closet');
  if (b.elevator && plan.floor >= 8) rooms.push('View');
  if (b.elevator) rooms.push('Lobby');
  if (b.amenities.includes('roof_deck')) rooms.push('Roof deck');
  const again = ['Living room', 'Kitchen', plan.beds === 0 ? 'Sleeping area' : 'Bedroom'];
  return Array.from({ length: count }, (_, i) => rooms[i] ?? again[(i - rooms.length) % again.length]!);
}

function describe(rng: Rng, plan: ListingPlan, view: string | null, outdoor: string | null): string {
  const { b, kind } = plan;
  const rooms = plan.beds === 0 ? 'studio' : `${plan.beds}-bedroom`;
  const baths = plan.full + 0.5 * plan.half;
  const what =
    b.type === 'HOUSE'
      ? 'single-family house'
      : b.type === 'TOWNHOUSE'
        ? kind === 'sale'
          ? 'townhouse'
          : 'townhouse apartment'
        : b.type === 'MULTI_FAMILY'
          ? kind === 'sale'
            ? 'multi-family house'
            : 'apartment in a small multi-family house'
          : b.type === 'COOP'
            ? 'co-op'
            : b.type === 'CONDO'
              ? 'condo'
              : 'apartment';
  const opener = rng.pick([
    `Welcome home to this ${rooms}, ${baths}-bath ${what} in the heart of ${b.area.name}.`,
    `Sun-filled ${rooms} ${what} with ${baths} bath${baths === 1 ? '' : 's'} in ${b.area.name}.`,
    `Rarely available ${rooms} ${what} in ${b.area.name}.`,
    `Bright and spacious ${rooms} ${what} on a tree-lined block in ${b.area.name}.`,
  ]);
  const features: string[] = [];
  if (plan.sqft !== null) features.push(`approximately ${plan.sqft.toLocaleString('en-US')} square feet`);
  if (plan.unitAmenities.includes('washer_dryer')) features.push('an in-unit washer/dryer');
  if (plan.unitAmenities.includes('dishwasher')) features.push('a dishwasher');
  if (outdoor) features.push(`a private ${outdoor.toLowerCase()}`);
  if (view) features.push(`${view.toLowerCase()} views`);
  if (plan.unitAmenities.includes('fireplace')) features.push('a wood-burning fireplace');
  features.push(
    rng.pick([
      'oversized windows',
      'hardwood floors throughout',
      'generous closet space',
      'a windowed kitchen',
    ]),
  );
  const featureText =
    features.length > 1 ? `${features.slice(0, -1).join(', ')} and ${features.at(-1)}` : features[0];
  const building = b.doorman
    ? `The ${b.yearBuilt < 1945 ? 'pre-war' : b.yearBuilt >= 2005 ? 'new' : 'post-war'} full-service building offers a ${b.amenities.includes('concierge') ? 'doorman and concierge' : 'doorman'}${b.amenities.includes('gym') ? ', a fitness center' : ''}${b.amenities.includes('roof_deck') ? ' and a landscaped roof deck' : ''}.`
    : b.elevator
      ? 'Elevator building with a live-in super.'
      : b.type === 'RENTAL'
        ? `Walk-up on floor ${plan.floor}.`
        : '';
  const closing =
    kind === 'rental'
      ? plan.monthsFree > 0
        ? `${plan.monthsFree} month${plan.monthsFree === 1 ? '' : 's'} free on a ${plan.leaseTerm}-month lease.`
        : plan.noFee
          ? 'No broker fee.'
          : 'Guarantors welcome.'
      : plan.saleType === 'SPONSOR_UNIT'
        ? 'Sponsor unit: no board approval.'
        : b.type === 'COOP'
          ? 'Subject to board approval.'
          : 'Pieds-à-terre, co-purchasing and gifting allowed.';
  return `${opener} Features ${featureText}. ${building} ${closing}`.replace(/\s+/g, ' ').trim();
}

/** Collects the whole market in memory: for tests and small scales (the loader streams instead). */
export function marketAt(seed: number, scale: number, t: Date): DemoMarket {
  const generator = new DemoMarketGenerator({ seed, scale, now: t });
  const market: DemoMarket = {
    buildings: generator.buildings.map((b) => b.row),
    buildingScores: generator.buildings.map((b) => b.scores),
    listings: [],
    listingDetails: [],
    priceEvents: [],
    fees: [],
    openHouses: [],
    photos: generator.buildings.flatMap((b) => b.photos),
  };
  for (const bundle of generator.listings()) {
    market.listings.push(bundle.listing);
    if (bundle.details) market.listingDetails.push(bundle.details);
    market.priceEvents.push(...bundle.events);
    market.fees.push(...bundle.fees);
    market.openHouses.push(...bundle.openHouses);
    market.photos.push(...bundle.photos);
  }
  return market;
}
