/**
 * Distances and the grid index behind every "points within r metres" query.
 *
 * Grid: cells of CELL_M metres, from a fixed equirectangular projection at New
 * York's latitude (cell_y = ⌊lat·m/°lat / CELL_M⌋, cell_x = ⌊lon·m/°lon(40.7°) /
 * CELL_M⌋). A point's cell depends on its coordinates only, so it is computed
 * once at import and indexed. A query turns its disk into the cell rectangle
 * that contains it (exactly, at the query's own latitude), reads those cells
 * through the index, then keeps the points whose great-circle distance is ≤ r.
 * The grid only narrows the candidates; the haversine test (src/domain/geo.ts)
 * decides.
 */

import { EARTH_RADIUS_M, haversineMeters, type LatLon } from '../../domain/geo.ts';

/** The grid's callers name points by the domain type. */
export type { LatLon };

const M_PER_DEG_LAT = (Math.PI * EARTH_RADIUS_M) / 180;
const REFERENCE_LAT = 40.7;
const M_PER_DEG_LON_REF = M_PER_DEG_LAT * Math.cos((REFERENCE_LAT * Math.PI) / 180);

/** Grid cell size, metres (at New York's latitude). */
export const CELL_M = 200;

export interface Cell {
  x: number;
  y: number;
}

/** Inclusive rectangle of grid cells. */
export interface CellRange {
  minX: number;
  maxX: number;
  minY: number;
  maxY: number;
}

export function cellOf(latitude: number, longitude: number): Cell {
  return {
    x: Math.floor((longitude * M_PER_DEG_LON_REF) / CELL_M),
    y: Math.floor((latitude * M_PER_DEG_LAT) / CELL_M),
  };
}

/**
 * The cells that contain every point within `radiusM` of `center`. The
 * degree box is widened by 0.5 % so rounding never drops a point on the rim.
 */
export function cellsAround(center: LatLon, radiusM: number): CellRange {
  const dLat = (radiusM / M_PER_DEG_LAT) * 1.005;
  const cosLat = Math.max(0.01, Math.cos(((Math.abs(center.latitude) + dLat) * Math.PI) / 180));
  const dLon = (radiusM / (M_PER_DEG_LAT * cosLat)) * 1.005;
  const low = cellOf(center.latitude - dLat, center.longitude - dLon);
  const high = cellOf(center.latitude + dLat, center.longitude + dLon);
  return { minX: low.x, maxX: high.x, minY: low.y, maxY: high.y };
}

export function unionRange(a: CellRange | null, b: CellRange): CellRange {
  if (a === null) return { ...b };
  return {
    minX: Math.min(a.minX, b.minX),
    maxX: Math.max(a.maxX, b.maxX),
    minY: Math.min(a.minY, b.minY),
    maxY: Math.max(a.maxY, b.maxY),
  };
}

/** A point read from a point table, with the grid cell it was indexed under. */
export interface GridPoint extends LatLon {
  cellX: number;
  cellY: number;
}

/** Reads the points of a rectangle of cells (through the table's cell index). */
export type PointLoader<P extends GridPoint> = (range: CellRange) => Promise<P[]>;

export interface NearPoint<P> {
  point: P;
  distanceM: number;
}

/** Buildings are processed in tiles of TILE_CELLS × TILE_CELLS cells (2 km square). */
const TILE_CELLS = 10;

/**
 * Points near each site, one indexed read per tile of sites. Sites are
 * grouped into 2 km tiles; for each tile the points of the tile's cells
 * (plus the search radius) are read once and bucketed by cell in memory, and
 * every site then looks only at the cells around it. Memory is bounded by one
 * tile's points; the number of reads by the number of occupied tiles.
 */
export async function forEachSiteNear<S extends LatLon, P extends GridPoint>(
  sites: readonly S[],
  radiusM: number,
  load: PointLoader<P>,
  visit: (site: S, near: readonly NearPoint<P>[]) => void,
): Promise<void> {
  const tiles = new Map<string, S[]>();
  for (const site of sites) {
    const cell = cellOf(site.latitude, site.longitude);
    const key = `${Math.floor(cell.x / TILE_CELLS)}:${Math.floor(cell.y / TILE_CELLS)}`;
    let tile = tiles.get(key);
    if (!tile) {
      tile = [];
      tiles.set(key, tile);
    }
    tile.push(site);
  }
  for (const tileSites of tiles.values()) {
    const ranges = tileSites.map((site) => cellsAround(site, radiusM));
    let bounds: CellRange | null = null;
    for (const range of ranges) bounds = unionRange(bounds, range);
    const points = await load(bounds!);
    const byCell = new Map<number, P[]>();
    for (const point of points) {
      const key = cellKey(point.cellX, point.cellY);
      const bucket = byCell.get(key);
      if (bucket) bucket.push(point);
      else byCell.set(key, [point]);
    }
    tileSites.forEach((site, i) => {
      const range = ranges[i]!;
      const near: NearPoint<P>[] = [];
      for (let y = range.minY; y <= range.maxY; y++) {
        for (let x = range.minX; x <= range.maxX; x++) {
          const bucket = byCell.get(cellKey(x, y));
          if (!bucket) continue;
          for (const point of bucket) {
            const d = haversineMeters(site, point);
            if (d <= radiusM) near.push({ point, distanceM: d });
          }
        }
      }
      visit(site, near);
    });
  }
}

/** Cell coordinates fit in ±2^20 anywhere on Earth at 200 m cells, so one number keys them. */
function cellKey(x: number, y: number): number {
  return (y + 2 ** 20) * 2 ** 21 + (x + 2 ** 20);
}
