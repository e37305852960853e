/**
 * The watcher poller of a serving process: claims due watchers, counts each
 * poll against the owner's monthly quota, re-reads the target through the
 * pipeline and records what changed (WatchersService.recordPoll).
 *
 * - **Once per interval, however many processes run**: a poll is claimed by
 *   moving the watcher's `next_poll_at` forward with a compare-and-set
 *   (watchers.repository.ts `claimPoll`) before anything else; a process that
 *   loses the race skips the watcher. A process that dies mid-poll loses that
 *   poll only; the next is due an interval later.
 * - **Metering** (SPEC "Limits" 4): each poll counts one request against the
 *   account's quota (the bucket every key of the account shares), judged by
 *   the account's highest usable tier. Past quota + overage the watcher
 *   pauses with `quota_exceeded`; an account left without a Business or
 *   Internal key pauses its watchers with `tier_restricted`. The owner resumes
 *   them (PATCH `status: active`).
 * - Polls are I/O (a live fetch, a few small queries) on the main thread, a
 *   bounded number at once.
 * - Scheduling is on the wall clock (real time), like quotas.
 */

import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { type Tier, type TierLimits, tierRank } from '../../domain/tiers.ts';
import { quotaPeriod } from '../../http/access.ts';
import { accountBucket } from '../../modules/keys/api-key-resolver.ts';
import { watcherFromRow } from '../../modules/watchers/watcher.mapper.ts';
import type { WatcherTargets } from '../../modules/watchers/watcher-targets.ts';
import * as repo from '../../modules/watchers/watchers.repository.ts';
import type { WatchersService } from '../../modules/watchers/watchers.service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { QuotaStore } from '../../platform/limits/limits.ts';

export interface WatcherPollerOptions {
  db: Kysely<Database>;
  /** Real time: what is due, and the quota month. */
  wallClock: Clock;
  watchers: WatchersService;
  targets: WatcherTargets;
  quota: QuotaStore;
  tierLimits: Readonly<Record<Tier, TierLimits>>;
  log: Pick<Logger, 'warn' | 'error'>;
  /** How often the poller looks for due watchers, real ms (tests: a few ms). */
  tickMs?: number;
  /** Polls in flight at once in this process. */
  concurrency?: number;
}

export interface PollOutcome {
  /** Watchers this call claimed and polled. */
  polled: number;
  /** Of those, how many recorded a change. */
  changed: number;
  /** Of those, how many were paused (quota, tier). */
  paused: number;
}

const DEFAULT_TICK_MS = 1000;
const DEFAULT_CONCURRENCY = 16;
/** Due watchers read per pass. */
const CLAIM_BATCH = 100;

export class WatcherPoller {
  private readonly tickMs: number;
  private readonly concurrency: number;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private pass: Promise<unknown> | null = null;

  constructor(private readonly options: WatcherPollerOptions) {
    this.tickMs = options.tickMs ?? DEFAULT_TICK_MS;
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  }

  /** Starts polling (idempotent). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.arm();
  }

  /** Stops polling; resolves once the pass in progress has finished. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.pass;
  }

  private arm(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pass = this.pollDue()
        .catch((error: unknown) => this.options.log.warn({ err: error }, 'watcher poll pass failed'))
        .finally(() => {
          this.pass = null;
          this.arm();
        });
    }, this.tickMs);
    this.timer.unref();
  }

  /**
   * One pass: claims every watcher due now (in batches) and polls the ones it
   * won, `concurrency` at a time. Tests and tools call it directly.
   */
  async pollDue(): Promise<PollOutcome> {
    const outcome: PollOutcome = { polled: 0, changed: 0, paused: 0 };
    const { db, wallClock } = this.options;
    for (;;) {
      const now = wallClock.now();
      const due = await repo.dueWatchers(db, now.toISOString(), CLAIM_BATCH);
      const claimed: string[] = [];
      for (const row of due) {
        const next = new Date(now.getTime() + Number(row.poll_interval_s) * 1000).toISOString();
        if (await repo.claimPoll(db, row.id, row.next_poll_at, next)) claimed.push(row.id);
      }
      for (let i = 0; i < claimed.length; i += this.concurrency) {
        const results = await Promise.all(
          claimed.slice(i, i + this.concurrency).map((id) => this.pollOne(id)),
        );
        for (const result of results) {
          if (result === 'skipped') continue;
          outcome.polled++;
          if (result === 'changed') outcome.changed++;
          if (result === 'paused') outcome.paused++;
        }
      }
      if (due.length < CLAIM_BATCH) return outcome;
    }
  }

  /** Polls one claimed watcher. Never throws: a failure is logged and told to its streams. */
  private async pollOne(id: string): Promise<'changed' | 'unchanged' | 'paused' | 'skipped'> {
    const { db, watchers, targets, log } = this.options;
    try {
      const row = await repo.findWatcher(db, id);
      if (row?.status !== 'active') return 'skipped';
      const watcher = watcherFromRow(row);
      const metered = await this.meter(watcher.accountId);
      if (metered !== 'ok') {
        await watchers.pause(id, metered);
        return 'paused';
      }
      const read = await targets.read(watcher.target);
      const change = await watchers.recordPoll(id, read);
      return change ? 'changed' : 'unchanged';
    } catch (error) {
      log.warn({ err: error, watcherId: id }, 'watcher poll failed');
      watchers.pollFailed(id, 'The poll could not complete; the next one is due at the usual interval');
      return 'unchanged';
    }
  }

  /** Counts one request against the account's quota, by its highest usable tier. */
  private async meter(accountId: string): Promise<'ok' | 'quota_exceeded' | 'tier_restricted'> {
    const { db, wallClock, quota, tierLimits } = this.options;
    const now = wallClock.now();
    const tiers = await repo.accountKeyTiers(db, accountId, now.toISOString());
    const best = tiers.reduce<Tier | null>(
      (top, tier) => (top === null || tierRank(tier) > tierRank(top) ? tier : top),
      null,
    );
    if (best === null || tierRank(best) < tierRank('BUSINESS')) return 'tier_restricted';
    const limits = tierLimits[best];
    const decision = await quota.increment(
      accountBucket(accountId),
      quotaPeriod(now).id,
      limits.monthlyQuota + limits.overageLimit,
    );
    return decision.allowed ? 'ok' : 'quota_exceeded';
  }
}
