import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files known to take far longer than the rest (real processes, a million-row
 * import, a PostgreSQL cluster of their own), longest first. On a fresh clone
 * vitest has no durations cached and starts the largest files first; one of
 * these started near the end of a pass would run on alone while the other
 * worker sits idle. Listed files start first, in this order; the rest follow
 * in vitest's own order. A file missing from a pass (the PostgreSQL pass skips
 * some) or renamed only loses its place.
 */
const LONG_RUNNING = [
  'test/opendata.bulk.test.ts',
  'test/faults.database.test.ts',
  'test/pipeline.crash.test.ts',
  'test/limits.lease.test.ts',
  'test/opendata.cli.test.ts',
  'test/jobs.event-loop.test.ts',
  'test/photos.limits.test.ts',
  'test/keys.cli.test.ts',
];

function rank(spec: TestSpecification): number {
  const path = spec.moduleId.replaceAll('\\', '/');
  const index = LONG_RUNNING.findIndex((file) => path.endsWith(`/${file}`));
  return index === -1 ? LONG_RUNNING.length : index;
}

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Array#sort is stable: unlisted files keep the base order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
