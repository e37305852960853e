import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { keyRoute } from '../../http/access.ts';
import { ApiError } from '../../http/errors.ts';
import { ErrorResponse } from '../../http/schemas.ts';
import type { Clock } from '../../platform/clock.ts';
import { looksLikeApiKey } from '../keys/api-key.ts';
import { toApiKeyView, toIssuedApiKeyView } from '../keys/keys.schema.ts';
import {
  changeApiKey,
  type KeyChangeOutcome,
  keyChangeRefusalMessage,
  revokeApiKey,
  type SubscriptionEndRefusal,
  subscriptionEndRefusalMessage,
  validateKeyChange,
  validateNewKeyEnd,
} from '../keys/keys.service.ts';
import type { ApiKeyRecord, SubscriptionProvider } from '../keys/subscriptions.ts';
import {
  ApiKeyIdParams,
  ApiKeyListResponse,
  ApiKeyResponse,
  adminErrors,
  CreateApiKeyBody,
  type CreateApiKeyInput,
  IssuedApiKeyResponse,
  ListApiKeysQuery,
  UpdateApiKeyBody,
  type UpdateApiKeyInput,
} from './admin.schema.ts';

const END_RULE: Record<SubscriptionEndRefusal['reason'], string> = {
  invalid_date: 'format',
  date_out_of_range: 'range',
  date_in_past: 'past',
};

/** A refused subscription end as the 400 that names the field. */
function invalidEnd(refusal: SubscriptionEndRefusal): ApiError {
  const message = subscriptionEndRefusalMessage(refusal);
  return new ApiError('INVALID_BODY', `Invalid field "${refusal.field}": ${message}`, {
    params: [{ parameter: refusal.field, location: 'body', rule: END_RULE[refusal.reason], message }],
  });
}

/**
 * A misspelt field (say `subscriptionEndAt`) must fail rather than issue a key
 * that never expires. Checked before schema validation so the 400 lists the
 * allowed fields (the schema's `additionalProperties: false` would only name
 * the unknown one).
 */
function rejectUnknownFields(allowed: readonly string[]) {
  return async (request: FastifyRequest): Promise<void> => {
    const body = request.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
    const unknown = Object.keys(body).find((name) => !allowed.includes(name));
    if (unknown !== undefined) {
      const message = `is not an allowed field (allowed: ${allowed.join(', ')})`;
      throw new ApiError('INVALID_BODY', `Invalid field "${unknown}": ${message}`, {
        params: [{ parameter: unknown, location: 'body', rule: 'additionalProperties', message }],
      });
    }
  };
}

/** The changed key, or the refusal as the HTTP error the admin API answers with. */
function changedKeyOrThrow(outcome: KeyChangeOutcome): ApiKeyRecord {
  if (outcome.ok) return outcome.key;
  switch (outcome.reason) {
    case 'revoked':
      throw new ApiError('CONFLICT', keyChangeRefusalMessage(outcome), { currentStatus: 'revoked' });
    case 'not_found':
      throw ApiError.notFound('API key', outcome.id);
  }
}

function noStore(reply: FastifyReply): void {
  // Admin answers describe credentials (and, once, contain one): never cache them.
  reply.header('Cache-Control', 'no-store');
}

/**
 * Key administration for operators: an INTERNAL-tier key may issue, list,
 * inspect, change and revoke every account's keys.
 *
 * These routes are thin over the `SubscriptionProvider`. A billing provider's
 * subscription webhook (e.g. Stripe `customer.subscription.created|updated|deleted`)
 * would call the same provider methods rather than these routes: `issue` on a new
 * subscription (with `externalRef` = the billing subscription id),
 * `setTier` on a plan change, `setSubscriptionEnd` on cancellation at period end,
 * and `setStatus('disabled' | 'active')` on payment failure and recovery, or
 * `setStatus('revoked')` when the subscription is deleted. A change takes
 * effect on this process's next request (the provider forgets the key before
 * answering) and on every other node within `API_KEY_CACHE_MS` (./key-cache.ts).
 */
export interface AdminRouteServices {
  subscriptions: SubscriptionProvider;
  /** Word before the UUID in API keys: a path that looks like a key is refused, never looked up. */
  apiKeyPrefix: string;
  /** The wall clock (never the market clock): a new key's subscription end must lie after its now. */
  wallClock: Clock;
}

