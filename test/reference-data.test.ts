import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AreaTree, NYC_BOROUGH_IDS, readAreaRecords } from '../src/reference/areas.ts';

const SHARED = new URL('../../shared/data/', import.meta.url);

describe('reference data', () => {
  it.skipIf(!existsSync(SHARED))('ships byte-identical copies of the shared area files', () => {
    for (const file of ['areas.csv', 'area-centroids.csv']) {
      const shipped = readFileSync(new URL(`../resources/${file}`, import.meta.url), 'utf8');
      expect(shipped, file).toBe(readFileSync(new URL(file, SHARED), 'utf8'));
    }
  });

  it('parses the 349-row tree with a single root and consistent levels', () => {
    const records = readAreaRecords();
    expect(records).toHaveLength(349);
    const tree = new AreaTree(records);
    expect(records.filter((r) => r.parentId === null).map((r) => r.id)).toEqual([1]);
    for (const record of records) {
      if (record.parentId !== null) expect(record.level).toBe(tree.get(record.parentId)!.level + 1);
    }
    expect(tree.descendantsAndSelf(1)).toHaveLength(349);
    const nyc = new Set(NYC_BOROUGH_IDS.flatMap((id) => [...tree.descendantsAndSelf(id)]));
    expect(nyc.size).toBe(316 + 5);
  });
});
