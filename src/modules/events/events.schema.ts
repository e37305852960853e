import { type Static, Type } from '@sinclair/typebox';
import { LISTING_EVENT_TYPES } from '../../domain/events.ts';
import { CommaList, PatternString } from '../../http/schemas.ts';
import { AreaListParam } from '../areas/areas.schema.ts';
import { ListingEventPayloadSchema } from './event-catalogue.ts';

export const FEED_MAX_LIMIT = 1000;
export const FEED_DEFAULT_LIMIT = 100;

const sequenceParam = (description: string) =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });

const filterParams = {
  types: Type.Optional(
    CommaList(LISTING_EVENT_TYPES, {
      maxLength: 1000,
      description: `Comma-separated event types to include (all when absent): ${LISTING_EVENT_TYPES.join(', ')}. An unknown type is a 400 listing the valid ones.`,
    }),
  ),
  // The same pattern and words as search's `areas` (one pattern, one meaning).
  areas: Type.Optional(
    AreaListParam(100, {
      maxLength: 2000,
      description:
        "Comma-separated areas (up to 100), each an area id, slug, name or common alias (`100`, `upper-west-side`, `UWS`); each includes all its descendants (`100` is all of Manhattan). Matches the listing's area. An unknown or ambiguous name is a 400 suggesting the closest areas.",
    }),
  ),
};

export const EventsQuery = Type.Object({
  after: Type.Optional(
    sequenceParam(
      'Cursor: return events with a sequence greater than this. Start at 0 (the default) and pass `meta.next` to read on.',
    ),
  ),
  ...filterParams,
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: FEED_MAX_LIMIT,
      default: FEED_DEFAULT_LIMIT,
      description: `Events per page, 1 to ${FEED_MAX_LIMIT}.`,
    }),
  ),
});
export type EventsQuery = Static<typeof EventsQuery>;

export const EventsStreamQuery = Type.Object({
  after: Type.Optional(
    sequenceParam(
      'Start after this sequence (0: the whole log). A `Last-Event-ID` header takes precedence; with neither, the stream starts at the end of the log (new events only).',
    ),
  ),
  ...filterParams,
});
export type EventsStreamQuery = Static<typeof EventsStreamQuery>;

export const EventsStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    PatternString('^[0-9]{1,15}$', 'an event sequence (digits)', {
      description:
        'Resume after this sequence: EventSource clients send the last `id:` they received when they reconnect.',
    }),
  ),
});

export const EventFeedMetaSchema = Type.Object(
  {
    next: Type.Integer({
      minimum: 0,
      description:
        'Cursor for the next page: pass it as `after`. Reading every page from 0 by `next` yields every event exactly once, in order.',
    }),
    hasMore: Type.Boolean({
      description:
        'True when more events may already be available after `next` (read on at once); false when the page reached the end of the log. A page can be empty with `hasMore: true` when a filter matched nothing in the stretch of log scanned.',
    }),
    latest: Type.Integer({
      minimum: 0,
      description: 'The highest sequence in the log when the page was read.',
    }),
    limit: Type.Integer({ minimum: 1 }),
  },
  { $id: 'EventFeedMeta' },
);

export const EventFeedResponse = Type.Object({
  data: Type.Array(Type.Ref(ListingEventPayloadSchema)),
  meta: Type.Ref(EventFeedMetaSchema),
});
export type EventFeedResponse = Static<typeof EventFeedResponse>;

export const EVENTS_SCHEMAS = [EventFeedMetaSchema];
