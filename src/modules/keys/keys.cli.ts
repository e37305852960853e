import { type Command, InvalidArgumentError } from 'commander';
import { isTier, TIERS, type Tier } from '../../domain/tiers.ts';
import type { Clock } from '../../platform/clock.ts';
import { apiKeyHint } from './api-key.ts';
import { ACCOUNT_ID_PATTERN, type ApiKeyView, toApiKeyView, toIssuedApiKeyView } from './keys.schema.ts';
import {
  changeApiKey,
  type KeyChange,
  keyChangeRefusalMessage,
  normalizeDateTime,
  subscriptionEnded,
} from './keys.service.ts';
import type { ApiKeyRecord, SubscriptionProvider } from './subscriptions.ts';

/** A failure the operator caused (unknown key, forbidden change): printed without a stack, exit code 1. */
export class KeysCliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeysCliError';
  }
}

/** An open subscription provider over the configured, migrated store. */
export interface KeysSession {
  provider: SubscriptionProvider;
  apiKeyPrefix: string;
  close(): Promise<void>;
}

export interface KeysCliOptions {
  /** Opens the configured store (migrations applied); called once per command. */
  open(): Promise<KeysSession>;
  /**
   * The wall clock (`stoop` passes real time): key times are callers' time,
   * never the market clock, however far a live demo ran it ahead.
   */
  clock: Clock;
  /** Results (what scripts parse). */
  stdout(text: string): void;
  /** Progress and notes for people. */
  stderr(text: string): void;
}

export function parseTierArgument(value: string): Tier {
  const tier = value.trim().toUpperCase();
  if (!isTier(tier)) {
    throw new InvalidArgumentError(`must be one of ${TIERS.map((t) => t.toLowerCase()).join(', ')}`);
  }
  return tier;
}

export function parseDateTimeArgument(value: string): string {
  const normalized = normalizeDateTime(value);
  if (normalized === null) {
    throw new InvalidArgumentError('must be an ISO 8601 date-time with an offset, e.g. 2027-01-31T23:59:59Z');
  }
  return normalized;
}

export function parseAccountArgument(value: string): string {
  if (!new RegExp(ACCOUNT_ID_PATTERN).test(value)) {
    throw new InvalidArgumentError('must be 1–100 characters: letters, digits, ".", "_" or "-"');
  }
  return value;
}

const EXPIRY_NONE = 'never';

function describe(view: ApiKeyView): string {
  const expiry = view.subscriptionEndsAt === null ? 'no end' : `ends ${view.subscriptionEndsAt}`;
  return `${view.hint} (id ${view.id}, account ${view.account}, ${view.tier}, ${view.status}, ${expiry})`;
}

