/**
 * The hand-shaped pieces of a search answer's meta: `listMetaFrom` must give
 * the members spreading the freshness gave, in the schema's order (freshness,
 * paging, then a search's echoed areas), and `unionAscending` exactly what a
 * Set and a numeric sort give.
 */
import { describe, expect, it } from 'vitest';
import type { Freshness } from '../src/domain/freshness.ts';
import { listMetaFrom, type PaginatedMeta } from '../src/http/envelope.ts';
import { unionAscending } from '../src/modules/search/search.service.ts';

const links: PaginatedMeta['links'] = {
  self: 'http://127.0.0.1:8080/v1/search/rentals?areas=105%2C110&page=2&perPage=50',
  first: 'http://127.0.0.1:8080/v1/search/rentals?areas=105%2C110&page=1&perPage=50',
  last: 'http://127.0.0.1:8080/v1/search/rentals?areas=105%2C110&page=9&perPage=50',
  prev: 'http://127.0.0.1:8080/v1/search/rentals?areas=105%2C110&page=1&perPage=50',
  next: null,
};

const freshnessCases: Freshness[] = [
  {
    dataAge: '2026-12-01T10:00:00.000Z',
    source: 'cached',
    freshnessThreshold: 1800,
    refreshTriggered: false,
    detailScraped: true,
  },
  { dataAge: null, source: 'stale', freshnessThreshold: 60, refreshTriggered: true, detailScraped: false },
];

describe('listMetaFrom', () => {
  for (const freshness of freshnessCases) {
    it(`serializes as the spread meta did (dataAge ${freshness.dataAge})`, () => {
      const page = { page: 2, perPage: 50 };
      const warnings = ["perPage 80 exceeds your tier's maximum of 50; 50 was used."];
      const spread = { ...freshness, total: 443, page: 2, perPage: 50, links, warnings };
      expect(JSON.stringify(listMetaFrom(freshness, page, 443, links, warnings))).toBe(
        JSON.stringify(spread),
      );
      // A search's echoed areas come last, as the PaginatedMeta schema lists them.
      const areas = [
        { input: 'LIC', id: 402, name: 'Long Island City' },
        { input: '"quoted" ü', id: 105, name: 'Tribeca' },
      ];
      const withAreas = { ...spread, areas };
      const built = listMetaFrom({ ...freshness, areas }, page, 443, links, warnings);
      expect(JSON.stringify(built)).toBe(JSON.stringify(withAreas));
      expect(Object.keys(built)).toEqual(Object.keys(withAreas));
    });
  }

  it('has no areas member when the freshness echoes none', () => {
    const meta = listMetaFrom(freshnessCases[0]!, { page: 1, perPage: 10 }, 0, links, []);
    expect('areas' in meta).toBe(false);
  });
});

describe('unionAscending', () => {
  const reference = (lists: number[][]) => [...new Set(lists.flat())].sort((a, b) => a - b);
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const ascendingList = (length: number, max: number) =>
    [...new Set(Array.from({ length }, () => Math.floor(random() * max)))].sort((a, b) => a - b);

  it('equals a Set and a numeric sort, for short and long unions, with repeats', () => {
    for (let round = 0; round < 500; round++) {
      const lists = Array.from({ length: 1 + Math.floor(random() * 6) }, () =>
        ascendingList(
          1 + Math.floor(random() * (round % 2 === 0 ? 4 : 40)),
          round % 3 === 0 ? 20 : 1_000_000,
        ),
      );
      expect(unionAscending(lists)).toEqual(reference(lists));
    }
  });

  it('sorts numerically, not as text', () => {
    expect(unionAscending([[1000000], [9], [100, 200]])).toEqual([9, 100, 200, 1000000]);
    expect(unionAscending([])).toEqual([]);
  });
});
