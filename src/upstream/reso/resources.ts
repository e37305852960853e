/**
 * The RESO Web API resources Stoop reads, as wire schemas (TypeBox: one
 * definition gives the TypeScript type and the validator the decoder runs).
 *
 * Standard fields use RESO Data Dictionary 2.0 names. Enumerations are sent in
 * their compact OData form (`ActiveUnderContract`, `ResidentialLease`); the
 * decoder also accepts the spaced display form (`Active Under Contract`).
 * Records may carry any other fields (real feeds carry hundreds): they are
 * ignored.
 *
 * Local fields. Where the Data Dictionary has no field for something Stoop's
 * model needs, the record carries a local field named `STOOP_<Name>` (the
 * RESO convention for non-standard fields is a prefix). A feed that is not the
 * Stoop market simulator needs an enrichment step that adds the required ones.
 *
 * Property, summary (every page):
 * - STOOP_AreaId (integer, required): Stoop area (neighborhood) id.
 * - STOOP_BuildingId (string, required): Stoop building id (`Building` resource key).
 * - STOOP_BuildingType (string, required): RENTAL, CONDO, COOP, CONDOP, TOWNHOUSE,
 *   MULTI_FAMILY or HOUSE (PropertySubType is also sent where a standard value fits).
 * - STOOP_UrlPath (string, required): path of the listing's page, e.g. `/rental/123`.
 * - STOOP_NoFee (boolean, required): no broker fee for the tenant (rentals).
 * - STOOP_SaleType (RESALE | SPONSOR_UNIT | FORECLOSURE | null): sales only.
 * - STOOP_NetEffectiveRent (integer | null): rent net of concessions (rentals).
 * - STOOP_MonthsFree (number | null), STOOP_LeaseTermMonths (integer | null): rentals.
 * - STOOP_MonthlyFees (integer, required): recurring monthly charges every
 *   tenant or owner pays (amenity fee; maintenance or common charges plus
 *   taxes); conditional ones such as pet rent are not included.
 * - STOOP_Amenities (string[], required): Stoop amenity vocabulary, listing and
 *   building merged (src/domain/amenities.ts); unknown names are ignored.
 * - STOOP_Has3DTour (boolean, required).
 * - STOOP_LeadPhotoKey (string | null): key of the lead photo, for pages read
 *   without `$expand=Media`.
 * - STOOP_DetailAvailable (boolean, required): upstream keeps a detail page
 *   (details, fees, photos, open houses) for the listing.
 * - STOOP_OpenHouseStarts (timestamp[], required): starts of the open houses
 *   upstream lists, for pages read without `$expand=OpenHouse`.
 * Property, detail (full record: `Property('key')`, or a page with `$expand`):
 * - STOOP_UnitFeatures, STOOP_LeaseTerms, STOOP_Concessions, STOOP_SaleDetails,
 *   STOOP_PetsPolicy (object | null), STOOP_Agents (object[] | null): the detail
 *   page's sub-records, as JSON values.
 * - STOOP_Fees (object[]): move-in and closing fees, Stoop's fee model.
 * Media: STOOP_RenderSeed (integer): seed the demo renders the image from.
 * Building (a local resource, RESO has none): every field prefixed STOOP_ that
 * has no Property-level standard equivalent; see `ResoBuildingSchema`.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** ISO 8601 instant with an explicit offset (RESO DateTimeOffset). */
const Timestamp = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$',
});
const DateOnly = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' });
const Key = Type.String({ minLength: 1 });
const Count = Type.Integer({ minimum: 0 });
const Money = Type.Number({ minimum: 0 });
const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const ResoMediaSchema = Type.Object({
  MediaKey: Key,
  /** `Photo` or `FloorPlan`. */
  MediaCategory: Type.String(),
  Order: Count,
  ImageWidth: Type.Optional(Nullable(Count)),
  ImageHeight: Type.Optional(Nullable(Count)),
  ShortDescription: Type.Optional(Nullable(Type.String())),
  ResourceName: Type.Optional(Type.String()),
  ResourceRecordKey: Type.Optional(Type.String()),
  STOOP_RenderSeed: Type.Optional(Nullable(Type.Integer())),
});
export type ResoMedia = Static<typeof ResoMediaSchema>;

