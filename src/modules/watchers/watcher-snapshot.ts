/**
 * What a watcher sees of its target at one poll, and what changed between
 * two polls. Snapshots are plain JSON (stored in `watchers.snapshot`), so the
 * comparison survives restarts and runs the same in every process.
 */
import type { ChangeItem } from './watchers.schema.ts';

/** A listing's state in a building's or a search's results. */
export interface ListedState {
  price: number;
  status: string;
}

export interface Snapshot {
  /** False when the watched record is gone (no longer stored, or upstream no longer has it). */
  present: boolean;
  /** The watched record's own fields (listing or building); absent for searches. */
  fields?: Record<string, unknown>;
  /** Listings of a building or a search, by id. */
  listings?: Record<string, ListedState>;
  /** A search's total match count. */
  total?: number;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The changes from `before` to `after`, in a stable order (the record's
 * fields, then listings by id). Nothing before (a first poll) is a baseline:
 * no changes.
 */
export function diffSnapshots(before: Snapshot | null, after: Snapshot): ChangeItem[] {
  if (before === null) return [];
  const changes: ChangeItem[] = [];
  if (before.present !== after.present) {
    changes.push({
      kind: 'changed',
      field: 'present',
      listingId: null,
      oldValue: before.present,
      newValue: after.present,
    });
  }
  // A record that disappeared keeps no fields to compare; its return is reported field by field.
  if (before.fields && after.fields && after.present) {
    const names = new Set([...Object.keys(before.fields), ...Object.keys(after.fields)]);
    for (const field of [...names].sort()) {
      const oldValue = before.fields[field] ?? null;
      const newValue = after.fields[field] ?? null;
      if (!same(oldValue, newValue))
        changes.push({ kind: 'changed', field, listingId: null, oldValue, newValue });
    }
  }
  if (before.total !== undefined && after.total !== undefined && before.total !== after.total) {
    changes.push({
      kind: 'changed',
      field: 'total',
      listingId: null,
      oldValue: before.total,
      newValue: after.total,
    });
  }
  if (before.listings && after.listings && after.present) {
    const ids = new Set([...Object.keys(before.listings), ...Object.keys(after.listings)]);
    for (const listingId of [...ids].sort()) {
      const was = before.listings[listingId];
      const now = after.listings[listingId];
      if (!was && now) {
        changes.push({ kind: 'added', field: 'listing', listingId, oldValue: null, newValue: now });
      } else if (was && !now) {
        changes.push({ kind: 'removed', field: 'listing', listingId, oldValue: was, newValue: null });
      } else if (was && now) {
        for (const field of ['price', 'status'] as const) {
          if (was[field] !== now[field]) {
            changes.push({ kind: 'changed', field, listingId, oldValue: was[field], newValue: now[field] });
          }
        }
      }
    }
  }
  return changes;
}
