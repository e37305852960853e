/**
 * How request parts are validated: one Ajv setup per part, and the rules for
 * text parameters that every route inherits.
 *
 * - Query strings and path parameters are text, so they are coerced to the
 *   schema's types (`coerceTypes: 'array'`: a repeated parameter is a list).
 * - JSON bodies already carry types: they are never coerced, so
 *   `{"account": ["a"]}` is a 400, not the string "a".
 * - A number in a query or path parameter must be a finite number written in
 *   decimal notation. Ajv's coercion reads any text `Number()` accepts —
 *   `Infinity`, `1e400`, `0x10`, `" "` — and its numeric keywords (minimum,
 *   maximum, multipleOf) skip non-finite values, so without this rule
 *   `page=-Infinity` would pass every bound.
 * - No query or path parameter may contain U+0000: PostgreSQL cannot store or
 *   compare it, so it would fail the query rather than match nothing.
 * - A query parameter the operation does not declare is a 400 (rule
 *   `unknown_parameter`) that suggests the closest declared one, so a typo
 *   (`area` for `areas`) never widens a search. Checked here, before Ajv's
 *   `removeAdditional` could drop it; a schema declaring
 *   `additionalProperties: true` opts out (OAuth's authorize endpoint, which
 *   RFC 6749 §3.1 requires to ignore unknown parameters). REST routes that
 *   declare no query parameters get the same rule from
 *   `rejectQueryWithoutDeclaredParameters`.
 * - Enum values (`StringEnum`, and each item of a `CommaList`) in query and
 *   path parameters are case-insensitive and trimmed: they are rewritten to
 *   the declared spelling before Ajv checks them (`status=active` → `ACTIVE`).
 *   JSON bodies are not normalized: their enums must be sent exactly.
 */
import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler';
import type { FastifyRequest } from 'fastify';
import { commaListValues } from './schemas.ts';

/** Ajv's error shape, as Fastify hands it to the error handler. */
interface ValidationIssue {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message?: string;
}

interface ValidateFunction {
  (data: unknown, context?: unknown): boolean;
  errors?: ValidationIssue[] | null;
  schemaEnv?: unknown;
}

interface RouteSchemaDefinition {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
}

type CompileFunction = (route: RouteSchemaDefinition) => ValidateFunction;

/** Options of the Ajv that reads query strings and path parameters (text). */
const TEXT_PARTS_AJV = {
  coerceTypes: 'array',
  removeAdditional: true,
  useDefaults: true,
  allErrors: false,
} as const;
/** Options of the Ajv that reads JSON bodies: types as sent, unknown fields reported rather than dropped. */
const BODY_AJV = {
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: true,
  allErrors: false,
} as const;

/** Decimal notation, as people and JSON write numbers: no hex, binary, octal, words or padding. */
const DECIMAL_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** One pool for the process: compilers are cached by (shared schemas, options), as Fastify's default does. */
const compilerPool = AjvCompiler();

/** `type` of a property schema names number or integer. */
function numericType(schema: unknown): 'number' | 'integer' | undefined {
  if (schema === null || typeof schema !== 'object') return undefined;
  const type = (schema as { type?: unknown }).type;
  for (const candidate of Array.isArray(type) ? type : [type]) {
    if (candidate === 'integer' || candidate === 'number') return candidate;
  }
  return undefined;
}

/** The top-level properties of an object schema that hold numbers, with their type. */
function numericProperties(schema: unknown): ReadonlyMap<string, 'number' | 'integer'> {
  const found = new Map<string, 'number' | 'integer'>();
  if (schema === null || typeof schema !== 'object') return found;
  const properties = (schema as { properties?: unknown }).properties;
  if (properties === null || typeof properties !== 'object') return found;
  for (const [name, property] of Object.entries(properties)) {
    const type = numericType(property);
    if (type) found.set(name, type);
  }
  return found;
}

