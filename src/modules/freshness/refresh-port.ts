/**
 * What read paths may ask of the refresh pipeline (SPEC "Data freshness rules").
 *
 * Read services depend on this port, not on the pipeline: they stay testable
 * without an upstream, and the pipeline (src/jobs/refresh/) implements it.
 */

/** A unit of data that can be refreshed on its own. */
export type RefreshTarget =
  | { kind: 'search'; listingType: 'rental' | 'sale' }
  | { kind: 'listing'; id: string }
  | { kind: 'building'; id: string };

export type LiveOutcome =
  /** Fetched from upstream and stored (with change detection) during this call. */
  | 'refreshed'
  /** Upstream no longer has it; the stored copy was left as it is. */
  | 'not_found'
  /** Upstream failed or timed out; serve the cached copy as `stale`. */
  | 'failed';

/** What the pipeline reports about itself (public health: no addresses, no messages). */
export interface RefreshStatus {
  /** `reso` (an operator's feed), `simulator` (the demo's), or null without an upstream. */
  upstream: 'reso' | 'simulator' | null;
  /** The last failed upstream refresh, if any since start. */
  lastFailure: { at: string; kind: string } | null;
  /** Background refreshes running or waiting. */
  backgroundPending: number;
}

export interface RefreshPort {
  /** For `/v1/health`. */
  status(): RefreshStatus;
  /**
   * Starts a background refresh of `target` unless one is already running
   * (single-flight per target) or was just done. Never waits for upstream.
   * Returns whether a refresh was started by, or is running for, this call:
   * the value of `meta.refreshTriggered`.
   */
  requestRefresh(target: RefreshTarget): boolean;
  /**
   * Fetches one listing from upstream now and stores it, answering within
   * `timeoutMs` whatever upstream does (`failed` past it; the fetch may still
   * complete and store its result). Business and Internal reads of
   * `GET /property/{id}` get `live` data.
   * Concurrent calls for the same listing share one upstream fetch.
   */
  refreshListingNow(id: string, timeoutMs?: number): Promise<LiveOutcome>;
}

/** For stores without an upstream (an ingested file, tests of read paths): nothing to refresh. */
export const noUpstream: RefreshPort = {
  status: () => ({ upstream: null, lastFailure: null, backgroundPending: 0 }),
  requestRefresh: () => false,
  refreshListingNow: async () => 'failed',
};
