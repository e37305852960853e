/**
 * Area parameters as every endpoint takes them: an id, or a slug, name or
 * alias (`areas=upper-west-side,LIC`, `areaId=Bed-Stuy`). The services that
 * take areas resolve them here, so each parameter accepts the same names and
 * fails with the same 400, and answers echo what each input resolved to.
 */
import { ApiError, type ParamIssue } from '../../http/errors.ts';
import type { AreaRecord, AreaTree } from '../../reference/areas.ts';

/** What one area input resolved to: echoed in `meta.areas` of the answer. */
export interface ResolvedAreaInput {
  input: string;
  id: number;
  name: string;
}

const HOW_TO_FIND =
  "Area ids are numeric; an area's slug, name or alias works too, and GET /v1/areas?q=<name> finds areas by name";

/** A query parameter's 400 is INVALID_PARAMS; a body field's is INVALID_BODY, as every body error. */
function invalidArea(issue: ParamIssue): ApiError {
  if (issue.location !== 'body') return ApiError.invalidParam(issue);
  return new ApiError('INVALID_BODY', `Invalid field "${issue.parameter}": ${issue.message}`, {
    params: [issue],
  });
}

function listed(records: readonly AreaRecord[]): string {
  return records.map((r) => `\`${r.slug}\` (id ${r.id})`).join(', ');
}

/** One area from one input, or a 400 naming `parameter`, the input and (when close) the likely areas. */
export function resolveAreaInput(
  tree: AreaTree,
  parameter: string,
  input: string | number,
  location: ParamIssue['location'] = 'query',
): ResolvedAreaInput {
  const token = String(input).trim();
  if (token === '') {
    throw invalidArea({
      parameter,
      location,
      rule: 'unknown_area',
      message: `has an empty item. ${HOW_TO_FIND}`,
    });
  }
  const resolution = tree.names.resolve(token);
  switch (resolution.kind) {
    case 'found':
      return { input: token, id: resolution.record.id, name: resolution.record.name };
    case 'ambiguous':
      throw invalidArea({
        parameter,
        location,
        rule: 'ambiguous_area',
        message: `"${token}" names more than one area: ${listed(resolution.candidates)}; pass one of their ids or slugs`,
      });
    case 'unknown': {
      const what = /^\d+$/.test(token) ? `no area has id ${token}` : `no area is named "${token}"`;
      const hint =
        resolution.suggestions.length > 0 ? `; did you mean ${listed(resolution.suggestions)}?` : '.';
      throw invalidArea({
        parameter,
        location,
        rule: 'unknown_area',
        message: `${what}${hint} ${HOW_TO_FIND}`,
      });
    }
  }
}

/**
 * Inputs already resolved, by the exact text of the item (successes only: a
 * failure's 400 names the parameter it came in). The area tree is fixed for
 * the process, so an entry never goes stale. Bounded: when full, it starts over.
 */
export class AreaInputMemo {
  private readonly byText = new Map<string, ResolvedAreaInput>();

  constructor(private readonly maxEntries = 4096) {}

  resolve(tree: AreaTree, parameter: string, text: string): ResolvedAreaInput {
    let area = this.byText.get(text);
    if (area === undefined) {
      // Shared by every answer that echoes it: never changed after this.
      area = Object.freeze(resolveAreaInput(tree, parameter, text));
      if (this.byText.size >= this.maxEntries) this.byText.clear();
      this.byText.set(text, area);
    }
    return area;
  }
}

/**
 * A comma-separated list of area inputs, in request order, each area once
 * (the first input naming it is echoed). At most `maxAreas` distinct areas.
 * `memo` skips the name lookup of items seen before (searches send the same
 * neighborhoods in ever new combinations).
 */
export function resolveAreaList(
  tree: AreaTree,
  parameter: string,
  raw: string,
  maxAreas = Number.POSITIVE_INFINITY,
  memo?: AreaInputMemo,
): ResolvedAreaInput[] {
  const resolved = new Map<number, ResolvedAreaInput>();
  for (const part of raw.split(',')) {
    const area = memo ? memo.resolve(tree, parameter, part) : resolveAreaInput(tree, parameter, part);
    if (!resolved.has(area.id)) resolved.set(area.id, area);
  }
  if (resolved.size > maxAreas) {
    throw ApiError.invalidParam({
      parameter,
      rule: 'max_items',
      message: `at most ${maxAreas} distinct areas are allowed (got ${resolved.size})`,
    });
  }
  return [...resolved.values()];
}
