/**
 * Watcher API schemas: validation, serialization, OpenAPI and types of the
 * watcher routes and of the change payload they stream and deliver.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import {
  detailErrors,
  OwnRecordsListMeta,
  ownRecordMeta,
  PageQuery,
  PatternString,
  StringEnum,
} from '../../http/schemas.ts';
import { RentalSearchQuery, SaleSearchQuery } from '../search/search.schema.ts';

export const WATCH_TYPES = ['listing', 'building', 'search'] as const;
export const WATCHER_STATUSES = ['active', 'paused'] as const;
/** Why a watcher is paused: by its owner, or by the service (quota used up, tier no longer Business+). */
export const PAUSED_REASONS = ['by_owner', 'quota_exceeded', 'tier_restricted'] as const;
export type PausedReason = (typeof PAUSED_REASONS)[number];

/** Default poll interval, seconds. */
export const DEFAULT_POLL_INTERVAL_S = 900;
/** Longest poll interval, seconds (a day). */
export const MAX_POLL_INTERVAL_S = 86_400;
/** Watchers an account may hold: bounds the polling one account can cause. */
export const MAX_WATCHERS_PER_ACCOUNT = 100;
/** The type of a watcher change (SSE `change` event, webhook payload). */
export const WATCHER_CHANGE_EVENT = 'watcher.change';

const { page: _page, perPage: _perPage, ...rentalFilters } = RentalSearchQuery.properties;
const { saleType } = SaleSearchQuery.properties;

/**
 * A search as the search endpoints take it, as a JSON object: their
 * parameters (JSON types: numbers and booleans, comma lists as strings),
 * without paging, plus `listingType`.
 */
export const SearchFiltersSchema = Type.Object(
  {
    listingType: StringEnum(['rental', 'sale'], {
      description: 'Which search: `rental` (`GET /v1/search/rentals`) or `sale` (`GET /v1/search/sales`).',
    }),
    ...rentalFilters,
    saleType,
  },
  {
    $id: 'WatcherSearchFilters',
    additionalProperties: false,
    description:
      'The parameters of `GET /v1/search/rentals` or `/sales` (same names, meanings and bounds; numbers and booleans as JSON values), without `page` and `perPage`, plus `listingType`. `noFee` applies to rentals only, `saleType` to sales only. The first 500 results in the search order (`sort`, `sortDir`) are watched: listings entering or leaving them, and their price and status.',
  },
);
export type SearchFilters = Static<typeof SearchFiltersSchema>;

const idField = (what: string) =>
  PatternString('^[0-9]{1,12}$', 'an id of 1 to 12 digits', {
    minLength: 1,
    maxLength: 12,
    description: `${what} id: 1 to 12 digits.`,
  });

const pollIntervalField = Type.Integer({
  minimum: 1,
  maximum: MAX_POLL_INTERVAL_S,
  description: `Seconds between polls; default ${DEFAULT_POLL_INTERVAL_S}. At least 300 for Business keys and 60 for Internal keys (a shorter one is a 400 naming \`pollInterval\`); at most ${MAX_POLL_INTERVAL_S}.`,
});

export const CreateWatcherBody = Type.Object(
  {
    watchType: StringEnum(WATCH_TYPES, {
      description:
        '`listing` (needs `listingId`), `building` (needs `buildingId`) or `search` (needs `searchFilters`).',
    }),
    listingId: Type.Optional(idField('Listing')),
    buildingId: Type.Optional(idField('Building')),
    searchFilters: Type.Optional(Type.Ref(SearchFiltersSchema)),
    pollInterval: Type.Optional(pollIntervalField),
  },
  {
    additionalProperties: false,
    description:
      'Exactly the target field of the `watchType`: a listing or building the store knows (404 otherwise), or valid search filters.',
  },
);
export type CreateWatcherInput = Static<typeof CreateWatcherBody>;

export const UpdateWatcherBody = Type.Object(
  {
    status: Type.Optional(
      StringEnum(WATCHER_STATUSES, {
        description: '`paused` stops polling; `active` resumes it (the next poll is due at once).',
      }),
    ),
    pollInterval: Type.Optional(pollIntervalField),
  },
  { additionalProperties: false, minProperties: 1, description: 'Any of the fields; at least one.' },
);
export type UpdateWatcherInput = Static<typeof UpdateWatcherBody>;

