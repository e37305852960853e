import { FCC_DISCLAIMER } from '../../domain/broadband.ts';
import { fitStoredRecord } from '../../platform/db/stored-json.ts';
import type { BuildingScoresRow } from '../../platform/db/tables.ts';
import { type PhotoRow, toPhoto } from '../photos/photo.mapper.ts';
import type { BuildingDetailRow, ViolationRow } from './building.repository.ts';
import {
  BuildingAdditionalDetailsSchema,
  BuildingAmenitiesSchema,
  type BuildingDetail,
  BuildingPoliciesSchema,
  type BuildingScores,
  type HpdViolation,
  NycDataSchema,
  StoredInternetProvidersSchema,
} from './building.schema.ts';

/** The one mapping from a stored building row to the API's BuildingDetail. */
export function toBuildingDetail(
  row: BuildingDetailRow,
  areaName: string,
  photos: readonly PhotoRow[],
  photoBaseUrl: string,
): BuildingDetail {
  const internet = fitStoredRecord(StoredInternetProvidersSchema, row.internet_providers_json);
  const detail: BuildingDetail = {
    id: row.id,
    slug: row.slug,
    name: row.name,
    addressStreet: row.address_street,
    city: row.city,
    state: row.state,
    zipCode: row.zip_code,
    areaId: row.area_id,
    areaName,
    buildingType: row.building_type as BuildingDetail['buildingType'],
    yearBuilt: row.year_built,
    yearRenovated: row.year_renovated,
    floorCount: row.floor_count,
    unitCount: row.unit_count,
    geoPoint: { latitude: row.latitude, longitude: row.longitude },
    bin: row.bin,
    managementCompany: row.management_company,
    developer: row.developer,
    architect: row.architect,
    taxAbatementStatus: row.tax_abatement_status,
    taxAbatementYearsRemaining: row.tax_abatement_years_remaining,
    petsAllowed: row.pets_allowed === 1,
    amenities: fitStoredRecord(BuildingAmenitiesSchema, row.amenities_json),
    policies: fitStoredRecord(BuildingPoliciesSchema, row.policies_json),
    nycData: fitStoredRecord(NycDataSchema, row.nyc_data_json),
    additionalDetails: fitStoredRecord(BuildingAdditionalDetailsSchema, row.additional_details_json),
    // The attribution is the FCC's condition of use: always the exact text, whatever was stored.
    internetProviders: internet ? { ...internet, disclaimer: FCC_DISCLAIMER } : null,
    photos: photos.map((p) => toPhoto(p, photoBaseUrl)),
  };
  // Absent, not null, when unknown (SPEC: "may be absent for some buildings").
  if (row.bbl !== null) detail.bbl = row.bbl;
  return detail;
}

export function toBuildingScores(buildingId: string, row: BuildingScoresRow | undefined): BuildingScores {
  return {
    buildingId,
    healthScore: row?.health_score ?? null,
    noiseScore: row?.noise_score ?? null,
    safetyScore: row?.safety_score ?? null,
    transitScore: row?.transit_score ?? null,
    violationsOpen: row?.violations_open ?? null,
    updatedAt: row?.updated_at ?? null,
  };
}

export function toHpdViolation(row: ViolationRow): HpdViolation {
  return {
    violationId: row.violation_id,
    status: row.status,
    class: row.class,
    description: row.description,
    date: row.inspection_date.slice(0, 10),
  };
}
