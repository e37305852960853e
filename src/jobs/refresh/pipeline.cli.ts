/**
 * Operator commands of the data pipeline:
 * - `stoop refresh [--listings|--buildings] [--full]`: run a refresh cycle now;
 * - `stoop events tail [--from N] [--type T] [--follow]`: print the event log as JSON lines;
 * - `stoop ingest listings FILE`: bulk-load RESO Property records from a file.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { type Command, InvalidArgumentError } from 'commander';
import { isListingEventType, LISTING_EVENT_TYPES, type ListingEventType } from '../../domain/events.ts';
import { toEventPayload } from '../../modules/events/event-catalogue.ts';
import { readEvents, sequenceBeforeLast } from '../../modules/events/event-log.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Store } from '../../platform/db/database.ts';
import { type IngestReport, ingestListingsFile } from './ingest.ts';
import type { Refresher } from './refresher.ts';

export class PipelineCliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PipelineCliError';
  }
}

export interface PipelineSession {
  store: Store;
  clock: Clock;
  /** The refresher over the configured upstream; null when none is configured. */
  refresher: Refresher | null;
  close(): Promise<void>;
}

export interface PipelineCliOptions {
  /** Opens the configured store (migrated) and, when `withUpstream`, the upstream source. */
  open(withUpstream: boolean): Promise<PipelineSession>;
  stdout(text: string): void;
  stderr(text: string): void;
  /** Progress bar factory for long operations (a TTY bar or summary lines). */
  progress(label: string): { update(done: number, total: number): void; stop(): void };
  /** Waits between polls of `events tail --follow`; resolves false to stop following. */
  pause?(ms: number): Promise<boolean>;
}

/** Said on stderr once `events tail --follow` has caught up with the log. */
export const FOLLOW_WAITING =
  'Caught up; following. New events are written by refresh cycles: the server runs `refresh:search` every 4–6 market hours (minutes with the demo, whose market clock runs at SIM_SPEED× real time; `GET /v1/health` shows its nextRunAt), and `stoop refresh` runs one now. Ctrl-C stops.';

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number');
  return Number(value);
}

function eventType(value: string, previous: ListingEventType[] = []): ListingEventType[] {
  if (!isListingEventType(value)) {
    throw new InvalidArgumentError(`must be one of ${LISTING_EVENT_TYPES.join(', ')}`);
  }
  return [...previous, value];
}

export function registerPipelineCommands(program: Command, options: PipelineCliOptions): void {
  const { open, stdout, stderr } = options;
  const pause = options.pause ?? ((ms: number) => new Promise<boolean>((r) => setTimeout(() => r(true), ms)));

  program
    .command('refresh')
    .description('refresh from the upstream source now (default: listings, then buildings)')
    .option('--listings', 'only listings (replication of every change since the last refresh)')
    .option('--buildings', 'only buildings')
    .option('--full', 'listings: page through everything on market instead of changes only')
    .action(async (opts: { listings?: boolean; buildings?: boolean; full?: boolean }) => {
      if (opts.listings && opts.buildings)
        throw new PipelineCliError('--listings and --buildings exclude each other');
      const session = await open(true);
      try {
        if (!session.refresher) {
          throw new PipelineCliError(
            'No upstream is configured: set UPSTREAM_URL (or DEMO=true for the simulator).',
          );
        }
        if (!opts.buildings) {
          const result = opts.full
            ? await session.refresher.fullRefresh()
            : await session.refresher.replicate();
          const rate = result.ms > 0 ? Math.round((result.received / result.ms) * 1000) : result.received;
          stdout(
            JSON.stringify({
              kind: opts.full ? 'full' : 'replication',
              received: result.received,
              created: result.created,
              updated: result.updated,
              unchanged: result.unchanged,
              fetched: result.fetched,
              events: result.events,
              pages: result.pages,
              ms: result.ms,
              listingsPerSecond: rate,
            }),
          );
        }
        if (!opts.listings) {
          const result = await session.refresher.refreshBuildings();
          stdout(JSON.stringify({ kind: 'buildings', ...result }));
        }
      } finally {
        await session.close();
      }
    });

  const events = program.command('events').description('the listing event log');
  events
    .command('tail')
    .description('print events as JSON lines (the last 20 unless --from is given)')
    .option('--from <sequence>', 'print events after this sequence number', positiveInt)
    .option('--type <type>', 'only this event type (repeatable)', eventType)
    .option('--limit <n>', 'print at most this many events (without --follow)', positiveInt)
    .option('-f, --follow', 'keep printing new events as they are written')
    .action(async (opts: { from?: number; type?: ListingEventType[]; limit?: number; follow?: boolean }) => {
      const session = await open(false);
      try {
        // Filter first, then take the tail: the last N events of the requested types.
        let after = opts.from ?? (await sequenceBeforeLast(session.store.db, opts.limit ?? 20, opts.type));
        let printed = 0;
        let waitingSaid = false;
        const max = opts.follow ? Number.POSITIVE_INFINITY : (opts.limit ?? Number.POSITIVE_INFINITY);
        for (;;) {
          const batch = await readEvents(session.store.db, {
            after,
            limit: Math.min(1000, max - printed),
            ...(opts.type ? { types: opts.type } : {}),
          });
          for (const event of batch) stdout(JSON.stringify(toEventPayload(event)));
          printed += batch.length;
          if (batch.length > 0) after = batch.at(-1)!.sequence;
          if (printed >= max) break;
          if (batch.length === 0) {
            if (!opts.follow) break;
            // Caught up: say once why nothing comes yet (a fresh demo's first scheduled refresh is minutes away).
            if (!waitingSaid) stderr(FOLLOW_WAITING);
            waitingSaid = true;
            if (!(await pause(1000))) break;
          }
        }
      } finally {
        await session.close();
      }
    });

  const ingest = program.command('ingest').description('bulk-load data from files');
  ingest
    .command('listings')
    .description(
      'load RESO Property records (JSON Lines, a JSON array, or an OData response with `value`) with change detection',
    )
    .argument('<file>', 'path of the file')
    .action(async (file: string) => {
      try {
        await access(file, constants.R_OK);
      } catch (error) {
        throw new PipelineCliError(
          `Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
        );
      }
      const session = await open(false);
      const bar = options.progress('Ingest');
      let report: IngestReport;
      try {
        report = await ingestListingsFile(session.store, file, session.clock, (done, total) =>
          bar.update(done, total),
        );
      } finally {
        bar.stop();
        await session.close();
      }
      for (const rejected of report.rejected.slice(0, 100))
        stderr(`line ${rejected.line}: ${rejected.reason}`);
      if (report.rejected.length > 100) stderr(`… and ${report.rejected.length - 100} more rejected rows`);
      if (report.withoutBuilding > 0) {
        stderr(
          `${report.withoutBuilding} listings refer to buildings the store does not have: they are stored, but search and building pages show only listings of known buildings (load buildings with \`stoop refresh --buildings\` from the feed).`,
        );
      }
      stdout(
        JSON.stringify({
          file,
          accepted: report.accepted,
          rejected: report.rejected.length,
          withoutBuilding: report.withoutBuilding,
          created: report.summary.created,
          updated: report.summary.updated,
          unchanged: report.summary.unchanged,
          events: report.summary.events,
          ms: report.ms,
        }),
      );
    });
}
