import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';

describe('floor plans are served through the photo URL layout', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      scale: 0.01,
      env: { PHOTO_CACHE_DIR: `/tmp/stoop-floorplans-${process.pid}` },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('the floor plan URL of a listing detail answers with a WebP of the requested size', async () => {
    const row = await t.store.db
      .selectFrom('listing_details')
      .select(['listing_id', 'floor_plan_key'])
      .where('floor_plan_key', 'is not', null)
      .executeTakeFirstOrThrow();
    const detail = (await (await t.get(`/v1/property/${row.listing_id}`)).json()) as {
      data: { floorPlan: { key: string; url: string } | null };
    };
    expect(detail.data.floorPlan?.key).toBe(row.floor_plan_key);
    const url = new URL(detail.data.floorPlan!.url);
    const response = await t.get(url.pathname);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/webp');
    const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
    expect(meta.format).toBe('webp');
    expect([meta.width, meta.height]).toEqual([800, 400]);
  });

  it('an unknown key is still a 404', async () => {
    const response = await t.get(`/fp/${'0'.repeat(32)}-se_large_800_400.webp`);
    expect(response.status).toBe(404);
  });
});