export const adminRoutes: FastifyPluginAsyncTypebox<AdminRouteServices> = async (
  app,
  { subscriptions: provider, apiKeyPrefix, wallClock },
) => {
  const typed = app;
  const access = keyRoute('INTERNAL');
  const tags = ['Admin'];

  const audit = (request: FastifyRequest, action: string, record: ApiKeyRecord) => {
    // Ids and the hint only: the key itself must never reach a log line.
    request.log.info(
      {
        audit: {
          action,
          keyId: record.id,
          account: record.accountId,
          tier: record.tier,
          status: record.status,
          hint: record.hint,
          by: request.caller.keyId ?? null,
        },
      },
      `admin: ${action}`,
    );
  };

  /** Ids only: a key in a URL would end up in access logs, so keys are never looked up by path. */
  const findById = async (id: string): Promise<ApiKeyRecord> => {
    if (looksLikeApiKey(id, apiKeyPrefix)) {
      throw new ApiError('NOT_FOUND', 'No API key has this id; address keys by their id, never by the key');
    }
    const record = await provider.find(id);
    if (!record || record.id !== id) throw ApiError.notFound('API key', id);
    return record;
  };

  typed.post(
    '/admin/keys',
    {
      config: { access },
      preValidation: rejectUnknownFields(['account', 'tier', 'subscriptionEndsAt']),
      schema: {
        operationId: 'createApiKey',
        tags,
        summary: 'Create an API key',
        description:
          'Issues a new key for an account (the account is created if new). The response is the only time the key is shown: only its SHA-256 hash is stored. Requires an INTERNAL-tier key.',
        body: CreateApiKeyBody,
        response: { 201: IssuedApiKeyResponse, 400: ErrorResponse, ...adminErrors },
      },
    },
    async (request, reply) => {
      const body: CreateApiKeyInput = request.body;
      const end = validateNewKeyEnd(body.subscriptionEndsAt, wallClock.now());
      if (!end.ok) throw invalidEnd(end);
      const { subscriptionEndsAt } = end;
      const issued = await provider.issue({ accountId: body.account, tier: body.tier, subscriptionEndsAt });
      audit(request, 'api_key.create', issued);
      noStore(reply);
      // The collection's route (with whatever prefix the app mounts it under) plus the new id.
      reply.header('Location', `${request.routeOptions.url}/${issued.id}`);
      return reply.status(201).send({ data: toIssuedApiKeyView(issued) });
    },
  );

  typed.get(
    '/admin/keys',
    {
      config: { access },
      schema: {
        operationId: 'listApiKeys',
        tags,
        summary: 'List API keys',
        description:
          'Every key of every account, oldest first, or one account’s keys with `account`. Keys themselves and their hashes are never returned. Requires an INTERNAL-tier key.',
        querystring: ListApiKeysQuery,
        response: { 200: ApiKeyListResponse, 400: ErrorResponse, ...adminErrors },
      },
    },
    async (request, reply) => {
      const records = await provider.list(request.query.account);
      noStore(reply);
      return { data: records.map(toApiKeyView) };
    },
  );

  typed.get(
    '/admin/keys/:id',
    {
      config: { access },
      schema: {
        operationId: 'getApiKey',
        tags,
        summary: 'Get an API key',
        description: 'One key by id (any account). Requires an INTERNAL-tier key.',
        params: ApiKeyIdParams,
        response: { 200: ApiKeyResponse, 404: ErrorResponse, ...adminErrors },
      },
    },
    async (request, reply) => {
      const record = await findById(request.params.id);
      noStore(reply);
      return { data: toApiKeyView(record) };
    },
  );

  typed.patch(
    '/admin/keys/:id',
    {
      config: { access },
      preValidation: rejectUnknownFields(['tier', 'status', 'subscriptionEndsAt']),
      schema: {
        operationId: 'updateApiKey',
        tags,
        summary: 'Change an API key',
        description:
          'Changes the tier, status or subscription end of a key. Takes effect on the key’s next request (on other nodes of a cluster, within `API_KEY_CACHE_MS`, default 1 s). `revoked` is final: changing a revoked key is 409 `CONFLICT` (revoking it again is a no-op). Requires an INTERNAL-tier key.',
        params: ApiKeyIdParams,
        body: UpdateApiKeyBody,
        response: {
          200: ApiKeyResponse,
          400: ErrorResponse,
          404: ErrorResponse,
          409: ErrorResponse,
          ...adminErrors,
        },
      },
    },
    async (request, reply) => {
      const body: UpdateApiKeyInput = request.body;
      const validation = validateKeyChange(body);
      if (!validation.ok) {
        if (validation.reason !== 'empty') throw invalidEnd(validation);
        throw new ApiError(
          'INVALID_BODY',
          'The body must set at least one of tier, status, subscriptionEndsAt',
        );
      }
      const current = await findById(request.params.id);
      const result = changedKeyOrThrow(await changeApiKey(provider, current, validation.change));
      audit(request, 'api_key.update', result);
      noStore(reply);
      return { data: toApiKeyView(result) };
    },
  );

  typed.delete(
    '/admin/keys/:id',
    {
      config: { access },
      schema: {
        operationId: 'revokeApiKey',
        tags,
        summary: 'Revoke an API key',
        description:
          'Revokes the key for good: its next request gets 401 `INVALID_API_KEY` (on other nodes of a cluster, within `API_KEY_CACHE_MS`, default 1 s). The record is kept (status `revoked`) and returned. Idempotent. Requires an INTERNAL-tier key.',
        params: ApiKeyIdParams,
        response: { 200: ApiKeyResponse, 404: ErrorResponse, ...adminErrors },
      },
    },
    async (request, reply) => {
      const current = await findById(request.params.id);
      const result = changedKeyOrThrow(await revokeApiKey(provider, current));
      audit(request, 'api_key.revoke', result);
      noStore(reply);
      return { data: toApiKeyView(result) };
    },
  );
};
