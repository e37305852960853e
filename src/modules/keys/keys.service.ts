/**
 * The API key lifecycle rules, shared by the admin API and the `stoop keys`
 * CLI: when a subscription has ended, changing tier / status / subscription
 * end, revoking, and validating a requested change. (Issuing has no rule of
 * its own beyond the provider's `issue`; both callers validate the account
 * with ACCOUNT_ID_PATTERN and the end with `normalizeDateTime`.) Every expected failure is an outcome value;
 * the admin routes map outcomes to HTTP errors, the CLI to messages and exit
 * codes, and both word a refusal with `keyChangeRefusalMessage`.
 */
import type { Tier } from '../../domain/tiers.ts';
import type { ApiKeyRecord, KeyStatus, SubscriptionProvider } from './subscriptions.ts';

/**
 * A change to one key, as the admin API and the CLI express it. Fields left
 * undefined stay unchanged; `subscriptionEndsAt: null` removes the end. Before
 * `validateKeyChange` the end is whatever text the caller sent, after it
 * normalised UTC.
 */
export interface KeyChange {
  tier?: Tier;
  status?: KeyStatus;
  subscriptionEndsAt?: string | null;
}

export type KeyChangeValidation =
  | { ok: true; change: KeyChange }
  /** Nothing to change: at least one of tier, status, subscriptionEndsAt must be set. */
  | { ok: false; reason: 'empty' }
  /** `subscriptionEndsAt` is not an ISO 8601 date-time with an offset. */
  | { ok: false; reason: 'invalid_date'; field: 'subscriptionEndsAt' };

export type KeyChangeOutcome =
  | { ok: true; key: ApiKeyRecord }
  /** The key vanished between lookup and change. */
  | { ok: false; reason: 'not_found'; id: string }
  /** `revoked` is final: the key can never be re-enabled or changed. */
  | { ok: false; reason: 'revoked'; key: ApiKeyRecord };

export type KeyChangeRefusal = Extract<KeyChangeOutcome, { ok: false }>;

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

/**
 * Whether a subscription that ends at `endsAt` (normalised UTC, null: never)
 * has ended at `now`: the end is exclusive, so a key is expired from that
 * instant on.
 */
export function subscriptionEnded(endsAt: string | null, now: Date): boolean {
  return endsAt !== null && endsAt <= now.toISOString();
}

/** Checks a requested change and normalises its subscription end. */
export function validateKeyChange(request: KeyChange): KeyChangeValidation {
  if (
    request.tier === undefined &&
    request.status === undefined &&
    request.subscriptionEndsAt === undefined
  ) {
    return { ok: false, reason: 'empty' };
  }
  let subscriptionEndsAt = request.subscriptionEndsAt;
  if (subscriptionEndsAt !== undefined && subscriptionEndsAt !== null) {
    const normalized = normalizeDateTime(subscriptionEndsAt);
    if (normalized === null) return { ok: false, reason: 'invalid_date', field: 'subscriptionEndsAt' };
    subscriptionEndsAt = normalized;
  }
  return { ok: true, change: { tier: request.tier, status: request.status, subscriptionEndsAt } };
}

/**
 * Applies a change to a key through the subscription provider, enforcing the
 * one lifecycle rule: `revoked` is final (re-revoking is a no-op). Tightening
 * status (disable/revoke) is applied first and loosening (enable) last, so a
 * change that fails half-way never leaves a key more usable than asked.
 *
 * The check here gives a clear refusal; the provider's UPDATE also refuses to
 * touch a revoked key, so a revoke racing an enable cannot be undone.
 */
export async function changeApiKey(
  provider: SubscriptionProvider,
  current: ApiKeyRecord,
  change: KeyChange,
): Promise<KeyChangeOutcome> {
  const id = current.id;
  if (current.status === 'revoked') {
    const onlyRevoke =
      change.tier === undefined &&
      change.subscriptionEndsAt === undefined &&
      (change.status === undefined || change.status === 'revoked');
    return onlyRevoke ? { ok: true, key: current } : { ok: false, reason: 'revoked', key: current };
  }
  let record: ApiKeyRecord | undefined = current;
  const tightening = change.status !== undefined && change.status !== 'active';
  if (tightening && change.status !== current.status) record = await provider.setStatus(id, change.status!);
  if (record && change.tier !== undefined && change.tier !== current.tier) {
    record = await provider.setTier(id, change.tier);
  }
  if (
    record &&
    change.subscriptionEndsAt !== undefined &&
    change.subscriptionEndsAt !== current.subscriptionEndsAt
  ) {
    record = await provider.setSubscriptionEnd(id, change.subscriptionEndsAt);
  }
  if (record && change.status === 'active' && current.status !== 'active') {
    record = await provider.setStatus(id, 'active');
  }
  return record ? { ok: true, key: record } : { ok: false, reason: 'not_found', id };
}

/** Revokes a key for good; revoking a revoked key is a no-op that succeeds. */
export function revokeApiKey(
  provider: SubscriptionProvider,
  current: ApiKeyRecord,
): Promise<KeyChangeOutcome> {
  return changeApiKey(provider, current, { status: 'revoked' });
}

/** The one wording of a refused change, for the admin API's error and the CLI's message alike. */
export function keyChangeRefusalMessage(refusal: KeyChangeRefusal): string {
  switch (refusal.reason) {
    case 'revoked':
      return `API key ${refusal.key.hint} (id ${refusal.key.id}) is revoked; a revoked key can never be re-enabled or changed. Issue a new key instead.`;
    case 'not_found':
      return `API key ${JSON.stringify(refusal.id)} was not found`;
  }
}