export const ResoOpenHouseSchema = Type.Object({
  OpenHouseKey: Key,
  ListingKey: Type.Optional(Type.String()),
  OpenHouseDate: Type.Optional(DateOnly),
  OpenHouseStartTime: Timestamp,
  OpenHouseEndTime: Timestamp,
  /** `Public`, `Broker`, `Office`, or a `Livestream…` variant (a virtual open house). */
  OpenHouseType: Type.String(),
  AppointmentRequiredYN: Type.Boolean(),
  OpenHouseRemarks: Type.Optional(Nullable(Type.String())),
});
export type ResoOpenHouse = Static<typeof ResoOpenHouseSchema>;

export const ResoFeeSchema = Type.Object({
  type_label: Type.String(),
  category: Type.String(),
  requirement: Type.String(),
  refundability: Type.String(),
  calc_type: Type.String(),
  amount: Type.Number(),
  timing: Type.String(),
  occurrence: Type.String(),
});

/** Fields of every Property record (the `$select` of a page read without `$expand`). */
export const ResoPropertySummarySchema = Type.Object({
  ListingKey: Key,
  ModificationTimestamp: Timestamp,
  OriginalEntryTimestamp: Timestamp,
  /** `ResidentialLease` (rental) or `Residential` (sale). */
  PropertyType: Type.String(),
  PropertySubType: Type.Optional(Nullable(Type.String())),
  /** Active, ActiveUnderContract, Pending, Closed, Withdrawn, Canceled, Expired, Hold, Delete. */
  StandardStatus: Type.String(),
  ListPrice: Money,
  BedroomsTotal: Count,
  BathroomsFull: Count,
  BathroomsHalf: Count,
  LivingArea: Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0 }))),
  LivingAreaUnits: Type.Optional(Nullable(Type.String())),
  UnparsedAddress: Type.Optional(Nullable(Type.String())),
  StreetNumber: Type.Optional(Nullable(Type.String())),
  StreetName: Type.String({ minLength: 1 }),
  UnitNumber: Type.Optional(Nullable(Type.String())),
  City: Type.String(),
  StateOrProvince: Type.String(),
  PostalCode: Type.String(),
  Latitude: Type.Number({ minimum: -90, maximum: 90 }),
  Longitude: Type.Number({ minimum: -180, maximum: 180 }),
  ListOfficeName: Type.String(),
  /** Date only: the listing date is approximate (known to the day). */
  OnMarketDate: Type.Optional(Nullable(DateOnly)),
  OnMarketTimestamp: Type.Optional(Nullable(Timestamp)),
  AvailabilityDate: Type.Optional(Nullable(DateOnly)),
  PendingTimestamp: Type.Optional(Nullable(Timestamp)),
  PurchaseContractDate: Type.Optional(Nullable(DateOnly)),
  OffMarketTimestamp: Type.Optional(Nullable(Timestamp)),
  OffMarketDate: Type.Optional(Nullable(DateOnly)),
  CloseDate: Type.Optional(Nullable(DateOnly)),
  /** `Yes` / `No` (other DD values such as `CatsOK` read as yes). */
  PetsAllowed: Type.Array(Type.String()),
  STOOP_AreaId: Type.Integer(),
  STOOP_BuildingId: Key,
  STOOP_BuildingType: Type.String(),
  STOOP_UrlPath: Type.String(),
  STOOP_NoFee: Type.Boolean(),
  STOOP_SaleType: Type.Optional(Nullable(Type.String())),
  STOOP_NetEffectiveRent: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  STOOP_MonthsFree: Type.Optional(Nullable(Type.Number({ minimum: 0 }))),
  STOOP_LeaseTermMonths: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  STOOP_MonthlyFees: Type.Integer({ minimum: 0 }),
  STOOP_Amenities: Type.Array(Type.String()),
  STOOP_Has3DTour: Type.Boolean(),
  STOOP_LeadPhotoKey: Type.Optional(Nullable(Type.String())),
  STOOP_DetailAvailable: Type.Boolean(),
  STOOP_OpenHouseStarts: Type.Array(Timestamp),
});

