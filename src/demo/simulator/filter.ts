/**
 * The OData 4 `$filter` subset the simulator serves: what replication clients
 * send. Supported: `and`, `or`, `not`, parentheses, `eq ne gt ge lt le`,
 * `in (…)`, and literals (strings with '' escapes, numbers, true/false/null,
 * DateTimeOffset `2026-01-01T00:00:00Z`, Date `2026-01-01`). Functions and
 * arithmetic are not supported and answer 400, as are unknown properties.
 */

export type Literal =
  | { type: 'string'; value: string }
  | { type: 'number'; value: number }
  | { type: 'boolean'; value: boolean }
  | { type: 'null' }
  | { type: 'instant'; value: number }
  | { type: 'date'; value: string };

export type FilterNode =
  | { op: 'and' | 'or'; left: FilterNode; right: FilterNode }
  | { op: 'not'; operand: FilterNode }
  | { op: 'cmp'; cmp: 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le'; field: string; literal: Literal }
  | { op: 'in'; field: string; literals: Literal[] };

export class FilterError extends Error {}

type Token =
  | { kind: 'punct'; text: '(' | ')' | ',' }
  | { kind: 'word'; text: string }
  | { kind: 'literal'; literal: Literal };

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '(' || c === ')' || c === ',') {
      tokens.push({ kind: 'punct', text: c });
      i++;
    } else if (c === "'") {
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new FilterError('unterminated string literal');
        if (text[i] === "'") {
          if (text[i + 1] === "'") {
            value += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += text[i];
        i++;
      }
      tokens.push({ kind: 'literal', literal: { type: 'string', value } });
    } else if (/[0-9-]/.test(c)) {
      const start = i;
      while (i < text.length && /[0-9A-Za-z:.+-]/.test(text[i]!)) i++;
      const word = text.slice(start, i);
      if (INSTANT.test(word)) {
        const ms = Date.parse(word);
        if (Number.isNaN(ms)) throw new FilterError(`invalid DateTimeOffset ${word}`);
        tokens.push({ kind: 'literal', literal: { type: 'instant', value: ms } });
      } else if (DATE.test(word)) tokens.push({ kind: 'literal', literal: { type: 'date', value: word } });
      else if (NUMBER.test(word))
        tokens.push({ kind: 'literal', literal: { type: 'number', value: Number(word) } });
      else throw new FilterError(`invalid literal ${word}`);
    } else if (/[A-Za-z_]/.test(c)) {
      const start = i;
      while (i < text.length && /[A-Za-z0-9_]/.test(text[i]!)) i++;
      const word = text.slice(start, i);
      if (word === 'true' || word === 'false') {
        tokens.push({ kind: 'literal', literal: { type: 'boolean', value: word === 'true' } });
      } else if (word === 'null') tokens.push({ kind: 'literal', literal: { type: 'null' } });
      else tokens.push({ kind: 'word', text: word });
    } else {
      throw new FilterError(`unexpected character "${c}" at ${i}`);
    }
  }
  return tokens;
}

const COMPARISONS = new Set(['eq', 'ne', 'gt', 'ge', 'lt', 'le']);

