import { closeSync, openSync, writeSync } from 'node:fs';
import cliProgress from 'cli-progress';
import { type Command, InvalidArgumentError } from 'commander';
import type { Clock } from '../../platform/clock.ts';
import type { Store } from '../../platform/db/database.ts';
import { AreaTree } from '../../reference/areas.ts';
import { listAreas } from '../areas/areas.repository.ts';
import { type ImportProgress, OpenDataError, type RejectedRow } from './csv-import.ts';
import { DATASET_NAMES, type DatasetName, isDatasetName } from './datasets.ts';
import { type ImportSummary, runImport } from './opendata.service.ts';
import { LOT_MATCH_RADIUS_M } from './pluto-match.ts';
import { computeScores, type ScoresRunSummary } from './scores.ts';

export interface OpenDataCliOptions {
  /** Opens the configured store with migrations and reference data applied. */
  open(): Promise<Store>;
  clock: Clock;
  /** Results (what scripts parse). */
  stdout(text: string): void;
  /** Rejected rows and notes for people. */
  stderr(text: string): void;
  /** Where the progress bar draws when it is a terminal (default: process.stderr). */
  progressStream?: NodeJS.WriteStream;
}

/** Rejected rows printed to stderr; the rest are counted (all go to --rejects). */
const SHOWN_REJECTS = 20;
const REJECT_FLUSH_BYTES = 64 * 1024;

export function parseDatasetArgument(value: string): DatasetName {
  if (!isDatasetName(value)) throw new InvalidArgumentError(`must be one of ${DATASET_NAMES.join(', ')}`);
  return value;
}

const number = (n: number) => n.toLocaleString('en-US');

interface Progress {
  update(progress: ImportProgress): void;
  stop(): void;
}

/** A bar over the file's bytes on a terminal; nothing otherwise (the summary line follows). */
function progressBar(label: string, stream: NodeJS.WriteStream): Progress {
  if (!stream.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${label} [{bar}] {percentage}% | {records} records | {duration}s`,
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update: ({ bytesRead, totalBytes, records }) => {
      const payload = { records: number(records) };
      if (!started) {
        bar.start(Math.max(1, totalBytes), Math.min(bytesRead, totalBytes), payload);
        started = true;
      } else bar.update(Math.min(bytesRead, totalBytes), payload);
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}

/** Writes every rejected row as `line,reason` CSV, buffered. */
class RejectsFile {
  private readonly fd: number;
  private buffer = 'line,reason\n';

  constructor(path: string) {
    try {
      this.fd = openSync(path, 'w');
    } catch (error) {
      throw new OpenDataError(`cannot write ${path}: ${(error as Error).message}`);
    }
  }

  add(rejected: RejectedRow): void {
    this.buffer += `${rejected.line},"${rejected.reason.replace(/"/g, '""')}"\n`;
    if (this.buffer.length >= REJECT_FLUSH_BYTES) this.flush();
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }

  private flush(): void {
    if (this.buffer.length > 0) writeSync(this.fd, this.buffer);
    this.buffer = '';
  }
}

function importLines(summary: ImportSummary): string[] {
  const c = summary.counts;
  const ignored = Object.entries(c.ignoredReasons)
    .map(([reason, n]) => `${number(n)} ${reason}`)
    .join(', ');
  const lines = [
    `${summary.dataset}: ${number(c.read)} records read from ${summary.file} in ${summary.seconds.toFixed(1)} s ` +
      `(${number(summary.recordsPerSecond)}/s): ${number(c.upserted)} upserted, ${number(c.ignored)} ignored` +
      `${ignored ? ` (${ignored})` : ''}, ${number(c.rejected)} rejected.`,
  ];
  if (summary.pluto) {
    const p = summary.pluto;
    lines.push(
      `PLUTO: ${number(p.matchedByBbl)} buildings matched by BBL, ${number(p.matchedByProximity)} by nearest lot within ${LOT_MATCH_RADIUS_M} m; ${number(p.buildingsUpdated)} updated.`,
    );
  }
  if (summary.broadband) {
    const b = summary.broadband;
    lines.push(
      `FCC BDC: ${number(b.matchedByLocation)} buildings matched by FCC location, ${number(b.matchedByH3)} by H3 cell; ${number(b.buildingsUpdated)} updated.`,
    );
  }
  if (summary.scores) lines.push(scoresLine(summary.scores));
  return lines;
}

