/**
 * FCC BDC availability → each building's `internet_providers_json`,
 * `fiber_available` and `max_download_mbps`.
 *
 * The availability file has no coordinates or addresses (those are in the
 * licensed Broadband Serviceable Location Fabric), so buildings are matched in
 * one of two ways:
 * - coverageLevel `building`: the building already carries an FCC location id
 *   from a location-level match (its `internetProviders.fccLocationId` with
 *   coverageLevel `building`, e.g. from a feed that resolved it against the
 *   Fabric); the providers are that location's records.
 * - coverageLevel `h3_res8`: otherwise, the building's H3 resolution-8 cell
 *   (about 0.74 km², computed from its point with h3-js) is looked up in the
 *   file's `h3_res8_id` column; the providers are every provider/technology
 *   offered at one or more residential locations in that hexagon, each with
 *   its best advertised speeds. `fccLocationId` and `blockGeoid` then name
 *   the hexagon's best-served location (most provider/technology records,
 *   lowest id on ties) as a pointer into the FCC data, not the building itself.
 * Only residential records count (business_residential_code R or X).
 * `matchedAddress` is the building's own address in the FCC's upper-case
 * style; `unitCount` the building's units (1 when unknown). A building the
 * data does not cover keeps whatever record it had.
 */
import { latLngToCell } from 'h3-js';
import type { Kysely } from 'kysely';
import {
  FCC_DISCLAIMER,
  FIBER_TECHNOLOGY,
  type InternetProvider,
  type InternetProviders,
  TECHNOLOGY_LABELS,
} from '../../domain/broadband.ts';
import { chunks } from '../../platform/db/batches.ts';
import type { Database } from '../../platform/db/tables.ts';
import { forEachBuildingPage } from './opendata.repository.ts';

const RESIDENTIAL = ['R', 'X'];

export interface BroadbandSummary {
  matchedByLocation: number;
  matchedByH3: number;
  buildingsUpdated: number;
}

interface BuildingForBroadband {
  id: string;
  latitude: number;
  longitude: number;
  address_street: string;
  city: string;
  state: string;
  zip_code: string;
  unit_count: number | null;
  internet_providers_json: string | null;
  fiber_available: 0 | 1;
  max_download_mbps: number | null;
}

interface ProviderRow {
  provider_id: number;
  technology: number;
  brand_name: string;
  holding_company: string | null;
  max_download_mbps: number;
  max_upload_mbps: number;
  low_latency: number;
}

interface Coverage {
  fccLocationId: number;
  blockGeoid: string;
  providers: InternetProvider[];
}

/** The FCC location id a building is known to sit at (a location-level match), if any. */
export function knownLocationId(json: string | null): number | null {
  if (json === null) return null;
  try {
    const parsed = JSON.parse(json) as Partial<InternetProviders>;
    if (parsed.coverageLevel === 'building' && Number.isSafeInteger(parsed.fccLocationId))
      return parsed.fccLocationId as number;
  } catch {
    return null;
  }
  return null;
}

/** One entry per (provider, technology): best speeds, and low latency if any record has it. */
export function mergeProviders(rows: readonly ProviderRow[]): InternetProvider[] {
  const byKey = new Map<string, InternetProvider>();
  for (const row of rows) {
    const key = `${row.provider_id}|${row.technology}`;
    const down = Number(row.max_download_mbps);
    const up = Number(row.max_upload_mbps);
    const existing = byKey.get(key);
    if (!existing) {
      byKey.set(key, {
        providerId: Number(row.provider_id),
        providerName: row.brand_name,
        holdingCompanyName: row.holding_company ?? row.brand_name,
        technologyCode: Number(row.technology),
        technologyLabel: TECHNOLOGY_LABELS[Number(row.technology)] ?? 'Other',
        maxDownloadMbps: down,
        maxUploadMbps: up,
        lowLatency: Number(row.low_latency) === 1,
      });
      continue;
    }
    if (down > existing.maxDownloadMbps) {
      existing.maxDownloadMbps = down;
      existing.providerName = row.brand_name;
    }
    existing.maxUploadMbps = Math.max(existing.maxUploadMbps, up);
    existing.lowLatency = existing.lowLatency || Number(row.low_latency) === 1;
  }
  // Fastest first; the order is total so re-imports write identical JSON.
  return [...byKey.values()].sort(
    (a, b) =>
      b.maxDownloadMbps - a.maxDownloadMbps ||
      a.providerName.localeCompare(b.providerName) ||
      a.providerId - b.providerId ||
      a.technologyCode - b.technologyCode,
  );
}