/** Fields of the detail page, present in full records and `$expand`ed pages. */
export const ResoPropertyDetailSchema = Type.Object({
  PublicRemarks: Nullable(Type.String()),
  VirtualTourURLUnbranded: Type.Optional(Nullable(Type.String())),
  STOOP_UnitFeatures: Nullable(JsonObject),
  STOOP_LeaseTerms: Type.Optional(Nullable(JsonObject)),
  STOOP_Concessions: Type.Optional(Nullable(JsonObject)),
  STOOP_SaleDetails: Type.Optional(Nullable(JsonObject)),
  STOOP_Agents: Nullable(Type.Array(JsonObject)),
  STOOP_PetsPolicy: Nullable(JsonObject),
  STOOP_Fees: Type.Array(ResoFeeSchema),
  Media: Type.Array(ResoMediaSchema),
  OpenHouse: Type.Array(ResoOpenHouseSchema),
});

export type ResoPropertySummary = Static<typeof ResoPropertySummarySchema>;
export type ResoPropertyDetail = Static<typeof ResoPropertyDetailSchema>;
/** A Property record as Stoop writes it: the summary, plus the detail when known. */
export type ResoProperty = ResoPropertySummary & Partial<ResoPropertyDetail>;

export const ResoBuildingSchema = Type.Object({
  BuildingKey: Key,
  ModificationTimestamp: Timestamp,
  BuildingName: Type.String(),
  UnparsedAddress: Type.String(),
  City: Type.String(),
  StateOrProvince: Type.String(),
  PostalCode: Type.String(),
  Latitude: Type.Number({ minimum: -90, maximum: 90 }),
  Longitude: Type.Number({ minimum: -180, maximum: 180 }),
  YearBuilt: Nullable(Type.Integer()),
  StoriesTotal: Nullable(Count),
  NumberOfUnitsTotal: Nullable(Count),
  /** Borough-Block-Lot. */
  ParcelNumber: Nullable(Type.String()),
  BuilderName: Nullable(Type.String()),
  PetsAllowed: Type.Array(Type.String()),
  STOOP_Slug: Type.String({ minLength: 1 }),
  STOOP_AreaId: Type.Integer(),
  STOOP_BuildingType: Type.String(),
  STOOP_YearRenovated: Nullable(Type.Integer()),
  /** NYC Building Identification Number. */
  STOOP_Bin: Nullable(Type.String()),
  STOOP_ManagementCompany: Nullable(Type.String()),
  STOOP_Architect: Nullable(Type.String()),
  STOOP_TaxAbatementStatus: Nullable(Type.String()),
  STOOP_TaxAbatementYearsRemaining: Nullable(Type.Integer()),
  STOOP_Amenities: JsonObject,
  STOOP_Policies: JsonObject,
  STOOP_NycData: JsonObject,
  STOOP_AdditionalDetails: JsonObject,
  /** FCC broadband record; `providers[]` carry technologyCode and maxDownloadMbps. */
  STOOP_InternetProviders: Nullable(
    Type.Object({
      providers: Type.Array(Type.Object({ technologyCode: Type.Integer(), maxDownloadMbps: Type.Number() })),
    }),
  ),
  STOOP_Scores: Nullable(
    Type.Object({
      health_score: Nullable(Type.Number()),
      noise_score: Nullable(Type.Number()),
      safety_score: Nullable(Type.Number()),
      transit_score: Nullable(Type.Number()),
      violations_open: Count,
      updated_at: Timestamp,
    }),
  ),
  Media: Type.Array(ResoMediaSchema),
});
export type ResoBuilding = Static<typeof ResoBuildingSchema>;

/** `$select` of a page read without expansion. */
export const PROPERTY_SUMMARY_FIELDS: readonly string[] = Object.keys(ResoPropertySummarySchema.properties);
/** Detail fields that are plain properties (Media and OpenHouse come by `$expand`). */
export const PROPERTY_DETAIL_FIELDS: readonly string[] = Object.keys(
  ResoPropertyDetailSchema.properties,
).filter((field) => field !== 'Media' && field !== 'OpenHouse');
export const PROPERTY_EXPANSIONS = ['Media', 'OpenHouse'] as const;
export const BUILDING_FIELDS: readonly string[] = Object.keys(ResoBuildingSchema.properties).filter(
  (field) => field !== 'Media',
);

export const checkSummary = TypeCompiler.Compile(ResoPropertySummarySchema);
export const checkDetail = TypeCompiler.Compile(ResoPropertyDetailSchema);
export const checkBuilding = TypeCompiler.Compile(ResoBuildingSchema);
