import { describe, expect, it } from 'vitest';
import { neighborhoodAreaIds, readAreas } from '../bench/areas.ts';

/**
 * The headline search draws 5 of these per request. Until this test, an id
 * range meant to leave out the boroughs (100–500) left out every neighborhood
 * of four boroughs too, and the scenario searched the same five Staten Island
 * areas on every request.
 */
describe('bench neighborhoods', () => {
  const ids = neighborhoodAreaIds();
  const areas = new Map(readAreas().map((a) => [a.id, a]));
  const boroughOf = (id: number): number | null => {
    let area = areas.get(id);
    while (area && area.level > 1) area = area.parentId === null ? undefined : areas.get(area.parentId);
    return area?.id ?? null;
  };

  it("draws from every borough, Manhattan's and Brooklyn's named neighborhoods included", () => {
    const perBorough = new Map<number | null, number>();
    for (const id of ids) perBorough.set(boroughOf(id), (perBorough.get(boroughOf(id)) ?? 0) + 1);
    for (const borough of [100, 200, 300, 400]) expect(perBorough.get(borough) ?? 0).toBeGreaterThan(5);
    expect(perBorough.get(500)).toBe(5); // Staten Island has five shore areas
    expect(ids).toContain(302); // Williamsburg
    expect(ids).toContain(137); // Upper West Side
    expect(ids.length).toBeGreaterThan(150);
  });

  it('leaves out the root, the boroughs, the "All …" groupings, New Jersey and Unassigned', () => {
    for (const id of [1, 100, 200, 300, 400, 500, 1_000_000, 9_999_999]) expect(ids).not.toContain(id);
    for (const id of ids) expect(areas.get(id)?.name.startsWith('All ')).toBe(false);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
