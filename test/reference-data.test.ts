import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AreaTree, NYC_BOROUGH_IDS, readAreaRecords } from '../src/reference/areas.ts';
import { normalizeAddress, readLots } from '../src/reference/lots.ts';

const SHARED = new URL('../../shared/data/', import.meta.url);

describe('reference data', () => {
  it.skipIf(!existsSync(SHARED))('ships byte-identical copies of the shared area files', () => {
    for (const file of ['areas.csv', 'area-centroids.csv']) {
      const shipped = readFileSync(new URL(`../resources/${file}`, import.meta.url), 'utf8');
      expect(shipped, file).toBe(readFileSync(new URL(file, SHARED), 'utf8'));
    }
  });

  it.skipIf(!existsSync(SHARED))('ships a byte-identical copy of the shared tax lots', () => {
    const shipped = readFileSync(new URL('../resources/nyc-lots.csv', import.meta.url), 'utf8');
    expect(shipped).toBe(readFileSync(new URL('nyc-lots.csv', SHARED), 'utf8'));
  });

  it('reads every shipped tax lot with a normalized address', () => {
    const lots = readLots();
    expect(lots).toHaveLength(7166);
    expect(new Set(lots.map((l) => l.bbl)).size).toBe(lots.length);
    for (const lot of lots) {
      expect(lot.bbl).toMatch(new RegExp(`^${String(lot.boroughId / 100)}\\d{9}$`));
      expect(lot.address, lot.rawAddress).toMatch(/^\d+(-\d+)?[A-Z]? [A-Z0-9][A-Za-z0-9 .'-]*$/);
      expect(lot.address).not.toMatch(/\b(ST|AVE|BLVD|PL|RD)\b/);
    }
  });

  it('normalizes addresses to one style whatever the source wrote', () => {
    const line = (raw: string) => {
      const parsed = normalizeAddress(raw)!;
      return `${parsed.houseNumber.text} ${parsed.street}`;
    };
    expect(line('82 TO 92 WASHINGTON ST')).toBe('82 Washington Street');
    expect(line('31-15 30TH AVE')).toBe('31-15 30th Avenue');
    expect(line('31-15 30 AVENUE')).toBe('31-15 30th Avenue');
    expect(line('244 10TH AVE')).toBe('244 10th Avenue');
    expect(line('110 WEST 94 STREET')).toBe(line('110 W 94TH ST'));
    expect(line('110 W 94TH ST')).toBe('110 West 94th Street');
    expect(line('549 ST NICHOLAS AVE')).toBe('549 St. Nicholas Avenue');
    expect(line('1 AVENUE W')).toBe('1 Avenue W');
    expect(line('1 CENTRAL PARK W')).toBe('1 Central Park West');
    expect(line('16O EAST 88 STREET')).toBe('160 East 88th Street');
    expect(line('1361 TO 1377 AVENUE OF THE AMER')).toBe('1361 Avenue of the Americas');
    expect(line('119-37 180 STREET')).toBe('119-37 180th Street');
    expect(line('2 BEACH 116 ST')).toBe('2 Beach 116th Street');
    expect(line('12 E 1ST ST')).toBe('12 East 1st Street');
    expect(line('50 ADAM C POWELL BLVD')).toBe('50 Adam Clayton Powell Jr. Boulevard');
    expect(line('50 ADAM CLAYTON POWELL JR BOULEVARD')).toBe('50 Adam Clayton Powell Jr. Boulevard');
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
