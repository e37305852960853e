/**
 * Admin API schemas (validation, OpenAPI, types) of the request bodies and
 * responses. The key record itself and its field rules live in the keys module
 * (src/modules/keys/keys.schema.ts), shared with the CLI.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { ErrorResponse } from '../../http/schemas.ts';
import {
  ApiKeySchema,
  accountField,
  IssuedApiKeySchema,
  statusField,
  subscriptionEndField,
  tierField,
} from '../keys/keys.schema.ts';

export const CreateApiKeyBody = Type.Object(
  {
    account: accountField(
      'Account to issue the key for (1–100 characters: letters, digits, `.`, `_`, `-`). Created if new.',
    ),
    tier: tierField,
    subscriptionEndsAt: Type.Optional(
      subscriptionEndField(
        'When the subscription ends (ISO 8601 date-time with offset): after now, and from 2000-01-01 to 9999-12-31 (UTC), else a 400. Omit or null: no end.',
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
      subscriptionEndField(
        'New subscription end (ISO 8601 date-time with offset, from 2000-01-01 to 9999-12-31 UTC; now or earlier ends the subscription at once), or null to remove it.',
      ),
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
