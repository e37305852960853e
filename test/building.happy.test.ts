import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FCC_DISCLAIMER } from '../src/domain/broadband.ts';
import { TIERS, type Tier } from '../src/domain/tiers.ts';
import {
  BuildingDetailResponse,
  BuildingListingsResponse,
  BuildingScoresResponse,
  ViolationsResponse,
} from '../src/modules/building/building.schema.ts';
import { MAX_VIOLATIONS } from '../src/modules/building/building.service.ts';
import { setScopeTimes } from '../src/modules/freshness/data-version.ts';
import { photoUrl } from '../src/modules/photos/photo-url.ts';
import type { BuildingRow, NewHpdViolation } from '../src/platform/db/tables.ts';
import { createTestApp, TEST_NOW, type TestApp, UNLIMITED } from './support/app.ts';
import { expectSchema } from './support/schema.ts';

const HIGH_LIMITS: Record<string, string> = { ...UNLIMITED };

let t: TestApp;
const keys = {} as Record<Tier, string>;
let buildings: BuildingRow[];
beforeAll(async () => {
  t = await createTestApp({ scale: 0.02, env: HIGH_LIMITS });
  for (const tier of TIERS) {
    keys[tier] = (await t.ctx.subscriptions.issue({ accountId: `building-${tier}`, tier })).key;
  }
  buildings = await t.store.db.selectFrom('buildings').selectAll().orderBy('id').execute();
});
afterAll(async () => {
  await t?.close();
});

async function getAs<T>(tier: Tier | null, path: string): Promise<{ status: number; body: T }> {
  const response = await t.getAs(tier === null ? null : keys[tier], path);
  return { status: response.status, body: (await response.json()) as T };
}

let versionTick = 0;
/** What every writer of building data does: move the `buildings` scope (the data version). */
async function buildingsChanged(): Promise<void> {
  versionTick += 1;
  await setScopeTimes(t.store.db, ['buildings'], new Date(TEST_NOW.getTime() + versionTick));
  t.ctx.dataVersion.invalidate();
}

function building(where: (b: BuildingRow) => boolean, what: string): BuildingRow {
  const found = buildings.find(where);
  if (!found) throw new Error(`the test market has no ${what}`);
  return found;
}

/** The building with the most listings in the given statuses. */
async function busiestBuilding(statuses: string[] = ['ACTIVE']): Promise<string> {
  const row = await t.store.db
    .selectFrom('listings')
    .select('building_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', 'in', statuses as ('ACTIVE' | 'IN_CONTRACT' | 'OFF_MARKET')[])
    .groupBy('building_id')
    .orderBy('n', 'desc')
    .orderBy('building_id')
    .limit(1)
    .executeTakeFirstOrThrow();
  return row.building_id;
}

