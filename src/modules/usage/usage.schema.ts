import { type Static, Type } from '@sinclair/typebox';
import { TIERS } from '../../domain/tiers.ts';
import { StringEnum } from '../../http/schemas.ts';

export const UsageSchema = Type.Object(
  {
    tier: StringEnum(TIERS),
    quota: Type.Integer({ description: 'Counted requests included per calendar month (UTC).' }),
    used: Type.Integer({
      description:
        "Counted requests so far this month (overage included), by every key of the caller's account.",
    }),
    remaining: Type.Integer({ description: 'quota − used, never below 0.' }),
    overageLimit: Type.Integer({
      description:
        'Requests allowed past the quota this month. They succeed and carry `X-Quota-Overage: true`; past quota + overageLimit requests get 429 QUOTA_EXCEEDED until the next month.',
    }),
    percentUsed: Type.Number({ description: 'used / quota × 100, two decimals.' }),
    periodStart: Type.String({ format: 'date-time' }),
    periodEnd: Type.String({
      format: 'date-time',
      description: 'Exclusive: the first instant of the next month.',
    }),
  },
  { $id: 'Usage' },
);
export type Usage = Static<typeof UsageSchema>;

export const UsageResponse = Type.Object({
  data: Type.Ref(UsageSchema),
  meta: Type.Object({ dataAge: Type.Null(), source: Type.Literal('live') }),
});
