/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): each delivery
 * carries `webhook-id`, `webhook-timestamp` (Unix seconds, on the real wall
 * clock: receivers reject timestamps more than 5 minutes off theirs) and
 * `webhook-signature`: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`,
 * several space-separated while a rotated-out secret is still valid.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of 24 random bytes. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** Headers for one attempt: one `v1,` signature per secret given (current first). */
export function signDelivery(
  secrets: readonly string[],
  messageId: string,
  at: Date,
  body: string,
): SignedHeaders {
  const stamp = new Date(Math.floor(at.getTime() / 1000) * 1000);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(stamp.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, stamp, body)).join(' '),
  };
}