describe('GET /v1/building/{id}', () => {
  it('serves every BuildingDetail field from the stored row', async () => {
    const b = building(
      (x) =>
        x.bbl !== null && x.internet_providers_json !== null && x.developer !== null && x.architect !== null,
      'NYC building with a BBL, developer, architect and broadband match',
    );
    const { status, body } = await getAs<BuildingDetailResponse>('STARTER', `/v1/building/${b.id}`);
    expect(status).toBe(200);
    expectSchema(BuildingDetailResponse, body);
    const photos = await t.store.db
      .selectFrom('photos')
      .selectAll()
      .where('building_id', '=', b.id)
      .orderBy('position')
      .execute();
    expect(body.data).toEqual({
      id: b.id,
      slug: b.slug,
      name: b.name,
      addressStreet: b.address_street,
      city: b.city,
      state: b.state,
      zipCode: b.zip_code,
      areaId: b.area_id,
      areaName: t.ctx.areaTree.get(b.area_id)!.name,
      buildingType: b.building_type,
      yearBuilt: b.year_built,
      yearRenovated: b.year_renovated,
      floorCount: b.floor_count,
      unitCount: b.unit_count,
      geoPoint: { latitude: b.latitude, longitude: b.longitude },
      bbl: b.bbl,
      bin: b.bin,
      managementCompany: b.management_company,
      developer: b.developer,
      architect: b.architect,
      taxAbatementStatus: b.tax_abatement_status,
      taxAbatementYearsRemaining: b.tax_abatement_years_remaining,
      petsAllowed: b.pets_allowed === 1,
      amenities: JSON.parse(b.amenities_json),
      policies: JSON.parse(b.policies_json),
      nycData: { county: null, municipality: null, ...JSON.parse(b.nyc_data_json) },
      additionalDetails: JSON.parse(b.additional_details_json),
      internetProviders: JSON.parse(b.internet_providers_json!),
      photos: photos.map((p) => ({
        key: p.key,
        url: photoUrl(t.config.photoBaseUrl, p.key),
        // The served image's size (the default size), not the original's.
        width: 800,
        height: 400,
        caption: p.caption,
      })),
    });
    expect(body.data.nycData).toMatchObject({
      communityDistrict: expect.any(String),
      policePrecinct: expect.any(Number),
      buildingClass: expect.any(String),
    });
    expect(body.data.internetProviders!.disclaimer).toBe(FCC_DISCLAIMER);
    expect(body.data.internetProviders!.providers.length).toBeGreaterThan(0);
    expect(body.meta).toEqual({
      dataAge: b.refreshed_at,
      source: 'cached',
      freshnessThreshold: 1800,
      refreshTriggered: false,
      detailScraped: true,
    });
  });

  it('leaves bbl out when unknown, and carries county data outside NYC', async () => {
    const nj = building((x) => x.state === 'NJ', 'New Jersey building');
    const { status, body } = await getAs<BuildingDetailResponse>('STARTER', `/v1/building/${nj.id}`);
    expect(status).toBe(200);
    expectSchema(BuildingDetailResponse, body);
    expect(body.data).not.toHaveProperty('bbl');
    expect(body.data.nycData).toMatchObject({
      communityDistrict: null,
      policePrecinct: null,
      county: expect.any(String),
      municipality: nj.city,
    });
  });

  it('serves internetProviders as null when the building has no broadband match', async () => {
    const b = building((x) => x.internet_providers_json === null, 'building without a broadband match');
    const { body } = await getAs<BuildingDetailResponse>('PRO', `/v1/building/${b.id}`);
    expectSchema(BuildingDetailResponse, body);
    expect(body.data.internetProviders).toBeNull();
  });

  it('always states the FCC attribution, whatever was stored', async () => {
    const b = building((x) => x.internet_providers_json !== null, 'building with a broadband match');
    const stored = JSON.parse(b.internet_providers_json!) as Record<string, unknown>;
    try {
      await t.store.db
        .updateTable('buildings')
        .set({ internet_providers_json: JSON.stringify({ ...stored, disclaimer: undefined }) })
        .where('id', '=', b.id)
        .execute();
      await buildingsChanged();
      const { body } = await getAs<BuildingDetailResponse>('STARTER', `/v1/building/${b.id}`);
      expect(body.data.internetProviders).toEqual({ ...stored, disclaimer: FCC_DISCLAIMER });
    } finally {
      await t.store.db
        .updateTable('buildings')
        .set({ internet_providers_json: b.internet_providers_json })
        .where('id', '=', b.id)
        .execute();
      await buildingsChanged();
    }
  });
  it('reports the row refresh time once the writer signals it, cached or not', async () => {
    const b = buildings[6]!;
    const path = `/v1/building/${b.id}`;
    const first = await getAs<BuildingDetailResponse>('STARTER', path);
    const confirmedAt = new Date(TEST_NOW.getTime() + 60_000).toISOString();
    try {
      // A refresh that found nothing changed moves only refreshed_at (not the data version).
      await t.store.db
        .updateTable('buildings')
        .set({ refreshed_at: confirmedAt })
        .where('id', '=', b.id)
        .execute();
      // The refresh writer signals its commit (DataVersion.invalidate): the header is read again.
      t.ctx.dataVersion.invalidate();
      const again = await getAs<BuildingDetailResponse>('STARTER', path);
      expect(again.body.data).toEqual(first.body.data);
      expect(again.body.meta.dataAge).toBe(confirmedAt);
    } finally {
      await t.store.db
        .updateTable('buildings')
        .set({ refreshed_at: b.refreshed_at })
        .where('id', '=', b.id)
        .execute();
      t.ctx.dataVersion.invalidate();
    }
  });

  it('serves changed building photos once the building data version moves', async () => {
    const b = buildings[5]!;
    const path = `/v1/building/${b.id}`;
    const before = (await getAs<BuildingDetailResponse>('STARTER', path)).body.data.photos;
    const key = 'f'.repeat(32);
    await t.store.db
      .insertInto('photos')
      .values({
        key,
        listing_id: null,
        building_id: b.id,
        position: 99,
        width: 640,
        height: 480,
        caption: 'Courtyard',
        render_seed: 1,
      })
      .execute();
    try {
      // A building write moves the `buildings` scope (the data version caches it for a second).
      await setScopeTimes(t.store.db, ['buildings'], new Date(t.clock.now().getTime() + 1000));
      t.clock.advance(2000);
      const after = (await getAs<BuildingDetailResponse>('STARTER', path)).body.data.photos;
      expect(after).toEqual([
        ...before,
        { key, url: photoUrl(t.config.photoBaseUrl, key), width: 800, height: 400, caption: 'Courtyard' },
      ]);
    } finally {
      await t.store.db.deleteFrom('photos').where('key', '=', key).execute();
      await setScopeTimes(t.store.db, ['buildings'], TEST_NOW);
      t.clock.set(TEST_NOW);
    }
  });
});

