/**
 * Structured sub-records (listing details, building data) are stored as JSON
 * text written by whichever source fed the store: the demo generator today, a
 * RESO adapter tomorrow. Their TypeBox response schema is the contract, and
 * stored JSON is fitted to it before it is served, field by field:
 *
 * - a value that matches its field's schema is kept;
 * - a value that does not (missing, wrong type) becomes null where the field
 *   allows null, so one odd field never turns a whole response into a 500;
 * - an array keeps only the items that fit;
 * - a record with a required, non-nullable field that does not fit is dropped
 *   (null where the record is optional, skipped inside an array).
 *
 * Properties the schema does not name are dropped, so nothing undocumented leaks.
 */
import { FormatRegistry, type Static, type TSchema } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
// TypeBox checks a string `format` only when the format is registered (and fails it otherwise).
if (!FormatRegistry.Has('date')) FormatRegistry.Set('date', (value) => DATE.test(value));
if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (value) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)));
}

const UNFIT = Symbol('unfit');
type Fitted = unknown | typeof UNFIT;

interface Node {
  check: TypeCheck<TSchema>;
  nullable: boolean;
  properties: [string, Node][] | null;
  items: Node | null;
}

const nodes = new WeakMap<TSchema, Node>();

function nodeOf(schema: TSchema): Node {
  let node = nodes.get(schema);
  if (node) return node;
  const check = TypeCompiler.Compile(schema);
  node = { check, nullable: check.Check(null), properties: null, items: null };
  nodes.set(schema, node);
  // A nullable object or array (`anyOf: [T, null]`) is fitted as its T.
  const members = Array.isArray(schema.anyOf) ? (schema.anyOf as TSchema[]) : [schema];
  const nonNull = members.filter((m) => m.type !== 'null');
  const core = nonNull.length === 1 ? nonNull[0]! : null;
  if (core?.type === 'object' && core.properties !== undefined) {
    node.properties = Object.entries(core.properties as Record<string, TSchema>).map(([key, child]) => [
      key,
      nodeOf(child),
    ]);
  } else if (core?.type === 'array' && core.items !== undefined) {
    node.items = nodeOf(core.items as TSchema);
  }
  return node;
}

function fitValue(node: Node, value: unknown): Fitted {
  if (value !== null && value !== undefined) {
    if (node.properties && typeof value === 'object' && !Array.isArray(value)) {
      const source = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [key, child] of node.properties) {
        const fitted = fitValue(child, source[key]);
        if (fitted === UNFIT) return node.nullable ? null : UNFIT;
        out[key] = fitted;
      }
      return out;
    }
    if (node.items && Array.isArray(value)) {
      const items = node.items;
      const out: unknown[] = [];
      for (const item of value) {
        const fitted = fitValue(items, item);
        if (fitted !== UNFIT) out.push(fitted);
      }
      return out;
    }
    if (node.check.Check(value)) return value;
  }
  return node.nullable ? null : UNFIT;
}

function parse(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** Stored JSON text fitted to a record schema; null when absent, malformed, or unusable. */
export function fitStoredRecord<T extends TSchema>(schema: T, text: string | null): Static<T> | null {
  const fitted = fitValue(nodeOf(schema), parse(text));
  return fitted === UNFIT ? null : (fitted as Static<T> | null);
}

/** Stored JSON text of an array fitted item by item; [] when absent or malformed. */
export function fitStoredArray<T extends TSchema>(itemSchema: T, text: string | null): Static<T>[] {
  const value = parse(text);
  if (!Array.isArray(value)) return [];
  const node = nodeOf(itemSchema);
  const out: Static<T>[] = [];
  for (const item of value) {
    const fitted = fitValue(node, item);
    if (fitted !== UNFIT) out.push(fitted as Static<T>);
  }
  return out;
}
