import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nyDate } from '../src/domain/listing.ts';
import { TIERS, type Tier } from '../src/domain/tiers.ts';
import { markRecordsRefreshed, setScopeTimes } from '../src/modules/freshness/data-version.ts';
import { photoUrl } from '../src/modules/photos/photo-url.ts';
import {
  FeesResponse,
  ListingDetailResponse,
  OpenHousesResponse,
  PriceHistoryResponse,
} from '../src/modules/property/property.schema.ts';
import type { ListingRow } from '../src/platform/db/tables.ts';
import { createTestApp, TEST_NOW, type TestApp, UNLIMITED } from './support/app.ts';
import { expectSchema } from './support/schema.ts';
import { NEXT_LISTING_REVISION } from './support/store.ts';

const HIGH_LIMITS: Record<string, string> = { ...UNLIMITED };

let t: TestApp;
const keys = {} as Record<Tier, string>;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.02, env: HIGH_LIMITS });
  for (const tier of TIERS) {
    keys[tier] = (await t.ctx.subscriptions.issue({ accountId: `property-${tier}`, tier })).key;
  }
});
afterAll(async () => {
  await t?.close();
});

async function getAs<T>(tier: Tier | null, path: string): Promise<{ status: number; body: T }> {
  const response = await t.getAs(tier === null ? null : keys[tier], path);
  return { status: response.status, body: (await response.json()) as T };
}

/** A listing matching a condition, straight from the store. */
async function listing(where: (l: ListingRow) => boolean, what: string): Promise<ListingRow> {
  const rows = await t.store.db.selectFrom('listings').selectAll().orderBy('id').execute();
  const found = rows.find(where);
  if (!found) throw new Error(`the test market has no ${what}`);
  return found;
}

let versionTick = 0;
/**
 * What every writer of listing data does (the summary-cache contract): move a
 * content scope, so caches keyed by the data version drop what they hold.
 */
async function dataChanged(): Promise<void> {
  versionTick += 1;
  await setScopeTimes(t.store.db, ['detail'], new Date(TEST_NOW.getTime() + versionTick));
  t.ctx.dataVersion.invalidate();
}

async function detailRow(id: string) {
  return t.store.db.selectFrom('listing_details').selectAll().where('listing_id', '=', id).executeTakeFirst();
}

/** What a refresh that found the listing unchanged writes: its `refreshed_at` alone (no revision, no version move). */
async function setRefreshedAt(id: string, refreshedAt: string): Promise<void> {
  await t.store.db.updateTable('listings').set({ refreshed_at: refreshedAt }).where('id', '=', id).execute();
}

/** A writer that changes a listing's detail moves the listing's revision with it (migration 0010). */
async function bumpRevision(id: string): Promise<void> {
  await t.store.db
    .updateTable('listings')
    .set({ revision: NEXT_LISTING_REVISION })
    .where('id', '=', id)
    .execute();
}

