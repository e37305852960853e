/**
 * The API key lifecycle rules, shared by the admin API and the `stoop keys`
 * CLI: when a subscription has ended, changing tier / status / subscription
 * end, revoking, and validating a requested change. (Issuing has no rule of
 * its own beyond the provider's `issue` and `validateNewKeyEnd`; both callers
 * validate the account with ACCOUNT_ID_PATTERN.) Every expected failure is an outcome value;
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

/** Why a subscription end was refused. */
export type SubscriptionEndRefusal =
  /** Not an ISO 8601 date-time with an offset, or not a calendar date. */
  | { ok: false; reason: 'invalid_date'; field: 'subscriptionEndsAt' }
  /** Outside EARLIEST_SUBSCRIPTION_END … LATEST_SUBSCRIPTION_END (UTC). */
  | { ok: false; reason: 'date_out_of_range'; field: 'subscriptionEndsAt' }
  /** At or before now, for a new key: it would be issued already expired. */
  | { ok: false; reason: 'date_in_past'; field: 'subscriptionEndsAt' };

export type KeyChangeValidation =
  | { ok: true; change: KeyChange }
  /** Nothing to change: at least one of tier, status, subscriptionEndsAt must be set. */
  | { ok: false; reason: 'empty' }
  | SubscriptionEndFormatRefusal;

/** The refusals of an end judged on its own, without the current time. */
export type SubscriptionEndFormatRefusal = Exclude<SubscriptionEndRefusal, { reason: 'date_in_past' }>;

export type NewKeyEndValidation = { ok: true; subscriptionEndsAt: string | null } | SubscriptionEndRefusal;

export type KeyChangeOutcome =
  | { ok: true; key: ApiKeyRecord }
  /** The key vanished between lookup and change. */
  | { ok: false; reason: 'not_found'; id: string }
  /** `revoked` is final: the key can never be re-enabled or changed. */
  | { ok: false; reason: 'revoked'; key: ApiKeyRecord };

export type KeyChangeRefusal = Extract<KeyChangeOutcome, { ok: false }>;

/**
 * The range a subscription end may fall in (normalised UTC). Outside it a date
 * is a typo or a probe (`0000-01-01`, `9999-12-31T23:59:59-05:00`, which is
 * year 10000 in UTC), and past year 9999 the ISO text no longer sorts as the
 * instant: `subscriptionEnded` compares ends as strings.
 */
export const EARLIEST_SUBSCRIPTION_END = '2000-01-01T00:00:00.000Z';
export const LATEST_SUBSCRIPTION_END = '9999-12-31T23:59:59.999Z';

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Normalises a subscription end — an ISO 8601 date-time with an explicit
 * offset, within EARLIEST_SUBSCRIPTION_END … LATEST_SUBSCRIPTION_END — to UTC
 * `toISOString()` form, or returns null. Normalising matters: the subscription
 * provider compares `subscriptionEndsAt` with the current instant as strings.
 */
export function normalizeDateTime(value: string): string | null {
  const checked = checkSubscriptionEnd(value);
  return checked.ok ? checked.endsAt : null;
}

/** An ISO 8601 date-time with an explicit offset in UTC `toISOString()` form, or null. */
function toUtcDateTime(value: string): string | null {
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
 * Checks a subscription end as sent (ISO 8601 with offset, within
 * EARLIEST_SUBSCRIPTION_END … LATEST_SUBSCRIPTION_END) and returns it in
 * normalised UTC, or the refusal.
 */
export function checkSubscriptionEnd(
  value: string,
): { ok: true; endsAt: string } | SubscriptionEndFormatRefusal {
  const endsAt = toUtcDateTime(value);
  if (endsAt === null) return { ok: false, reason: 'invalid_date', field: 'subscriptionEndsAt' };
  // Both bounds are four-digit-year ISO text, so string order is time order; an
  // expanded year (`+010000-…`, `-000001-…`) falls outside either way.
  if (!/^\d{4}-/.test(endsAt) || endsAt < EARLIEST_SUBSCRIPTION_END || endsAt > LATEST_SUBSCRIPTION_END) {
    return { ok: false, reason: 'date_out_of_range', field: 'subscriptionEndsAt' };
  }
  return { ok: true, endsAt };
}

/**
 * The subscription end of a key about to be issued (undefined or null: none).
 * An end at or before `now` is refused: the key would be issued already
 * expired. (Changing an existing key's end to the past stays allowed: that is
 * how a subscription is ended now.)
 */
export function validateNewKeyEnd(value: string | null | undefined, now: Date): NewKeyEndValidation {
  if (value === undefined || value === null) return { ok: true, subscriptionEndsAt: null };
  const checked = checkSubscriptionEnd(value);
  if (!checked.ok) return checked;
  if (subscriptionEnded(checked.endsAt, now)) {
    return { ok: false, reason: 'date_in_past', field: 'subscriptionEndsAt' };
  }
  return { ok: true, subscriptionEndsAt: checked.endsAt };
}

/** The one wording of a refused subscription end, completing "Invalid field …: ". */
export function subscriptionEndRefusalMessage(refusal: SubscriptionEndRefusal): string {
  switch (refusal.reason) {
    case 'invalid_date':
      return 'must be an ISO 8601 date-time with offset';
    case 'date_out_of_range':
      return `must be between ${EARLIEST_SUBSCRIPTION_END} and ${LATEST_SUBSCRIPTION_END} (UTC)`;
    case 'date_in_past':
      return 'must be in the future: a new key would be issued already expired';
  }
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
    const checked = checkSubscriptionEnd(subscriptionEndsAt);
    if (!checked.ok) return checked;
    subscriptionEndsAt = checked.endsAt;
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
