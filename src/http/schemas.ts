/** Shared TypeBox schemas: the error envelope, response meta and pagination. */
import { type StringOptions, type TSchema, Type } from '@sinclair/typebox';
import { ERROR_CODES } from './errors.ts';

export const ParamIssueSchema = Type.Object(
  {
    parameter: Type.String({ description: 'Name of the offending parameter.' }),
    location: Type.Union([
      Type.Literal('query'),
      Type.Literal('path'),
      Type.Literal('body'),
      Type.Literal('header'),
    ]),
    rule: Type.String({
      description:
        'Rule broken, e.g. `type`, `minimum`, `enum`, `range`, `unknown_area`, `unknown_parameter` (not a parameter of the operation; the message suggests the closest one).',
    }),
    message: Type.String(),
  },
  { $id: 'ParamIssue' },
);

export const ErrorEnvelopeSchema = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(
        Object.keys(ERROR_CODES).map((code) => Type.Literal(code)),
        { description: 'Stable machine-readable error code.' },
      ),
      message: Type.String({
        description: 'Human-readable explanation naming the parameter and the reason.',
      }),
      status: Type.Integer({ description: 'HTTP status, repeated for clients that only see the body.' }),
      requestId: Type.Optional(Type.String({ description: 'Same as the X-Request-Id header.' })),
      docs: Type.String({
        description:
          "Absolute URL of this code's entry in the error catalogue (the `Errors` section of /docs).",
      }),
      retryAfter: Type.Optional(
        Type.Integer({
          minimum: 0,
          description: 'On 429: seconds until a retry can succeed (as Retry-After).',
        }),
      ),
      details: Type.Optional(
        Type.Object(
          {
            params: Type.Optional(Type.Array(Type.Ref(ParamIssueSchema))),
            requiredTier: Type.Optional(Type.String()),
            retryAfter: Type.Optional(Type.Integer()),
          },
          { additionalProperties: true },
        ),
      ),
    }),
  },
  { $id: 'ErrorEnvelope', description: 'The single error envelope used by every endpoint.' },
);

const freshnessFields = {
  dataAge: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the data served was last refreshed from upstream (ISO 8601).',
  }),
  source: Type.Union([Type.Literal('cached'), Type.Literal('stale'), Type.Literal('live')], {
    description:
      '`cached`: within the caller tier freshness threshold; `stale`: older than it (or upstream failed); `live`: fetched for this request.',
  }),
  freshnessThreshold: Type.Integer({
    description: "The caller tier's freshness threshold for this data, in seconds.",
  }),
  refreshTriggered: Type.Boolean({ description: 'True when this request started a background refresh.' }),
  detailScraped: Type.Boolean({
    description: 'True when the full detail record of the listing(s) has been fetched.',
  }),
};

export const MetaSchema = Type.Object(freshnessFields, { $id: 'Meta' });

export const PaginationLinksSchema = Type.Object(
  {
    self: Type.String(),
    first: Type.String(),
    last: Type.String(),
    prev: Type.Union([Type.String(), Type.Null()]),
    next: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'PaginationLinks', description: 'Absolute URLs; `prev`/`next` are null on the first/last page.' },
);

const pagingFields = {
  total: Type.Integer({ minimum: 0, description: 'Total number of matches.' }),
  page: Type.Integer({ minimum: 1 }),
  perPage: Type.Integer({ minimum: 1 }),
  links: Type.Ref(PaginationLinksSchema),
  warnings: Type.Array(Type.String(), {
    description: 'Non-fatal notes about the request: capped page size, …',
  }),
};

/** `meta.areas` of an answer that took area input: what each input resolved to. */
export const ResolvedAreasField = Type.Optional(
  Type.Array(
    Type.Object({
      input: Type.String({ description: 'The area as given: an id, slug, name or alias.' }),
      id: Type.Integer({ description: 'The area it resolved to.' }),
      name: Type.String(),
    }),
    { description: 'Present when the request named areas: what each resolved to, in request order.' },
  ),
);

export const PaginatedMetaSchema = Type.Object(
  { ...freshnessFields, ...pagingFields, areas: ResolvedAreasField },
  { $id: 'PaginatedMeta' },
);

/** `meta` of a list of the caller's own records (webhooks, watchers): paging only. */
export const OwnRecordsListMeta = Type.Object(pagingFields);

/** `meta` of one of the caller's own records: always read live, no data age. */
export function ownRecordMeta(description: string) {
  return Type.Object({ dataAge: Type.Null(), source: Type.Literal('live') }, { description });
}

/** Schemas registered once with `app.addSchema` so OpenAPI shows them as components. */
export const SHARED_SCHEMAS: TSchema[] = [
  ParamIssueSchema,
  ErrorEnvelopeSchema,
  MetaSchema,
  PaginationLinksSchema,
  PaginatedMetaSchema,
];

export const ErrorResponse = Type.Ref(ErrorEnvelopeSchema);