describe('GET /v1/building/{id}/listings', () => {
  it('lists the building ACTIVE listings by default, newest first, as search summaries', async () => {
    const id = await busiestBuilding();
    const expected = await t.store.db
      .selectFrom('listings')
      .select(['id', 'listed_at'])
      .where('building_id', '=', id)
      .where('status', '=', 'ACTIVE')
      .execute();
    expect(expected.length).toBeGreaterThan(3);
    const { status, body } = await getAs<BuildingListingsResponse>(
      'PRO',
      `/v1/building/${id}/listings?perPage=500`,
    );
    expect(status).toBe(200);
    expectSchema(BuildingListingsResponse, body);
    expect(body.meta.total).toBe(expected.length);
    expect(new Set(body.data.map((l) => l.id))).toEqual(new Set(expected.map((r) => r.id)));
    for (const item of body.data) expect(item).toMatchObject({ buildingId: id, status: 'ACTIVE' });
    const order = expected
      .sort((a, b) => {
        if ((a.listed_at === null) !== (b.listed_at === null)) return a.listed_at === null ? 1 : -1;
        if (a.listed_at !== b.listed_at) return a.listed_at! < b.listed_at! ? 1 : -1;
        return a.id < b.id ? -1 : 1;
      })
      .map((r) => r.id);
    expect(body.data.map((l) => l.id)).toEqual(order);

    // The same summary search serves for the same listing.
    const first = body.data[0]!;
    const search = await getAs<BuildingListingsResponse>(
      'PRO',
      `/v1/search/${first.listingType === 'rental' ? 'rentals' : 'sales'}?areas=${first.areaId}&perPage=500`,
    );
    const fromSearch = search.body.data.find((l) => l.id === first.id);
    if (fromSearch) expect(first).toEqual(fromSearch);
  });

  it('filters by status list and listing type', async () => {
    const id = await busiestBuilding(['ACTIVE', 'IN_CONTRACT', 'OFF_MARKET']);
    const count = async (statuses: string[], type?: 'rental' | 'sale') => {
      let q = t.store.db
        .selectFrom('listings')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('building_id', '=', id)
        .where('status', 'in', statuses as ('ACTIVE' | 'IN_CONTRACT' | 'OFF_MARKET')[]);
      if (type) q = q.where('listing_type', '=', type);
      return Number((await q.executeTakeFirstOrThrow()).n);
    };
    for (const [query, statuses, type] of [
      ['status=OFF_MARKET', ['OFF_MARKET'], undefined],
      ['status=ACTIVE,IN_CONTRACT', ['ACTIVE', 'IN_CONTRACT'], undefined],
      [
        'status=ACTIVE,IN_CONTRACT,OFF_MARKET&listingType=rental',
        ['ACTIVE', 'IN_CONTRACT', 'OFF_MARKET'],
        'rental',
      ],
      ['status=OFF_MARKET&listingType=sale', ['OFF_MARKET'], 'sale'],
    ] as const) {
      const { status, body } = await getAs<BuildingListingsResponse>(
        'PRO',
        `/v1/building/${id}/listings?${query}&perPage=500`,
      );
      expect(status, query).toBe(200);
      expectSchema(BuildingListingsResponse, body);
      expect(body.meta.total, query).toBe(await count([...statuses], type));
      for (const item of body.data) {
        expect(statuses as readonly string[]).toContain(item.status);
        if (type) expect(item.listingType).toBe(type);
      }
    }
  });

  it('pages like search: stable pages, links, and the tier perPage cap with a warning', async () => {
    const id = await busiestBuilding(['ACTIVE', 'OFF_MARKET']);
    const query = 'status=ACTIVE,OFF_MARKET';
    const all = await getAs<BuildingListingsResponse>(
      'PRO',
      `/v1/building/${id}/listings?${query}&perPage=500`,
    );
    const total = all.body.meta.total;
    expect(total).toBeGreaterThan(60);
    const paged: string[] = [];
    for (let page = 1; ; page++) {
      const { body } = await getAs<BuildingListingsResponse>(
        'STARTER',
        `/v1/building/${id}/listings?${query}&perPage=7&page=${page}`,
      );
      expect(body.meta).toMatchObject({ page, perPage: 7, total, warnings: [] });
      paged.push(...body.data.map((l) => l.id));
      if (!body.meta.links.next) break;
      expect(body.meta.links.next).toBe(
        `http://stoop.test/v1/building/${id}/listings?status=ACTIVE%2COFF_MARKET&page=${page + 1}&perPage=7`,
      );
    }
    expect(paged).toEqual(all.body.data.map((l) => l.id));

    const capped = await getAs<BuildingListingsResponse>(
      'STARTER',
      `/v1/building/${id}/listings?${query}&perPage=500`,
    );
    expect(capped.body.meta.perPage).toBe(50);
    expect(capped.body.data).toHaveLength(50);
    expect(capped.body.meta.warnings).toEqual([
      "perPage 500 exceeds your tier's maximum of 50; 50 was used.",
    ]);

    const unknown = await getAs<BuildingListingsResponse>(
      'STARTER',
      `/v1/building/${id}/listings?colour=blue`,
    );
    expect(unknown.status).toBe(400);
  });

  it('an empty selection is page 1 of 1', async () => {
    // Rental buildings have no sales.
    const b = building((x) => x.building_type === 'RENTAL', 'rental building');
    const { status, body } = await getAs<BuildingListingsResponse>(
      'STARTER',
      `/v1/building/${b.id}/listings?status=ACTIVE,IN_CONTRACT,OFF_MARKET&listingType=sale`,
    );
    expect(status).toBe(200);
    expectSchema(BuildingListingsResponse, body);
    expect(body.data).toEqual([]);
    expect(body.meta).toMatchObject({ total: 0, page: 1, detailScraped: false });
    expect(body.meta.links.next).toBeNull();
  });
});

