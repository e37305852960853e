import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { marketAt } from '../src/demo/market/market.ts';
import { demoPhotoSvg, type Scene, sceneForCaption } from '../src/demo/photo-source.ts';
import { FLOOR_PLAN_CAPTION } from '../src/modules/photos/photos.repository.ts';
import { createTestApp, type TestApp } from './support/app.ts';

const T = new Date('2026-11-01T15:00:00.000Z');
const market = marketAt(7, 0.03, T);

/** What a viewer must see for each kind of caption. */
const EXPECTED: Readonly<Record<string, Scene>> = {
  Exterior: 'facade',
  Facade: 'facade',
  'Street view': 'street',
  Entrance: 'entrance',
  'Floor plan': 'plan',
  'Living room': 'living',
  Kitchen: 'kitchen',
  Bedroom: 'bedroom',
  'Sleeping area': 'bedroom',
  Bathroom: 'bathroom',
  'Dining area': 'dining',
  Closet: 'closet',
  Lobby: 'lobby',
  View: 'view',
  'Roof deck': 'view',
};

describe('demo photos show what their captions say', () => {
  it('every caption the demo writes names its own scene (never a random room)', () => {
    const captions = new Set<string>([FLOOR_PLAN_CAPTION]);
    for (const photo of market.photos) if (photo.caption) captions.add(photo.caption);
    // Listing and building captions both occur, exteriors included.
    for (const caption of ['Exterior', 'Living room', 'Kitchen', 'Bathroom'])
      expect(captions).toContain(caption);
    for (const caption of captions) {
      expect(EXPECTED[caption], `no expectation for caption "${caption}"`).toBeDefined();
      expect(sceneForCaption(caption), caption).toBe(EXPECTED[caption]);
    }
  });

  it('draws outdoor scenes outdoors and floor plans as plans', () => {
    const record = (caption: string) => ({
      key: '0123456789abcdef0123456789abcdef',
      listingId: null,
      buildingId: null,
      position: 0,
      width: 1200,
      height: 800,
      caption,
      renderSeed: 42,
    });
    for (const caption of ['Exterior', 'Street view']) {
      // A sky gradient and no floor-and-wall perspective of a room.
      const svg = demoPhotoSvg(record(caption));
      expect(svg, caption).toContain('linearGradient');
      expect(svg, caption).not.toContain('polygon');
    }
    const plan = demoPhotoSvg(record('Floor plan'));
    expect(plan).toContain('>LIVING<');
    expect(plan).toContain('<path d="M');
    expect(demoPhotoSvg(record('Bedroom'))).toContain('polygon');
  });

  it("gives a listing's photos the rooms it has: a studio no bedroom, never more bathrooms than baths", () => {
    const listings = new Map(market.listings.map((l) => [l.id, l]));
    const byListing = new Map<string, string[]>();
    for (const photo of market.photos) {
      if (!photo.listing_id || !photo.caption) continue;
      const list = byListing.get(photo.listing_id) ?? [];
      list[photo.position] = photo.caption;
      byListing.set(photo.listing_id, list);
    }
    let studios = 0;
    for (const [id, captions] of byListing) {
      const listing = listings.get(id)!;
      const count = (caption: string) => captions.filter((c) => c === caption).length;
      if (listing.bedroom_count === 0) {
        studios++;
        expect(count('Bedroom'), id).toBe(0);
      }
      expect(count('Bathroom'), id).toBeLessThanOrEqual(listing.full_bathroom_count);
      if (captions.length >= 3 + listing.bedroom_count) {
        expect(count('Bedroom'), id).toBeGreaterThanOrEqual(listing.bedroom_count);
      }
    }
    expect(studios).toBeGreaterThan(3);
  });
});

describe('photo dimensions in responses are those of the image the URL serves', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ scale: 0.01, env: { PHOTO_CACHE_DIR: `/tmp/stoop-scenes-${process.pid}` } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('listing and building photos: width × height equal the decoded image', async () => {
    const photo = await t.store.db
      .selectFrom('photos')
      .innerJoin('listings', 'listings.id', 'photos.listing_id')
      .select(['photos.listing_id', 'listings.building_id'])
      .where('photos.position', '=', 4)
      .executeTakeFirstOrThrow();
    type Ref = { url: string; width: number; height: number };
    const listing = (await (await t.get(`/v1/property/${photo.listing_id}`)).json()) as {
      data: { photos: Ref[] };
    };
    const building = (await (await t.get(`/v1/building/${photo.building_id}`)).json()) as {
      data: { photos: Ref[] };
    };
    const refs = [...listing.data.photos.slice(0, 5), ...building.data.photos.slice(0, 2)];
    expect(refs.length).toBeGreaterThan(5);
    for (const ref of refs) {
      const response = await t.get(new URL(ref.url).pathname);
      expect(response.status).toBe(200);
      const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
      expect({ width: meta.width, height: meta.height }, ref.url).toEqual({
        width: ref.width,
        height: ref.height,
      });
    }
  });
});
