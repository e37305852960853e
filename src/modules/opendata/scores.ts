/**
 * Computes every building's scores from the imported open data (formulas in
 * score-formulas.ts) and writes `building_scores`.
 *
 * A score is null when its inputs are absent: health without HPD violation
 * rows (imported, or written by the demo market) or without a BBL to link them
 * by; noise and safety without a 311 / NYPD import, or for buildings outside
 * the five boroughs (those datasets cover NYC only, so "no complaints" there
 * would read as a perfect score); transit without a GTFS stops import. With no open data imported at all nothing is
 * written, so a store's existing scores (the demo market's) stay.
 *
 * Spatial counts go through the grid index (geo.ts `forEachSiteNear`): one
 * indexed range read per 2 km tile of buildings, never a scan per building.
 */
import type { Kysely } from 'kysely';
import { type Clock, DAY_MS, isoDate } from '../../platform/clock.ts';
import { chunks } from '../../platform/db/batches.ts';
import type { Database } from '../../platform/db/tables.ts';
import { type AreaTree, NYC_BOROUGH_IDS } from '../../reference/areas.ts';
import { type MarkerScope, writeMarker } from '../freshness/data-version.ts';
import { forEachSiteNear, type LatLon, type PointLoader } from './geo.ts';
import {
  bumpBuildingsVersion,
  forEachBuildingPage,
  listImports,
  pointsInCells,
  type TablePoint,
} from './opendata.repository.ts';
import {
  CRIME_WEIGHTS,
  healthScore,
  NOISE_RADIUS_M,
  noiseScore,
  SAFETY_RADIUS_M,
  safetyScore,
  TRANSIT_DENSITY_RADIUS_M,
  TRANSIT_ZERO_M,
  transitScore,
  type ViolationClass,
  WINDOW_DAYS,
} from './score-formulas.ts';

/** The marker recording the last scores run (read by the weekly job). */
export const SCORES_SCOPE: MarkerScope = 'scores';

export interface ScoreSite extends LatLon {
  id: string;
  bbl: string | null;
  unitCount: number | null;
  /** Inside the five boroughs (311 and NYPD data apply). */
  inNyc: boolean;
}

export type OpenViolationCounts = Partial<Record<ViolationClass, number>>;

/** Where the inputs come from; a null source means the dataset was never imported. */
export interface ScoreSources {
  openViolations: ((bbls: readonly string[]) => Promise<Map<string, OpenViolationCounts>>) | null;
  noise: PointLoader<TablePoint> | null;
  crime: PointLoader<TablePoint> | null;
  stations: PointLoader<TablePoint> | null;
}

export interface SiteScores {
  health: number | null;
  noise: number | null;
  safety: number | null;
  transit: number | null;
  violationsOpen: number;
  /** The inputs, for reports and tests. */
  noiseComplaints: number | null;
  crimeWeight: number | null;
  nearestStationM: number | null;
  stationsWithin800m: number | null;
}

/**
 * The violation-derived figures of one building from its BBL's open
 * violations: the count (every class) and the health score. The scores job and
 * the demo market both go through here, so a building's `violationsOpen` is
 * always the number of open rows its violations list shows.
 */
export function violationFigures(
  open: OpenViolationCounts,
  unitCount: number | null,
): { violationsOpen: number; health: number } {
  return {
    violationsOpen: (open.A ?? 0) + (open.B ?? 0) + (open.C ?? 0) + (open.I ?? 0),
    health: healthScore(open, unitCount),
  };
}

export async function scoreSites(
  sites: readonly ScoreSite[],
  sources: ScoreSources,
): Promise<Map<string, SiteScores>> {
  const out = new Map<string, SiteScores>();
  for (const site of sites) {
    out.set(site.id, {
      health: null,
      noise: null,
      safety: null,
      transit: null,
      violationsOpen: 0,
      noiseComplaints: null,
      crimeWeight: null,
      nearestStationM: null,
      stationsWithin800m: null,
    });
  }
  if (sources.openViolations) {
    const linked = sites.filter((s) => s.bbl !== null);
    const counts = await sources.openViolations([...new Set(linked.map((s) => s.bbl!))]);
    for (const site of linked) {
      const figures = violationFigures(counts.get(site.bbl!) ?? {}, site.unitCount);
      const scores = out.get(site.id)!;
      scores.violationsOpen = figures.violationsOpen;
      scores.health = figures.health;
    }
  }
  const nyc = sites.filter((s) => s.inNyc);
  if (sources.noise) {
    await forEachSiteNear(nyc, NOISE_RADIUS_M, sources.noise, (site, near) => {
      const scores = out.get(site.id)!;
      scores.noiseComplaints = near.length;
      scores.noise = noiseScore(near.length);
    });
  }
  if (sources.crime) {
    await forEachSiteNear(nyc, SAFETY_RADIUS_M, sources.crime, (site, near) => {
      let weight = 0;
      for (const { point } of near) weight += CRIME_WEIGHTS[point.category ?? ''] ?? 1;
      const scores = out.get(site.id)!;
      scores.crimeWeight = weight;
      scores.safety = safetyScore(weight);
    });
  }
  if (sources.stations) {
    await forEachSiteNear(sites, TRANSIT_ZERO_M, sources.stations, (site, near) => {
      let nearest: number | null = null;
      let within = 0;
      for (const { distanceM } of near) {
        if (nearest === null || distanceM < nearest) nearest = distanceM;
        if (distanceM <= TRANSIT_DENSITY_RADIUS_M) within++;
      }
      const scores = out.get(site.id)!;
      scores.nearestStationM = nearest;
      scores.stationsWithin800m = within;
      scores.transit = transitScore(nearest, within);
    });
  }
  return out;
}

