import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { FCC_DISCLAIMER } from '../../domain/broadband.ts';
import { BUILDING_TYPES, LISTING_STATUSES } from '../../domain/listing.ts';
import { formatParam } from '../../http/formats.ts';
import { resourceIdParam } from '../../http/path-id.ts';
import {
  CommaList,
  dataResponse,
  Literals,
  listResponse,
  MetaSchema,
  nullableBoolean,
  nullableInteger,
  nullableNumber,
  nullableString,
  PageQuery,
  StringEnum,
} from '../../http/schemas.ts';
import { ListingSummarySchema } from '../listings/listing.schema.ts';
import { LISTING_CSV_DOC } from '../listings/listing-export.ts';
import { ListingPhotoSchema } from '../photos/photos.schema.ts';

const str = nullableString;
const num = nullableNumber;
const int = nullableInteger;
const bool = nullableBoolean;

export const BuildingIdParams = Type.Object({ id: resourceIdParam('Building') });

export const BuildingAmenitiesSchema = Type.Object(
  {
    list: Type.Array(Type.String(), {
      description: 'Building amenity names, e.g. `doorman`, `elevator`, `gym`, `roof_deck`.',
    }),
    doorman: Type.Union([Literals(['FULL_TIME', 'PART_TIME', 'VIRTUAL', 'NONE']), Type.Null()]),
    laundry: Type.Union([Literals(['IN_BUILDING', 'IN_UNIT', 'NONE']), Type.Null()]),
    parking: Type.Union([Literals(['GARAGE', 'GARAGE_FEE', 'DRIVEWAY', 'NONE']), Type.Null()], {
      description: '`GARAGE_FEE`: garage parking at extra cost.',
    }),
  },
  { $id: 'BuildingAmenities', description: 'Amenities and services of the building.' },
);

export const BuildingPoliciesSchema = Type.Object(
  {
    petsAllowed: bool(),
    dogsAllowed: bool(),
    catsAllowed: bool(),
    petWeightLimitLbs: num('Largest dog allowed, in pounds; null when no limit is known.'),
    guarantorsAccepted: bool(),
    smokeFree: bool(),
    subletPolicy: str('e.g. `Allowed`, `Not allowed`, `2 of 5 years`, `Case by case`.'),
    boardApprovalRequired: bool('Co-ops and condops: purchases and leases need board approval.'),
    minimumDownPaymentPct: num('Smallest down payment the building accepts, percent.'),
    flipTaxPct: num('Co-op transfer (flip) tax, percent of the price.'),
    coPurchasingAllowed: bool(),
  },
  { $id: 'BuildingPolicies', description: 'Building rules for pets, leasing and purchases.' },
);

export const NycDataSchema = Type.Object(
  {
    communityDistrict: str('NYC community district, e.g. `MN08`; null outside NYC.'),
    policePrecinct: int('NYPD precinct number; null outside NYC.'),
    buildingClass: str('NYC Department of Finance building class, e.g. `D4` (elevator co-op).'),
    zoning: str('Zoning district, e.g. `R8B`.'),
    landmarkDistrict: bool('Inside a designated historic district.'),
    rentStabilizedUnits: int('Rent-stabilized units in the building.'),
    county: str('County, for buildings outside NYC (e.g. `Hudson`).'),
    municipality: str('Municipality, for buildings outside NYC (e.g. `Jersey City`).'),
  },
  {
    $id: 'NycData',
    description:
      'Public-record data of the building: community district, police precinct and building class in NYC; county and municipality in New Jersey. Fields that do not apply are null.',
  },
);

export const BuildingAdditionalDetailsSchema = Type.Object(
  {
    lotSizeSqft: num(),
    elevators: int(),
    heating: str(),
    cooling: str(),
    construction: str(),
    lobby: str('`Attended`, `Unattended`, or null without a lobby.'),
  },
  { $id: 'BuildingAdditionalDetails' },
);

const internetProviderFields = {
  status: Type.String({ description: '`matched`: the building was matched to an FCC broadband location.' }),
  source: Type.String({ description: '`fcc_bdc`: FCC Broadband Data Collection (National Broadband Map).' }),
  coverageLevel: Type.String({ description: 'e.g. `building`.' }),
  fccLocationId: Type.Integer(),
  blockGeoid: Type.String({ description: '15-digit census block GEOID.' }),
  matchedAddress: Type.String(),
  unitCount: Type.Integer(),
  updatedAt: Type.String({ format: 'date-time' }),
  providers: Type.Array(
    Type.Object({
      providerId: Type.Integer(),
      providerName: Type.String(),
      holdingCompanyName: Type.String(),
      technologyCode: Type.Integer({
        description: 'FCC technology code: 10 copper, 40 cable, 50 fiber, 61 satellite, 71 fixed wireless.',
      }),
      technologyLabel: Type.String(),
      maxDownloadMbps: Type.Number(),
      maxUploadMbps: Type.Number(),
      lowLatency: Type.Boolean(),
    }),
  ),
};

/** The stored broadband record as fitted; the disclaimer is always the service's own text. */
export const StoredInternetProvidersSchema = Type.Object(internetProviderFields);

export const InternetProvidersSchema = Type.Object(
  {
    ...internetProviderFields,
    disclaimer: Type.String({ description: `Required FCC attribution: "${FCC_DISCLAIMER}"` }),
  },
  {
    $id: 'InternetProviders',
    description: 'Likely internet availability at the building, from the FCC Broadband Data Collection.',
  },
);

