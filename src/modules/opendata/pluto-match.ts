/**
 * PLUTO lots → buildings.
 *
 * Matching: a building with a BBL takes the lot with that BBL (a building
 * whose BBL is not among the imported lots is left alone: a partial PLUTO file
 * must not re-assign it). A building without a BBL takes the nearest lot whose
 * centroid lies within LOT_MATCH_RADIUS_M of the building's point, and that
 * lot's BBL becomes the building's. 40 m is about one and a half typical NYC
 * lot widths (lots are 6–30 m wide): wide enough for a geocoded street-front
 * point to reach its own lot's centroid, narrow enough not to reach across a
 * street. Lots without coordinates only match by BBL.
 *
 * A match sets year built, floors and units (residential units, else total
 * units) where PLUTO knows them, and merges building class, community
 * district, police precinct and zoning into `nyc_data_json`, keeping every
 * other key. Buildings whose values do not change are not written.
 */
import type { Kysely } from 'kysely';
import { chunks } from '../../platform/db/batches.ts';
import type { Database, PlutoLotsTable } from '../../platform/db/tables.ts';
import { forEachSiteNear, type GridPoint } from './geo.ts';
import { forEachBuildingPage } from './opendata.repository.ts';

export const LOT_MATCH_RADIUS_M = 40;

export interface PlutoMatchSummary {
  matchedByBbl: number;
  matchedByProximity: number;
  buildingsUpdated: number;
}

interface BuildingForLot {
  id: string;
  bbl: string | null;
  latitude: number;
  longitude: number;
  year_built: number | null;
  floor_count: number | null;
  unit_count: number | null;
  nyc_data_json: string;
}

type LotPoint = GridPoint & { lot: PlutoLotsTable };

export async function applyPlutoLots(db: Kysely<Database>, nowIso: string): Promise<PlutoMatchSummary> {
  const summary: PlutoMatchSummary = { matchedByBbl: 0, matchedByProximity: 0, buildingsUpdated: 0 };
  await forEachBuildingPage<BuildingForLot>(
    (after, limit) => {
      let query = db
        .selectFrom('buildings')
        .select([
          'id',
          'bbl',
          'latitude',
          'longitude',
          'year_built',
          'floor_count',
          'unit_count',
          'nyc_data_json',
        ])
        .orderBy('id')
        .limit(limit);
      if (after !== null) query = query.where('id', '>', after);
      return query.execute();
    },
    async (page) => {
      const matches = new Map<string, PlutoLotsTable>();
      const withBbl = page.filter((b) => b.bbl !== null);
      for (const part of chunks([...new Set(withBbl.map((b) => b.bbl!))])) {
        const lots = await db.selectFrom('pluto_lots').selectAll().where('bbl', 'in', part).execute();
        const byBbl = new Map(lots.map((lot) => [lot.bbl, lot]));
        for (const building of withBbl) {
          const lot = byBbl.get(building.bbl!);
          if (lot && !matches.has(building.id)) {
            matches.set(building.id, lot);
            summary.matchedByBbl++;
          }
        }
      }
      const withoutBbl = page.filter((b) => b.bbl === null);
      await forEachSiteNear<BuildingForLot, LotPoint>(
        withoutBbl.map((b) => ({ ...b, latitude: Number(b.latitude), longitude: Number(b.longitude) })),
        LOT_MATCH_RADIUS_M,
        async (range) => {
          const lots = await db
            .selectFrom('pluto_lots')
            .selectAll()
            .where('cell_y', '>=', range.minY)
            .where('cell_y', '<=', range.maxY)
            .where('cell_x', '>=', range.minX)
            .where('cell_x', '<=', range.maxX)
            .execute();
          return lots.map((lot) => ({
            latitude: Number(lot.latitude),
            longitude: Number(lot.longitude),
            cellX: Number(lot.cell_x),
            cellY: Number(lot.cell_y),
            lot,
          }));
        },
        (building, near) => {
          let best: { lot: PlutoLotsTable; distanceM: number } | null = null;
          for (const { point, distanceM } of near) {
            // Ties go to the lower BBL so the match does not depend on read order.
            if (
              best === null ||
              distanceM < best.distanceM ||
              (distanceM === best.distanceM && point.lot.bbl < best.lot.bbl)
            )
              best = { lot: point.lot, distanceM };
          }
          if (best) {
            matches.set(building.id, best.lot);
            summary.matchedByProximity++;
          }
        },
      );
      if (matches.size === 0) return;
      await db.transaction().execute(async (trx) => {
        for (const building of page) {
          const lot = matches.get(building.id);
          if (!lot) continue;
          const update = lotUpdate(building, lot);
          if (update === null) continue;
          await trx
            .updateTable('buildings')
            .set({ ...update, updated_at: nowIso })
            .where('id', '=', building.id)
            .execute();
          summary.buildingsUpdated++;
        }
      });
    },
  );
  return summary;
}

type BuildingLotUpdate = Partial<
  Pick<Database['buildings'], 'bbl' | 'year_built' | 'floor_count' | 'unit_count' | 'nyc_data_json'>
>;

/** The building columns a lot changes, or null when it changes none. */
export function lotUpdate(building: BuildingForLot, lot: PlutoLotsTable): BuildingLotUpdate | null {
  const update: BuildingLotUpdate = {};
  if (building.bbl === null) update.bbl = lot.bbl;
  if (lot.year_built !== null && lot.year_built !== building.year_built) update.year_built = lot.year_built;
  if (lot.num_floors !== null && lot.num_floors !== building.floor_count) update.floor_count = lot.num_floors;
  const units =
    lot.units_res !== null && lot.units_res > 0
      ? lot.units_res
      : lot.units_total !== null && lot.units_total > 0
        ? lot.units_total
        : null;
  if (units !== null && units !== building.unit_count) update.unit_count = units;
  let nycData: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(building.nyc_data_json);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      nycData = parsed as Record<string, unknown>;
  } catch {
    nycData = {};
  }
  const merged: Record<string, unknown> = { ...nycData };
  if (lot.building_class !== null) merged.buildingClass = lot.building_class;
  if (lot.community_district !== null) merged.communityDistrict = lot.community_district;
  if (lot.police_precinct !== null) merged.policePrecinct = lot.police_precinct;
  if (lot.zoning !== null) merged.zoning = lot.zoning;
  const mergedJson = JSON.stringify(merged);
  if (mergedJson !== JSON.stringify(nycData)) update.nyc_data_json = mergedJson;
  return Object.keys(update).length === 0 ? null : update;
}
