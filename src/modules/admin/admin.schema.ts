/** Admin API schemas (validation, OpenAPI, types) and the one public shape of an API key record. */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { TIERS } from '../../domain/tiers.ts';
import { ErrorResponse, StringEnum } from '../../http/schemas.ts';
import type { ApiKeyRecord, IssuedKey } from '../keys/subscriptions.ts';

/** Account ids are operator-chosen slugs; the same rule applies to the CLI and the admin API. */
export const ACCOUNT_ID_PATTERN = '^[A-Za-z0-9._-]{1,100}$';
export const ACCOUNT_ID_MAX_LENGTH = 100;

export const KEY_STATUSES = ['active', 'disabled', 'revoked'] as const;

const accountField = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: ACCOUNT_ID_MAX_LENGTH,
    pattern: ACCOUNT_ID_PATTERN,
    description,
    examples: ['acme'],
  });

const tierField = StringEnum(TIERS, {
  description:
    'Plan tier: decides rate limit, monthly quota, page size and which endpoints the key may call.',
});

const statusField = StringEnum(KEY_STATUSES, {
  description:
    '`active`: accepted. `disabled`: rejected with 401 until re-enabled. `revoked`: rejected with 401 forever; a revoked key can never become active or disabled again.',
});

/**
 * `type: [string, null]` rather than a TypeBox union: with Ajv's type coercion an
 * `anyOf` would coerce `null` into `""` before trying the null branch.
 */
const subscriptionEndField = (description: string) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time', description });

const recordFields = {
  id: Type.String({ format: 'uuid', description: 'Stable id of the key; use it to manage the key.' }),
  account: Type.String({ description: 'Account that owns the key.' }),
  tier: tierField,
  status: statusField,
  hint: Type.String({
    description: 'Prefix and last four characters of the key, for people to recognise it.',
    examples: ['STOOP-…9f3a'],
  }),
  subscriptionEndsAt: subscriptionEndField(
    'When the subscription ends (exclusive). From that instant the key gets 401 `EXPIRED_API_KEY`. Null: no end.',
  ),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
};

export const ApiKeySchema = Type.Object(recordFields, {
  $id: 'ApiKey',
  description: 'An API key as operators see it. The key itself is never returned after creation.',
});
export type ApiKeyView = Static<typeof ApiKeySchema>;

export const IssuedApiKeySchema = Type.Object(
  {
    key: Type.String({
      description:
        'The API key, `<PREFIX>-<uuid>`. Returned only in this response: the service stores a SHA-256 hash, so it cannot be shown again.',
      examples: ['STOOP-2f1c6a8e-5b0d-4c2e-9a57-3d8e1b7c9f3a'],
    }),
    ...recordFields,
  },
  { $id: 'IssuedApiKey', description: 'A newly created API key, including the key (shown once).' },
);
export type IssuedApiKeyView = Static<typeof IssuedApiKeySchema>;

export const CreateApiKeyBody = Type.Object(
  {
    account: accountField(
      'Account to issue the key for (1–100 characters: letters, digits, `.`, `_`, `-`). Created if new.',
    ),
    tier: tierField,
    subscriptionEndsAt: Type.Optional(
      subscriptionEndField(
        'When the subscription ends (ISO 8601 date-time with offset); omit or null: no end.',
      ),
    ),
  },
  { additionalProperties: false },
);
export type CreateApiKeyInput = Static<typeof CreateApiKeyBody>;

export const UpdateApiKeyBody = Type.Object(
  {
    tier: Type.Optional(tierField),
    status: Type.Optional(statusField),
    subscriptionEndsAt: Type.Optional(
      subscriptionEndField('New subscription end (ISO 8601 date-time with offset), or null to remove it.'),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'Any of the fields; at least one. Fields left out are unchanged.',
  },
);
export type UpdateApiKeyInput = Static<typeof UpdateApiKeyBody>;

export const ApiKeyIdParams = Type.Object({
  id: Type.String({ description: 'Id of the key (the `id` field), never the key itself.' }),
});

export const ListApiKeysQuery = Type.Object({
  account: Type.Optional(accountField('Only keys of this account.')),
});

export const ApiKeyResponse = Type.Object(
  { data: Type.Ref(ApiKeySchema) },
  { description: 'The key record (without the key).' },
);
export const IssuedApiKeyResponse = Type.Object(
  { data: Type.Ref(IssuedApiKeySchema) },
  { description: 'The new key; `data.key` is shown only in this response.' },
);
export const ApiKeyListResponse = Type.Object(
  { data: Type.Array(Type.Ref(ApiKeySchema)) },
  { description: 'Key records (without the keys), oldest first.' },
);

/** Errors every admin endpoint can answer with (auth, tier gate, limits). */
export const adminErrors = {
  401: ErrorResponse,
  403: ErrorResponse,
  429: ErrorResponse,
  500: ErrorResponse,
};

export const ADMIN_SCHEMAS: TSchema[] = [ApiKeySchema, IssuedApiKeySchema];

export function toApiKeyView(record: ApiKeyRecord): ApiKeyView {
  return {
    id: record.id,
    account: record.accountId,
    tier: record.tier,
    status: record.status,
    hint: record.hint,
    subscriptionEndsAt: record.subscriptionEndsAt,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export function toIssuedApiKeyView(issued: IssuedKey): IssuedApiKeyView {
  return { key: issued.key, ...toApiKeyView(issued) };
}

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Normalises an ISO 8601 date-time with an explicit offset to UTC `toISOString()`
 * form, or returns null. Normalising matters: the subscription provider compares
 * `subscriptionEndsAt` with the current instant as strings.
 */
export function normalizeDateTime(value: string): string | null {
  const match = ISO_DATE_TIME.exec(value);
  if (!match) return null;
  const [, year, month, day, hour, minute] = match.map(Number);
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return null;
  // Date() rolls impossible calendar dates over (Feb 30 → Mar 2); reject them instead.
  const calendar = new Date(Date.UTC(year!, month! - 1, day!));
  if (calendar.getUTCMonth() !== month! - 1 || calendar.getUTCDate() !== day! || hour! > 23 || minute! > 59) {
    return null;
  }
  return date.toISOString();
}
