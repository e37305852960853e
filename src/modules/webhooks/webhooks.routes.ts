import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { keyRoute } from '../../http/access.ts';
import { capPerPage, paramNames } from '../../http/envelope.ts';
import { assertPageInRange, pageLinks } from '../../http/pagination.ts';
import { collectionErrors } from '../../http/schemas.ts';
import { ENDPOINT_WINDOW_MAX, SLOW_ANSWER_MS } from '../../jobs/deliveries/endpoint-windows.ts';
import { toDeliveryView, toWebhookView, toWebhookWithSecretView } from './webhook.mapper.ts';
import {
  CreateWebhookBody,
  DeliveryIdParams,
  DeliveryListQuery,
  DeliveryListResponse,
  DeliveryResponse,
  UpdateWebhookBody,
  WebhookIdParams,
  WebhookListQuery,
  WebhookListResponse,
  WebhookResponse,
  WebhookWithSecretResponse,
  webhookErrors,
} from './webhooks.schema.ts';
import type { WebhooksService } from './webhooks.service.ts';

export interface WebhookRouteServices {
  webhooks: WebhooksService;
  publicUrl: string;
}

const VERIFY_RECIPE = `

**Verifying a delivery** ([Standard Webhooks](https://www.standardwebhooks.com)): every delivery is a POST with a JSON body and the headers \`webhook-id\` (the payload's \`id\`, stable across retries: deduplicate on it), \`webhook-timestamp\` (Unix seconds) and \`webhook-signature\` (\`v1,<base64 HMAC-SHA256>\`, space-separated when several secrets are valid). Compute HMAC-SHA256 over \`{webhook-id}.{webhook-timestamp}.{raw body}\` with the base64-decoded part of the secret after \`whsec_\`, compare it in constant time with each \`v1,\` signature, and reject timestamps more than 5 minutes from now. The \`standardwebhooks\` libraries do all of it: \`new Webhook(secret).verify(rawBody, headers)\`.

**Delivery**: at least once, not in order (order by the payload's \`sequence\`, deduplicate on \`webhook-id\`); up to ${ENDPOINT_WINDOW_MAX} attempts in flight to an endpoint that answers 2xx within ${SLOW_ANSWER_MS / 1000} s, one to an endpoint that is failing or slower. Only a 2xx answer within 15 s counts (redirects are not followed). Failed attempts are retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (±10 %, never sooner than \`Retry-After\`), then the delivery is \`failed\` and can be retried by hand. An endpoint failing for 5 days is deactivated (\`disabledReason\`). URLs must be https and resolve to public addresses only; they are checked at registration and at every delivery.`;

function noStore(reply: FastifyReply): void {
  // Subscriptions describe (and twice contain) signing secrets: never cached.
  reply.header('Cache-Control', 'no-store');
}

function accountOf(request: FastifyRequest): string {
  // Keyed routes only: access control has resolved an account.
  return request.caller.accountId as string;
}

const plainMeta = { dataAge: null, source: 'live' as const };

/**
 * Webhook subscriptions (Business+), scoped to the caller's account: another
 * account's subscription answers 404 exactly like a missing one.
 */