/**
 * Error responses of a public read that names no record (search, areas,
 * market): an unknown area is a 400, never a 404. The OpenAPI document adds
 * what access control and the edge add (src/http/openapi-document.ts).
 */
export const readErrors = {
  400: ErrorResponse,
  401: ErrorResponse,
  429: ErrorResponse,
  500: ErrorResponse,
  503: ErrorResponse,
};

export function dataResponse<T extends TSchema>(data: T, description?: string) {
  return Type.Object({ data, meta: Type.Ref(MetaSchema) }, description ? { description } : {});
}

export function listResponse<T extends TSchema>(item: T, description?: string) {
  return Type.Object(
    { data: Type.Array(item), meta: Type.Ref(PaginatedMetaSchema) },
    description ? { description } : {},
  );
}

export const PageQuery = {
  page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100000, default: 1, description: '1-indexed page.' }),
  ),
};

/**
 * What each declared pattern accepts, in words. A value failing a pattern gets
 * a 400 saying `must be <words>`, so every pattern-checked parameter is
 * declared through `PatternString` (or a helper built on it).
 */
const PATTERN_MEANINGS = new Map<string, string>();

/**
 * A string checked by a regular expression, with what it accepts in words
 * (`accepts` completes "must be …": "a date (YYYY-MM-DD)"). One pattern has
 * one meaning: declaring it again with other words is a programming error.
 */
export function PatternString(
  pattern: string,
  accepts: string,
  options: Omit<StringOptions, 'pattern'> = {},
) {
  const known = PATTERN_MEANINGS.get(pattern);
  if (known !== undefined && known !== accepts) {
    throw new Error(`Pattern ${pattern} is declared as both "${known}" and "${accepts}"`);
  }
  PATTERN_MEANINGS.set(pattern, accepts);
  return Type.String({ ...options, pattern });
}

/** The words a pattern was declared with, for its validation error; undefined for an undeclared pattern. */
export function patternMeaning(pattern: string): string | undefined {
  return PATTERN_MEANINGS.get(pattern);
}

/** The allowed values of each CommaList, by its pattern: the request validator normalizes items to them. */
const COMMA_LIST_VALUES = new Map<string, readonly string[]>();

/**
 * A comma-separated list of values from a closed set (`A,B`); a bad list's 400
 * names every allowed value. In query and path parameters items are read
 * case-insensitively and trimmed (src/http/validation.ts).
 */
export function CommaList(values: readonly string[], options: Omit<StringOptions, 'pattern'> = {}) {
  const alternatives = values.join('|');
  const pattern = `^(${alternatives})(,(${alternatives}))*$`;
  COMMA_LIST_VALUES.set(pattern, values);
  return PatternString(pattern, `a comma-separated list of: ${values.join(', ')}`, options);
}

/** The allowed values of the CommaList declared with this pattern; undefined for any other pattern. */
export function commaListValues(pattern: string): readonly string[] | undefined {
  return COMMA_LIST_VALUES.get(pattern);
}

/** A calendar date parameter, `YYYY-MM-DD`. */
export function DateString(options: Omit<StringOptions, 'pattern'> = {}) {
  return PatternString('^\\d{4}-\\d{2}-\\d{2}$', 'a date (YYYY-MM-DD)', options);
}

/** A date, or a date-time with an explicit offset. */
export function DateOrDateTimeString(options: Omit<StringOptions, 'pattern'> = {}) {
  return PatternString(
    '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?$',
    'a date (YYYY-MM-DD) or an ISO 8601 date-time with an offset (2026-11-01T09:30:00Z)',
    options,
  );
}

/**
 * A string enum as a JSON Schema `enum` (not TypeBox's anyOf-of-consts), so a
 * bad value fails with one clear error listing the allowed values. In query
 * and path parameters the value is read case-insensitively and trimmed
 * (src/http/validation.ts); JSON bodies must send it exactly.
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** A closed set of strings inside stored JSON (a union of literals, which TypeBox can check when fitting). */
export function Literals<const T extends readonly string[]>(
  values: T,
  options: { description?: string } = {},
) {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );
}

const describe = (description?: string) => (description ? { description } : {});
export const nullableString = (description?: string) =>
  Type.Union([Type.String(), Type.Null()], describe(description));
export const nullableNumber = (description?: string) =>
  Type.Union([Type.Number(), Type.Null()], describe(description));
export const nullableInteger = (description?: string) =>
  Type.Union([Type.Integer(), Type.Null()], describe(description));
export const nullableBoolean = (description?: string) =>
  Type.Union([Type.Boolean(), Type.Null()], describe(description));

/** Errors of a keyed operation that names no record by id (a list of one's own records, a create). */
export const collectionErrors = {
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  429: ErrorResponse,
  500: ErrorResponse,
  503: ErrorResponse,
};

/** Errors of a keyed, id-addressed read. */
export const detailErrors = {
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  404: ErrorResponse,
  429: ErrorResponse,
  500: ErrorResponse,
  503: ErrorResponse,
};
