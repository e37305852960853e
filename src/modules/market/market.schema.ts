import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { BUILDING_TYPES, SALE_TYPES } from '../../domain/listing.ts';
import { DateString, MetaSchema, ResolvedAreasField, readErrors, StringEnum } from '../../http/schemas.ts';
import { AreaListParam, AreaParam } from '../areas/areas.schema.ts';
import { MIN_SAMPLE } from './statistics.ts';
import { MAX_DAYS_BACK, MAX_MONTHS_BACK, TREND_INTERVALS, TREND_METRICS } from './trends.ts';

const NULL_RULE = `\`null\` when fewer than ${MIN_SAMPLE} observations stand behind it (never 0).`;
const nullableNumber = (description: string) =>
  Type.Union([Type.Number(), Type.Null()], { description: `${description} ${NULL_RULE}` });

export const FigureSchema = Type.Object(
  {
    value: nullableNumber('The figure.'),
    n: Type.Integer({
      minimum: 0,
      description: 'Observations behind the figure (for a share: the denominator).',
    }),
  },
  {
    $id: 'MarketFigure',
    description: `One figure and the number of observations behind it. Figures from fewer than ${MIN_SAMPLE} observations are null.`,
  },
);

export const DistributionSchema = Type.Object(
  {
    n: Type.Integer({ minimum: 0, description: 'Listings with a value.' }),
    mean: nullableNumber('Arithmetic mean.'),
    p10: nullableNumber('10th percentile.'),
    p25: nullableNumber('25th percentile.'),
    median: nullableNumber('Median (50th percentile).'),
    p75: nullableNumber('75th percentile.'),
    p90: nullableNumber('90th percentile.'),
  },
  {
    $id: 'MarketDistribution',
    description: `Summary of one value over the listings that have it. Quantiles interpolate linearly between closest ranks (Hyndman–Fan type 7, as R and NumPy by default); rounded to 2 decimals. Every figure is null when n < ${MIN_SAMPLE}.`,
  },
);

const figure = (description: string) => Type.Ref(FigureSchema, { description });

const commonSnapshot = {
  areaId: Type.Integer({ description: 'The area; figures include all its descendants.' }),
  areaName: Type.String(),
  bedrooms: Type.Union([Type.Integer({ minimum: 0, maximum: 4 }), Type.Null()], {
    description: 'Bedroom bucket (0 = studio, 4 = 4 or more); null: every bedroom count.',
  }),
  buildingType: Type.Union([StringEnum(BUILDING_TYPES), Type.Null()], {
    description: 'Building type filter; null: every type.',
  }),
  computedAt: Type.String({ format: 'date-time', description: 'When these figures were computed.' }),
  minSample: Type.Integer({ description: `Smallest sample a figure is published from (${MIN_SAMPLE}).` }),
  inventory: Type.Integer({ minimum: 0, description: 'ACTIVE listings matching.' }),
  newListings7d: Type.Integer({
    minimum: 0,
    description:
      'Of those, listed in the 7 days before computedAt (listed_at in (computedAt − 7 d, computedAt]).',
  }),
  newListings30d: Type.Integer({
    minimum: 0,
    description: 'Of those, listed in the 30 days before computedAt.',
  }),
  price: Type.Ref(DistributionSchema, { description: 'Asking price (monthly rent or sale price), USD.' }),
  pricePerSqft: Type.Ref(DistributionSchema, {
    description: 'Price per square foot, USD, over listings with a size.',
  }),
  daysOnMarket: figure('Median whole days since listing, over listings with a known listing date.'),
  priceCutShare: figure('Share (0–1) of listings whose latest price change was a cut (price_delta < 0).'),
  medianPriceCutPct: figure(
    'Median size of the latest cut among cut listings, in percent of the price before it: −delta / (price − delta) × 100 (4,000 → 3,800 is 5).',
  ),
};

export const RentalSnapshotSchema = Type.Object(
  {
    ...commonSnapshot,
    listingType: Type.Literal('rental'),
    netEffectiveRent: figure('Median net-effective rent (rent net of concessions over the lease), USD.'),
    concessionShare: figure('Share (0–1) of listings offering free months (months_free > 0).'),
    noFeeShare: figure('Share (0–1) of no-fee listings.'),
  },
  { $id: 'RentalMarketSnapshot', description: 'Market figures over ACTIVE rental listings.' },
);
export type RentalSnapshot = Static<typeof RentalSnapshotSchema>;

export const SaleSnapshotSchema = Type.Object(
  {
    ...commonSnapshot,
    listingType: Type.Literal('sale'),
    saleTypeMix: Type.Array(
      Type.Object({
        saleType: StringEnum(SALE_TYPES),
        count: Type.Integer({ minimum: 0 }),
        share: figure('Share (0–1) of the inventory.'),
      }),
      { description: 'Every sale type, with its count and share of the inventory.' },
    ),
  },
  { $id: 'SaleMarketSnapshot', description: 'Market figures over ACTIVE sale listings.' },
);
export type SaleSnapshot = Static<typeof SaleSnapshotSchema>;

export const MarketMetaSchema = Type.Object(
  {
    ...MetaSchema.properties,
    warnings: Type.Array(Type.String(), {
      description: 'Non-fatal notes: missing history, backfill in progress, …',
    }),
    areas: ResolvedAreasField,
  },
  {
    $id: 'MarketMeta',
    description: 'Freshness fields (`dataAge` is when the figures were computed) and warnings.',
  },
);

