/**
 * Watchers of an account: create, read, change, delete; the record of what
 * each poll found; and the stream of a watcher's changes.
 *
 * Owner scoping: every lookup is by (account, id); another account's watcher
 * is reported exactly like a missing one (404).
 *
 * Changes: a poll whose snapshot differs from the previous one records one
 * `watcher_changes` row under the watcher's next sequence, in one transaction
 * with the new snapshot (so a change is recorded once, and a poll that fails
 * to record leaves the baseline where it was for the next one to find it
 * again), then tells the change sink.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Tier } from '../../domain/tiers.ts';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { SearchService } from '../search/search.service.ts';
import {
  changeFromRow,
  targetToJson,
  type Watcher,
  type WatchTarget,
  watcherFromRow,
} from './watcher.mapper.ts';
import { diffSnapshots, type Snapshot } from './watcher-snapshot.ts';
import type { StreamSignal, WatcherStreams } from './watcher-streams.ts';
import { searchQueryOf, type TargetRead, type WatcherTargets } from './watcher-targets.ts';
import * as repo from './watchers.repository.ts';
import {
  type CreateWatcherInput,
  DEFAULT_POLL_INTERVAL_S,
  MAX_WATCHERS_PER_ACCOUNT,
  type PausedReason,
  type SearchFilters,
  type UpdateWatcherInput,
  WATCHER_CHANGE_EVENT,
  type WatcherChange,
} from './watchers.schema.ts';

/** A change as recorded, with the account it belongs to (whose webhooks receive it). */
export interface RecordedWatcherChange {
  accountId: string;
  payload: WatcherChange;
}

/**
 * Where recorded changes go besides the store: this process's streams, and
 * the owner's webhooks (`watcher.change` events).
 */
export interface WatcherChangeSink {
  /**
   * Inside the transaction that records the change (durable work such as
   * webhook outbox rows, written with `trx`). A throw rolls the record back:
   * the next poll finds the same change again.
   */
  record?(change: RecordedWatcherChange, trx: Kysely<Database>): Promise<void>;
  /** After the change is committed (live notification). Failures are logged, never retried. */
  watcherChanged(change: RecordedWatcherChange): Promise<void>;
}

/** Shortest poll interval (seconds) per tier that may hold watchers. */
export const MIN_POLL_INTERVAL_S: Readonly<Partial<Record<Tier, number>>> = { BUSINESS: 300, INTERNAL: 60 };

export interface WatchersServiceOptions {
  db: Kysely<Database>;
  /** Real time: createdAt/updatedAt and poll scheduling. */
  wallClock: Clock;
  targets: WatcherTargets;
  search: SearchService;
  streams: WatcherStreams;
  sink: WatcherChangeSink;
  /** Tests: other minimums than MIN_POLL_INTERVAL_S. */
  minPollIntervalS?: Partial<Record<Tier, number>>;
  log?: { warn(obj: object, msg: string): void };
}

export interface Page<T> {
  items: T[];
  total: number;
}

/** One step of a followed stream. */
export type StreamItem =
  | { kind: 'change'; change: WatcherChange }
  | { kind: 'stopped'; reason: 'deleted' | 'paused'; pausedReason: PausedReason | null }
  | { kind: 'error'; code: string; message: string };

/** Changes kept per watcher for `Last-Event-ID` resume (older ones are dropped as new ones are recorded). */
export const CHANGES_KEPT = 1000;
/** How often an open stream re-reads the store when no signal came (changes from other processes). */
const STREAM_RECHECK_MS = 1000;
const STREAM_BATCH = 100;

function invalidField(field: string, rule: string, message: string): ApiError {
  return new ApiError('INVALID_BODY', `Invalid field "${field}": ${message}`, {
    params: [{ parameter: field, location: 'body', rule, message }],
  });
}

const TARGET_FIELDS = { listing: 'listingId', building: 'buildingId', search: 'searchFilters' } as const;

