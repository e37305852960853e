/**
 * Webhook API schemas: validation, serialization, OpenAPI and types of the
 * subscription and delivery routes.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { LISTING_EVENT_TYPES, WEBHOOK_EVENT_TYPES } from '../../domain/events.ts';
import {
  detailErrors,
  OwnRecordsListMeta,
  ownRecordMeta,
  PageQuery,
  StringEnum,
} from '../../http/schemas.ts';
import { AreaParam } from '../areas/areas.schema.ts';

const MAX_PRICE = 1_000_000_000;
/** Subscriptions an account may hold: bounds the fan-out work one account can cause. */
export const MAX_SUBSCRIPTIONS_PER_ACCOUNT = 100;

export const WebhookFiltersSchema = Type.Object(
  {
    areas: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 99_999_999 }), {
        minItems: 1,
        maxItems: 100,
        description:
          'Area ids (see `GET /v1/areas`); each includes its descendants (`100` is all of Manhattan). Unknown ids are a 400.',
      }),
    ),
    listingType: Type.Optional(StringEnum(['rental', 'sale'])),
    minPrice: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_PRICE, description: 'Inclusive, USD.' })),
    maxPrice: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_PRICE, description: 'Inclusive, USD.' })),
    minBeds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 20, description: 'Inclusive; 0 is a studio.' }),
    ),
    maxBeds: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, description: 'Inclusive.' })),
  },
  {
    $id: 'WebhookFilters',
    additionalProperties: false,
    description:
      'Optional narrowing of a subscription (beyond the spec, which matches on event type only): an event is delivered when its listing matches every filter given. Price and bedrooms are the listing’s when the event is fanned out (for a price change, its new price).',
  },
);
export type WebhookFilters = Static<typeof WebhookFiltersSchema>;

/**
 * Filters as a request sends them: `areas` items may also be an area's slug,
 * name or alias (`"UWS"`). They are resolved when the subscription is written
 * and stored (and answered) as ids, so a later change to the alias list never
 * changes what a subscription matches.
 */
export const WebhookFiltersInputSchema = Type.Object(
  {
    ...WebhookFiltersSchema.properties,
    areas: Type.Optional(
      Type.Array(Type.Union([Type.Integer({ minimum: 1, maximum: 99_999_999 }), AreaParam()]), {
        minItems: 1,
        maxItems: 100,
        description:
          'Areas: ids, or slugs, names or common aliases (`"upper-west-side"`, `"UWS"`), stored and answered as ids; each includes its descendants (`100` is all of Manhattan). An unknown or ambiguous name is a 400 suggesting the closest areas.',
      }),
    ),
  },
  {
    $id: 'WebhookFiltersInput',
    additionalProperties: false,
    description: `${WebhookFiltersSchema.description} Areas may be given by name; the subscription answers with their ids.`,
  },
);
export type WebhookFiltersInput = Static<typeof WebhookFiltersInputSchema>;

const eventsField = Type.Array(Type.String({ maxLength: 100 }), {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  description: `Event types to receive: any of ${LISTING_EVENT_TYPES.map((t) => `\`${t}\``).join(', ')} (citywide, narrowed by \`filters\`), and \`watcher.change\` (what this account's own watchers detect; \`filters\` do not apply). An unknown name is a 400 listing the valid ones.`,
});

const urlField = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'Where deliveries are POSTed: an https URL without credentials whose host resolves to public addresses only (checked now and at every delivery).',
});

export const WebhookSchema = Type.Object(
  {
    id: Type.String({ description: 'Subscription id (`wh_…`).' }),
    url: Type.String(),
    events: Type.Array(StringEnum(WEBHOOK_EVENT_TYPES)),
    filters: Type.Union([Type.Ref(WebhookFiltersSchema), Type.Null()]),
    active: Type.Boolean({
      description: 'Inactive subscriptions receive nothing (queued deliveries are cancelled).',
    }),
    disabledReason: Type.Union([Type.String(), Type.Null()], {
      description:
        'Why the service deactivated the subscription (an endpoint failing for 5 days); null otherwise.',
    }),
    failingSince: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Start of the current run of failed deliveries; null while deliveries succeed.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Webhook', additionalProperties: false },
);
export type WebhookView = Static<typeof WebhookSchema>;

export const WebhookWithSecretSchema = Type.Object(
  {
    ...WebhookSchema.properties,
    secret: Type.String({
      description:
        'Signing secret (`whsec_` + base64 of 24 random bytes). Shown only in the create and rotate-secret responses.',
    }),
    previousSecretExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description:
        'Until when the previous secret still signs deliveries too (after a rotation); null otherwise.',
    }),
  },
  { $id: 'WebhookWithSecret', additionalProperties: false },
);
export type WebhookWithSecretView = Static<typeof WebhookWithSecretSchema>;