export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRouteServices> = async (
  app,
  { webhooks, publicUrl },
) => {
  const access = keyRoute('BUSINESS');
  const tags = ['Webhooks'];

  const pageOf = (request: FastifyRequest, query: { page?: number; perPage?: number }) => {
    const capped = capPerPage(query.perPage ?? 20, request.caller.maxPerPage);
    return { page: { page: query.page ?? 1, perPage: capped.perPage }, warnings: capped.warnings };
  };
  const listMeta = (
    request: FastifyRequest,
    page: { page: number; perPage: number },
    total: number,
    known: ReadonlySet<string>,
    warnings: string[],
  ) => ({
    total,
    page: page.page,
    perPage: page.perPage,
    links: pageLinks(publicUrl, request.url, page, total, known),
    warnings,
  });

  app.post(
    '/webhooks',
    {
      config: { access },
      schema: {
        operationId: 'createWebhook',
        tags,
        summary: 'Subscribe a URL to listing events',
        description: `Registers a URL for push notifications of the given event types (citywide, optionally narrowed by \`filters\`) and returns the subscription with its signing \`secret\`, shown only here and on rotation. Events recorded from now on are delivered.${VERIFY_RECIPE}`,
        body: CreateWebhookBody,
        response: { 200: WebhookWithSecretResponse, 409: webhookErrors[404], ...collectionErrors },
      },
    },
    async (request, reply) => {
      const created = await webhooks.create(accountOf(request), request.body);
      noStore(reply);
      reply.header('Location', `${request.routeOptions.url}/${created.id}`);
      return { data: toWebhookWithSecretView(created) };
    },
  );

  const knownList = paramNames(WebhookListQuery);
  app.get(
    '/webhooks',
    {
      config: { access },
      schema: {
        operationId: 'listWebhooks',
        tags,
        summary: 'List your webhook subscriptions',
        description: 'The caller account’s subscriptions, oldest first (secrets are never listed).',
        querystring: WebhookListQuery,
        response: { 200: WebhookListResponse, ...collectionErrors },
      },
    },
    async (request, reply) => {
      const { page, warnings } = pageOf(request, request.query);
      const result = await webhooks.list(accountOf(request), page);
      assertPageInRange(page, result.total);
      noStore(reply);
      return {
        data: result.items.map(toWebhookView),
        meta: listMeta(request, page, result.total, knownList, warnings),
      };
    },
  );

  app.get(
    '/webhooks/:id',
    {
      config: { access },
      schema: {
        operationId: 'getWebhook',
        tags,
        summary: 'Get a webhook subscription',
        description: 'One of the caller account’s subscriptions (without its secret).',
        params: WebhookIdParams,
        response: { 200: WebhookResponse, ...webhookErrors },
      },
    },
    async (request, reply) => {
      const found = await webhooks.get(accountOf(request), request.params.id);
      noStore(reply);
      return { data: toWebhookView(found), meta: plainMeta };
    },
  );

  app.patch(
    '/webhooks/:id',
    {
      config: { access },
      schema: {
        operationId: 'updateWebhook',
        tags,
        summary: 'Change a webhook subscription',
        description:
          'Changes `url`, `events`, `filters` or `active`; `updatedAt` changes. Deactivating cancels queued deliveries; reactivating clears `disabledReason`. A new URL is vetted like at creation.',
        params: WebhookIdParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookResponse, ...webhookErrors },
      },
    },
    async (request, reply) => {
      const changed = await webhooks.update(accountOf(request), request.params.id, request.body);
      noStore(reply);
      return { data: toWebhookView(changed), meta: plainMeta };
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      config: { access },
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete a webhook subscription',
        description:
          'Removes the subscription and its delivery log. The subscription is re-checked at every delivery attempt, so nothing more is sent once this answers.',
        params: WebhookIdParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...webhookErrors },
      },
    },
    async (request, reply) => {
      await webhooks.remove(accountOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config: { access },
      schema: {
        operationId: 'rotateWebhookSecret',
        tags,
        summary: 'Rotate the signing secret',
        description:
          'Issues a new secret (shown only in this answer). For 24 hours the previous one stays valid: deliveries carry both signatures in `webhook-signature`, so receivers can switch without missing any.',
        params: WebhookIdParams,
        response: { 200: WebhookWithSecretResponse, ...webhookErrors },
      },
    },
    async (request, reply) => {
      const rotated = await webhooks.rotateSecret(accountOf(request), request.params.id);
      noStore(reply);
      return { data: toWebhookWithSecretView(rotated) };
    },
  );

  app.post(
    '/webhooks/:id/test',
    {
      config: { access },
      schema: {
        operationId: 'testWebhook',
        tags,
        summary: 'Send a signed test event',
        description:
          'Queues a `webhook.ping` event (`data.subscriptionId`), signed and delivered like any other (follow it in the delivery log). 409 when the subscription is inactive.',
        params: WebhookIdParams,
        response: { 202: DeliveryResponse, 409: webhookErrors[404], ...webhookErrors },
      },
    },
    async (request, reply) => {
      const queued = await webhooks.test(accountOf(request), request.params.id);
      noStore(reply);
      return reply.status(202).send({ data: toDeliveryView(queued), meta: plainMeta });
    },
  );

  const knownDeliveries = paramNames(DeliveryListQuery);
  app.get(
    '/webhooks/:id/deliveries',
    {
      config: { access },
      schema: {
        operationId: 'listWebhookDeliveries',
        tags,
        summary: 'The delivery log of a subscription',
        description:
          'Deliveries newest first: status, attempts, the last response status and latency, the next attempt and the last error (including why an endpoint was deactivated).',
        params: WebhookIdParams,
        querystring: DeliveryListQuery,
        response: { 200: DeliveryListResponse, ...webhookErrors },
      },
    },
    async (request, reply) => {
      const { page, warnings } = pageOf(request, request.query);
      const result = await webhooks.deliveries(
        accountOf(request),
        request.params.id,
        page,
        request.query.status,
      );
      assertPageInRange(page, result.total);
      noStore(reply);
      return {
        data: result.items.map(toDeliveryView),
        meta: listMeta(request, page, result.total, knownDeliveries, warnings),
      };
    },
  );

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      config: { access },
      schema: {
        operationId: 'retryWebhookDelivery',
        tags,
        summary: 'Retry a failed delivery',
        description:
          'Queues a `failed` (or `cancelled`) delivery for one more attempt now, signed afresh. 409 when the delivery is not failed or the subscription is inactive.',
        params: DeliveryIdParams,
        response: { 202: DeliveryResponse, 409: webhookErrors[404], ...webhookErrors },
      },
    },
    async (request, reply) => {
      const queued = await webhooks.retry(accountOf(request), request.params.id, request.params.deliveryId);
      noStore(reply);
      return reply.status(202).send({ data: toDeliveryView(queued), meta: plainMeta });
    },
  );
};
