/** Rows of the watcher tables → API objects: the one mapping of each. */
import type { WatcherChangeRow, WatcherRow } from '../../platform/db/tables.ts';
import type { PausedReason, SearchFilters, WatcherChange, WatcherView } from './watchers.schema.ts';

/** What a watcher watches, as stored in `watchers.target`. */
export type WatchTarget =
  | { watchType: 'listing'; listingId: string }
  | { watchType: 'building'; buildingId: string }
  | { watchType: 'search'; searchFilters: SearchFilters };

/** A watcher as the services and the poller use it. */
export interface Watcher {
  id: string;
  accountId: string;
  target: WatchTarget;
  pollIntervalS: number;
  status: 'active' | 'paused';
  pausedReason: PausedReason | null;
  lastPolledAt: string | null;
  lastChangeAt: string | null;
  nextPollAt: string;
  /** JSON text of what the last poll saw; null before the first. */
  snapshot: string | null;
  lastSequence: number;
  createdAt: string;
  updatedAt: string;
}

/** The stored target JSON of a target (the watch type lives in its own column). */
export function targetToJson(target: WatchTarget): string {
  switch (target.watchType) {
    case 'listing':
      return JSON.stringify({ listingId: target.listingId });
    case 'building':
      return JSON.stringify({ buildingId: target.buildingId });
    case 'search':
      return JSON.stringify({ searchFilters: target.searchFilters });
  }
}

function targetFromRow(row: WatcherRow): WatchTarget {
  const stored = JSON.parse(row.target) as {
    listingId?: string;
    buildingId?: string;
    searchFilters?: SearchFilters;
  };
  switch (row.watch_type) {
    case 'listing':
      return { watchType: 'listing', listingId: stored.listingId as string };
    case 'building':
      return { watchType: 'building', buildingId: stored.buildingId as string };
    case 'search':
      return { watchType: 'search', searchFilters: stored.searchFilters as SearchFilters };
  }
}

export function watcherFromRow(row: WatcherRow): Watcher {
  return {
    id: row.id,
    accountId: row.account_id,
    target: targetFromRow(row),
    pollIntervalS: Number(row.poll_interval_s),
    status: row.status,
    pausedReason: row.paused_reason as PausedReason | null,
    lastPolledAt: row.last_polled_at,
    lastChangeAt: row.last_change_at,
    nextPollAt: row.next_poll_at,
    snapshot: row.snapshot,
    lastSequence: Number(row.last_sequence),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toWatcherView(watcher: Watcher): WatcherView {
  const { target } = watcher;
  return {
    id: watcher.id,
    watchType: target.watchType,
    listingId: target.watchType === 'listing' ? target.listingId : null,
    buildingId: target.watchType === 'building' ? target.buildingId : null,
    searchFilters: target.watchType === 'search' ? target.searchFilters : null,
    pollInterval: watcher.pollIntervalS,
    active: watcher.status === 'active',
    status: watcher.status,
    pausedReason: watcher.pausedReason,
    lastPollAt: watcher.lastPolledAt,
    lastChangeAt: watcher.lastChangeAt,
    nextPollAt: watcher.status === 'active' ? watcher.nextPollAt : null,
    lastSequence: watcher.lastSequence,
    createdAt: watcher.createdAt,
    updatedAt: watcher.updatedAt,
  };
}

export function changeFromRow(row: WatcherChangeRow): WatcherChange {
  return JSON.parse(row.payload) as WatcherChange;
}
