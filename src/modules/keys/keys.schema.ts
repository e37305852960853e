/**
 * The one public shape of an API key record (TypeBox: validation, OpenAPI,
 * types) and the field rules shared by every way of managing keys: the admin
 * API publishes these schemas, the `stoop keys` CLI prints the same views.
 */
import { type Static, Type } from '@sinclair/typebox';
import { TIERS } from '../../domain/tiers.ts';
import { PatternString, StringEnum } from '../../http/schemas.ts';
import type { ApiKeyRecord, IssuedKey, KeyStatus } from './subscriptions.ts';

/** Account ids are operator-chosen slugs; the same rule applies to the CLI and the admin API. */
export const ACCOUNT_ID_PATTERN = '^[A-Za-z0-9._-]{1,100}$';
export const ACCOUNT_ID_MAX_LENGTH = 100;

export const KEY_STATUSES = ['active', 'disabled', 'revoked'] as const satisfies readonly KeyStatus[];

export const accountField = (description: string) =>
  PatternString(ACCOUNT_ID_PATTERN, 'an account id: 1 to 100 letters, digits, ".", "_" or "-"', {
    minLength: 1,
    maxLength: ACCOUNT_ID_MAX_LENGTH,
    description,
    examples: ['acme'],
  });

export const tierField = StringEnum(TIERS, {
  description:
    'Plan tier: decides rate limit, monthly quota, page size and which endpoints the key may call.',
});

export const statusField = StringEnum(KEY_STATUSES, {
  description:
    '`active`: accepted. `disabled`: rejected with 401 until re-enabled. `revoked`: rejected with 401 forever; a revoked key can never become active or disabled again.',
});

/**
 * `type: [string, null]` rather than a TypeBox union: with Ajv's type coercion an
 * `anyOf` would coerce `null` into `""` before trying the null branch.
 */
export const subscriptionEndField = (description: string) =>
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
