import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { SALE_TYPES } from '../../domain/listing.ts';
import { resourceIdParam } from '../../http/path-id.ts';
import {
  dataResponse,
  Literals,
  nullableBoolean,
  nullableInteger,
  nullableNumber,
  nullableString,
} from '../../http/schemas.ts';
import { ListingSummarySchema } from '../listings/listing.schema.ts';
import { PHOTO_KEY_PATTERN } from '../photos/photo-url.ts';
import { ListingPhotoSchema } from '../photos/photos.schema.ts';

const str = nullableString;
const num = nullableNumber;
const int = nullableInteger;
const bool = nullableBoolean;

export const ListingIdParams = Type.Object({ id: resourceIdParam('Listing') });

export const ByUrlQuery = Type.Object({
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description:
      'The listing page path (`urlPath` of a listing, e.g. `/rental/8421007`), or a full http(s) URL whose path is one (host, query and fragment are ignored).',
  }),
});

export const UnitFeaturesSchema = Type.Object(
  {
    floor: int('Floor the unit is on.'),
    exposure: str('Main window exposure, e.g. `South`.'),
    view: str('Notable view, e.g. `Park`; null when none.'),
    laundry: Type.Union([Literals(['IN_UNIT', 'IN_BUILDING', 'NONE']), Type.Null()]),
    outdoorSpace: Type.Union([Literals(['TERRACE', 'BALCONY', 'GARDEN']), Type.Null()], {
      description: 'Private outdoor space; null when none.',
    }),
    ceilingHeightFt: num(),
    flooring: str(),
    renovated: bool(),
    interiorSqft: int('Interior area in square feet; null when not published.'),
  },
  {
    $id: 'UnitFeatures',
    description: 'Features of the unit (RESO: InteriorFeatures, Exposure, View, Laundry).',
  },
);

export const LeaseTermsSchema = Type.Object(
  {
    termMonths: int('Lease term the asking rent is for, in months.'),
    termOptions: Type.Array(Type.Integer(), { description: 'Lease terms offered, in months.' }),
    guarantorsAccepted: bool(),
    thirdPartyGuarantorsAccepted: bool('Institutional guarantors (e.g. TheGuarantors, Insurent).'),
    furnished: bool(),
    shortTermAllowed: bool('Leases under 30 days; not allowed in New York City multiple dwellings.'),
    rentStabilized: bool(),
  },
  { $id: 'LeaseTerms', description: 'Lease terms of a rental (RESO: LeaseTerm, Furnished).' },
);

export const ConcessionsSchema = Type.Object(
  {
    monthsFree: Type.Number({ description: 'Free months over the lease.' }),
    leaseTermMonths: Type.Integer(),
    grossRent: Type.Number({ description: 'Monthly asking (gross) rent, USD.' }),
    netEffectiveRent: num('Gross rent averaged over the lease net of the free months, USD.'),
    expiresAt: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
      description: 'Last day the offer applies; null when open-ended.',
    }),
  },
  { $id: 'Concessions', description: 'A rental concession (free months) offered by the landlord.' },
);

export const SaleDetailsSchema = Type.Object(
  {
    saleType: Type.Union([Literals(SALE_TYPES), Type.Null()]),
    maintenance: num('Co-op monthly maintenance (includes real estate taxes), USD.'),
    commonCharges: num('Condo monthly common charges, USD.'),
    monthlyTaxes: num('Monthly real estate taxes, USD (not for co-ops: included in maintenance).'),
    taxAbatement: str('Tax abatement program, e.g. `421a`.'),
    financingAllowedPct: num('Largest share of the price that may be financed, percent.'),
    flipTaxPct: num('Co-op transfer (flip) tax, percent of the price.'),
    downPaymentPct: num('Minimum down payment, percent.'),
    pricePerSqft: num('Asking price per square foot, USD.'),
  },
  {
    $id: 'SaleDetails',
    description: 'Carrying costs and purchase terms of a sale (RESO: AssociationFee, TaxAnnualAmount).',
  },
);

