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

const HEADLINE = 'search-5-areas';
const MIN_RATIO = 0.25;
const MAX_P99_MS = 20;
const TARGET_CONNECTIONS = 10;

export function checkTargets(rated: readonly RatedResult[]): TargetCheck[] {
  const headline = rated.find((r) => r.name === HEADLINE);
  if (!headline) return [{ name: HEADLINE, pass: false, detail: 'scenario did not run' }];
  // Fast 429s or 500s would pass both targets while measuring nothing.
  const invalid =
    headline.non2xx > 0 || headline.errors > 0
      ? ` (INVALID: ${headline.non2xx} non-2xx, ${headline.errors} errors)`
      : '';
  const at =
    headline.connections === TARGET_CONNECTIONS
      ? ''
      : ` [measured at ${headline.connections} connections; the target is defined at ${TARGET_CONNECTIONS}]`;
  return [
    {
      name: `${HEADLINE} req/s >= ${MIN_RATIO * 100}% of baseline`,
      pass: invalid === '' && headline.ratioToBaseline >= MIN_RATIO,
      detail: `${fmt(headline.reqPerSec, 0)} req/s = ${fmt(headline.ratioToBaseline * 100, 1)}% of baseline${invalid}`,
    },
    {
      name: `${HEADLINE} p99 < ${MAX_P99_MS} ms at ${TARGET_CONNECTIONS} connections`,
      pass: invalid === '' && at === '' && headline.latencyMs.p99 < MAX_P99_MS,
      detail: `p99 ${fmt(headline.latencyMs.p99, 1)} ms${invalid}${at}`,
    },
    ...DETAIL_SCENARIOS.flatMap((name) => {
      const result = rated.find((r) => r.name === name);
      if (!result) return [];
      const bad = result.non2xx > 0 || result.errors > 0 ? ' (INVALID: non-2xx or errors)' : '';
      return [
        {
          name: `${name} req/s >= ${DETAIL_MIN_RATIO * 100}% of baseline`,
          pass: bad === '' && result.ratioToBaseline >= DETAIL_MIN_RATIO,
          detail: `${fmt(result.reqPerSec, 0)} req/s = ${fmt(result.ratioToBaseline * 100, 1)}% of baseline, p99 ${fmt(result.latencyMs.p99, 1)} ms${bad}`,
        },
      ];
    }),
  ];
}

/** Listing and building detail: issue target ≥ 50% of the same-run baseline. */
const DETAIL_SCENARIOS = ['property-detail', 'building-detail'] as const;
const DETAIL_MIN_RATIO = 0.5;

function fmt(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

export function formatTable(rated: readonly RatedResult[]): string {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'bytes/resp', 'vs baseline'];
  const rows = rated.map((r) => [
    r.name,
    fmt(r.reqPerSec, 0),
    fmt(r.latencyMs.p50, 1),
    fmt(r.latencyMs.p99, 1),
    String(r.non2xx),
    String(r.errors),
    fmt(r.bytesPerResponse, 0),
    `${fmt(r.ratioToBaseline, 2)}×`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  // First column reads as a label (left-aligned); the figures right-align so digits line up.
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
