/**
 * The listing event catalogue: every event type the pipeline writes to the log,
 * and the payload consumers (webhooks, watchers, streams) receive. Published in
 * the OpenAPI document as `webhooks`, one entry per event type.
 *
 * Payload envelope after Standard Webhooks: `{ id, type, timestamp, data }`,
 * where `id` is stable per event (`evt_<sequence>`, the log position) so
 * receivers can deduplicate retried deliveries.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { OpenAPIV3_1 } from 'openapi-types';
import { LISTING_EVENT_TYPES, type ListingEventType } from '../../domain/events.ts';
import { StringEnum } from '../../http/schemas.ts';
import type { ListingEvent } from './event-log.ts';

interface EventDoc {
  summary: string;
  oldValue: string;
  newValue: string;
}

/** One entry per event type: the Record makes a type without documentation a compile error. */
const EVENT_DOCS: Record<ListingEventType, EventDoc> = {
  'listing.created': {
    summary: 'A listing was seen for the first time (any newly indexed listing, citywide).',
    oldValue: '`null`.',
    newValue: '`{ status, price }` at first sight.',
  },
  'listing.price_decreased': {
    summary: 'The asking price (rent or sale price) went down.',
    oldValue: 'previous price (number)',
    newValue: 'new price (number)',
  },
  'listing.price_increased': {
    summary: 'The asking price went up.',
    oldValue: 'previous price (number)',
    newValue: 'new price (number)',
  },
  'listing.status_changed': {
    summary:
      'The status moved between `ACTIVE`, `IN_CONTRACT` and `OFF_MARKET` (including a relist, OFF_MARKET → ACTIVE). A move to OFF_MARKET is accompanied by `listing.rented`, `listing.sold` or `listing.delisted`.',
    oldValue: 'previous status',
    newValue: 'new status',
  },
  'listing.delisted': {
    summary: 'The listing was taken off the market without a rental or sale.',
    oldValue: 'status before (`ACTIVE` or `IN_CONTRACT`)',
    newValue: 'last asking price (number)',
  },
  'listing.rented': {
    summary: 'The rental was leased.',
    oldValue: 'status before (`ACTIVE` or `IN_CONTRACT`)',
    newValue: 'last asking rent (number)',
  },
  'listing.sold': {
    summary: 'The sale closed.',
    oldValue: 'status before (usually `IN_CONTRACT`)',
    newValue: 'last asking price (number)',
  },
  'listing.open_house_added': {
    summary: 'A new open house was scheduled.',
    oldValue: '`null`.',
    newValue: '`{ id, startsAt, endsAt }` of the open house.',
  },
};

export const ListingEventDataSchema = Type.Object(
  {
    listingId: Type.String(),
    buildingId: Type.String(),
    listingType: StringEnum(['rental', 'sale']),
    areaId: Type.Union([Type.Integer(), Type.Null()], {
      description:
        "The listing's area (see `/v1/areas`) when the change was detected; null only for events logged before areas were recorded.",
    }),
    oldValue: Type.Unknown({ description: 'The value before the change (see the event type).' }),
    newValue: Type.Unknown({ description: 'The value after the change (see the event type).' }),
    occurredAt: Type.String({ format: 'date-time', description: 'When upstream says the change happened.' }),
  },
  { additionalProperties: false },
);

export const ListingEventPayloadSchema = Type.Object(
  {
    id: Type.String({
      description: 'Stable event id (`evt_<sequence>`): deduplicate retried deliveries by it.',
    }),
    sequence: Type.Integer({ minimum: 1, description: 'Position in the event log; strictly increasing.' }),
    type: StringEnum(LISTING_EVENT_TYPES),
    timestamp: Type.String({ format: 'date-time', description: 'When the service detected the change.' }),
    data: ListingEventDataSchema,
  },
  { $id: 'ListingEvent', additionalProperties: false },
);
export type ListingEventPayload = Static<typeof ListingEventPayloadSchema>;

/** The one mapping from a logged event to what consumers receive. */
export function toEventPayload(event: ListingEvent): ListingEventPayload {
  return {
    id: `evt_${event.sequence}`,
    sequence: event.sequence,
    type: event.type,
    timestamp: event.recordedAt,
    data: {
      listingId: event.listingId,
      buildingId: event.buildingId,
      listingType: event.listingType,
      areaId: event.areaId,
      oldValue: event.oldValue,
      newValue: event.newValue,
      occurredAt: event.occurredAt,
    },
  };
}

/** OpenAPI 3.1 `webhooks`: one documented POST per event type. */
export function eventWebhooks(): Record<string, OpenAPIV3_1.PathItemObject> {
  return Object.fromEntries(
    LISTING_EVENT_TYPES.map((type) => {
      const doc = EVENT_DOCS[type];
      return [
        type,
        {
          post: {
            summary: doc.summary,
            description: `${doc.summary}\n\n- \`data.oldValue\`: ${doc.oldValue}\n- \`data.newValue\`: ${doc.newValue}\n\nEvery change is detected by the refresh pipeline and written to the durable event log in the same transaction as the data.`,
            operationId: `event_${type.replace('.', '_')}`,
            tags: ['Events'],
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/ListingEvent' } } },
            },
            responses: { '2XX': { description: 'Any 2xx acknowledges the delivery.' } },
          },
        },
      ];
    }),
  );
}
