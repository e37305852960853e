import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { REPO_ROOT } from './config.ts';

interface AreaRow {
  id: number;
  name: string;
  parentId: number | null;
  level: number;
}

/** RFC 4180 fields of one line; the `source` column quotes commas, so a plain split would misalign it. */
function parseCsvLine(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      fields.push(field);
      field = '';
    } else field += ch;
  }
  fields.push(field);
  return fields;
}

export function readAreas(file = resolve(REPO_ROOT, 'resources/areas.csv')): AreaRow[] {
  const lines = readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '');
  const header = parseCsvLine(lines[0] ?? '');
  const col = (name: string): number => {
    const index = header.indexOf(name);
    if (index < 0) throw new Error(`${file}: missing column "${name}"`);
    return index;
  };
  const [idCol, nameCol, parentCol, levelCol] = [col('id'), col('name'), col('parent_id'), col('level')];
  return lines.slice(1).map((line) => {
    const f = parseCsvLine(line);
    return {
      id: Number(f[idCol]),
      name: f[nameCol] ?? '',
      parentId: f[parentCol] ? Number(f[parentCol]) : null,
      level: Number(f[levelCol]),
    };
  });
}

const ROOT = 1;
const MANHATTAN = 100;
const OUTER_BOROUGHS = new Set([200, 300, 400, 500]);
const NEW_JERSEY = 1_000_000;

/**
 * Neighborhood ids that carry listings in the demo market. Roots, boroughs,
 * New Jersey and "Unassigned" are left out because one of them alone would
 * match a large share of the market and hide the cost of the 5-area case;
 * Manhattan's "All …" groupings for the same reason.
 */
export function neighborhoodAreaIds(file = resolve(REPO_ROOT, 'resources/areas.csv')): number[] {
  const areas = readAreas(file);
  const byId = new Map(areas.map((a) => [a.id, a]));
  // Only the root, the boroughs and New Jersey's tree by id: a neighborhood id
  // lies between the borough ids (Williamsburg is 302).
  const excluded = (a: AreaRow) =>
    a.id === ROOT ||
    a.id === MANHATTAN ||
    OUTER_BOROUGHS.has(a.id) ||
    a.id >= NEW_JERSEY ||
    a.name.startsWith('All ');
  const ids = areas
    .filter((a) => {
      if (excluded(a) || a.parentId === null) return false;
      if (a.level === 2) return OUTER_BOROUGHS.has(a.parentId) || a.parentId === MANHATTAN;
      if (a.level === 3) return byId.get(a.parentId)?.parentId === MANHATTAN;
      return false;
    })
    .map((a) => a.id);
  if (ids.length < 5)
    throw new Error(`${file}: only ${ids.length} neighborhood areas found, need at least 5`);
  return ids;
}
