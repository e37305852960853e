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
 */
import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler';

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
  for (const [name, type] of numeric) {
    const value = values[name];
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item !== 'string' || Number.isNaN(Number(item))) continue;
      if (!DECIMAL_NUMBER.test(item) || !Number.isFinite(Number(item))) {
        return notAFiniteDecimal(name, type, item);
      }
    }
  }
  return undefined;
}

/** The first query or path parameter (or list item) holding a NUL character. */
function firstWithNul(data: unknown): ValidationIssue | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  for (const [name, value] of Object.entries(data)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item === 'string' && item.includes('\u0000')) {
        return {
          keyword: 'characters',
          instancePath: `/${name}`,
          schemaPath: `#/properties/${name}`,
          params: {},
          message: 'must not contain NUL (U+0000) characters',
        };
      }
    }
  }
  return undefined;
}

/** After coercion: a non-finite number anywhere at the top level (e.g. through a union Ajv coerced). */
function firstNonFinite(data: unknown): ValidationIssue | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  for (const [name, value] of Object.entries(data)) {
    if (typeof value === 'number' && !Number.isFinite(value)) {
      return notAFiniteDecimal(name, 'number', String(value));
    }
  }
  return undefined;
}

/** Wraps a compiled text-part validator with the text rules; their errors surface like Ajv's own. */
function withTextRules(validate: ValidateFunction, schema: unknown): ValidateFunction {
  const numeric = numericProperties(schema);
  const checked: ValidateFunction = (data, context) => {
    const issue =
      firstWithNul(data) ??
      firstNonDecimal(data, numeric) ??
      (validate(data, context) ? firstNonFinite(data) : undefined);
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
    route.httpPart === 'body' ? bodies(route) : withTextRules(textParts(route), route.schema);
  // Fastify calls the compiler with the route definition; the library's type names only the schema.
  return compile as unknown as ReturnType<BuildCompilerFromPool>;
};
