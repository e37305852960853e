import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ScenarioResult } from './runner.ts';

export interface RatedResult extends ScenarioResult {
  /**
   * The baseline req/s this result is rated against: for a service scenario,
   * the mean of the baseline runs just before and just after it; for a
   * baseline run, the mean of all of them.
   */
  readonly baselineReqPerSec: number;
  /** req/s divided by `baselineReqPerSec`. */
  readonly ratioToBaseline: number;
}

export interface TargetCheck {
  readonly name: string;
  readonly pass: boolean;
  readonly detail: string;
}

export interface BenchReport {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly settings: Readonly<Record<string, unknown>>;
  readonly environment: Readonly<Record<string, unknown>>;
  readonly baselineReqPerSec: number;
  readonly scenarios: readonly RatedResult[];
  /** Refresh pipeline figures (bench/pipeline.ts). */
  readonly pipeline?: unknown;
  readonly targets: readonly TargetCheck[];
  /** `--during`: each read scenario under background work, beside its idle figures (during.ts). */
  readonly during?: unknown;
}

/** Names of the short baseline runs between two service scenarios: `baseline@<the scenario after it>`. */
export const BRACKET_PREFIX = 'baseline@';

export function isBracket(result: Pick<ScenarioResult, 'name'>): boolean {
  return result.name.startsWith(BRACKET_PREFIX);
}

function meanReqPerSec(results: readonly ScenarioResult[]): number {
  return results.length > 0 ? results.reduce((sum, r) => sum + r.reqPerSec, 0) / results.length : Number.NaN;
}

/**
 * Rates each result of a run (in run order) against the baseline. The
 * baseline drifts within a run (another tenant, thermal state: 14,259 at the
 * start and 17,278 req/s at the end of one run on a shared VM), so a service
 * scenario is rated against the baseline measured around it: the mean of the
 * nearest baseline run before it and the nearest after it (the run puts a
 * short one between every two scenarios). `baselineReqPerSec` is the mean of
 * every baseline run, for the headline.
 */
export function rate(results: readonly ScenarioResult[]): {
  baselineReqPerSec: number;
  rated: RatedResult[];
} {
  const isBaseline = (r: ScenarioResult) => r.target === 'baseline';
  const overall = meanReqPerSec(results.filter(isBaseline));
  const rated = results.map((r, i): RatedResult => {
    if (isBaseline(r)) return { ...r, baselineReqPerSec: overall, ratioToBaseline: r.reqPerSec / overall };
    const before = results.slice(0, i).findLast(isBaseline);
    const after = results.slice(i + 1).find(isBaseline);
    const around = [before, after].filter((b): b is ScenarioResult => b !== undefined);
    const reference = around.length > 0 ? meanReqPerSec(around) : overall;
    return { ...r, baselineReqPerSec: reference, ratioToBaseline: r.reqPerSec / reference };
  });
  return { baselineReqPerSec: overall, rated };
}

/** Connections the latency targets are defined at. */
export const TARGET_CONNECTIONS = 10;
/** Idle: every read scenario's p99 stays under this at 10 connections. */
export const IDLE_MAX_P99_MS = 10;
/** req/s as a share of the same-run baseline, per scenario that has a throughput target. */
export const MIN_RATIO: Readonly<Record<string, number>> = {
  'search-5-areas': 0.4,
  'search-all-nyc-6-filters': 0.25,
  // Geo search "at the speed of area search" (the contract issue's target).
  'search-near': 0.3,
  'property-detail': 0.5,
  'building-detail': 0.5,
};

/** What a scenario's idle figures must meet; baselines have no target. */
export interface ScenarioTarget {
  readonly maxP99Ms: number;
  readonly minRatio?: number;
}

export function targetOf(result: Pick<RatedResult, 'name' | 'target'>): ScenarioTarget | null {
  if (result.target !== 'service') return null;
  const minRatio = MIN_RATIO[result.name];
  return minRatio === undefined ? { maxP99Ms: IDLE_MAX_P99_MS } : { maxP99Ms: IDLE_MAX_P99_MS, minRatio };
}

/** Why a result cannot count as meeting a target, or '' when it can. */
function invalidity(result: RatedResult): string {
  // Fast 429s or 500s would pass every target while measuring nothing.
  const bad =
    result.non2xx > 0 || result.errors > 0
      ? ` (INVALID: ${result.non2xx} non-2xx, ${result.errors} errors)`
      : '';
  const at =
    result.connections === TARGET_CONNECTIONS
      ? ''
      : ` [measured at ${result.connections} connections; the targets are defined at ${TARGET_CONNECTIONS}]`;
  return bad + at;
}

/** Whether one scenario met its idle target (null: it has none). */
export function metTarget(result: RatedResult): boolean | null {
  const target = targetOf(result);
  if (!target) return null;
  return (
    invalidity(result) === '' &&
    result.latencyMs.p99 < target.maxP99Ms &&
    (target.minRatio === undefined || result.ratioToBaseline >= target.minRatio)
  );
}