const PROVIDER_COLUMNS = [
  'provider_id',
  'technology',
  'brand_name',
  'holding_company',
  'max_download_mbps',
  'max_upload_mbps',
  'low_latency',
] as const;

async function coverageByLocation(
  db: Kysely<Database>,
  ids: readonly number[],
): Promise<Map<number, Coverage>> {
  const out = new Map<number, Coverage>();
  for (const part of chunks(ids)) {
    const rows = await db
      .selectFrom('broadband_availability')
      .select(['location_id', 'block_geoid', ...PROVIDER_COLUMNS])
      .where('location_id', 'in', part)
      .where('business_residential_code', 'in', RESIDENTIAL)
      .orderBy('location_id')
      .execute();
    const grouped = new Map<number, typeof rows>();
    for (const row of rows) {
      const id = Number(row.location_id);
      const list = grouped.get(id) ?? [];
      list.push(row);
      grouped.set(id, list);
    }
    for (const [id, list] of grouped) {
      out.set(id, {
        fccLocationId: id,
        blockGeoid: list.find((r) => r.block_geoid !== null)?.block_geoid ?? '',
        providers: mergeProviders(list),
      });
    }
  }
  return out;
}

async function coverageByH3(db: Kysely<Database>, cells: readonly string[]): Promise<Map<string, Coverage>> {
  const out = new Map<string, Coverage>();
  for (const part of chunks(cells)) {
    // Aggregated in the database: a dense hexagon holds thousands of locations.
    const offers = await db
      .selectFrom('broadband_availability')
      .select((eb) => [
        'h3_res8_id',
        'provider_id',
        'technology',
        eb.fn.min('brand_name').as('brand_name'),
        eb.fn.min('holding_company').as('holding_company'),
        eb.fn.max('max_download_mbps').as('max_download_mbps'),
        eb.fn.max('max_upload_mbps').as('max_upload_mbps'),
        eb.fn.max('low_latency').as('low_latency'),
      ])
      .where('h3_res8_id', 'in', part)
      .where('business_residential_code', 'in', RESIDENTIAL)
      .groupBy(['h3_res8_id', 'provider_id', 'technology'])
      .execute();
    const locations = await db
      .selectFrom('broadband_availability')
      .select((eb) => [
        'h3_res8_id',
        'location_id',
        eb.fn.max('block_geoid').as('block_geoid'),
        eb.fn.countAll<number>().as('records'),
      ])
      .where('h3_res8_id', 'in', part)
      .where('business_residential_code', 'in', RESIDENTIAL)
      .groupBy(['h3_res8_id', 'location_id'])
      .execute();
    const best = new Map<string, { id: number; records: number; block: string }>();
    for (const row of locations) {
      const cell = row.h3_res8_id!;
      const id = Number(row.location_id);
      const records = Number(row.records);
      const current = best.get(cell);
      if (!current || records > current.records || (records === current.records && id < current.id))
        best.set(cell, { id, records, block: row.block_geoid ?? '' });
    }
    const grouped = new Map<string, ProviderRow[]>();
    for (const row of offers) {
      const list = grouped.get(row.h3_res8_id!) ?? [];
      list.push(row as ProviderRow);
      grouped.set(row.h3_res8_id!, list);
    }
    for (const [cell, list] of grouped) {
      const location = best.get(cell)!;
      out.set(cell, {
        fccLocationId: location.id,
        blockGeoid: location.block,
        providers: mergeProviders(list),
      });
    }
  }
  return out;
}

