import { describe, expect, it } from 'vitest';
import { checkTargets, formatTable, rate } from '../bench/report.ts';
import type { ScenarioResult } from '../bench/runner.ts';

function result(name: string, target: ScenarioResult['target'], reqPerSec: number): ScenarioResult {
  return {
    name,
    target,
    description: name,
    samplePath: '/',
    connections: 10,
    durationS: 10,
    responses: reqPerSec * 10,
    reqPerSec,
    latencyMs: { mean: 1, p50: 1, p90: 2, p99: 3, max: 4 },
    non2xx: 0,
    statusCodes: { '200': reqPerSec * 10 },
    errors: 0,
    timeouts: 0,
    bytesPerResponse: 1000,
  };
}

/** A run in order: the baseline drifts from 10,000 to 14,000 req/s while two scenarios run between its runs. */
const RUN = [
  result('baseline', 'baseline', 10_000),
  result('search-5-areas', 'service', 4_400),
  result('baseline@property-detail', 'baseline', 12_000),
  result('property-detail', 'service', 6_500),
  result('baseline-end', 'baseline', 14_000),
];

describe('bench ratios', () => {
  it('rates each scenario against the baseline runs just before and after it', () => {
    const { baselineReqPerSec, rated } = rate(RUN);
    expect(baselineReqPerSec).toBe(12_000);
    const byName = new Map(rated.map((r) => [r.name, r]));
    expect(byName.get('search-5-areas')).toMatchObject({ baselineReqPerSec: 11_000, ratioToBaseline: 0.4 });
    expect(byName.get('property-detail')).toMatchObject({ baselineReqPerSec: 13_000, ratioToBaseline: 0.5 });
    // Against the run's mean (12,000), the search would have missed its 0.40× (0.37×) for the drift alone.
    const checks = checkTargets(rated).filter((c) => c.name.includes('% of baseline'));
    expect(checks.map((c) => c.pass)).toEqual([true, true]);
  });

  it('without a baseline after it, a scenario is rated against the one before', () => {
    const { rated } = rate(RUN.slice(0, 2));
    expect(rated[1]).toMatchObject({ baselineReqPerSec: 10_000, ratioToBaseline: 0.44 });
  });

  it('prints the start and end baselines as rows and each scenario its reference, not the runs between', () => {
    const table = formatTable(rate(RUN).rated);
    expect(table).not.toContain('baseline@');
    const row = table.split('\n').find((line) => line.startsWith('search-5-areas'));
    expect(row).toMatch(/\b11000\s+0\.40×/);
    expect(table.split('\n').filter((line) => line.startsWith('baseline'))).toHaveLength(2);
  });
});
