/**
 * Reads variables by their declaration. The schema is the authority: a raw
 * string is converted by the schema's kind (the only code here that knows a
 * kind), then `Value.Check` applies the schema's bounds, enum, pattern and
 * format. Error messages are worded from the same schema.
 */
import { isIP } from 'node:net';
import { FormatRegistry, KindGuard, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Tier } from '../domain/tiers.ts';
import {
  ABSOLUTE_URL,
  DerivedDefault,
  ENVIRONMENT,
  HTTP_URL,
  IP_OR_CIDR,
  literalsOf,
  type TierFamilyName,
  type TierVariableValue,
  tierVariableName,
  type VariableName,
  type VariableValue,
} from './declaration.ts';

/** A variable with a bad value; the message names the variable (main and cli print it and exit). */
export class ConfigError extends Error {
  constructor(variable: string, reason: string) {
    super(`Invalid configuration: ${variable} ${reason}`);
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

const TRUE_WORDS = /^(1|true|yes|on)$/i;
const FALSE_WORDS = /^(0|false|no|off)$/i;

// TypeBox checks a string `format` only when it is registered (and fails it otherwise).
if (!FormatRegistry.Has(ABSOLUTE_URL)) FormatRegistry.Set(ABSOLUTE_URL, (value) => URL.canParse(value));
if (!FormatRegistry.Has(HTTP_URL)) FormatRegistry.Set(HTTP_URL, isHttpUrl);
if (!FormatRegistry.Has(IP_OR_CIDR)) FormatRegistry.Set(IP_OR_CIDR, isIpOrCidr);

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}

/** An IPv4/IPv6 address, optionally with a prefix length no longer than the family's. */
function isIpOrCidr(value: string): boolean {
  const [address, bits] = value.split('/');
  const family = isIP(address ?? '');
  if (family === 0) return false;
  return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
}

/** A single variable's value: parsed when set, else its default (`undefined` for none or a derived default). */
export function readVariable<N extends VariableName>(env: Env, name: N): VariableValue<N> {
  const declaration = ENVIRONMENT[name];
  const raw = env[name];
  // Sound: the value passed `Value.Check` against the declared schema, and a
  // value default is typed against that schema by the declaration.
  if (raw !== undefined && raw !== '') return parseVariable(name, declaration, raw) as VariableValue<N>;
  return (
    declaration.default instanceof DerivedDefault ? undefined : declaration.default
  ) as VariableValue<N>;
}

/** One tier's member of a per-tier family (`RATE_LIMIT_<TIER>` and `PRO` read `RATE_LIMIT_PRO`). */
export function readTierVariable<F extends TierFamilyName>(
  env: Env,
  family: F,
  tier: Tier,
): TierVariableValue<F> {
  const declaration = ENVIRONMENT[family];
  const name = tierVariableName(family, tier);
  const raw = env[name];
  // Sound for the same reasons as in readVariable.
  if (raw !== undefined && raw !== '') return parseVariable(name, declaration, raw) as TierVariableValue<F>;
  return declaration.defaultByTier[tier] as TierVariableValue<F>;
}

/** The parts of a declaration (single or per-tier) that parsing reads. */
interface Parsing {
  readonly type: TSchema;
  readonly accepts?: string;
}

/**
 * Converts a set (non-empty) raw value by its declared type and checks it
 * against the schema; throws a ConfigError naming the variable.
 */
function parseVariable(name: string, { type, accepts }: Parsing, raw: string): unknown {
  const value = convert(name, type, raw);
  if (!Value.Check(type, value)) throw new ConfigError(name, violation(type, accepts, value, raw));
  return value;
}

function convert(name: string, schema: TSchema, raw: string): unknown {
  if (KindGuard.IsInteger(schema)) {
    if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
    return Number(raw);
  }
  if (KindGuard.IsNumber(schema)) {
    const value = Number(raw);
    if (!Number.isFinite(value)) throw new ConfigError(name, `must be a number, got "${raw}"`);
    return value;
  }
  if (KindGuard.IsBoolean(schema)) {
    if (TRUE_WORDS.test(raw)) return true;
    if (FALSE_WORDS.test(raw)) return false;
    throw new ConfigError(name, `must be a boolean (true/false), got "${raw}"`);
  }
  if (KindGuard.IsArray(schema)) {
    const list = raw.trim();
    return list === '' ? [] : list.split(',').map((entry) => entry.trim());
  }
  // Strings and unions of string literals are checked as given.
  return raw;
}

/** Why a converted value fails its schema, worded from the schema (and the declaration's `accepts`). */
function violation(schema: TSchema, accepts: string | undefined, value: unknown, raw: string): string {
  if (KindGuard.IsInteger(schema) || KindGuard.IsNumber(schema)) {
    return `must be ${numericRange(schema.minimum, schema.maximum)}, got ${value}`;
  }
  if (KindGuard.IsUnion(schema)) return `must be one of ${literalsOf(schema).join(', ')}, got "${raw}"`;
  const expected = accepts ?? patternOrFormat(schema);
  if (KindGuard.IsArray(schema) && Array.isArray(value)) {
    const invalid = value.find((entry) => !Value.Check(schema.items, entry));
    return `must be ${expected}; "${String(invalid)}" is not valid`;
  }
  return `must be ${expected}, got "${raw}"`;
}

function numericRange(minimum: number | undefined, maximum: number | undefined): string {
  if (minimum !== undefined && maximum !== undefined) return `between ${minimum} and ${maximum}`;
  if (minimum !== undefined) return `at least ${minimum}`;
  return `at most ${maximum}`;
}

function patternOrFormat(schema: TSchema): string {
  const target = KindGuard.IsArray(schema) ? schema.items : schema;
  if (KindGuard.IsString(target) && target.pattern !== undefined)
    return `a value matching /${target.pattern}/`;
  if (KindGuard.IsString(target) && target.format !== undefined) return `a valid ${target.format}`;
  return 'a valid value';
}