function quoted(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

function notAFiniteDecimal(name: string, type: 'number' | 'integer', sent: string): ValidationIssue {
  return {
    keyword: 'type',
    instancePath: `/${name}`,
    schemaPath: `#/properties/${name}/type`,
    params: { type, finite: true },
    message: `must be a finite ${type} in decimal notation (got ${quoted(sent)})`,
  };
}

/**
 * The first numeric parameter whose text Ajv would turn into a number but
 * that is not a finite decimal. Text that is no number at all is left to
 * Ajv's type check ("must be an integer").
 */
function firstNonDecimal(
  data: unknown,
  numeric: ReadonlyMap<string, 'number' | 'integer'>,
): ValidationIssue | undefined {
  if (numeric.size === 0 || data === null || typeof data !== 'object') return undefined;
  const values = data as Record<string, unknown>;
  // By the parameters sent (a handful), not the declared ones (dozens, most of them absent).
  for (const name in values) {
    const type = numeric.get(name);
    if (type === undefined) continue;
    const value = values[name];
    if (!Array.isArray(value)) {
      if (!isFiniteDecimalOrNotANumber(value)) return notAFiniteDecimal(name, type, value as string);
      continue;
    }
    for (const item of value) {
      if (!isFiniteDecimalOrNotANumber(item)) return notAFiniteDecimal(name, type, item as string);
    }
  }
  return undefined;
}

/** False for text that Ajv would turn into a number but that is not a finite decimal. */
function isFiniteDecimalOrNotANumber(item: unknown): boolean {
  if (typeof item !== 'string' || Number.isNaN(Number(item))) return true;
  return DECIMAL_NUMBER.test(item) && Number.isFinite(Number(item));
}

/** The first query or path parameter (or list item) holding a NUL character. */
function firstWithNul(data: unknown): ValidationIssue | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const values = data as Record<string, unknown>;
  for (const name in values) {
    const value = values[name];
    if (Array.isArray(value) ? value.some(holdsNul) : holdsNul(value)) {
      return {
        keyword: 'characters',
        instancePath: `/${name}`,
        schemaPath: `#/properties/${name}`,
        params: {},
        message: 'must not contain NUL (U+0000) characters',
      };
    }
  }
  return undefined;
}

function holdsNul(item: unknown): boolean {
  return typeof item === 'string' && item.includes('\u0000');
}

/** After coercion: a non-finite number anywhere at the top level (e.g. through a union Ajv coerced). */
function firstNonFinite(data: unknown): ValidationIssue | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const values = data as Record<string, unknown>;
  for (const name in values) {
    const value = values[name];
    if (typeof value === 'number' && !Number.isFinite(value)) {
      return notAFiniteDecimal(name, 'number', String(value));
    }
  }
  return undefined;
}

/** Unknown parameters named one by one in a 400; more are not echoed (a query can hold thousands). */
export const MAX_UNKNOWN_PARAMETERS_NAMED = 10;
/** Longest unknown parameter name echoed back; longer names are cut with "…". */
const MAX_ECHOED_NAME_LENGTH = 40;
/** Longest name compared for a suggestion: edit distance costs its length times each candidate's. */
const MAX_SUGGESTED_FROM_LENGTH = 64;
/** At most this many suggestions (equally close candidates, or candidates containing the name). */
const MAX_SUGGESTIONS = 3;

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions), case-insensitive. */
function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const rows: number[][] = Array.from({ length: x.length + 1 }, (_, i) =>
    Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= x.length; i++) {
    const row = rows[i]!;
    const above = rows[i - 1]!;
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      }
      row[j] = best;
    }
  }
  return rows[x.length]![y.length]!;
}

/**
 * The declared parameters a client most likely meant by `sent`: the closest by
 * edit distance when close enough for its length (1 edit up to 4 characters,
 * 2 up to 8, 3 beyond), else those whose name contains it (`beds` → `minBeds`,
 * `maxBeds`); none when nothing is close.
 */
export function suggestParameters(sent: string, declared: readonly string[]): string[] {
  if (sent.length === 0 || sent.length > MAX_SUGGESTED_FROM_LENGTH) return [];
  const allowed = sent.length <= 4 ? 1 : sent.length <= 8 ? 2 : 3;
  let best = allowed + 1;
  let closest: string[] = [];
  for (const name of declared) {
    const distance = editDistance(sent, name);
    if (distance < best) {
      best = distance;
      closest = [name];
    } else if (distance === best) {
      closest.push(name);
    }
  }
  if (closest.length > 0) return closest.slice(0, MAX_SUGGESTIONS);
  if (sent.length < 3) return [];
  const lower = sent.toLowerCase();
  return declared.filter((name) => name.toLowerCase().includes(lower)).slice(0, MAX_SUGGESTIONS);
}

function echoedName(name: string): string {
  return name.length > MAX_ECHOED_NAME_LENGTH ? `${name.slice(0, MAX_ECHOED_NAME_LENGTH)}…` : name;
}

