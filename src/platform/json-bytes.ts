/**
 * Splicing serialized JSON objects without parsing them again: a search's
 * `distance` is appended to each cached summary (an object serialized with
 * JSON.stringify, so it ends with its closing brace and nothing after it).
 */

const CLOSE_BRACE = 0x7d;
const DIGIT_ZERO = 0x30;

/** A whole-number member to append to objects: `,"<name>":` and one value per object. */
export interface AppendedMember {
  /** `,"<name>":` as bytes (see `memberPrefix`). */
  prefix: Buffer;
  values: readonly number[];
}

/** `,"<name>":` for a member name that needs no escaping. */
export function memberPrefix(name: string): Buffer {
  return Buffer.from(`,${JSON.stringify(name)}:`);
}

/** Digits of a whole, non-negative number. */
function decimalDigits(n: number): number {
  let digits = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  return digits;
}

/** Bytes `writeWithMember` adds to an object for the value `n`. */
export function memberBytes(prefix: Buffer, n: number): number {
  return prefix.length + decimalDigits(n);
}

/**
 * Writes the serialized object `json` at `at` in `target` with the member
 * (`prefix` then the whole, non-negative `n`) as its last; returns the index
 * after it. The object's closing brace is written after the member.
 */
export function writeWithMember(target: Buffer, at: number, json: Buffer, prefix: Buffer, n: number): number {
  target.set(json, at);
  let end = at + json.length - 1;
  target.set(prefix, end);
  end += prefix.length;
  const digitsEnd = end + decimalDigits(n);
  let rest = n;
  for (let i = digitsEnd - 1; i >= end; i--) {
    target[i] = DIGIT_ZERO + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  target[digitsEnd] = CLOSE_BRACE;
  return digitsEnd + 1;
}