export const AgentSchema = Type.Object(
  {
    name: Type.String(),
    title: str('License, e.g. `Licensed Real Estate Salesperson`.'),
    brokerage: str(),
    phone: str(),
    email: str(),
  },
  { $id: 'Agent', description: 'A listing agent (RESO: ListAgent*, ListOffice*).' },
);

export const PetsPolicySchema = Type.Object(
  {
    allowed: Type.Boolean({ description: 'Whether any pets are allowed in this unit.' }),
    dogs: bool(),
    cats: bool(),
    petRent: num('Monthly pet rent, USD; null when none.'),
    notes: str(),
  },
  { $id: 'PetsPolicy', description: 'The pet policy of the unit (RESO: PetsAllowed).' },
);

export const BuildingLinkSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    slug: Type.String(),
    url: Type.String({ description: 'Absolute URL of the building record, `GET /v1/building/{id}`.' }),
  },
  { $id: 'BuildingLink', description: 'The building a listing is in.' },
);

export const FloorPlanSchema = Type.Object(
  {
    key: Type.String({ pattern: PHOTO_KEY_PATTERN }),
    url: Type.String({ description: 'Default-size image, like photo URLs.' }),
  },
  { $id: 'FloorPlan' },
);

const detailFields = {
  description: Type.Union([Type.String(), Type.Null()], {
    description: 'Listing remarks (RESO: PublicRemarks); null when the detail page was not fetched.',
  }),
  amenities: Type.Array(Type.String(), {
    description: 'Amenity names of the unit and its building, e.g. `doorman`, `washer_dryer`.',
  }),
  unitFeatures: Type.Union([Type.Ref(UnitFeaturesSchema), Type.Null()]),
  leaseTerms: Type.Union([Type.Ref(LeaseTermsSchema), Type.Null()], { description: 'Rentals only.' }),
  concessions: Type.Union([Type.Ref(ConcessionsSchema), Type.Null()], {
    description: 'Rentals offering free months; null otherwise.',
  }),
  saleDetails: Type.Union([Type.Ref(SaleDetailsSchema), Type.Null()], { description: 'Sales only.' }),
  agents: Type.Array(Type.Ref(AgentSchema)),
  petsAllowed: Type.Boolean(),
  petsPolicy: Type.Union([Type.Ref(PetsPolicySchema), Type.Null()]),
  photos: Type.Array(Type.Ref(ListingPhotoSchema), { description: 'In display order.' }),
  floorPlan: Type.Union([Type.Ref(FloorPlanSchema), Type.Null()]),
  has3dTour: Type.Boolean(),
  virtualTourUrl: Type.Union([Type.String(), Type.Null()], { description: '3D / video tour link.' }),
  monthlyFees: Type.Number({
    description:
      'Recurring monthly charges besides rent that every tenant pays (rentals: amenity fee, …; conditional ones such as pet rent are excluded and listed by `GET /property/{id}/fees`) or carrying costs (sales: maintenance or common charges plus taxes), USD.',
  }),
  building: Type.Union([Type.Ref(BuildingLinkSchema), Type.Null()], {
    description: 'Null only when the building record is not stored.',
  }),
  contractAt: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
    description:
      'Date the listing went into contract (sales; rentals while a lease is out for signature), in New York.',
  }),
  offMarketAt: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
    description: 'Date the listing left the market, in New York; null while on the market.',
  }),
  closedReason: Type.Union([Literals(['RENTED', 'SOLD', 'DELISTED']), Type.Null()], {
    description: 'Why the listing left the market; null while on the market.',
  }),
  updatedAt: Type.String({
    format: 'date-time',
    description: 'When the listing last changed (RESO: ModificationTimestamp).',
  }),
};

export const ListingDetailSchema = Type.Object(
  { ...ListingSummarySchema.properties, ...detailFields },
  {
    $id: 'ListingDetail',
    description:
      'Every ListingSummary field plus the detail page: description, amenities, unit features, lease terms and concessions (rentals), sale details (sales), agents, pets policy, photos, floor plan, tour, building link and status dates. A listing whose detail page was not fetched (`detailScraped: false`) has the summary fields and empty or null detail fields. Fees, price history and open houses have their own endpoints.',
  },
);
export type ListingDetail = Static<typeof ListingDetailSchema>;

