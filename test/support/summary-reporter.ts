import { writeSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain line, `Tests: N passed, N failed, N skipped`,
 * which CI tooling reads in any language (vitest's own summary is decorated).
 */
export class SummaryLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else skipped++;
      }
      // A file that failed outside its tests (a hook, an import) counts as one failure.
      failed += failedHere === 0 && module.state() === 'failed' ? 1 : failedHere;
    }
    const line = `\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`;
    // Written at exit, after vitest's own summary, so it is the run's last line.
    process.once('exit', () => writeSync(1, line));
  }
}
