import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ScenarioResult } from './runner.ts';

export interface RatedResult extends ScenarioResult {
  /** req/s divided by the mean baseline req/s of the same run. */
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

/** The baseline may drift between the start and end of a run (thermal, other load); the mean evens that out. */
export function rate(results: readonly ScenarioResult[]): {
  baselineReqPerSec: number;
  rated: RatedResult[];
} {
  const baselines = results.filter((r) => r.target === 'baseline');
  const baselineReqPerSec =
    baselines.length > 0 ? baselines.reduce((sum, r) => sum + r.reqPerSec, 0) / baselines.length : Number.NaN;
  return {
    baselineReqPerSec,
    rated: results.map((r) => ({ ...r, ratioToBaseline: r.reqPerSec / baselineReqPerSec })),
  };
}

/** Connections the latency targets are defined at. */
export const TARGET_CONNECTIONS = 10;
/** Idle: every read scenario's p99 stays under this at 10 connections. */
export const IDLE_MAX_P99_MS = 10;
/** req/s as a share of the same-run baseline, per scenario that has a throughput target. */
export const MIN_RATIO: Readonly<Record<string, number>> = {
  'search-5-areas': 0.4,
  'search-all-nyc-6-filters': 0.25,
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
    'vs baseline',
    'target',
    'met',
  ];
  const rows = rated.map((r) => [
    r.name,
    fmt(r.reqPerSec, 0),
    fmt(r.latencyMs.p50, 1),
    fmt(r.latencyMs.p99, 1),
    String(r.non2xx),
    String(r.errors),
    fmt(r.bytesPerResponse, 0),
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
