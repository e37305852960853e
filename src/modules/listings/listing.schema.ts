import { type Static, Type } from '@sinclair/typebox';
import { BUILDING_TYPES, LISTING_STATUSES, SALE_TYPES } from '../../domain/listing.ts';
import { StringEnum } from '../../http/schemas.ts';

const nullable = <T extends ReturnType<typeof Type.Number>>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description ? { description } : {});

export const BuildingScoresSummarySchema = Type.Object(
  {
    healthScore: Type.Union([Type.Integer({ minimum: 0, maximum: 100 }), Type.Null()]),
    noiseScore: Type.Union([Type.Integer({ minimum: 0, maximum: 100 }), Type.Null()]),
    safetyScore: Type.Union([Type.Integer({ minimum: 0, maximum: 100 }), Type.Null()]),
    transitScore: Type.Union([Type.Integer({ minimum: 0, maximum: 100 }), Type.Null()]),
    violationsOpen: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'BuildingScoresSummary', description: 'Scores 0–100 (higher is better); null when unknown.' },
);

export const ListingSummarySchema = Type.Object(
  {
    id: Type.String(),
    address: Type.Object({
      street: Type.String(),
      unit: Type.Union([Type.String(), Type.Null()]),
      city: Type.String(),
      state: Type.String(),
      zipCode: Type.String(),
    }),
    price: Type.Number({ description: 'Monthly rent (rentals) or asking price (sales), in USD.' }),
    netEffective: nullable(Type.Number(), 'Rent net of concessions averaged over the lease; null for sales.'),
    monthsFree: nullable(Type.Number(), 'Free months offered as a concession; null for sales.'),
    leaseTermMonths: nullable(Type.Number(), 'Lease term the concession applies to; null for sales.'),
    monthlyCost: Type.Number({
      description:
        'What `maxMonthlyCost` compares, USD per month. Rentals: rent plus the monthly fees every tenant pays (`REQUIRED` monthly fees such as an amenity fee); conditional fees that apply only to some tenants, such as pet rent, are excluded (see `requirement: CONDITIONAL` in `GET /property/{id}/fees`). Sales: maintenance or common charges plus real estate taxes.',
    }),
    bedroomCount: Type.Number({ description: '0 is a studio.' }),
    fullBathroomCount: Type.Number(),
    halfBathroomCount: Type.Number(),
    sqft: nullable(Type.Number()),
    pricePerSqft: nullable(Type.Number()),
    buildingType: StringEnum(BUILDING_TYPES),
    saleType: Type.Union([StringEnum(SALE_TYPES), Type.Null()], {
      description: 'Sales only; null for rentals.',
    }),
    areaName: Type.String(),
    areaId: Type.Integer(),
    status: StringEnum(LISTING_STATUSES),
    geoPoint: Type.Object({ latitude: Type.Number(), longitude: Type.Number() }),
    leadPhotoKey: Type.Union([Type.String({ pattern: '^[0-9a-f]{32}$' }), Type.Null()]),
    sourceGroupLabel: Type.String({ description: 'Listing brokerage or owner/manager label.' }),
    urlPath: Type.String(),
    listingType: StringEnum(['rental', 'sale'] as const),
    listedAt: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
      description: 'Date first listed, on New York’s calendar; null when unknown.',
    }),
    listedAtIsApproximate: Type.Boolean(),
    availableAt: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
    daysOnMarket: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description:
        'Whole days on New York’s calendar from `listedAt` to today (active), or to the day of contract / leaving the market; null when `listedAt` is unknown.',
    }),
    buildingId: Type.String(),
    buildingScores: Type.Ref(BuildingScoresSummarySchema),
    noFee: Type.Boolean({ description: 'No broker fee paid by the tenant (rentals).' }),
    detailScraped: Type.Boolean(),
    priceDelta: Type.Number({
      description: 'Latest price change in USD (negative for a cut); 0 when never changed.',
    }),
    distance: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'Search results with `near` only: great-circle (haversine) distance from `near` to `geoPoint`, in whole metres (rounded half up); what `radius` and `sort=DISTANCE` compare.',
      }),
    ),
  },
  { $id: 'ListingSummary' },
);
export type ListingSummary = Static<typeof ListingSummarySchema>;
