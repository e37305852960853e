/**
 * The listing stream (SPEC "Listing SSE stream events"): the stored listing at
 * once, then the same listing fetched live through the refresh pipeline's live
 * path (the one Business and Internal reads of `GET /property/{id}` use), or
 * the reason it could not be.
 *
 * Time bound: the live fetch gets at most `LIVE_BUDGET_MS` (or the configured
 * live timeout when smaller), so a stream is over well within 10 s whatever
 * upstream does. A fetch that outlives it may still complete and store its
 * result (RefreshPort contract); the stream has already said `timeout`.
 */
import type { Kysely } from 'kysely';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/tables.ts';
import type { AreaTree } from '../../reference/areas.ts';
import type { RefreshPort } from '../freshness/refresh-port.ts';
import { type DetailLinks, toListingDetail } from '../property/property.mapper.ts';
import { findListingDetailRows } from '../property/property.repository.ts';

/** The live fetch's share of the stream's 10 s. */
export const LIVE_BUDGET_MS = 8000;
/**
 * The port's own deadline is set a little past the stream's, so a hung
 * upstream is reported by the stream's timer as `timeout` rather than by the
 * port as a failure.
 */
const PORT_GRACE_MS = 250;

export type LiveErrorCode = 'fetch_failed' | 'timeout' | 'not_found';

export type LiveResult =
  | { kind: 'live'; json: string }
  | { kind: 'error'; code: LiveErrorCode; message: string };

export class ListingStreamService {
  private readonly liveTimeoutMs: number;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly areaTree: AreaTree,
    /** The market clock (days on market, as in the listing detail). */
    private readonly clock: Clock,
    private readonly refresher: RefreshPort,
    private readonly links: DetailLinks,
    liveTimeoutMs: number,
  ) {
    this.liveTimeoutMs = Math.min(liveTimeoutMs, LIVE_BUDGET_MS);
  }

  /** The stored listing as ListingDetail JSON text; a 404 when the store has no such listing. */
  async cached(id: string): Promise<string> {
    const json = await this.render(id);
    if (json === undefined) throw ApiError.notFound('Listing', id);
    return json;
  }

  /** Fetches the listing through the live path within the stream's budget, and renders what was stored. */
  async live(id: string): Promise<LiveResult> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.liveTimeoutMs);
    });
    try {
      const outcome = await Promise.race([
        this.refresher.refreshListingNow(id, this.liveTimeoutMs + PORT_GRACE_MS),
        deadline,
      ]);
      if (outcome === 'timeout') {
        return {
          kind: 'error',
          code: 'timeout',
          message: `Upstream did not answer within ${this.liveTimeoutMs} ms`,
        };
      }
      if (outcome === 'not_found') {
        return { kind: 'error', code: 'not_found', message: 'Upstream no longer has this listing' };
      }
      if (outcome === 'failed') {
        return { kind: 'error', code: 'fetch_failed', message: 'The live fetch from upstream failed' };
      }
      const json = await this.render(id);
      if (json === undefined) {
        return {
          kind: 'error',
          code: 'fetch_failed',
          message: 'The listing could not be read after the fetch',
        };
      }
      return { kind: 'live', json };
    } finally {
      clearTimeout(timer);
    }
  }

  private async render(id: string): Promise<string | undefined> {
    const rows = await findListingDetailRows(this.db, id);
    if (rows === undefined) return undefined;
    const areaName = this.areaTree.get(rows.listing.area_id)?.name ?? 'Unassigned';
    return JSON.stringify(toListingDetail(rows, areaName, this.clock.now(), this.links));
  }
}