describe('GET /v1/property/{id}', () => {
  it('serves the full record of a scraped rental, checked against its rows', async () => {
    const row = await listing(
      (l) =>
        l.listing_type === 'rental' &&
        l.status === 'ACTIVE' &&
        l.detail_scraped === 1 &&
        l.lead_photo_key !== null,
      'scraped active rental with photos',
    );
    const details = (await detailRow(row.id))!;
    const { status, body } = await getAs<ListingDetailResponse>('STARTER', `/v1/property/${row.id}`);
    expect(status).toBe(200);
    expectSchema(ListingDetailResponse, body);
    const d = body.data;
    // Summary fields, as stored.
    expect(d).toMatchObject({
      id: row.id,
      price: row.price,
      netEffective: row.net_effective,
      monthsFree: row.months_free,
      leaseTermMonths: row.lease_term_months,
      monthlyCost: row.monthly_cost,
      bedroomCount: row.bedroom_count,
      fullBathroomCount: row.full_bathroom_count,
      halfBathroomCount: row.half_bathroom_count,
      sqft: row.sqft,
      buildingType: row.building_type,
      areaId: row.area_id,
      areaName: t.ctx.areaTree.get(row.area_id)!.name,
      status: row.status,
      leadPhotoKey: row.lead_photo_key,
      sourceGroupLabel: row.source_group_label,
      urlPath: row.url_path,
      listingType: 'rental',
      buildingId: row.building_id,
      noFee: row.no_fee === 1,
      detailScraped: true,
      priceDelta: row.price_delta,
      address: {
        street: row.street,
        unit: row.unit,
        city: row.city,
        state: row.state,
        zipCode: row.zip_code,
      },
      geoPoint: { latitude: row.latitude, longitude: row.longitude },
    });
    expect(d.listedAt).toBe(row.listed_at === null ? null : nyDate(Date.parse(row.listed_at)));
    // Detail fields, from listing_details and its JSON sub-records.
    expect(d.description).toBe(details.description);
    expect(d.amenities).toEqual(JSON.parse(details.amenities_json));
    expect(d.unitFeatures).toEqual(JSON.parse(details.unit_features_json));
    expect(d.leaseTerms).toEqual(JSON.parse(details.lease_terms_json!));
    expect(d.saleDetails).toBeNull();
    expect(d.agents).toEqual(JSON.parse(details.agents_json));
    expect(d.agents.length).toBeGreaterThan(0);
    expect(d.petsPolicy).toEqual(JSON.parse(details.pets_policy_json));
    expect(d.petsAllowed).toBe(row.pets_allowed === 1);
    expect(d.has3dTour).toBe(row.has_3d_tour === 1);
    expect(d.virtualTourUrl).toBe(details.virtual_tour_url);
    expect(d.monthlyFees).toBe(row.monthly_fees);
    expect(d.updatedAt).toBe(row.updated_at);
    expect(d.closedReason).toBeNull();
    expect(d.offMarketAt).toBeNull();
    // Photos: the photo rows in display order, with URLs on the photo host.
    const photos = await t.store.db
      .selectFrom('photos')
      .selectAll()
      .where('listing_id', '=', row.id)
      .orderBy('position')
      .execute();
    expect(photos.length).toBeGreaterThan(0);
    expect(d.photos).toEqual(
      photos.map((p) => ({
        key: p.key,
        url: photoUrl(t.config.photoBaseUrl, p.key),
        // The served image's size (the default size), not the original's.
        width: 800,
        height: 400,
        caption: p.caption,
      })),
    );
    expect(d.photos[0]!.key).toBe(row.lead_photo_key);
    expect(d.photos[0]!.url).toBe(`${t.config.photoBaseUrl}/fp/${row.lead_photo_key}-se_large_800_400.webp`);
    expect(d.photos.map((p) => p.key)).toEqual(JSON.parse(details.photos_json));
    expect(d.floorPlan).toEqual(
      details.floor_plan_key === null
        ? null
        : { key: details.floor_plan_key, url: photoUrl(t.config.photoBaseUrl, details.floor_plan_key) },
    );
    // Building link.
    const building = await t.store.db
      .selectFrom('buildings')
      .select(['id', 'name', 'slug'])
      .where('id', '=', row.building_id)
      .executeTakeFirstOrThrow();
    expect(d.building).toEqual({ ...building, url: `http://stoop.test/v1/building/${building.id}` });
    const scores = await t.store.db
      .selectFrom('building_scores')
      .selectAll()
      .where('building_id', '=', row.building_id)
      .executeTakeFirstOrThrow();
    expect(d.buildingScores).toEqual({
      healthScore: scores.health_score,
      noiseScore: scores.noise_score,
      safetyScore: scores.safety_score,
      transitScore: scores.transit_score,
      violationsOpen: scores.violations_open,
      updatedAt: scores.updated_at,
    });
    expect(body.meta).toEqual({
      dataAge: row.refreshed_at,
      source: 'cached',
      freshnessThreshold: 30 * 60,
      refreshTriggered: false,
      detailScraped: true,
    });
  });

  it('carries concessions for a rental offering free months', async () => {
    const row = await listing(
      (l) => l.listing_type === 'rental' && l.detail_scraped === 1 && (l.months_free ?? 0) > 0,
      'scraped rental with a concession',
    );
    const details = (await detailRow(row.id))!;
    const { body } = await getAs<ListingDetailResponse>('PRO', `/v1/property/${row.id}`);
    expect(body.data.concessions).toEqual(JSON.parse(details.concessions_json!));
    expect(body.data.concessions!.monthsFree).toBe(row.months_free);
    expect(body.meta.freshnessThreshold).toBe(15 * 60);
  });

  it('carries sale details and no lease terms for a sale', async () => {
    const row = await listing((l) => l.listing_type === 'sale' && l.detail_scraped === 1, 'scraped sale');
    const details = (await detailRow(row.id))!;
    const { status, body } = await getAs<ListingDetailResponse>('STARTER', `/v1/property/${row.id}`);
    expect(status).toBe(200);
    expectSchema(ListingDetailResponse, body);
    expect(body.data.listingType).toBe('sale');
    expect(body.data.saleType).toBe(row.sale_type);
    expect(body.data.saleDetails).toEqual(JSON.parse(details.sale_details_json!));
    expect(body.data.leaseTerms).toBeNull();
    expect(body.data.concessions).toBeNull();
  });

  it('states the status dates of a listing that left the market', async () => {
    const row = await listing(
      (l) => l.status === 'OFF_MARKET' && l.closed_reason === 'SOLD' && l.contract_at !== null,
      'sold listing',
    );
    const { body } = await getAs<ListingDetailResponse>('STARTER', `/v1/property/${row.id}`);
    expectSchema(ListingDetailResponse, body);
    expect(body.data).toMatchObject({
      status: 'OFF_MARKET',
      closedReason: 'SOLD',
      contractAt: nyDate(Date.parse(row.contract_at!)),
      offMarketAt: row.off_market_at!.slice(0, 10),
    });
  });

  it('answers a listing without a detail record with its summary and detailScraped false', async () => {
    const row = await listing((l) => l.detail_scraped === 0, 'listing without details');
    expect(await detailRow(row.id)).toBeUndefined();
    const { status, body } = await getAs<ListingDetailResponse>('STARTER', `/v1/property/${row.id}`);
    expect(status).toBe(200);
    expectSchema(ListingDetailResponse, body);
    expect(body.data).toMatchObject({
      id: row.id,
      price: row.price,
      status: row.status,
      detailScraped: false,
      description: null,
      amenities: [],
      unitFeatures: null,
      leaseTerms: null,
      concessions: null,
      saleDetails: null,
      agents: [],
      petsPolicy: null,
      photos: [],
      floorPlan: null,
      virtualTourUrl: null,
    });
    expect(body.data.building?.id).toBe(row.building_id);
    expect(body.meta.detailScraped).toBe(false);
  });

  it('serves an odd stored sub-record field as null instead of failing', async () => {
    const row = await listing(
      (l) => l.listing_type === 'rental' && l.detail_scraped === 1 && l.status === 'ACTIVE',
      'scraped active rental',
    );
    const details = (await detailRow(row.id))!;
    const features = JSON.parse(details.unit_features_json) as Record<string, unknown>;
    try {
      await t.store.db
        .updateTable('listing_details')
        .set({
          unit_features_json: JSON.stringify({ ...features, floor: 'third', exposure: 7, extra: 'x' }),
          pets_policy_json: '{not json',
          agents_json: JSON.stringify([{ name: 'A. Agent', phone: 5 }, { title: 'no name' }]),
        })
        .where('listing_id', '=', row.id)
        .execute();
      await bumpRevision(row.id);
      await dataChanged();
      const { status, body } = await getAs<ListingDetailResponse>('STARTER', `/v1/property/${row.id}`);
      expect(status).toBe(200);
      expectSchema(ListingDetailResponse, body);
      expect(body.data.unitFeatures).toEqual({ ...features, floor: null, exposure: null });
      expect(body.data.petsPolicy).toBeNull();
      expect(body.data.agents).toEqual([
        { name: 'A. Agent', title: null, brokerage: null, phone: null, email: null },
      ]);
    } finally {
      await t.store.db
        .updateTable('listing_details')
        .set({
          unit_features_json: details.unit_features_json,
          pets_policy_json: details.pets_policy_json,
          agents_json: details.agents_json,
        })
        .where('listing_id', '=', row.id)
        .execute();
      await bumpRevision(row.id);
      await dataChanged();
    }
  });

  it('keeps a rendering across data-version moves until its own revision moves', async () => {
    const row = await listing(
      (l) => l.listing_type === 'rental' && l.status === 'ACTIVE' && l.detail_scraped === 1,
      'scraped active rental',
    );
    const path = `/v1/property/${row.id}`;
    expect((await getAs<ListingDetailResponse>('STARTER', path)).body.data.price).toBe(row.price);
    try {
      // Written behind the revision's back: only what the revision covers invalidates the
      // rendering, so the store moving elsewhere (here, any data-version move) leaves it.
      await t.store.db
        .updateTable('listings')
        .set({ price: row.price + 7 })
        .where('id', '=', row.id)
        .execute();
      await dataChanged();
      expect((await getAs<ListingDetailResponse>('STARTER', path)).body.data.price).toBe(row.price);
      await bumpRevision(row.id);
      // What a writer in this process does after its commit: the next read checks the stamp again.
      t.ctx.dataVersion.invalidate();
      expect((await getAs<ListingDetailResponse>('STARTER', path)).body.data.price).toBe(row.price + 7);
    } finally {
      await t.store.db.updateTable('listings').set({ price: row.price }).where('id', '=', row.id).execute();
      await bumpRevision(row.id);
      await dataChanged();
    }
  });

  it('serves a changed listing once the data version moves, with the dataAge of the latest refresh', async () => {
    const row = await listing(
      (l) => l.listing_type === 'sale' && l.status === 'ACTIVE' && l.detail_scraped === 1,
      'scraped active sale',
    );
    const path = `/v1/property/${row.id}`;
    const first = await getAs<ListingDetailResponse>('STARTER', path);
    expect(first.body.data.price).toBe(row.price);
    const confirmedAt = new Date(TEST_NOW.getTime() + 60_000).toISOString();
    try {
      // A refresh that found nothing changed moves only refreshed_at (no version change).
      await setRefreshedAt(row.id, confirmedAt);
      // The refresh writer signals its commit (DataVersion.invalidate): the header is read again.
      t.ctx.dataVersion.invalidate();
      const confirmed = await getAs<ListingDetailResponse>('STARTER', path);
      expect(confirmed.body.data).toEqual(first.body.data);
      expect(confirmed.body.meta.dataAge).toBe(confirmedAt);

      await t.store.db
        .updateTable('listings')
        // As every writer does with a change: the listing's revision moves (migration 0010).
        .set({ price: row.price + 1000, revision: NEXT_LISTING_REVISION })
        .where('id', '=', row.id)
        .execute();
      await dataChanged();
      const changed = await getAs<ListingDetailResponse>('STARTER', path);
      expectSchema(ListingDetailResponse, changed.body);
      expect(changed.body.data.price).toBe(row.price + 1000);
    } finally {
      await t.store.db
        .updateTable('listings')
        .set({ price: row.price, refreshed_at: row.refreshed_at, revision: NEXT_LISTING_REVISION })
        .where('id', '=', row.id)
        .execute();
      await dataChanged();
    }
  });

  // Business reads live first; without an upstream (here) the live read fails, writing nothing.
  it.each(['STARTER', 'BUSINESS'] as const)(
    'reads a listing header once per data-version epoch (%s): a write made elsewhere shows within a second of its writer recording it',
    async (tier) => {
      const row = await listing(
        (l) => l.listing_type === 'rental' && l.status === 'ACTIVE' && l.detail_scraped === 1,
        'scraped active rental',
      );
      const path = `/v1/property/${row.id}`;
      const first = await getAs<ListingDetailResponse>(tier, path);
      const confirmedAt = new Date(TEST_NOW.getTime() + 120_000).toISOString();
      try {
        // Another process (a standalone refresh) confirms the listing: nothing signals this one.
        await setRefreshedAt(row.id, confirmedAt);
        const sameEpoch = await getAs<ListingDetailResponse>(tier, path);
        expect(sameEpoch.body.meta.dataAge).toBe(first.body.meta.dataAge);
        // The scopes are read again after 1 s, but no writer recorded anything: the epoch
        // lives on and the header is not read again (a hot listing costs no query a second).
        t.clock.advance(1_000);
        const unrecorded = await getAs<ListingDetailResponse>(tier, path);
        expect(unrecorded.body.meta.dataAge).toBe(first.body.meta.dataAge);
        // Every writer of refreshed_at records it (here: as a single-listing refresh that changed nothing does).
        await markRecordsRefreshed(t.store.db, t.clock.now());
        const beforeReRead = await getAs<ListingDetailResponse>(tier, path);
        expect(beforeReRead.body.meta.dataAge).toBe(first.body.meta.dataAge);
        // The data version's own staleness bound: its scopes are read again after 1 s.
        t.clock.advance(1_000);
        const nextEpoch = await getAs<ListingDetailResponse>(tier, path);
        expect(nextEpoch.body.meta.dataAge).toBe(confirmedAt);
        expect(nextEpoch.body.data).toEqual({
          ...first.body.data,
          daysOnMarket: nextEpoch.body.data.daysOnMarket,
        });
      } finally {
        t.clock.set(TEST_NOW);
        await setRefreshedAt(row.id, row.refreshed_at);
        t.ctx.dataVersion.invalidate();
      }
    },
  );

  it('days on market roll over with the clock, cached or not', async () => {
    const row = await listing(
      (l) => l.status === 'ACTIVE' && l.listed_at !== null && l.detail_scraped === 1,
      'active listing with a listing date',
    );
    const path = `/v1/property/${row.id}`;
    const before = (await getAs<ListingDetailResponse>('STARTER', path)).body.data.daysOnMarket!;
    try {
      t.clock.advance(86_400_000);
      const after = (await getAs<ListingDetailResponse>('STARTER', path)).body.data.daysOnMarket!;
      expect(after).toBe(before + 1);
    } finally {
      t.clock.set(TEST_NOW);
    }
  });
});