export const BuildingDetailSchema = Type.Object(
  {
    id: Type.String(),
    slug: Type.String(),
    name: Type.String({ description: 'Building name, or its street address when it has none.' }),
    addressStreet: Type.String(),
    city: Type.String(),
    state: Type.String(),
    zipCode: Type.String(),
    areaId: Type.Integer(),
    areaName: Type.String(),
    buildingType: StringEnum(BUILDING_TYPES),
    yearBuilt: int(),
    yearRenovated: int(),
    floorCount: int(),
    unitCount: int(),
    geoPoint: Type.Object({ latitude: Type.Number(), longitude: Type.Number() }),
    bbl: Type.Optional(
      Type.String({
        pattern: '^[1-5][0-9]{9}$',
        description:
          'NYC Borough-Block-Lot (10 digits). Absent when unknown (outside NYC, or not matched); HPD violations are linked by it.',
      }),
    ),
    bin: str('NYC Building Identification Number; null when unknown.'),
    managementCompany: str(),
    developer: str(),
    architect: str(),
    taxAbatementStatus: str('e.g. `421a`, `485x`, `J-51`; null when none.'),
    taxAbatementYearsRemaining: int(),
    petsAllowed: Type.Boolean(),
    amenities: Type.Union([Type.Ref(BuildingAmenitiesSchema), Type.Null()]),
    policies: Type.Union([Type.Ref(BuildingPoliciesSchema), Type.Null()]),
    nycData: Type.Union([Type.Ref(NycDataSchema), Type.Null()]),
    additionalDetails: Type.Union([Type.Ref(BuildingAdditionalDetailsSchema), Type.Null()]),
    internetProviders: Type.Union([Type.Ref(InternetProvidersSchema), Type.Null()], {
      description: 'Null when the building could not be matched to an FCC broadband location.',
    }),
    photos: Type.Array(Type.Ref(ListingPhotoSchema), { description: 'Building photos, in display order.' }),
  },
  { $id: 'BuildingDetail' },
);
export type BuildingDetail = Static<typeof BuildingDetailSchema>;

const score = (basis: string) =>
  Type.Union([Type.Integer({ minimum: 0, maximum: 100 }), Type.Null()], {
    description: `0–100, higher is better; ${basis}. Null when unknown.`,
  });

export const BuildingScoresSchema = Type.Object(
  {
    buildingId: Type.String(),
    healthScore: score('from the count and severity of open HPD housing violations'),
    noiseScore: score('quietness, from noise complaints within 200 m'),
    safetyScore: score('from crime data within 400 m'),
    transitScore: score('from subway and bus stop proximity and density'),
    violationsOpen: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description:
        "Open HPD violations of every class: the number of `Open` rows `GET /building/{id}/violations` lists for the building's BBL (0 without a BBL); null when the building has no scores yet.",
    }),
    updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the scores were computed (weekly); null when the building has none yet.',
    }),
  },
  { $id: 'BuildingScores', description: 'Composite building scores derived from public city data.' },
);
export type BuildingScores = Static<typeof BuildingScoresSchema>;

export const HPD_CLASSES = ['A', 'B', 'C', 'I'] as const;

export const HpdViolationSchema = Type.Object(
  {
    violationId: Type.String(),
    status: Type.String({ description: 'HPD status, e.g. `Open`, `Close`.' }),
    class: StringEnum(HPD_CLASSES, {
      description: 'A non-hazardous, B hazardous, C immediately hazardous, I informational.',
    }),
    description: Type.String(),
    date: Type.String({ format: 'date', description: 'Inspection date.' }),
  },
  { $id: 'HpdViolation', description: 'An NYC HPD housing maintenance code violation.' },
);
export type HpdViolation = Static<typeof HpdViolationSchema>;

export const BuildingListingsQuery = Type.Object({
  status: Type.Optional(
    // Same form as the search `status` parameter.
    CommaList(LISTING_STATUSES, {
      maxLength: 100,
      description: `Comma-separated statuses to include (${LISTING_STATUSES.join(', ')}); default \`ACTIVE\`, as in search.`,
    }),
  ),
  listingType: Type.Optional(StringEnum(['rental', 'sale'] as const, { description: 'Default: both.' })),
  ...PageQuery,
  perPage: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 500,
      default: 10,
      description: 'Page size, 1–500 (default 10); capped by the caller tier maximum with a warning.',
    }),
  ),
  format: formatParam(LISTING_CSV_DOC),
});
export type BuildingListingsQuery = Static<typeof BuildingListingsQuery>;

export const MetaWithWarningsSchema = Type.Composite(
  [
    MetaSchema,
    Type.Object({
      warnings: Type.Array(Type.String(), { description: 'Non-fatal notes about the answer.' }),
    }),
  ],
  { $id: 'MetaWithWarnings' },
);

export const BuildingDetailResponse = dataResponse(Type.Ref(BuildingDetailSchema));
export type BuildingDetailResponse = Static<typeof BuildingDetailResponse>;
export const BuildingListingsResponse = listResponse(Type.Ref(ListingSummarySchema));
export type BuildingListingsResponse = Static<typeof BuildingListingsResponse>;
export const BuildingScoresResponse = dataResponse(Type.Ref(BuildingScoresSchema));
export type BuildingScoresResponse = Static<typeof BuildingScoresResponse>;
export const ViolationsResponse = Type.Object({
  data: Type.Array(Type.Ref(HpdViolationSchema)),
  meta: Type.Ref(MetaWithWarningsSchema),
});
export type ViolationsResponse = Static<typeof ViolationsResponse>;

export const BUILDING_SCHEMAS: TSchema[] = [
  BuildingAmenitiesSchema,
  BuildingPoliciesSchema,
  NycDataSchema,
  BuildingAdditionalDetailsSchema,
  InternetProvidersSchema,
  BuildingDetailSchema,
  BuildingScoresSchema,
  HpdViolationSchema,
  MetaWithWarningsSchema,
];