export const DELIVERY_STATUSES = ['pending', 'delivering', 'succeeded', 'failed', 'cancelled'] as const;

export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'Delivery id (`whd_…`).' }),
    eventId: Type.String({
      description: 'The payload `id` and the `webhook-id` header (stable across retries).',
    }),
    eventType: Type.String(),
    status: StringEnum(DELIVERY_STATUSES, {
      description:
        '`pending`: waiting for its next attempt; `delivering`: an attempt is in flight; `succeeded`: a 2xx was received; `failed`: every attempt failed (retry it by hand); `cancelled`: the subscription was deactivated before it was delivered.',
    }),
    attempts: Type.Integer({ minimum: 0 }),
    responseStatus: Type.Union([Type.Integer(), Type.Null()], {
      description: 'HTTP status of the last attempt.',
    }),
    latencyMs: Type.Union([Type.Integer(), Type.Null()], { description: 'Duration of the last attempt.' }),
    nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    lastAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()], {
      description:
        'Why the last attempt failed (status, timeout, refused address, …), or why the endpoint was disabled.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookDelivery', additionalProperties: false },
);
export type WebhookDeliveryView = Static<typeof WebhookDeliverySchema>;

export const CreateWebhookBody = Type.Object(
  {
    url: urlField,
    events: eventsField,
    filters: Type.Optional(Type.Union([Type.Ref(WebhookFiltersInputSchema), Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(urlField),
    events: Type.Optional(eventsField),
    filters: Type.Optional(Type.Union([Type.Ref(WebhookFiltersInputSchema), Type.Null()])),
    active: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'Any of the fields; at least one. Fields left out are unchanged; `filters: null` removes them.',
  },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const WebhookIdParams = Type.Object({
  id: Type.String({ maxLength: 64, description: 'Subscription id (`wh_…`).' }),
});
export const DeliveryIdParams = Type.Object({
  id: Type.String({ maxLength: 64, description: 'Subscription id (`wh_…`).' }),
  deliveryId: Type.String({ maxLength: 64, description: 'Delivery id (`whd_…`).' }),
});

export const WebhookListQuery = Type.Object({
  ...PageQuery,
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 20 })),
});
export const DeliveryListQuery = Type.Object({
  ...PageQuery,
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 20 })),
  status: Type.Optional(StringEnum(DELIVERY_STATUSES, { description: 'Only deliveries in this status.' })),
});

const plainMeta = ownRecordMeta('Subscriptions are the caller’s own records: always read live.');
const listMeta = OwnRecordsListMeta;

export const WebhookResponse = Type.Object({ data: Type.Ref(WebhookSchema), meta: plainMeta });
export const WebhookWithSecretResponse = Type.Object(
  { data: Type.Ref(WebhookWithSecretSchema) },
  { description: 'The subscription with its signing secret (shown only here).' },
);
export const WebhookListResponse = Type.Object({ data: Type.Array(Type.Ref(WebhookSchema)), meta: listMeta });
export const DeliveryResponse = Type.Object({ data: Type.Ref(WebhookDeliverySchema), meta: plainMeta });
export const DeliveryListResponse = Type.Object({
  data: Type.Array(Type.Ref(WebhookDeliverySchema)),
  meta: listMeta,
});

/** Errors every webhook route can answer with (auth, tier gate, limits, store outage). */
export const webhookErrors = detailErrors;

export const WEBHOOK_SCHEMAS: TSchema[] = [
  WebhookFiltersSchema,
  WebhookFiltersInputSchema,
  WebhookSchema,
  WebhookWithSecretSchema,
  WebhookDeliverySchema,
];