function table(views: ApiKeyView[]): string {
  const rows = [
    ['ID', 'HINT', 'TIER', 'STATUS', 'ACCOUNT', 'SUBSCRIPTION ENDS'],
    ...views.map((v) => [v.id, v.hint, v.tier, v.status, v.account, v.subscriptionEndsAt ?? EXPIRY_NONE]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * Registers `stoop keys …`: issue, list and manage API keys in the configured
 * store. Keys are printed once, at creation; every other output shows the hint.
 * With `--json`, stdout carries exactly one JSON value and everything else goes
 * to stderr, so scripts can parse it.
 */
export function registerKeysCommands(program: Command, options: KeysCliOptions): void {
  const { clock, stdout, stderr } = options;

  async function withProvider<T>(run: (session: KeysSession) => Promise<T>): Promise<T> {
    const session = await options.open();
    try {
      return await run(session);
    } finally {
      await session.close();
    }
  }

  async function resolve(session: KeysSession, keyOrId: string): Promise<ApiKeyRecord> {
    const record = await session.provider.find(keyOrId);
    if (record) return record;
    // Echo an unknown key only by its hint: terminals and CI logs keep scrollback.
    const shown = keyOrId.startsWith(`${session.apiKeyPrefix}-`) ? apiKeyHint(keyOrId) : keyOrId;
    throw new KeysCliError(`error: argument <key|id>: no API key matches "${shown}"`);
  }

  function print(view: ApiKeyView, json: boolean, verb: string): void {
    if (json) stdout(JSON.stringify(view));
    else stdout(`${verb} ${describe(view)}`);
  }

  /** The shared change path of the CLI and the admin API (one lifecycle rule). */
  async function change(keyOrId: string, keyChange: KeyChange, json: boolean, verb: string): Promise<void> {
    await withProvider(async (session) => {
      const current = await resolve(session, keyOrId);
      const outcome = await changeApiKey(session.provider, current, keyChange);
      if (!outcome.ok) throw new KeysCliError(`error: ${keyChangeRefusalMessage(outcome)}`);
      print(toApiKeyView(outcome.key), json, verb);
    });
  }

  const keys = program.command('keys').description('issue, list and manage API keys (no server needed)');

  keys
    .command('create')
    .description('issue a new API key; the key is printed once and cannot be shown again')
    .requiredOption(
      '--tier <tier>',
      `plan tier: ${TIERS.map((t) => t.toLowerCase()).join('|')}`,
      parseTierArgument,
    )
    .requiredOption('--account <account>', 'account id (created if new)', parseAccountArgument)
    .option(
      '--expires <date-time>',
      'subscription end, ISO 8601 with offset (default: none)',
      parseDateTimeArgument,
    )
    .option('--json', 'print one JSON object (with the key) on stdout')
    .action(async (opts: { tier: Tier; account: string; expires?: string; json?: boolean }) => {
      await withProvider(async ({ provider }) => {
        const issued = await provider.issue({
          accountId: opts.account,
          tier: opts.tier,
          subscriptionEndsAt: opts.expires ?? null,
        });
        if (subscriptionEnded(issued.subscriptionEndsAt, clock.now())) {
          stderr(
            `warning: --expires ${opts.expires} is in the past; the key is rejected as expired until extended`,
          );
        }
        const view = toIssuedApiKeyView(issued);
        if (opts.json) {
          stdout(JSON.stringify(view));
          stderr('Store the key now: it is not stored and cannot be shown again.');
          return;
        }
        stdout(`Created ${describe(view)}`);
        stdout(`API key: ${view.key}`);
        stdout('Store it now: this is the only time it is shown; it cannot be recovered.');
      });
    });

  keys
    .command('list')
    .description('list API keys (hint, id, tier, status, account, subscription end; never the keys)')
    .option('--account <account>', 'only keys of this account', parseAccountArgument)
    .option('--json', 'print one JSON array on stdout')
    .action(async (opts: { account?: string; json?: boolean }) => {
      await withProvider(async ({ provider }) => {
        const views = (await provider.list(opts.account)).map(toApiKeyView);
        if (opts.json) stdout(JSON.stringify(views));
        else if (views.length === 0)
          stderr(opts.account ? `No API keys for account ${opts.account}.` : 'No API keys.');
        else stdout(table(views));
      });
    });

  keys
    .command('revoke')
    .description('revoke a key for good: its next request is rejected (cannot be undone)')
    .argument('<key|id>', 'the key or its id')
    .option('--json', 'print the record as JSON')
    .action(async (keyOrId: string, opts: { json?: boolean }) => {
      await change(keyOrId, { status: 'revoked' }, opts.json === true, 'Revoked');
    });

  keys
    .command('disable')
    .description('disable a key until enabled again: its next request is rejected')
    .argument('<key|id>', 'the key or its id')
    .option('--json', 'print the record as JSON')
    .action(async (keyOrId: string, opts: { json?: boolean }) => {
      await change(keyOrId, { status: 'disabled' }, opts.json === true, 'Disabled');
    });

  keys
    .command('enable')
    .description('re-enable a disabled key (a revoked key can never be re-enabled)')
    .argument('<key|id>', 'the key or its id')
    .option('--json', 'print the record as JSON')
    .action(async (keyOrId: string, opts: { json?: boolean }) => {
      await change(keyOrId, { status: 'active' }, opts.json === true, 'Enabled');
    });

  keys
    .command('set-tier')
    .description("change a key's tier; applies from its next request")
    .argument('<key|id>', 'the key or its id')
    .argument('<tier>', `new tier: ${TIERS.map((t) => t.toLowerCase()).join('|')}`, parseTierArgument)
    .option('--json', 'print the record as JSON')
    .action(async (keyOrId: string, tier: Tier, opts: { json?: boolean }) => {
      await change(keyOrId, { tier }, opts.json === true, 'Changed');
    });

  keys
    .command('expire')
    .description("set when a key's subscription ends (default: now); from then on it is rejected as expired")
    .argument('<key|id>', 'the key or its id')
    .option('--at <date-time>', 'ISO 8601 date-time with offset (default: now)', parseDateTimeArgument)
    .option('--never', 'remove the subscription end instead')
    .option('--json', 'print the record as JSON')
    .action(async (keyOrId: string, opts: { at?: string; never?: boolean; json?: boolean }) => {
      if (opts.never && opts.at !== undefined)
        throw new KeysCliError('error: give either --at or --never, not both');
      const endsAt = opts.never ? null : (opts.at ?? clock.now().toISOString());
      await change(keyOrId, { subscriptionEndsAt: endsAt }, opts.json === true, 'Updated');
    });
}
