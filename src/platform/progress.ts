import cliProgress from 'cli-progress';

export interface ProgressReporter {
  /** Matches LoadDemoOptions.onProgress; safe to pass unbound. */
  update: (done: number, total: number, phase: string) => void;
  /** Ends the bar (TTY) or prints the one summary line (anything else). */
  stop: () => void;
}

/**
 * A progress bar on stderr when it is a terminal; otherwise silent until a
 * single summary line at the end, so logs and CI output stay clean.
 */
export function createProgressReporter(
  label: string,
  stream: NodeJS.WriteStream = process.stderr,
): ProgressReporter {
  const started = performance.now();
  let last = { done: 0, total: 0 };
  if (!stream.isTTY) {
    return {
      update: (done, total) => {
        last = { done, total };
      },
      stop: () => {
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        stream.write(
          `${label}: ${last.done.toLocaleString('en-US')} of ${last.total.toLocaleString('en-US')} items in ${seconds} s\n`,
        );
      },
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${label} [{bar}] {percentage}% | {value}/{total} | {phase} | {duration}s`,
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let startedBar = false;
  return {
    update: (done, total, phase) => {
      last = { done, total };
      if (!startedBar) {
        bar.start(total, done, { phase });
        startedBar = true;
      } else {
        bar.setTotal(total);
        bar.update(done, { phase });
      }
    },
    stop: () => {
      if (startedBar) bar.stop();
    },
  };
}