/** What an unknown parameter's 400 says after its name: the suggestion, or what the operation takes. */
function unknownParameterHint(name: string, declared: readonly string[]): string {
  const suggestions = suggestParameters(name, declared);
  if (suggestions.length > 0) {
    return `did you mean ${suggestions.map((s) => JSON.stringify(s)).join(' or ')}?`;
  }
  if (declared.length === 0) return 'this operation takes no query parameters';
  return `this operation takes: ${declared.join(', ')}`;
}

/**
 * One issue per query parameter not in `declared` (at most
 * MAX_UNKNOWN_PARAMETERS_NAMED, names cut to MAX_ECHOED_NAME_LENGTH). The
 * rule is `unknown_parameter`; `params.hint` completes the message.
 */
export function unknownParameterIssues(
  data: unknown,
  declared: readonly string[],
  known: ReadonlySet<string> = new Set(declared),
): ValidationIssue[] {
  if (data === null || typeof data !== 'object') return [];
  const issues: ValidationIssue[] = [];
  for (const name of Object.keys(data)) {
    if (known.has(name)) continue;
    if (issues.length === MAX_UNKNOWN_PARAMETERS_NAMED) break;
    const shown = echoedName(name);
    const hint = unknownParameterHint(name, declared);
    issues.push({
      keyword: 'unknown_parameter',
      instancePath: `/${shown}`,
      schemaPath: '#/additionalProperties',
      // The name as sent: an instance path would turn a `/` in it into a `.`.
      params: { parameter: shown, hint },
      message: `is not a parameter of this operation; ${hint}`,
    });
  }
  return issues;
}

/**
 * The parameters an object schema declares, or undefined when it admits any
 * (`additionalProperties: true`, or not an object schema at all).
 */
function declaredParameters(schema: unknown): readonly string[] | undefined {
  if (schema === null || typeof schema !== 'object') return undefined;
  const { properties, additionalProperties } = schema as {
    properties?: unknown;
    additionalProperties?: unknown;
  };
  if (additionalProperties === true) return undefined;
  if (properties === null || typeof properties !== 'object') return undefined;
  return Object.keys(properties);
}

/** How one enum-like parameter is read: its allowed values by lower-case spelling, one value or a comma list. */
interface EnumReading {
  list: boolean;
  canonical: ReadonlyMap<string, string>;
}

function byLowerCase(values: readonly unknown[]): ReadonlyMap<string, string> | undefined {
  if (values.length === 0 || !values.every((v): v is string => typeof v === 'string')) return undefined;
  return new Map(values.map((value) => [value.toLowerCase(), value]));
}

/** The enum reading of one property schema: a StringEnum (possibly inside a union) or a CommaList. */
function enumReading(property: unknown): EnumReading | undefined {
  if (property === null || typeof property !== 'object') return undefined;
  const { enum: values, pattern, anyOf } = property as { enum?: unknown; pattern?: unknown; anyOf?: unknown };
  if (Array.isArray(values)) {
    const canonical = byLowerCase(values);
    return canonical ? { list: false, canonical } : undefined;
  }
  if (typeof pattern === 'string') {
    const listValues = commaListValues(pattern);
    return listValues ? { list: true, canonical: byLowerCase(listValues)! } : undefined;
  }
  if (Array.isArray(anyOf)) {
    for (const branch of anyOf) {
      const reading = enumReading(branch);
      if (reading) return reading;
    }
  }
  return undefined;
}

/** The enum-like top-level properties of an object schema, by name. */
function enumReadings(schema: unknown): ReadonlyMap<string, EnumReading> {
  const found = new Map<string, EnumReading>();
  if (schema === null || typeof schema !== 'object') return found;
  const properties = (schema as { properties?: unknown }).properties;
  if (properties === null || typeof properties !== 'object') return found;
  for (const [name, property] of Object.entries(properties)) {
    const reading = enumReading(property);
    if (reading) found.set(name, reading);
  }
  return found;
}

/**
 * One text value in its declared spelling (a comma list item by item, each
 * trimmed). A value or list with anything unknown is left as sent, for Ajv to
 * reject with the allowed values.
 */
function canonicalText(text: string, reading: EnumReading): string {
  if (!reading.list) return canonicalItem(text, reading) ?? text;
  const items = text.split(',');
  for (let i = 0; i < items.length; i++) {
    const item = canonicalItem(items[i]!, reading);
    if (item === undefined) return text;
    items[i] = item;
  }
  return items.join(',');
}