export const WatcherSchema = Type.Object(
  {
    id: Type.String({ description: 'Watcher id (a UUID).' }),
    watchType: StringEnum(WATCH_TYPES),
    listingId: Type.Union([Type.String(), Type.Null()]),
    buildingId: Type.Union([Type.String(), Type.Null()]),
    searchFilters: Type.Union([Type.Ref(SearchFiltersSchema), Type.Null()]),
    pollInterval: Type.Integer({ description: 'Seconds between polls.' }),
    active: Type.Boolean({ description: 'True while the watcher polls (`status: active`).' }),
    status: StringEnum(WATCHER_STATUSES),
    pausedReason: Type.Union([StringEnum(PAUSED_REASONS), Type.Null()], {
      description:
        'Why the watcher is paused: `by_owner` (PATCH), `quota_exceeded` (the account’s monthly quota and overage are used up: every poll counts as one request), `tier_restricted` (the account no longer has an active Business or Internal key). Null while active. Resume with PATCH `status: active`.',
    }),
    lastPollAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    lastChangeAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    nextPollAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the next poll is due; null while paused.',
    }),
    lastSequence: Type.Integer({
      minimum: 0,
      description: 'Sequence of the last change recorded (0: none yet); the stream’s event ids.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Watcher', additionalProperties: false },
);
export type WatcherView = Static<typeof WatcherSchema>;

export const ChangeItemSchema = Type.Object(
  {
    kind: StringEnum(['changed', 'added', 'removed'], {
      description:
        '`changed`: `field` went from `oldValue` to `newValue`; `added`/`removed`: a listing entered or left the building’s or search’s listings (`oldValue`/`newValue` null on the side where it is absent).',
    }),
    field: Type.String({
      description:
        'What changed: a listing field (`price`, `status`, …), a building field, or `listing` for a listing added or removed.',
    }),
    listingId: Type.Union([Type.String(), Type.Null()], {
      description:
        'The listing concerned (building and search watchers); null for the watched record itself.',
    }),
    oldValue: Type.Unknown(),
    newValue: Type.Unknown(),
  },
  { $id: 'WatcherChangeItem', additionalProperties: false },
);

export const WatcherChangeSchema = Type.Object(
  {
    id: Type.String({
      description:
        'Unique change id (`<watcherId>:<sequence>`), stable: a webhook delivery of it would carry it as `webhook-id`.',
    }),
    type: Type.Literal(WATCHER_CHANGE_EVENT),
    timestamp: Type.String({ format: 'date-time', description: 'When the poll detected it.' }),
    data: Type.Object({
      watcherId: Type.String(),
      sequence: Type.Integer({ minimum: 1, description: 'Per watcher, from 1, without gaps.' }),
      watchType: StringEnum(WATCH_TYPES),
      listingId: Type.Union([Type.String(), Type.Null()]),
      buildingId: Type.Union([Type.String(), Type.Null()]),
      changes: Type.Array(Type.Ref(ChangeItemSchema)),
    }),
  },
  {
    $id: 'WatcherChange',
    additionalProperties: false,
    description: 'What one poll of a watcher found changed since the previous poll.',
  },
);
export type WatcherChange = Static<typeof WatcherChangeSchema>;
export type ChangeItem = Static<typeof ChangeItemSchema>;

export const WatcherIdParams = Type.Object({
  id: Type.String({ maxLength: 64, description: 'Watcher id.' }),
});

export const WatcherListQuery = Type.Object({
  ...PageQuery,
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 20 })),
});

export const WatcherStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    PatternString('^[0-9]{1,15}$', 'an event sequence (digits)', {
      description:
        'Resume after this change sequence: EventSource clients send the last `id:` they received when they reconnect.',
    }),
  ),
});

const plainMeta = ownRecordMeta('Watchers are the caller’s own records: always read live.');
const listMeta = OwnRecordsListMeta;

export const WatcherResponse = Type.Object({ data: Type.Ref(WatcherSchema), meta: plainMeta });
export const WatcherListResponse = Type.Object({ data: Type.Array(Type.Ref(WatcherSchema)), meta: listMeta });

/** Errors every watcher route can answer with (auth, tier gate, limits, store outage). */
export const watcherErrors = detailErrors;

export const WATCHER_SCHEMAS: TSchema[] = [
  SearchFiltersSchema,
  WatcherSchema,
  ChangeItemSchema,
  WatcherChangeSchema,
];