/** Parses a `$filter`; `fields` are the resource's property names (others are a FilterError). */
export function parseFilter(text: string, fields: ReadonlySet<string>): FilterNode {
  const tokens = tokenize(text);
  let pos = 0;
  const peekWord = (word: string) => {
    const t = tokens[pos];
    return t?.kind === 'word' && t.text === word;
  };
  const expectPunct = (p: '(' | ')' | ',') => {
    const t = tokens[pos];
    if (t?.kind !== 'punct' || t.text !== p) throw new FilterError(`expected "${p}"`);
    pos++;
  };
  const literal = (): Literal => {
    const t = tokens[pos];
    if (t?.kind !== 'literal') throw new FilterError('expected a literal');
    pos++;
    return t.literal;
  };

  const or = (): FilterNode => {
    let left = and();
    while (peekWord('or')) {
      pos++;
      left = { op: 'or', left, right: and() };
    }
    return left;
  };
  const and = (): FilterNode => {
    let left = not();
    while (peekWord('and')) {
      pos++;
      left = { op: 'and', left, right: not() };
    }
    return left;
  };
  const not = (): FilterNode => {
    if (peekWord('not')) {
      pos++;
      return { op: 'not', operand: not() };
    }
    return primary();
  };
  const primary = (): FilterNode => {
    const t = tokens[pos];
    if (t?.kind === 'punct' && t.text === '(') {
      pos++;
      const inner = or();
      expectPunct(')');
      return inner;
    }
    if (t?.kind !== 'word') throw new FilterError('expected a property name');
    pos++;
    const field = t.text;
    if (tokens[pos]?.kind === 'punct' && (tokens[pos] as { text: string }).text === '(') {
      throw new FilterError(`function ${field}() is not supported`);
    }
    if (!fields.has(field)) throw new FilterError(`unknown property ${field}`);
    const op = tokens[pos];
    if (op?.kind !== 'word') throw new FilterError(`expected an operator after ${field}`);
    pos++;
    if (op.text === 'in') {
      expectPunct('(');
      const literals = [literal()];
      while (tokens[pos]?.kind === 'punct' && (tokens[pos] as { text: string }).text === ',') {
        pos++;
        literals.push(literal());
      }
      expectPunct(')');
      return { op: 'in', field, literals };
    }
    if (!COMPARISONS.has(op.text)) throw new FilterError(`unsupported operator ${op.text}`);
    return { op: 'cmp', cmp: op.text as 'eq', field, literal: literal() };
  };

  if (tokens.length === 0) throw new FilterError('empty filter');
  const tree = or();
  if (pos !== tokens.length) throw new FilterError('unexpected trailing input');
  return tree;
}

export type FieldValue = string | number | boolean | null | undefined | readonly unknown[];
export type Accessor = (field: string) => FieldValue;

/** -1, 0, 1, or null when the two cannot be compared (type mismatch). */
function compare(value: FieldValue, literal: Literal): number | null {
  if (literal.type === 'null') return value === null || value === undefined ? 0 : null;
  if (value === null || value === undefined || Array.isArray(value)) return null;
  let a: number | string | boolean;
  let b: number | string | boolean;
  if (literal.type === 'instant') {
    a = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
    b = literal.value;
    if (Number.isNaN(a)) return null;
  } else if (literal.type === 'number') {
    if (typeof value !== 'number') return null;
    a = value;
    b = literal.value;
  } else if (literal.type === 'boolean') {
    if (typeof value !== 'boolean') return null;
    a = value;
    b = literal.value;
  } else {
    if (typeof value !== 'string') return null;
    a = value;
    b = literal.value;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

function matchesLiteral(value: FieldValue, literal: Literal): boolean {
  return compare(value, literal) === 0;
}

export function evaluate(node: FilterNode, get: Accessor): boolean {
  switch (node.op) {
    case 'and':
      return evaluate(node.left, get) && evaluate(node.right, get);
    case 'or':
      return evaluate(node.left, get) || evaluate(node.right, get);
    case 'not':
      return !evaluate(node.operand, get);
    case 'in': {
      const value = get(node.field);
      return node.literals.some((l) => matchesLiteral(value, l));
    }
    case 'cmp': {
      const order = compare(get(node.field), node.literal);
      if (node.cmp === 'ne') return order !== 0;
      if (order === null) return false;
      switch (node.cmp) {
        case 'eq':
          return order === 0;
        case 'gt':
          return order > 0;
        case 'ge':
          return order >= 0;
        case 'lt':
          return order < 0;
        default:
          return order <= 0;
      }
    }
  }
}

/**
 * The greatest lower bound the filter puts on a timestamp field through
 * top-level `and` terms (`field ge|gt <instant>`): lets the simulator start a
 * scan at that instant instead of at the beginning. The full filter is still
 * evaluated on every candidate.
 */
export function lowerBound(node: FilterNode | null, field: string): number | null {
  if (node === null) return null;
  if (node.op === 'and') {
    const a = lowerBound(node.left, field);
    const b = lowerBound(node.right, field);
    return a === null ? b : b === null ? a : Math.max(a, b);
  }
  if (node.op === 'cmp' && node.field === field && node.literal.type === 'instant') {
    if (node.cmp === 'ge' || node.cmp === 'gt' || node.cmp === 'eq') return node.literal.value;
  }
  return null;
}

/** Every property the filter reads. */
export function filterFields(node: FilterNode | null, out: Set<string> = new Set()): Set<string> {
  if (node === null) return out;
  if (node.op === 'and' || node.op === 'or') {
    filterFields(node.left, out);
    filterFields(node.right, out);
  } else if (node.op === 'not') filterFields(node.operand, out);
  else if (node.op === 'cmp' || node.op === 'in') out.add(node.field);
  return out;
}
