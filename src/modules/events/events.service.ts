/**
 * The HTTP change feed over the durable event log: pages in sequence order
 * with a `next` cursor, and the same as a followed stream.
 *
 * Exactness: a consumer that starts at 0 and always asks `after = next` sees
 * every event once, in order. It rests on the log's contract (event-log.ts):
 * sequences become visible in order, so once the highest sequence M is
 * visible, every event ≤ M that will ever exist is visible too. A page never
 * reaches past the M it read first, and `next` is either the last event served
 * (a full page) or the end of the window scanned — never a sequence that could
 * still gain an event.
 *
 * Cost: one read scans at most `SCAN_WINDOW` sequences, so a sparse filter
 * (one neighborhood, a rare type) is many cheap pages rather than one long
 * query; such a page may be empty with `hasMore: true`.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { isListingEventType, LISTING_EVENT_TYPES, type ListingEventType } from '../../domain/events.ts';
import { ApiError, type ParamIssue } from '../../http/errors.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { AreaTree } from '../../reference/areas.ts';
import { resolveAreaList } from '../areas/area-input.ts';
import type { DataVersion } from '../freshness/data-version.ts';
import { type ListingEventPayload, toEventPayload } from './event-catalogue.ts';
import { latestSequence } from './event-log.ts';
import { readFeedWindow } from './events.repository.ts';

/** Sequences one read may scan (a few milliseconds of work on SQLite's request thread). */
export const SCAN_WINDOW = 10_000;
/** Events the stream reads per step. */
const STREAM_BATCH = 200;
/** How often the log's end is checked while streams are open and no change was announced (ms). */
const DEFAULT_POLL_MS = 1000;

export interface FeedFilter {
  types?: readonly ListingEventType[];
  /** Requested areas expanded to their descendants. */
  areaIds?: readonly number[];
}

export interface FeedPage {
  data: ListingEventPayload[];
  /** Pass as `after` to read on; equal to `after` when nothing new was visible. */
  next: number;
  /** True when events past `next` may already be visible (read on at once). */
  hasMore: boolean;
  /** The highest sequence in the log when the page was read. */
  latest: number;
}

export interface FeedQuery {
  after: number;
  limit: number;
  filter: FeedFilter;
}

export interface EventFeedOptions {
  pollMs?: number;
}

/**
 * Tells streams when the log's end moved: one poll of the highest sequence per
 * interval for the whole process (none while no stream listens), and at once
 * when this process hears of a data change (`DataVersion.onInvalidate`, which
 * the refresh pipeline and the jobs worker raise after writing).
 */
class LogWatcher {
  private readonly listeners = new Set<(latest: number) => void>();
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private checking: Promise<void> | null = null;
  private recheck = false;
  latest = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dataVersion: DataVersion,
    private readonly pollMs: number,
  ) {}

  subscribe(listener: (latest: number) => void): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1) {
      this.timer = setInterval(() => this.check(), this.pollMs);
      this.timer.unref();
      this.unsubscribe = this.dataVersion.onInvalidate(() => this.check());
    }
    return () => {
      if (!this.listeners.delete(listener) || this.listeners.size > 0) return;
      clearInterval(this.timer);
      this.unsubscribe?.();
      this.timer = undefined;
      this.unsubscribe = undefined;
    };
  }

  /** One read at a time; a change announced during it gets one more read. */
  private check(): void {
    if (this.checking) {
      this.recheck = true;
      return;
    }
    this.checking = (async () => {
      do {
        this.recheck = false;
        try {
          const latest = await latestSequence(this.db);
          if (latest > this.latest) {
            this.latest = latest;
            for (const listener of [...this.listeners]) listener(latest);
          }
        } catch {
          // The store is away: the next tick tries again; streams keep their cursor.
        }
      } while (this.recheck && this.listeners.size > 0);
    })().finally(() => {
      this.checking = null;
    });
  }
}

export class EventFeedService {
  private readonly watcher: LogWatcher;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly areaTree: AreaTree,
    dataVersion: DataVersion,
    options: EventFeedOptions = {},
  ) {
    this.watcher = new LogWatcher(db, dataVersion, options.pollMs ?? DEFAULT_POLL_MS);
  }

  /**
   * The filter of `types` and `areas` parameters (comma lists). An unknown type
   * is a 400 listing the valid ones; an unknown area (id, slug, name or alias) a 400 naming it.
   */
  filter(types: string | undefined, areas: string | undefined): FeedFilter {
    const filter: FeedFilter = {};
    if (types !== undefined && types !== '') {
      const names = [...new Set(types.split(','))];
      const unknown = names.filter((name) => !isListingEventType(name));
      if (unknown.length > 0) {
        throw invalid({
          parameter: 'types',
          rule: 'enum',
          message: `unknown event type ${unknown.map((n) => JSON.stringify(n.slice(0, 60))).join(', ')}; valid types: ${LISTING_EVENT_TYPES.join(', ')}`,
        });
      }
      filter.types = names.filter(isListingEventType);
    }
    if (areas !== undefined && areas !== '') {
      const ids = new Set<number>();
      for (const { id } of resolveAreaList(this.areaTree, 'areas', areas)) {
        for (const descendant of this.areaTree.descendantsAndSelf(id)) ids.add(descendant);
      }
      filter.areaIds = [...ids].sort((a, b) => a - b);
    }
    return filter;
  }

  /** One page of the feed after a cursor (see the module comment for the exactness argument). */
  async page(query: FeedQuery): Promise<FeedPage> {
    // The end is read before the window, so the window never reaches a sequence that could still appear.
    const latest = await latestSequence(this.db);
    const upTo = Math.min(query.after + SCAN_WINDOW, latest);
    if (upTo <= query.after) return { data: [], next: query.after, hasMore: false, latest };
    const events = await readFeedWindow(this.db, {
      after: query.after,
      upTo,
      limit: query.limit,
      ...query.filter,
    });
    const full = events.length === query.limit;
    const next = full ? events[events.length - 1]!.sequence : upTo;
    return { data: events.map(toEventPayload), next, hasMore: full ? next < latest : upTo < latest, latest };
  }

  /** The highest sequence in the log now (where a stream without a cursor starts). */
  latest(): Promise<number> {
    return latestSequence(this.db);
  }

  /**
   * Follows the feed from `after`: yields each non-empty batch in order and,
   * once caught up, waits for the log to grow. Ends when `signal` aborts. The
   * caller writes each batch before asking for the next (backpressure).
   */
  async *follow(after: number, filter: FeedFilter, signal: AbortSignal): AsyncGenerator<FeedPage> {
    let cursor = after;
    while (!signal.aborted) {
      const page = await this.page({ after: cursor, limit: STREAM_BATCH, filter });
      cursor = page.next;
      if (page.data.length > 0) yield page;
      if (page.hasMore) {
        // Many windows in a row (a sparse filter far behind): let other requests run between them.
        await yieldToLoop();
        continue;
      }
      await this.newerThan(cursor, signal);
    }
  }

  /** Resolves once an event past `sequence` may be visible, or `signal` aborts. */
  private newerThan(sequence: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted || this.watcher.latest > sequence) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        unsubscribe();
        signal.removeEventListener('abort', done);
        resolve();
      };
      const unsubscribe = this.watcher.subscribe((latest) => {
        if (latest > sequence) done();
      });
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

function invalid(issue: Omit<ParamIssue, 'location'>): ApiError {
  return ApiError.invalidParam(issue);
}
