/**
 * The contract of `monthlyCost` / `maxMonthlyCost`: for a rental, rent plus the
 * monthly fees every tenant pays (`REQUIRED`, `MONTHLY`); a conditional fee
 * that applies only to some tenants (pet rent) is not in the figure everyone
 * filters on, and every description says so and where to find it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingSummary } from '../src/modules/listings/listing.schema.ts';
import type { Fee } from '../src/modules/property/property.schema.ts';
import { createTestApp, okJson, type TestApp } from './support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.02 });
});
afterAll(async () => {
  await t?.close();
});

const json = <T>(path: string) => okJson<T>(t, path);

/** Active rentals with a conditional monthly fee (pet rent), by id. */
async function rentalsWithConditionalFee(): Promise<string[]> {
  const rows = await t.store.db
    .selectFrom('fees')
    .innerJoin('listings', 'listings.id', 'fees.listing_id')
    .select('listings.id')
    .where('listings.listing_type', '=', 'rental')
    .where('listings.status', '=', 'ACTIVE')
    .where('fees.requirement', '=', 'CONDITIONAL')
    .where('fees.occurrence', '=', 'MONTHLY')
    .orderBy('listings.id')
    .execute();
  return [...new Set(rows.map((r) => r.id))];
}

describe('monthlyCost: rent plus the monthly fees every tenant pays', () => {
  it('a rental with pet rent: monthlyCost = rent + REQUIRED monthly fees, without the conditional one', async () => {
    const ids = await rentalsWithConditionalFee();
    expect(ids.length).toBeGreaterThan(3);
    for (const id of ids) {
      const detail = await json<{ data: ListingSummary & { monthlyFees: number } }>(`/v1/property/${id}`);
      const fees = await json<{ data: Fee[] }>(`/v1/property/${id}/fees`);
      const monthly = fees.data.filter((f) => f.occurrence === 'MONTHLY');
      // Every monthly fee of the demo is a flat amount.
      expect(monthly.every((f) => f.calcType === 'FLAT')).toBe(true);
      const required = monthly.filter((f) => f.requirement === 'REQUIRED').reduce((n, f) => n + f.amount, 0);
      const conditional = monthly
        .filter((f) => f.requirement === 'CONDITIONAL')
        .reduce((n, f) => n + f.amount, 0);
      expect(conditional).toBeGreaterThan(0);
      expect(detail.data.monthlyFees, id).toBe(required);
      expect(detail.data.monthlyCost, id).toBe(detail.data.price + required);
    }
  });

  it('maxMonthlyCost filters on that figure: a rental with pet rent matches at rent + required fees', async () => {
    const [id] = await rentalsWithConditionalFee();
    const detail = await json<{ data: ListingSummary & { areaId: number } }>(`/v1/property/${id}`);
    const cost = detail.data.monthlyCost;
    const found = async (max: number) => {
      const search = await json<{ data: ListingSummary[] }>(
        `/v1/search/rentals?areas=${detail.data.areaId}&minPrice=${detail.data.price}&maxPrice=${detail.data.price}&maxMonthlyCost=${max}&perPage=50`,
      );
      return search.data.some((l) => l.id === id);
    };
    expect(await found(cost)).toBe(true);
    expect(await found(cost - 1)).toBe(false);
  });

  it('every stored rental: monthly_cost = price + its REQUIRED monthly fee rows', async () => {
    const rentals = await t.store.db
      .selectFrom('listings')
      .select(['id', 'price', 'monthly_cost', 'monthly_fees'])
      .where('listing_type', '=', 'rental')
      .execute();
    const fees = await t.store.db
      .selectFrom('fees')
      .select(['listing_id', 'amount'])
      .where('occurrence', '=', 'MONTHLY')
      .where('requirement', '=', 'REQUIRED')
      .execute();
    const required = new Map<string, number>();
    for (const f of fees) required.set(f.listing_id, (required.get(f.listing_id) ?? 0) + Number(f.amount));
    // Listings without a stored detail page have no fee rows to compare with.
    const withFees = new Set(
      (await t.store.db.selectFrom('fees').select('listing_id').distinct().execute()).map(
        (r) => r.listing_id,
      ),
    );
    let compared = 0;
    for (const r of rentals) {
      if (!withFees.has(r.id)) continue;
      compared++;
      expect(Number(r.monthly_cost), r.id).toBe(Number(r.price) + (required.get(r.id) ?? 0));
    }
    expect(compared).toBeGreaterThan(100);
  });
});

describe('the descriptions say the same', () => {
  interface OpenApi {
    paths: Record<string, { get?: { parameters?: { name: string; description?: string }[] } }>;
    components: { schemas: Record<string, { properties: Record<string, { description?: string }> }> };
  }
  let doc: OpenApi;
  beforeAll(async () => {
    doc = (await (await t.get('/openapi.json')).json()) as OpenApi;
  });

  const saysConditionalExcluded = (text: string | undefined) => {
    expect(text).toBeDefined();
    expect(text).toMatch(/conditional fees .*such as pet rent, are excluded/i);
    expect(text).toContain('/property/{id}/fees');
    expect(text).toContain('CONDITIONAL');
    // No list of what is included names pet rent.
    expect(text).not.toMatch(/\([^)]*pet rent[^)]*\)/);
  };

  it('the maxMonthlyCost parameter of both searches', () => {
    for (const path of ['/v1/search/rentals', '/v1/search/sales']) {
      const parameter = doc.paths[path]?.get?.parameters?.find((p) => p.name === 'maxMonthlyCost');
      saysConditionalExcluded(parameter?.description);
    }
  });

  it('ListingSummary.monthlyCost (and so the property detail)', () => {
    saysConditionalExcluded(doc.components.schemas.ListingSummary?.properties.monthlyCost?.description);
    const detail = doc.components.schemas.ListingDetail?.properties;
    if (detail?.monthlyCost) saysConditionalExcluded(detail.monthlyCost.description);
    expect(detail?.monthlyFees?.description).toMatch(/pet rent are excluded/);
  });
});