/** The target as the table shows it, e.g. `p99<10 ms, ≥0.40×`. */
export function formatTarget(target: ScenarioTarget | null): string {
  if (!target) return '';
  const ratio = target.minRatio === undefined ? '' : `, ≥${target.minRatio.toFixed(2)}×`;
  return `p99<${target.maxP99Ms} ms${ratio}`;
}

/** One check per target of every service scenario (issue 12 "Targets": idle p99, ratios to the baseline). */
export function checkTargets(rated: readonly RatedResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const result of rated) {
    const target = targetOf(result);
    if (!target) continue;
    const invalid = invalidity(result);
    checks.push({
      name: `${result.name} idle p99 < ${target.maxP99Ms} ms at ${TARGET_CONNECTIONS} connections`,
      pass: invalid === '' && result.latencyMs.p99 < target.maxP99Ms,
      detail: `p99 ${fmt(result.latencyMs.p99, 1)} ms${invalid}`,
    });
    if (target.minRatio !== undefined)
      checks.push({
        name: `${result.name} req/s >= ${target.minRatio * 100}% of baseline`,
        pass: invalid === '' && result.ratioToBaseline >= target.minRatio,
        detail: `${fmt(result.reqPerSec, 0)} req/s = ${fmt(result.ratioToBaseline * 100, 1)}% of baseline${invalid}`,
      });
  }
  for (const name of Object.keys(MIN_RATIO))
    if (!rated.some((r) => r.name === name))
      checks.push({ name, pass: false, detail: 'scenario did not run' });
  return checks;
}

function fmt(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

export function formatTable(rated: readonly RatedResult[]): string {
  const header = [
    'scenario',
    'req/s',
    'p50 ms',
    'p99 ms',
    'non-2xx',
    'errors',
    'bytes/resp',
    'baseline',
    'vs baseline',
    'target',
    'met',
  ];
  // The short baseline runs between scenarios show in each scenario's `baseline` column instead.
  const rows = rated
    .filter((r) => !isBracket(r))
    .map((r) => [
      r.name,
      fmt(r.reqPerSec, 0),
      fmt(r.latencyMs.p50, 1),
      fmt(r.latencyMs.p99, 1),
      String(r.non2xx),
      String(r.errors),
      fmt(r.bytesPerResponse, 0),
      r.target === 'baseline' ? '' : fmt(r.baselineReqPerSec, 0),
      `${fmt(r.ratioToBaseline, 2)}×`,
      formatTarget(targetOf(r)),
      yesNo(metTarget(r)),
    ]);
  return layoutTable(header, rows);
}

/** `yes`, `NO`, or empty when there is no target. */
export function yesNo(met: boolean | null): string {
  return met === null ? '' : met ? 'yes' : 'NO';
}

/** Lays out a table: the first column left-aligned (a label), the figures right-aligned. */
export function layoutTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatTargets(targets: readonly TargetCheck[]): string {
  return targets.map((t) => `${t.pass ? 'PASS' : 'FAIL'}  ${t.name}: ${t.detail}`).join('\n');
}

const LINE_WIDTH = 110;

/**
 * JSON laid out the way `biome format` would (arrays of scalars on one line
 * when they fit, long number arrays packed), because biome.json includes `bench/**`: plain
 * `JSON.stringify(…, 2)` output would make `npm run lint` fail after every bench run.
 */
export function toBiomeJson(value: unknown, indent = '', prefixWidth = 0): string {
  // Biome writes exponents without the plus sign (3e21, not 3e+21).
  if (typeof value === 'number') return JSON.stringify(value).replace('e+', 'e');
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((v) => v === null || typeof v !== 'object')) {
      const flat = `[${value.map((v) => toBiomeJson(v)).join(', ')}]`;
      // +1 for a trailing comma that may follow the value on the same line.
      if (indent.length + prefixWidth + flat.length + 1 <= LINE_WIDTH) return flat;
    }
    // Long number arrays are packed line by line ("fill"), everything else gets one item per line.
    if (value.every((v) => typeof v === 'number')) {
      const rows: string[] = [];
      for (const item of value.map((v) => toBiomeJson(v))) {
        const last = rows.length - 1;
        if (last >= 0 && inner.length + rows[last]!.length + item.length + 3 <= LINE_WIDTH)
          rows[last] += `, ${item}`;
        else rows.push(item);
      }
      return `[\n${rows.map((r) => `${inner}${r}`).join(',\n')}\n${indent}]`;
    }
    return `[\n${value.map((v) => `${inner}${toBiomeJson(v, inner)}`).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '{}';
  const lines = entries.map(([k, v]) => {
    const key = `${JSON.stringify(k)}: `;
    return `${inner}${key}${toBiomeJson(v, inner, key.length)}`;
  });
  return `{\n${lines.join(',\n')}\n${indent}}`;
}

export async function writeReport(file: string, report: BenchReport): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  // Round-trip first so NaN/Infinity become null and toJSON (Dates) applies, as JSON.stringify would.
  await writeFile(file, `${toBiomeJson(JSON.parse(JSON.stringify(report)) as unknown)}\n`);
}