describe('GET /v1/building/{id}/scores', () => {
  it('serves the stored scores', async () => {
    const b = buildings[3]!;
    const scores = await t.store.db
      .selectFrom('building_scores')
      .selectAll()
      .where('building_id', '=', b.id)
      .executeTakeFirstOrThrow();
    const { status, body } = await getAs<BuildingScoresResponse>('STARTER', `/v1/building/${b.id}/scores`);
    expect(status).toBe(200);
    expectSchema(BuildingScoresResponse, body);
    expect(body.data).toEqual({
      buildingId: b.id,
      healthScore: scores.health_score,
      noiseScore: scores.noise_score,
      safetyScore: scores.safety_score,
      transitScore: scores.transit_score,
      violationsOpen: scores.violations_open,
      updatedAt: scores.updated_at,
    });
    expect(body.meta.dataAge).toBe(b.refreshed_at);
  });

  it('serves null scores for a building not scored yet', async () => {
    const b = buildings[4]!;
    const scores = await t.store.db
      .selectFrom('building_scores')
      .selectAll()
      .where('building_id', '=', b.id)
      .executeTakeFirstOrThrow();
    await t.store.db.deleteFrom('building_scores').where('building_id', '=', b.id).execute();
    try {
      const { status, body } = await getAs<BuildingScoresResponse>('STARTER', `/v1/building/${b.id}/scores`);
      expect(status).toBe(200);
      expectSchema(BuildingScoresResponse, body);
      expect(body.data).toEqual({
        buildingId: b.id,
        healthScore: null,
        noiseScore: null,
        safetyScore: null,
        transitScore: null,
        violationsOpen: null,
        updatedAt: null,
      });
    } finally {
      await t.store.db.insertInto('building_scores').values(scores).execute();
    }
  });
});