export class WatchersService {
  private readonly db: Kysely<Database>;
  private readonly minIntervals: Partial<Record<Tier, number>>;

  constructor(private readonly options: WatchersServiceOptions) {
    this.db = options.db;
    this.minIntervals = { ...MIN_POLL_INTERVAL_S, ...options.minPollIntervalS };
  }

  private now(): Date {
    return this.options.wallClock.now();
  }

  private checkInterval(seconds: number, tier: Tier): number {
    const min = this.minIntervals[tier] ?? MIN_POLL_INTERVAL_S.BUSINESS ?? 300;
    if (seconds < min) {
      throw invalidField(
        'pollInterval',
        'minimum',
        `must be at least ${min} seconds for the ${tier} tier (got ${seconds})`,
      );
    }
    return seconds;
  }

  /** The target named by the body, checked: exactly the watch type's field, naming what exists. */
  private async checkTarget(input: CreateWatcherInput): Promise<WatchTarget> {
    const wanted = TARGET_FIELDS[input.watchType];
    for (const field of Object.values(TARGET_FIELDS)) {
      if (field !== wanted && input[field] !== undefined) {
        throw invalidField(
          field,
          'not_allowed',
          `must not be sent with watchType "${input.watchType}" (send ${wanted})`,
        );
      }
    }
    if (input[wanted] === undefined) {
      throw invalidField(wanted, 'required', `is required with watchType "${input.watchType}"`);
    }
    if (input.watchType === 'listing') {
      const id = input.listingId as string;
      if (!(await repo.listingExists(this.db, id))) throw ApiError.notFound('Listing', id);
      return { watchType: 'listing', listingId: id };
    }
    if (input.watchType === 'building') {
      const id = input.buildingId as string;
      if (!(await repo.buildingExists(this.db, id))) throw ApiError.notFound('Building', id);
      return { watchType: 'building', buildingId: id };
    }
    const filters = input.searchFilters as SearchFilters;
    if (filters.listingType === 'sale' && filters.noFee !== undefined) {
      throw invalidField('searchFilters.noFee', 'not_allowed', 'applies to rentals only');
    }
    if (filters.listingType === 'rental' && filters.saleType !== undefined) {
      throw invalidField('searchFilters.saleType', 'not_allowed', 'applies to sales only');
    }
    const { listingType, query } = searchQueryOf(filters);
    try {
      // The search endpoints' own checks (ranges, dates, areas): one meaning for each parameter.
      this.options.search.toCriteria(listingType, query);
    } catch (error) {
      const issue = error instanceof ApiError ? error.details?.params?.[0] : undefined;
      if (!issue) throw error;
      throw invalidField(`searchFilters.${issue.parameter}`, issue.rule, issue.message);
    }
    return { watchType: 'search', searchFilters: filters };
  }

  /** The target as it is now, from the store (no upstream call): the first baseline. */
  private async baseline(target: WatchTarget): Promise<Snapshot> {
    const { targets } = this.options;
    switch (target.watchType) {
      case 'listing':
        return targets.listingState(target.listingId);
      case 'building':
        return targets.buildingState(target.buildingId);
      case 'search':
        return targets.searchState(target.searchFilters);
    }
  }

  private async owned(accountId: string, id: string): Promise<Watcher> {
    const row = await repo.findOwnedWatcher(this.db, accountId, id);
    if (!row) throw ApiError.notFound('Watcher', id);
    return watcherFromRow(row);
  }