export const PRICE_EVENTS = [
  'LISTED',
  'PRICE_DECREASE',
  'PRICE_INCREASE',
  'IN_CONTRACT',
  'RENTED',
  'SOLD',
  'DELISTED',
  'RELISTED',
] as const;

export const PriceEventSchema = Type.Object(
  {
    date: Type.String({ format: 'date' }),
    price: Type.Number({ description: 'Price at the event (for RENTED/SOLD: the closing price), USD.' }),
    event: Literals(PRICE_EVENTS),
    pctChange: Type.Union([Type.Number(), Type.Null()], {
      description: "Percent change from the previous event's price, 2 decimals; null for the first event.",
    }),
  },
  { $id: 'PriceEvent', description: 'One event of a listing timeline.' },
);
export type PriceEvent = Static<typeof PriceEventSchema>;

export const FeeSchema = Type.Object(
  {
    typeLabel: Type.String({ description: 'e.g. `Broker fee`, `Application fee`, `Mansion tax`.' }),
    category: Type.String({
      description: 'e.g. `BROKER`, `APPLICATION`, `DEPOSIT`, `BUILDING`, `PET`, `TRANSFER`, `TAX`.',
    }),
    requirement: Type.String({ description: '`REQUIRED` or `CONDITIONAL`.' }),
    refundability: Type.String({ description: '`REFUNDABLE` or `NON_REFUNDABLE`.' }),
    calcType: Type.String({
      description:
        'How `amount` is expressed: `FLAT` (USD), `MONTHS_OF_RENT`, `PERCENT_OF_ANNUAL_RENT`, `PERCENT_OF_PRICE`, `MONTHS_OF_COMMON_CHARGES`.',
    }),
    amount: Type.Number(),
    timing: Type.String({
      description: 'e.g. `AT_APPLICATION`, `AT_LEASE_SIGNING`, `BEFORE_MOVE_IN`, `WITH_RENT`, `AT_CLOSING`.',
    }),
    occurrence: Type.String({ description: '`ONE_TIME` or `MONTHLY`.' }),
  },
  { $id: 'Fee', description: 'A fee a renter or buyer pays besides rent or price.' },
);
export type Fee = Static<typeof FeeSchema>;

export const OpenHouseSchema = Type.Object(
  {
    id: Type.String(),
    startsAt: Type.String({ format: 'date-time' }),
    endsAt: Type.String({ format: 'date-time' }),
    kind: Literals(['IN_PERSON', 'VIRTUAL']),
    byAppointment: Type.Boolean({ description: 'Visits must be booked with the agent first.' }),
    note: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'OpenHouse', description: 'A scheduled open house (RESO: OpenHouse).' },
);
export type OpenHouse = Static<typeof OpenHouseSchema>;

export const ListingDetailResponse = dataResponse(Type.Ref(ListingDetailSchema));
export type ListingDetailResponse = Static<typeof ListingDetailResponse>;
export const PriceHistoryResponse = dataResponse(Type.Array(Type.Ref(PriceEventSchema)));
export type PriceHistoryResponse = Static<typeof PriceHistoryResponse>;
export const FeesResponse = dataResponse(Type.Array(Type.Ref(FeeSchema)));
export type FeesResponse = Static<typeof FeesResponse>;
export const OpenHousesResponse = dataResponse(Type.Array(Type.Ref(OpenHouseSchema)));
export type OpenHousesResponse = Static<typeof OpenHousesResponse>;

export const PROPERTY_SCHEMAS: TSchema[] = [
  UnitFeaturesSchema,
  LeaseTermsSchema,
  ConcessionsSchema,
  SaleDetailsSchema,
  AgentSchema,
  PetsPolicySchema,
  BuildingLinkSchema,
  FloorPlanSchema,
  ListingDetailSchema,
  PriceEventSchema,
  FeeSchema,
  OpenHouseSchema,
];
