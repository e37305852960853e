import { hash, randomUUID } from 'node:crypto';

const UUID_V4 = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

/** A new key: `<PREFIX>-<uuid v4>`. Shown once, stored only as a hash. */
export function generateApiKey(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

const shapes = new Map<string, RegExp>();

/** Whether a bearer token has the shape of one of our API keys (case-sensitive prefix). */
export function looksLikeApiKey(token: string, prefix: string): boolean {
  let shape = shapes.get(prefix);
  if (!shape) {
    shape = new RegExp(`^${prefix}-${UUID_V4}$`);
    shapes.set(prefix, shape);
  }
  return shape.test(token);
}

/**
 * The stored form of a key: hex SHA-256. Keys are random 122-bit UUIDs, so no salt or KDF is needed.
 * Every keyed request hashes its key: the one-shot `hash` costs a third of a `createHash` object.
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** What people see of a key: prefix and last four characters. */
export function apiKeyHint(key: string): string {
  const prefix = key.slice(0, key.indexOf('-'));
  return `${prefix}-…${key.slice(-4)}`;
}