/** The first day of the 12-month window ending at `now`. */
export function windowStart(now: Date): string {
  return isoDate(now.getTime() - WINDOW_DAYS * DAY_MS);
}

export function databaseSources(
  db: Kysely<Database>,
  imported: ReadonlySet<string>,
  since: string,
): ScoreSources {
  return {
    openViolations: imported.has('hpd-violations')
      ? async (bbls) => {
          const out = new Map<string, OpenViolationCounts>();
          for (const part of chunks(bbls)) {
            if (part.length === 0) continue;
            const rows = await db
              .selectFrom('hpd_violations')
              .select((eb) => ['bbl', 'class', eb.fn.countAll<number>().as('n')])
              .where('bbl', 'in', part)
              .where('is_open', '=', 1)
              .groupBy(['bbl', 'class'])
              .execute();
            for (const row of rows) {
              const counts = out.get(row.bbl) ?? {};
              counts[row.class] = Number(row.n);
              out.set(row.bbl, counts);
            }
          }
          return out;
        }
      : null,
    noise: imported.has('311') ? (range) => pointsInCells(db, 'noise_complaints', range, since) : null,
    crime: imported.has('nypd-complaints')
      ? (range) => pointsInCells(db, 'crime_complaints', range, since)
      : null,
    stations: imported.has('mta-stops')
      ? (range) => pointsInCells(db, 'transit_stations', range, null)
      : null,
  };
}

async function hasViolationRows(db: Kysely<Database>): Promise<boolean> {
  return (
    (await db.selectFrom('hpd_violations').select('violation_id').limit(1).executeTakeFirst()) !== undefined
  );
}

export interface ScoresRunSummary {
  /** False when no open data has been imported (nothing was written). */
  computed: boolean;
  computedAt: string;
  buildings: number;
  withHealth: number;
  withNoise: number;
  withSafety: number;
  withTransit: number;
  ms: number;
}

const SCORE_DATASETS = ['hpd-violations', '311', 'nypd-complaints', 'mta-stops'];
const WRITE_BATCH = 500;

/** Recomputes and stores every building's scores; bumps the buildings data version. */
export async function computeScores(
  db: Kysely<Database>,
  areaTree: AreaTree,
  clock: Clock,
): Promise<ScoresRunSummary> {
  const started = performance.now();
  const now = clock.now();
  const nowIso = now.toISOString();
  const summary: ScoresRunSummary = {
    computed: false,
    computedAt: nowIso,
    buildings: 0,
    withHealth: 0,
    withNoise: 0,
    withSafety: 0,
    withTransit: 0,
    ms: 0,
  };
  const imported = new Set<string>((await listImports(db)).keys());
  if (!SCORE_DATASETS.some((d) => imported.has(d))) {
    summary.ms = Math.round(performance.now() - started);
    return summary;
  }
  // Violation rows the demo market wrote (no import recorded) are counted like
  // imported ones: counts follow the rows the violations list serves, whoever wrote them.
  if (!imported.has('hpd-violations') && (await hasViolationRows(db))) imported.add('hpd-violations');
  const sources = databaseSources(db, imported, windowStart(now));
  const nycBoroughs = new Set<number>(NYC_BOROUGH_IDS);
  const inNyc = new Map<number, boolean>();
  const isNyc = (areaId: number) => {
    let known = inNyc.get(areaId);
    if (known === undefined) {
      const borough = areaTree.borough(areaId);
      known = borough !== undefined && nycBoroughs.has(borough.id);
      inNyc.set(areaId, known);
    }
    return known;
  };
  await forEachBuildingPage(
    (after, limit) => {
      let query = db
        .selectFrom('buildings')
        .select(['id', 'bbl', 'unit_count', 'latitude', 'longitude', 'area_id'])
        .orderBy('id')
        .limit(limit);
      if (after !== null) query = query.where('id', '>', after);
      return query.execute();
    },
    async (page) => {
      const sites: ScoreSite[] = page.map((b) => ({
        id: b.id,
        bbl: b.bbl,
        unitCount: b.unit_count === null ? null : Number(b.unit_count),
        latitude: Number(b.latitude),
        longitude: Number(b.longitude),
        inNyc: isNyc(Number(b.area_id)),
      }));
      const scores = await scoreSites(sites, sources);
      const rows = sites.map((site) => {
        const s = scores.get(site.id)!;
        summary.buildings++;
        if (s.health !== null) summary.withHealth++;
        if (s.noise !== null) summary.withNoise++;
        if (s.safety !== null) summary.withSafety++;
        if (s.transit !== null) summary.withTransit++;
        return {
          building_id: site.id,
          health_score: s.health,
          noise_score: s.noise,
          safety_score: s.safety,
          transit_score: s.transit,
          violations_open: s.violationsOpen,
          updated_at: nowIso,
        };
      });
      await db.transaction().execute(async (trx) => {
        for (const part of chunks(rows, WRITE_BATCH)) {
          await trx
            .insertInto('building_scores')
            .values(part)
            .onConflict((oc) =>
              oc.column('building_id').doUpdateSet((eb) => ({
                health_score: eb.ref('excluded.health_score'),
                noise_score: eb.ref('excluded.noise_score'),
                safety_score: eb.ref('excluded.safety_score'),
                transit_score: eb.ref('excluded.transit_score'),
                violations_open: eb.ref('excluded.violations_open'),
                updated_at: eb.ref('excluded.updated_at'),
              })),
            )
            .execute();
        }
      });
    },
  );
  summary.computed = true;
  summary.ms = Math.round(performance.now() - started);
  const detail = JSON.stringify({ buildings: summary.buildings, ms: summary.ms });
  await writeMarker(db, SCORES_SCOPE, now, detail);
  await bumpBuildingsVersion(db, clock, 'open-data scores');
  return summary;
}