  async create(caller: { accountId: string; tier: Tier }, input: CreateWatcherInput): Promise<Watcher> {
    const interval = this.checkInterval(input.pollInterval ?? DEFAULT_POLL_INTERVAL_S, caller.tier);
    const target = await this.checkTarget(input);
    if ((await repo.countWatchers(this.db, caller.accountId)) >= MAX_WATCHERS_PER_ACCOUNT) {
      throw new ApiError(
        'CONFLICT',
        `An account may hold at most ${MAX_WATCHERS_PER_ACCOUNT} watchers; delete one first`,
      );
    }
    const snapshot = await this.baseline(target);
    const now = this.now();
    const id = randomUUID();
    await repo.insertWatcher(this.db, {
      id,
      account_id: caller.accountId,
      watch_type: target.watchType,
      target: targetToJson(target),
      poll_interval_s: interval,
      status: 'active',
      paused_reason: null,
      last_polled_at: null,
      last_change_at: null,
      next_poll_at: new Date(now.getTime() + interval * 1000).toISOString(),
      snapshot: JSON.stringify(snapshot),
      last_sequence: 0,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    });
    return this.owned(caller.accountId, id);
  }

  async list(accountId: string, window: { page: number; perPage: number }): Promise<Page<Watcher>> {
    const total = await repo.countWatchers(this.db, accountId);
    const rows = await repo.listWatchers(
      this.db,
      accountId,
      (window.page - 1) * window.perPage,
      window.perPage,
    );
    return { items: rows.map(watcherFromRow), total };
  }

  get(accountId: string, id: string): Promise<Watcher> {
    return this.owned(accountId, id);
  }

  async update(
    caller: { accountId: string; tier: Tier },
    id: string,
    input: UpdateWatcherInput,
  ): Promise<Watcher> {
    const current = await this.owned(caller.accountId, id);
    const interval =
      input.pollInterval === undefined
        ? current.pollIntervalS
        : this.checkInterval(input.pollInterval, caller.tier);
    const now = this.now();
    const status = input.status ?? current.status;
    const resumed = status === 'active' && current.status === 'paused';
    const paused = status === 'paused' && current.status === 'active';
    let nextPollAt = current.nextPollAt;
    // Resumed: due at once. A new interval: counted from now.
    if (resumed) nextPollAt = now.toISOString();
    else if (input.pollInterval !== undefined)
      nextPollAt = new Date(now.getTime() + interval * 1000).toISOString();
    await repo.updateWatcher(this.db, id, {
      poll_interval_s: interval,
      status,
      paused_reason: status === 'active' ? null : paused ? 'by_owner' : current.pausedReason,
      next_poll_at: nextPollAt,
      updated_at: now.toISOString(),
    });
    if (paused) this.options.streams.publish(id, { kind: 'stopped' });
    return this.owned(caller.accountId, id);
  }

  async remove(accountId: string, id: string): Promise<void> {
    await this.owned(accountId, id);
    await this.db.transaction().execute((trx) => repo.deleteWatcher(trx, id));
    this.options.streams.publish(id, { kind: 'stopped' });
  }

  /** The service paused a watcher (quota used up, tier lost); its streams stop. */
  async pause(id: string, reason: PausedReason): Promise<void> {
    await repo.updateWatcher(this.db, id, {
      status: 'paused',
      paused_reason: reason,
      updated_at: this.now().toISOString(),
    });
    this.options.streams.publish(id, { kind: 'stopped' });
  }