/** Rewrites the internet record of every building the imported availability data covers. */
export async function applyBroadband(db: Kysely<Database>, nowIso: string): Promise<BroadbandSummary> {
  const summary: BroadbandSummary = { matchedByLocation: 0, matchedByH3: 0, buildingsUpdated: 0 };
  await forEachBuildingPage<BuildingForBroadband>(
    (after, limit) => {
      let query = db
        .selectFrom('buildings')
        .select([
          'id',
          'latitude',
          'longitude',
          'address_street',
          'city',
          'state',
          'zip_code',
          'unit_count',
          'internet_providers_json',
          'fiber_available',
          'max_download_mbps',
        ])
        .orderBy('id')
        .limit(limit);
      if (after !== null) query = query.where('id', '>', after);
      return query.execute();
    },
    async (page) => {
      const locationOf = new Map<string, number>();
      for (const b of page) {
        const id = knownLocationId(b.internet_providers_json);
        if (id !== null) locationOf.set(b.id, id);
      }
      const byLocation = await coverageByLocation(db, [...new Set(locationOf.values())]);
      const cellOf = new Map<string, string>();
      for (const b of page) {
        const location = locationOf.get(b.id);
        if (location !== undefined && byLocation.has(location)) continue;
        cellOf.set(b.id, latLngToCell(Number(b.latitude), Number(b.longitude), 8));
      }
      const byCell = await coverageByH3(db, [...new Set(cellOf.values())]);
      await db.transaction().execute(async (trx) => {
        for (const b of page) {
          const location = locationOf.get(b.id);
          let coverage = location !== undefined ? byLocation.get(location) : undefined;
          let level: InternetProviders['coverageLevel'] = 'building';
          if (coverage) summary.matchedByLocation++;
          else {
            const cell = cellOf.get(b.id);
            coverage = cell === undefined ? undefined : byCell.get(cell);
            level = 'h3_res8';
            if (coverage) summary.matchedByH3++;
          }
          if (!coverage || coverage.providers.length === 0) continue;
          const record: InternetProviders = {
            status: 'matched',
            source: 'fcc_bdc',
            coverageLevel: level,
            fccLocationId: coverage.fccLocationId,
            blockGeoid: coverage.blockGeoid,
            matchedAddress: `${b.address_street}, ${b.city}, ${b.state} ${b.zip_code}`.toUpperCase(),
            unitCount: b.unit_count ?? 1,
            updatedAt: nowIso,
            providers: coverage.providers,
            disclaimer: FCC_DISCLAIMER,
          };
          const fiber = coverage.providers.some((p) => p.technologyCode === FIBER_TECHNOLOGY) ? 1 : 0;
          const maxDown = Math.round(Math.max(...coverage.providers.map((p) => p.maxDownloadMbps)));
          if (sameCoverage(b, record, fiber, maxDown)) continue;
          await trx
            .updateTable('buildings')
            .set({
              internet_providers_json: JSON.stringify(record),
              fiber_available: fiber,
              max_download_mbps: maxDown,
              updated_at: nowIso,
            })
            .where('id', '=', b.id)
            .execute();
          summary.buildingsUpdated++;
        }
      });
    },
  );
  return summary;
}

/** True when the stored record says the same apart from its timestamp (a re-import changes nothing). */
function sameCoverage(
  b: BuildingForBroadband,
  record: InternetProviders,
  fiber: number,
  maxDown: number,
): boolean {
  if (b.internet_providers_json === null) return false;
  if (Number(b.fiber_available) !== fiber || Number(b.max_download_mbps) !== maxDown) return false;
  try {
    const stored = JSON.parse(b.internet_providers_json) as InternetProviders;
    return JSON.stringify({ ...stored, updatedAt: '' }) === JSON.stringify({ ...record, updatedAt: '' });
  } catch {
    return false;
  }
}