function scoresLine(s: ScoresRunSummary): string {
  if (!s.computed) return 'Scores: no open data imported yet; existing scores left as they are.';
  return (
    `Scores: ${number(s.buildings)} buildings in ${(s.ms / 1000).toFixed(1)} s ` +
    `(health ${number(s.withHealth)}, noise ${number(s.withNoise)}, safety ${number(s.withSafety)}, transit ${number(s.withTransit)} non-null).`
  );
}

function memory(rssAtStart: number): { rssAtStartBytes: number; peakRssBytes: number } {
  // maxRSS is in kilobytes.
  return { rssAtStartBytes: rssAtStart, peakRssBytes: process.resourceUsage().maxRSS * 1024 };
}

/**
 * Registers `stoop import <dataset> <file>` and `stoop scores compute`. Human
 * summaries go to stdout and rejected rows to stderr; with `--json`, stdout
 * carries exactly one JSON object.
 */
export function registerOpenDataCommands(program: Command, options: OpenDataCliOptions): void {
  const { clock, stdout, stderr } = options;

  async function withStore<T>(run: (store: Store, areaTree: AreaTree) => Promise<T>): Promise<T> {
    const store = await options.open();
    try {
      const areaTree = new AreaTree(await listAreas(store.db));
      return await run(store, areaTree);
    } finally {
      await store.close();
    }
  }

  const importCommand = program
    .command('import')
    .description(
      'import a NYC open-data file (streamed; re-importing upserts by natural key), then recompute building scores',
    )
    .argument('<dataset>', `one of ${DATASET_NAMES.join(', ')}`, parseDatasetArgument)
    .argument('<file>', 'CSV file in the dataset’s published layout (.csv or .csv.gz)')
    .option('--no-scores', 'do not recompute building scores afterwards')
    .option('--rejects <file>', 'write every rejected row (line, reason) to this CSV file')
    .option('--json', 'print one JSON object with the outcome on stdout')
    .action(
      async (
        dataset: DatasetName,
        file: string,
        opts: { scores: boolean; rejects?: string; json?: boolean },
      ) => {
        const rssAtStart = process.memoryUsage().rss;
        const shown: RejectedRow[] = [];
        let rejectsFile: RejectsFile | null = null;
        const bar = progressBar(dataset, options.progressStream ?? process.stderr);
        try {
          rejectsFile = opts.rejects ? new RejectsFile(opts.rejects) : null;
          const summary = await withStore((store, areaTree) =>
            runImport(store, areaTree, clock, {
              dataset,
              file,
              scores: opts.scores,
              onProgress: bar.update,
              onReject: (rejected) => {
                if (shown.length < SHOWN_REJECTS) shown.push(rejected);
                rejectsFile?.add(rejected);
              },
            }),
          );
          bar.stop();
          for (const r of shown) stderr(`rejected line ${r.line}: ${r.reason}`);
          const hidden = summary.counts.rejected - shown.length;
          if (hidden > 0)
            stderr(
              `… and ${number(hidden)} more rejected rows${opts.rejects ? ` (all in ${opts.rejects})` : ' (list them all with --rejects FILE)'}.`,
            );
          if (opts.json)
            stdout(JSON.stringify({ ...summary, rejectedSample: shown, memory: memory(rssAtStart) }));
          else for (const line of importLines(summary)) stdout(line);
        } catch (error) {
          bar.stop();
          if (error instanceof OpenDataError) importCommand.error(`error: ${error.message}`, { exitCode: 1 });
          throw error;
        } finally {
          rejectsFile?.close();
        }
      },
    );

  const scores = program.command('scores').description('building scores from imported open data');
  scores
    .command('compute')
    .description('recompute every building’s health, noise, safety and transit scores now')
    .option('--json', 'print one JSON object with the outcome on stdout')
    .action(async (opts: { json?: boolean }) => {
      const summary = await withStore((store, areaTree) => computeScores(store.db, areaTree, clock));
      if (opts.json) stdout(JSON.stringify(summary));
      else stdout(scoresLine(summary));
    });
}