describe('GET /v1/building/{id}/violations', () => {
  const violation = (bbl: string, n: number, date: string, cls: 'A' | 'B' | 'C'): NewHpdViolation => ({
    violation_id: `T${bbl}-${String(n).padStart(5, '0')}`,
    bbl,
    class: cls,
    status: n % 3 === 0 ? 'Close' : 'Open',
    description: `Test violation ${n}`,
    inspection_date: date,
    is_open: n % 3 === 0 ? 0 : 1,
  });
  /** Buildings with a BBL the demo market stored no violations for: the test's rows are all they have. */
  const withoutViolations = async () => {
    const linked = new Set(
      (await t.store.db.selectFrom('hpd_violations').select('bbl').distinct().execute()).map((r) => r.bbl),
    );
    return buildings.filter((x) => x.bbl !== null && !linked.has(x.bbl));
  };

  it('lists the violations of the building BBL, newest first', async () => {
    const [b, other] = await withoutViolations();
    const rows = [
      violation(b!.bbl!, 1, '2024-03-01', 'A'),
      violation(b!.bbl!, 2, '2026-01-15', 'C'),
      violation(b!.bbl!, 3, '2025-07-04', 'B'),
      violation(b!.bbl!, 4, '2026-01-15', 'B'),
      violation(other!.bbl!, 5, '2026-02-01', 'A'),
    ];
    await t.store.db.insertInto('hpd_violations').values(rows).execute();
    try {
      const { status, body } = await getAs<ViolationsResponse>('STARTER', `/v1/building/${b!.id}/violations`);
      expect(status).toBe(200);
      expectSchema(ViolationsResponse, body);
      const ids = [4, 2, 3, 1].map((n) => `T${b!.bbl}-${String(n).padStart(5, '0')}`);
      expect(body.data.map((v) => v.violationId)).toEqual(ids);
      expect(body.data[0]).toEqual({
        violationId: ids[0],
        status: 'Open',
        class: 'B',
        description: 'Test violation 4',
        date: '2026-01-15',
      });
      expect(body.meta).toMatchObject({ warnings: [], dataAge: b!.refreshed_at, source: 'cached' });
    } finally {
      await t.store.db.deleteFrom('hpd_violations').where('violation_id', 'like', 'T%').execute();
    }
  });

  it('a building without a BBL: 200, no violations, and a warning saying why', async () => {
    const b = building((x) => x.bbl === null, 'building without a BBL');
    const { status, body } = await getAs<ViolationsResponse>('STARTER', `/v1/building/${b.id}/violations`);
    expect(status).toBe(200);
    expectSchema(ViolationsResponse, body);
    expect(body.data).toEqual([]);
    expect(body.meta.warnings).toHaveLength(1);
    expect(body.meta.warnings[0]).toContain('No BBL');
    expect(body.meta.warnings[0]).toContain(b.id);
  });

  it(`serves at most ${MAX_VIOLATIONS}, the most recent, with a warning`, async () => {
    const b = (await withoutViolations())[2]!;
    const rows = Array.from({ length: MAX_VIOLATIONS + 5 }, (_, i) =>
      violation(b.bbl!, i, new Date(Date.UTC(2020, 0, 1) + i * 86_400_000).toISOString().slice(0, 10), 'A'),
    );
    for (let i = 0; i < rows.length; i += 200) {
      await t.store.db
        .insertInto('hpd_violations')
        .values(rows.slice(i, i + 200))
        .execute();
    }
    try {
      const { body } = await getAs<ViolationsResponse>('STARTER', `/v1/building/${b.id}/violations`);
      expect(body.data).toHaveLength(MAX_VIOLATIONS);
      expect(body.data[0]!.date).toBe(rows.at(-1)!.inspection_date);
      expect(body.data.at(-1)!.date).toBe(rows[5]!.inspection_date);
      expect(body.meta.warnings).toEqual([
        `More than ${MAX_VIOLATIONS} violations are recorded; only the ${MAX_VIOLATIONS} most recent are listed.`,
      ]);
    } finally {
      await t.store.db.deleteFrom('hpd_violations').where('violation_id', 'like', 'T%').execute();
    }
  });
});

describe('access', () => {
  it('needs a key of Starter or above', async () => {
    const b = buildings[0]!;
    for (const suffix of ['', '/listings', '/scores', '/violations']) {
      const path = `/v1/building/${b.id}${suffix}`;
      expect((await getAs(null, path)).status, path).toBe(401);
      expect((await getAs('FREE', path)).status, path).toBe(403);
      for (const tier of ['STARTER', 'PRO', 'BUSINESS', 'INTERNAL'] as const) {
        expect((await getAs(tier, path)).status, `${path} as ${tier}`).toBe(200);
      }
    }
  });

  it('documents the Buildings operations in OpenAPI', async () => {
    const { body } = await getAs<{
      tags: { name: string }[];
      paths: Record<string, Record<string, { tags: string[]; description: string }>>;
      components: { schemas: Record<string, unknown> };
    }>('STARTER', '/openapi.json');
    expect(body.tags.map((tag) => tag.name)).toContain('Buildings');
    expect(body.paths['/v1/building/{id}/violations']?.get?.description).toContain('without a known BBL');
    for (const name of ['BuildingDetail', 'BuildingScores', 'HpdViolation', 'InternetProviders', 'NycData']) {
      expect(body.components.schemas).toHaveProperty(name);
    }
  });
});