describe('GET /v1/property/by-url', () => {
  it('finds a listing by its page path or a full URL whose path is one', async () => {
    const row = await listing((l) => l.detail_scraped === 1 && l.listing_type === 'sale', 'scraped sale');
    const byId = await getAs<ListingDetailResponse>('STARTER', `/v1/property/${row.id}`);
    const forms = [
      row.url_path,
      `${row.url_path}/`,
      `https://streeteasy.com${row.url_path}`,
      `http://example.com${row.url_path}?utm_source=x#photos`,
      ` ${row.url_path} `,
    ];
    for (const url of forms) {
      const { status, body } = await getAs<ListingDetailResponse>(
        'STARTER',
        `/v1/property/by-url?url=${encodeURIComponent(url)}`,
      );
      expect(status, url).toBe(200);
      expectSchema(ListingDetailResponse, body);
      expect(body.data).toEqual(byId.body.data);
      expect(body.meta).toEqual(byId.body.meta);
    }
  });
});

describe('GET /v1/property/{id}/history', () => {
  it('lists the timeline in date order with pctChange from the previous price', async () => {
    const rows = await t.store.db
      .selectFrom('price_events')
      .select(['listing_id'])
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .groupBy('listing_id')
      .orderBy('n', 'desc')
      .orderBy('listing_id')
      .limit(1)
      .execute();
    const id = rows[0]!.listing_id;
    const events = await t.store.db
      .selectFrom('price_events')
      .selectAll()
      .where('listing_id', '=', id)
      .orderBy('date')
      .orderBy('id')
      .execute();
    expect(events.length).toBeGreaterThanOrEqual(3);
    const header = await t.store.db
      .selectFrom('listings')
      .select('refreshed_at')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const { status, body } = await getAs<PriceHistoryResponse>('PRO', `/v1/property/${id}/history`);
    expect(status).toBe(200);
    expectSchema(PriceHistoryResponse, body);
    expect(body.data.map((e) => [e.date, e.price, e.event])).toEqual(
      events.map((e) => [e.date, e.price, e.event]),
    );
    expect(body.data[0]!.event).toBe('LISTED');
    expect(body.data[0]!.pctChange).toBeNull();
    for (let i = 1; i < body.data.length; i++) {
      const [before, event] = [body.data[i - 1]!, body.data[i]!];
      expect(event.date >= before.date).toBe(true);
      expect(event.pctChange).toBeCloseTo(((event.price - before.price) / before.price) * 100, 2);
      // The stored change of a price move agrees with the recomputed one.
      const stored = events[i]!.pct_change;
      if (stored !== null) expect(event.pctChange).toBeCloseTo(stored, 2);
    }
    expect(body.meta).toMatchObject({
      dataAge: header.refreshed_at,
      source: 'cached',
      freshnessThreshold: 900,
    });
  });

  it('is a Pro feature: Starter gets 403 TIER_RESTRICTED', async () => {
    const row = await listing(() => true, 'listing');
    const { status, body } = await getAs<{ error: { code: string; details: { requiredTier: string } } }>(
      'STARTER',
      `/v1/property/${row.id}/history`,
    );
    expect(status).toBe(403);
    expect(body.error).toMatchObject({ code: 'TIER_RESTRICTED', details: { requiredTier: 'PRO' } });
  });
});