const snapshotQuery = {
  areaId: AreaParam({
    description:
      'The area: its id (numeric), slug, name or common alias (`100`, `upper-west-side`, `UWS`); the figures include every descendant (`1` is all of NYC + NJ, `100` Manhattan). An unknown or ambiguous name is a 400 suggesting the closest areas; `meta.areas` says what it resolved to.',
  }),
  bedrooms: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 4,
      description: '0 = studio … 4 = 4 or more. Omitted: every bedroom count.',
    }),
  ),
  buildingType: Type.Optional(StringEnum(BUILDING_TYPES, { description: 'Only this building type.' })),
};
export const SnapshotQuery = Type.Object(snapshotQuery);
export type SnapshotQuery = Static<typeof SnapshotQuery>;

export const RentalSnapshotResponse = Type.Object({
  data: Type.Ref(RentalSnapshotSchema),
  meta: Type.Ref(MarketMetaSchema),
});
export const SaleSnapshotResponse = Type.Object({
  data: Type.Ref(SaleSnapshotSchema),
  meta: Type.Ref(MarketMetaSchema),
});

/** Most areas one comparison may name. */
export const MAX_COMPARE_AREAS = 5;

export const CompareQuery = Type.Object({
  areas: AreaListParam(null, {
    maxLength: 500,
    description: `Comma-separated areas, 1 to ${MAX_COMPARE_AREAS}, each an id (numeric), slug, name or common alias (\`100,UWS,williamsburg\`); each includes its descendants. More than ${MAX_COMPARE_AREAS} distinct areas, or an unknown or ambiguous name, is a 400. \`meta.areas\` says what each resolved to.`,
  }),
  listingType: Type.Optional(
    StringEnum(['rentals', 'sales'] as const, { default: 'rentals', description: 'Default `rentals`.' }),
  ),
  bedrooms: snapshotQuery.bedrooms,
  buildingType: snapshotQuery.buildingType,
});
export type CompareQuery = Static<typeof CompareQuery>;

export const CompareResponse = Type.Object({
  data: Type.Union([Type.Array(Type.Ref(RentalSnapshotSchema)), Type.Array(Type.Ref(SaleSnapshotSchema))], {
    description: 'One snapshot per requested area, in request order.',
  }),
  meta: Type.Ref(MarketMetaSchema),
});
export type CompareResponse = Static<typeof CompareResponse>;

export const marketErrors = readErrors;

export const TrendQuery = Type.Object({
  areaId: snapshotQuery.areaId,
  bedrooms: snapshotQuery.bedrooms,
  metric: StringEnum(TREND_METRICS, {
    default: 'median_price',
    description:
      'Default `median_price`. `median_price`, `median_price_per_sqft`, `median_days_on_market`: medians over the listings active at the end of each day. `inventory`: active listings at the end of the day. `new_listings`: listings listed that day.',
  }),
  interval: StringEnum(TREND_INTERVALS, {
    default: 'day',
    description:
      'Default `day`. `week` (ISO weeks, Monday start) and `month` points read levels (medians, inventory) on the last covered day of the period and sum `new_listings` over it.',
  }),
  from: Type.Optional(
    DateString({
      description: `First day (UTC), inclusive. At most ${MAX_DAYS_BACK} days back for day and week series, ${MAX_MONTHS_BACK} months for month series. Default: 30 days, 12 weeks or 12 months before \`to\`.`,
    }),
  ),
  to: Type.Optional(
    DateString({
      description: 'Last day (UTC), inclusive; not after today. Default: yesterday (the last complete day).',
    }),
  ),
});
export type TrendQuery = Static<typeof TrendQuery>;

export const TrendSchema = Type.Object(
  {
    areaId: Type.Integer(),
    areaName: Type.String(),
    listingType: StringEnum(['rental', 'sale'] as const),
    bedrooms: Type.Union([Type.Integer({ minimum: 0, maximum: 4 }), Type.Null()], {
      description: 'Bedroom bucket (4 = 4 or more); null: every bedroom count.',
    }),
    metric: StringEnum(TREND_METRICS),
    interval: StringEnum(TREND_INTERVALS),
    from: Type.String({ format: 'date' }),
    to: Type.String({ format: 'date' }),
    aggregation: StringEnum(['last_day', 'sum'] as const, {
      description:
        '`last_day`: each point is the snapshot of the last covered day of its period; `sum`: the total over its covered days.',
    }),
    points: Type.Array(
      Type.Object({
        periodStart: Type.String({
          format: 'date',
          description: 'First day of the period, clipped to `from`.',
        }),
        periodEnd: Type.String({ format: 'date', description: 'Last day of the period, clipped to `to`.' }),
        value: nullableNumber('The metric. Null also when no day of the period has been materialized.'),
        n: Type.Integer({ minimum: 0, description: 'Listings behind the value.' }),
        coveredDays: Type.Integer({
          minimum: 0,
          description: 'Days of the period with materialized snapshots.',
        }),
      }),
    ),
  },
  {
    $id: 'MarketTrend',
    description:
      'A series read from daily snapshots materialized by a background job. A listing counts as active on day d when listed before the end of d and neither in contract nor off the market by then; its price on d is its latest price event on or before d.',
  },
);
export type TrendData = Static<typeof TrendSchema>;

export const TrendResponse = Type.Object({ data: Type.Ref(TrendSchema), meta: Type.Ref(MarketMetaSchema) });

/** Registered with `app.addSchema` (and the test validator) so OpenAPI shows them as components. */
export const MARKET_SCHEMAS: TSchema[] = [
  FigureSchema,
  DistributionSchema,
  RentalSnapshotSchema,
  SaleSnapshotSchema,
  MarketMetaSchema,
  TrendSchema,
];