  /**
   * Records one poll: compares what it read with the stored snapshot and, when
   * something changed, records the change under the next sequence (see the
   * module comment). Returns the change, or null when nothing changed (or the
   * watcher is gone, or a concurrent record won).
   */
  async recordPoll(watcherId: string, read: TargetRead): Promise<RecordedWatcherChange | null> {
    const { sink, streams } = this.options;
    const polledAt = this.now().toISOString();
    const superseded = new Error('superseded');
    let recorded: RecordedWatcherChange | null = null;
    try {
      recorded = await this.db.transaction().execute(async (trx) => {
        const row = await repo.findWatcher(trx, watcherId);
        if (!row) return null;
        const watcher = watcherFromRow(row);
        const before = watcher.snapshot === null ? null : (JSON.parse(watcher.snapshot) as Snapshot);
        const changes = diffSnapshots(before, read.snapshot);
        const sequence = watcher.lastSequence + (changes.length > 0 ? 1 : 0);
        // The watcher row first: it holds a concurrent delete or record until this one commits.
        const stored = await repo.storePoll(trx, watcher.id, watcher.lastSequence, {
          snapshot: JSON.stringify(read.snapshot),
          last_polled_at: polledAt,
          last_sequence: sequence,
          ...(changes.length > 0 ? { last_change_at: polledAt } : {}),
        });
        if (!stored) throw superseded;
        if (changes.length === 0) return null;
        const { target } = watcher;
        const change: RecordedWatcherChange = {
          accountId: watcher.accountId,
          payload: {
            id: `${watcher.id}:${sequence}`,
            type: WATCHER_CHANGE_EVENT,
            timestamp: polledAt,
            data: {
              watcherId: watcher.id,
              sequence,
              watchType: target.watchType,
              listingId: target.watchType === 'listing' ? target.listingId : null,
              buildingId: target.watchType === 'building' ? target.buildingId : null,
              changes,
            },
          },
        };
        await repo.insertChange(trx, {
          watcher_id: watcher.id,
          sequence,
          occurred_at: polledAt,
          payload: JSON.stringify(change.payload),
        });
        if (sequence > CHANGES_KEPT) await repo.pruneChanges(trx, watcher.id, sequence - CHANGES_KEPT);
        await sink.record?.(change, trx);
        return change;
      });
    } catch (error) {
      // Deleted meanwhile, or another record won: this poll's outcome is moot.
      if (error !== superseded) throw error;
    }
    if (read.warning) streams.publish(watcherId, { kind: 'error', ...read.warning });
    if (recorded) {
      try {
        await sink.watcherChanged(recorded);
      } catch (error) {
        this.options.log?.warn({ err: error, watcherId }, 'watcher change sink failed');
      }
    }
    return recorded;
  }

  /** Tells a watcher's streams that a poll failed (the store or the target could not be read). */
  pollFailed(watcherId: string, message: string): void {
    this.options.streams.publish(watcherId, { kind: 'error', code: 'poll_failed', message });
  }

  /**
   * Follows a watcher's changes after `after`: yields each recorded change in
   * sequence order, poll errors as they happen, and `stopped` (then ends) once
   * the watcher is paused or deleted. Ends when `signal` aborts.
   */
  async *follow(
    accountId: string,
    id: string,
    after: number,
    signal: AbortSignal,
  ): AsyncGenerator<StreamItem> {
    let cursor = after;
    const pending: StreamSignal[] = [];
    let wake: (() => void) | null = null;
    const unsubscribe = this.options.streams.subscribe(id, (s) => {
      pending.push(s);
      wake?.();
    });
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const rows = await repo.readChanges(this.db, id, cursor, STREAM_BATCH);
        for (const row of rows) {
          cursor = Number(row.sequence);
          yield { kind: 'change', change: changeFromRow(row) };
        }
        if (rows.length === STREAM_BATCH) continue;
        const row = await repo.findOwnedWatcher(this.db, accountId, id);
        if (!row) {
          yield { kind: 'stopped', reason: 'deleted', pausedReason: null };
          return;
        }
        if (row.status === 'paused') {
          // Changes recorded by a poll that ran as it was paused are sent first.
          for (const late of await repo.readChanges(this.db, id, cursor, STREAM_BATCH)) {
            yield { kind: 'change', change: changeFromRow(late) };
          }
          yield { kind: 'stopped', reason: 'paused', pausedReason: row.paused_reason as PausedReason | null };
          return;
        }
        // Recorded in this process: a signal at once; in another: the next re-read.
        if (pending.length === 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, STREAM_RECHECK_MS);
            function done() {
              clearTimeout(timer);
              wake = null;
              resolve();
            }
            wake = done;
          });
        }
        for (const s of pending.splice(0)) {
          if (s.kind === 'error') yield { kind: 'error', code: s.code, message: s.message };
        }
      }
    } finally {
      unsubscribe();
      signal.removeEventListener('abort', onAbort);
    }
  }
}