describe('GET /v1/property/{id}/fees', () => {
  it('lists the fee rows of the listing in stored order', async () => {
    const withFees = await t.store.db
      .selectFrom('fees')
      .select('listing_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .groupBy('listing_id')
      .orderBy('n', 'desc')
      .orderBy('listing_id')
      .limit(1)
      .executeTakeFirstOrThrow();
    const fees = await t.store.db
      .selectFrom('fees')
      .selectAll()
      .where('listing_id', '=', withFees.listing_id)
      .orderBy('id')
      .execute();
    const { status, body } = await getAs<FeesResponse>('STARTER', `/v1/property/${withFees.listing_id}/fees`);
    expect(status).toBe(200);
    expectSchema(FeesResponse, body);
    expect(body.data).toEqual(
      fees.map((f) => ({
        typeLabel: f.type_label,
        category: f.category,
        requirement: f.requirement,
        refundability: f.refundability,
        calcType: f.calc_type,
        amount: f.amount,
        timing: f.timing,
        occurrence: f.occurrence,
      })),
    );
    expect(body.meta.detailScraped).toBe(true);
  });

  it('is empty for a listing whose detail page was never fetched', async () => {
    const row = await listing((l) => l.detail_scraped === 0, 'listing without details');
    const { status, body } = await getAs<FeesResponse>('STARTER', `/v1/property/${row.id}/fees`);
    expect(status).toBe(200);
    expect(body.data).toEqual([]);
    expect(body.meta.detailScraped).toBe(false);
  });
});

describe('GET /v1/property/{id}/open-houses', () => {
  it('returns only open houses that have not ended by the service clock', async () => {
    const nowIso = TEST_NOW.toISOString();
    const upcoming = await t.store.db
      .selectFrom('open_houses')
      .select('listing_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('ends_at', '>', nowIso)
      .groupBy('listing_id')
      .orderBy('n', 'desc')
      .orderBy('listing_id')
      .limit(1)
      .executeTakeFirstOrThrow();
    const id = upcoming.listing_id;
    const all = await t.store.db
      .selectFrom('open_houses')
      .selectAll()
      .where('listing_id', '=', id)
      .orderBy('starts_at')
      .execute();
    const expected = (at: string) =>
      all
        .filter((o) => o.ends_at > at)
        .map((o) => ({
          id: o.id,
          startsAt: o.starts_at,
          endsAt: o.ends_at,
          kind: o.kind,
          byAppointment: o.by_appointment === 1,
          note: o.note,
        }));
    try {
      const first = await getAs<OpenHousesResponse>('STARTER', `/v1/property/${id}/open-houses`);
      expect(first.status).toBe(200);
      expectSchema(OpenHousesResponse, first.body);
      expect(first.body.data.length).toBeGreaterThan(0);
      expect(first.body.data).toEqual(expected(nowIso));
      for (const oh of first.body.data) expect(oh.endsAt > nowIso).toBe(true);

      // Once the next one has ended it is no longer listed.
      const next = first.body.data[0]!;
      t.clock.set(Date.parse(next.endsAt) + 1);
      const later = await getAs<OpenHousesResponse>('STARTER', `/v1/property/${id}/open-houses`);
      expect(later.body.data.map((o) => o.id)).not.toContain(next.id);
      expect(later.body.data).toEqual(expected(t.clock.now().toISOString()));

      // In progress still counts as upcoming (one can still go).
      const last = first.body.data.at(-1)!;
      t.clock.set(Date.parse(last.startsAt) + 60_000);
      const during = await getAs<OpenHousesResponse>('STARTER', `/v1/property/${id}/open-houses`);
      expect(during.body.data.map((o) => o.id)).toEqual([last.id]);

      t.clock.set(Date.parse(last.endsAt));
      const after = await getAs<OpenHousesResponse>('STARTER', `/v1/property/${id}/open-houses`);
      expect(after.status).toBe(200);
      expect(after.body.data).toEqual([]);
    } finally {
      t.clock.set(TEST_NOW);
    }
  });
});

describe('access', () => {
  it('needs a key of Starter or above for the detail routes', async () => {
    const row = await listing(() => true, 'listing');
    const paths = [
      `/v1/property/${row.id}`,
      `/v1/property/by-url?url=${encodeURIComponent(row.url_path)}`,
      `/v1/property/${row.id}/fees`,
      `/v1/property/${row.id}/open-houses`,
    ];
    for (const path of paths) {
      expect((await getAs(null, path)).status, path).toBe(401);
      expect((await getAs('FREE', path)).status, path).toBe(403);
      for (const tier of ['STARTER', 'PRO', 'BUSINESS', 'INTERNAL'] as const) {
        expect((await getAs(tier, path)).status, `${path} as ${tier}`).toBe(200);
      }
    }
    const history = `/v1/property/${row.id}/history`;
    for (const tier of ['FREE', 'STARTER'] as const) expect((await getAs(tier, history)).status).toBe(403);
    for (const tier of ['PRO', 'BUSINESS', 'INTERNAL'] as const)
      expect((await getAs(tier, history)).status).toBe(200);
  });

  it('documents the Listings operations and their schemas in OpenAPI', async () => {
    const { body } = await getAs<{
      tags: { name: string }[];
      paths: Record<string, Record<string, { tags: string[]; 'x-min-tier': string }>>;
      components: { schemas: Record<string, unknown> };
    }>('STARTER', '/openapi.json');
    expect(body.tags.map((tag) => tag.name)).toContain('Listings');
    expect(body.paths['/v1/property/{id}']?.get).toMatchObject({
      tags: ['Listings'],
      'x-min-tier': 'STARTER',
    });
    expect(body.paths['/v1/property/{id}/history']?.get?.['x-min-tier']).toBe('PRO');
    for (const name of ['ListingDetail', 'PriceEvent', 'Fee', 'OpenHouse', 'PhotoRef', 'UnitFeatures']) {
      expect(body.components.schemas).toHaveProperty(name);
    }
  });
});
