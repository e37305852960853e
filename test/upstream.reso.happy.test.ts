import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Origin, startOrigin } from '../src/demo/simulator/server.ts';
import { ManualClock } from '../src/platform/clock.ts';
import { PROPERTY_DETAIL_FIELDS, PROPERTY_SUMMARY_FIELDS } from '../src/upstream/reso/resources.ts';
import { ResoListingSource, resoSourceFromConfig } from '../src/upstream/reso/source.ts';

const T0 = new Date('2026-05-01T12:00:00.000Z');
let origin: Origin;
let clock: ManualClock;

beforeAll(async () => {
  clock = new ManualClock(T0);
  origin = await startOrigin({ seed: 9, scale: 0.01, start: T0, clock, latency: false, token: 'tok' });
});
afterAll(async () => {
  await origin?.close();
});

/** A fetch that records the URLs it is asked for, then asks the real one. */
function recordingFetch(urls: string[]): typeof fetch {
  return (input, init) => {
    urls.push(String(input));
    return fetch(input, init);
  };
}

describe('RESO source requests', () => {
  it('asks for a replication page the RESO way', async () => {
    const urls: string[] = [];
    const source = new ResoListingSource({
      url: `${origin.url}/`,
      token: 'tok',
      fetch: recordingFetch(urls),
    });
    await source.searchListings({
      listingType: 'rental',
      statuses: ['ACTIVE', 'IN_CONTRACT'],
      modifiedSince: '2026-05-01T08:00:00-04:00',
      expand: true,
      pageSize: 7,
    });
    const url = new URL(urls[0]!);
    expect(url.pathname).toBe('/odata/Property');
    expect(url.searchParams.get('$filter')).toBe(
      "PropertyType eq 'ResidentialLease' and StandardStatus in ('Active','ActiveUnderContract','Pending') and ModificationTimestamp ge 2026-05-01T12:00:00.000Z",
    );
    expect(url.searchParams.get('$orderby')).toBe('ModificationTimestamp,ListingKey');
    expect(url.searchParams.get('$top')).toBe('7');
    expect(url.searchParams.get('$expand')).toBe('Media,OpenHouse');
    expect(url.searchParams.get('$select')!.split(',')).toEqual([
      ...PROPERTY_SUMMARY_FIELDS,
      ...PROPERTY_DETAIL_FIELDS,
    ]);
  });

  it('follows @odata.nextLink verbatim and ends with next null', async () => {
    const urls: string[] = [];
    const source = new ResoListingSource({ url: origin.url, token: 'tok', fetch: recordingFetch(urls) });
    const seen: string[] = [];
    let page = await source.searchListings({ statuses: ['ACTIVE'], pageSize: 90 });
    seen.push(...page.listings.map((l) => l.listing.id));
    while (page.next) {
      expect(page.next.startsWith(`${origin.url}/Property?`)).toBe(true);
      const next: string = page.next;
      page = await source.searchListings({ cursor: next });
      expect(urls.at(-1)).toBe(next);
      seen.push(...page.listings.map((l) => l.listing.id));
    }
    expect(urls.length).toBeGreaterThan(2);
    const single = await source.searchListings({ statuses: ['ACTIVE'], pageSize: 5000 });
    expect(single.next).toBeNull();
    expect(seen).toEqual(single.listings.map((l) => l.listing.id));
    expect(seen.length).toBeGreaterThan(200);
  });

  it('expands Media and OpenHouse into the detail page; without expand there is none', async () => {
    const source = new ResoListingSource({ url: origin.url, token: 'tok' });
    const expanded = await source.searchListings({ statuses: ['ACTIVE'], expand: true, pageSize: 50 });
    expect(expanded.listings.every((l) => l.detail !== undefined)).toBe(true);
    expect(expanded.listings.some((l) => (l.detail?.photos.length ?? 0) > 0)).toBe(true);
    for (const l of expanded.listings) {
      expect(l.listing.lead_photo_key).toBe(l.detail!.photos[0]?.key ?? null);
      expect(l.detail!.details).not.toBeNull();
    }
    const plain = await source.searchListings({ statuses: ['ACTIVE'], pageSize: 50 });
    expect(plain.listings.every((l) => l.detail === undefined)).toBe(true);
    expect(plain.listings.map((l) => l.listing)).toEqual(expanded.listings.map((l) => l.listing));
  });

  it('is configured from the environment', () => {
    const source = resoSourceFromConfig({
      upstream: { url: origin.url, token: 'tok', timeoutMs: 1234, liveTimeoutMs: 500, retries: 1 },
    });
    expect(source.name).toBe(`reso:${origin.url}`);
    expect(() =>
      resoSourceFromConfig({
        upstream: { url: undefined, token: undefined, timeoutMs: 1, liveTimeoutMs: 1, retries: 0 },
      }),
    ).toThrow(/UPSTREAM_URL/);
  });

  it('reports the simulated time on /health', async () => {
    clock.set(Date.parse('2026-05-02T00:00:00.000Z'));
    const res = await fetch(origin.url.replace(/\/odata$/, '/health'));
    expect(await res.json()).toEqual({ status: 'ok', simulatedTime: '2026-05-02T00:00:00.000Z' });
  });
});