function canonicalItem(item: string, reading: EnumReading): string | undefined {
  return reading.canonical.get(item.trim().toLowerCase());
}

/** Rewrites enum values (and comma-list items) in place to their declared spelling. */
function normalizeEnums(data: unknown, readings: ReadonlyMap<string, EnumReading>): void {
  if (readings.size === 0 || data === null || typeof data !== 'object') return;
  const values = data as Record<string, unknown>;
  for (const [name, reading] of readings) {
    const value = values[name];
    if (typeof value === 'string') values[name] = canonicalText(value, reading);
    else if (Array.isArray(value)) {
      values[name] = value.map((item) => (typeof item === 'string' ? canonicalText(item, reading) : item));
    }
  }
}

/**
 * Wraps a compiled text-part validator with the text rules; their errors
 * surface like Ajv's own. `part` is Fastify's httpPart: the unknown-parameter
 * rule applies to query strings, enum normalization to query and path.
 */
function withTextRules(
  validate: ValidateFunction,
  schema: unknown,
  part: string | undefined,
): ValidateFunction {
  const numeric = numericProperties(schema);
  const declared = part === 'querystring' ? declaredParameters(schema) : undefined;
  const known = new Set(declared);
  const readings = part === 'querystring' || part === 'params' ? enumReadings(schema) : new Map();
  const checked: ValidateFunction = (data, context) => {
    const nul = firstWithNul(data);
    const unknown = nul || declared === undefined ? [] : unknownParameterIssues(data, declared, known);
    if (nul || unknown.length > 0) {
      checked.errors = nul ? [nul] : unknown;
      return false;
    }
    normalizeEnums(data, readings);
    const issue =
      firstNonDecimal(data, numeric) ?? (validate(data, context) ? firstNonFinite(data) : undefined);
    checked.errors = issue ? [issue] : (validate.errors ?? null);
    return checked.errors === null;
  };
  // Fastify passes the parent object only to Ajv functions (so a coerced root value can be replaced).
  if (validate.schemaEnv !== undefined) checked.schemaEnv = validate.schemaEnv;
  return checked;
}

/**
 * The validator factory of the HTTP server (`schemaController.compilersFactory.buildValidator`):
 * query strings and path parameters through the coercing Ajv plus the text
 * rules, JSON bodies through the strict one.
 */
export const buildRequestValidator: BuildCompilerFromPool = (externalSchemas) => {
  const textParts = compilerPool(externalSchemas, {
    customOptions: TEXT_PARTS_AJV,
  }) as unknown as CompileFunction;
  const bodies = compilerPool(externalSchemas, { customOptions: BODY_AJV }) as unknown as CompileFunction;
  const compile: CompileFunction = (route) =>
    route.httpPart === 'body' ? bodies(route) : withTextRules(textParts(route), route.schema, route.httpPart);
  // Fastify calls the compiler with the route definition; the library's type names only the schema.
  return compile as unknown as ReturnType<BuildCompilerFromPool>;
};

/** Routes outside the REST API (`/v1/…`): protocol and documentation endpoints that ignore query parameters. */
const REST_PREFIX = '/v1/';

/**
 * preValidation hook: a REST route that declares no query parameters rejects
 * any, as declared ones reject unknown ones (the route has no query validator
 * to do it). Routes outside `/v1/` — the docs pages, `/openapi.json`,
 * `/.well-known/*` metadata, `/mcp` (JSON-RPC in the body), OAuth and floor
 * plan images — keep ignoring them: they are protocol or static endpoints
 * where no parameter can widen an answer. The error goes through the error
 * handler as a validation failure, so it reads like every other 400.
 */
export function rejectQueryWithoutDeclaredParameters(
  request: FastifyRequest,
  _reply: unknown,
  done: (error?: Error) => void,
): void {
  const query = request.query;
  if (
    query === null ||
    typeof query !== 'object' ||
    Object.keys(query).length === 0 ||
    !request.routeOptions.url?.startsWith(REST_PREFIX) ||
    request.routeOptions.schema?.querystring !== undefined
  ) {
    done();
    return;
  }
  const issues = unknownParameterIssues(query, []);
  done(
    Object.assign(new Error('unknown query parameter'), {
      statusCode: 400,
      validation: issues,
      validationContext: 'querystring',
    }),
  );
}
