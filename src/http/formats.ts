/**
 * Alternative representations of list responses: JSON (the default), CSV and
 * GeoJSON, chosen by the `format` query parameter or the Accept header.
 *
 * Contract:
 * - `format` (json, csv, geojson) wins over Accept; without it the Accept
 *   header is negotiated (RFC 9110 §12.5.1: q-values, the most specific
 *   matching range decides a type's q, wildcards count); an absent or empty
 *   Accept is JSON. An Accept that allows none of the three is a 406
 *   `NOT_ACCEPTABLE` naming them. Errors are always the JSON error envelope.
 * - What a JSON list carries in `meta` about paging travels in headers for the
 *   other formats (`setPagingHeaders`): `Link` (RFC 8288), `X-Total-Count`,
 *   `X-Page`, `X-Per-Page` and, when there are any, `X-Stoop-Warnings`.
 * - CSV is RFC 4180: a header row, CRLF after every record, fields quoted when
 *   they hold a comma, a quote or a line break, UTF-8 without a byte order
 *   mark. Text cells that a spreadsheet would run as a formula are neutralised
 *   (`csvField`); numbers and booleans never are, so `-250` stays a number.
 */
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { PaginatedMeta } from './envelope.ts';
import { ApiError } from './errors.ts';
import type { PageLinks } from './pagination.ts';
import { StringEnum } from './schemas.ts';

export const LIST_FORMATS = ['json', 'csv', 'geojson'] as const;
export type ListFormat = (typeof LIST_FORMATS)[number];

export const MEDIA_TYPES: Readonly<Record<ListFormat, string>> = {
  json: 'application/json',
  csv: 'text/csv',
  geojson: 'application/geo+json',
};

/** The Content-Type each non-JSON format is sent with (GeoJSON is always UTF-8 and takes no charset). */
export const CONTENT_TYPES = {
  csv: 'text/csv; charset=utf-8; header=present',
  geojson: 'application/geo+json',
} as const;

/** File name extensions of the downloads (`Content-Disposition`). */
const EXTENSIONS = { csv: 'csv', geojson: 'geojson' } as const;

/** The `format` query parameter of an operation that serves the three formats. */
export function formatParam(csvColumns: string) {
  return Type.Optional(
    StringEnum(LIST_FORMATS, {
      description: `Representation of the page: \`json\` (default), \`csv\` (\`text/csv\`) or \`geojson\` (\`application/geo+json\`, a FeatureCollection). Wins over the Accept header, which is negotiated when \`format\` is absent (an Accept allowing none of the three is a 406). Paging, limits and metering are the same in every format; CSV and GeoJSON carry the paging metadata in headers: \`Link\` (first, prev, next, last), \`X-Total-Count\`, \`X-Page\`, \`X-Per-Page\`, \`X-Stoop-Warnings\` (a JSON array of strings, ASCII, present only when there are warnings). GeoJSON also carries \`meta\` as a foreign member. Both are sent as a download (\`Content-Disposition: attachment\`). ${csvColumns}`,
    }),
  );
}

// Server preference when the client's q-values and specificity tie: JSON, then GeoJSON, then CSV.
const PREFERENCE: readonly ListFormat[] = ['json', 'geojson', 'csv'];

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** The media ranges of an Accept header; a malformed range (or q-value) is skipped, not guessed at. */
function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const element of header.split(',')) {
    const [mediaRange, ...params] = element.split(';').map((part) => part.trim().toLowerCase());
    if (!mediaRange) continue;
    const slash = mediaRange.indexOf('/');
    const type = mediaRange.slice(0, slash);
    const subtype = mediaRange.slice(slash + 1);
    if (slash === -1 || !TOKEN.test(type) || !TOKEN.test(subtype) || (type === '*' && subtype !== '*')) {
      continue;
    }
    let q = 1;
    let valid = true;
    for (const param of params) {
      if (!param.startsWith('q=')) continue;
      const value = param.slice(2).trim();
      if (QVALUE.test(value)) q = Number(value);
      else valid = false;
    }
    if (valid) ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** The q the client gives a media type: that of the most specific range matching it (0 when none does). */
function qualityOf(mediaType: string, ranges: readonly MediaRange[]): { q: number; specificity: number } {
  const [type, subtype] = mediaType.split('/') as [string, string];
  let best = { q: 0, specificity: -1 };
  for (const range of ranges) {
    let specificity: number;
    if (range.type === type && range.subtype === subtype) specificity = 2;
    else if (range.type === type && range.subtype === '*') specificity = 1;
    else if (range.type === '*') specificity = 0;
    else continue;
    if (specificity > best.specificity) best = { q: range.q, specificity };
  }
  return best;
}

/**
 * The representation to send: the `format` parameter when given, else the
 * best of the three by the Accept header. Throws a 406 when Accept allows
 * none of them.
 */
export function negotiateListFormat(format: string | undefined, accept: string | undefined): ListFormat {
  if (format !== undefined) {
    // The schema has validated it; lower-cased in case enums are matched case-insensitively.
    const named = LIST_FORMATS.find((known) => known === format.toLowerCase());
    if (named) return named;
    throw ApiError.invalidParam({
      parameter: 'format',
      rule: 'enum',
      message: `must be one of ${LIST_FORMATS.join(', ')}`,
    });
  }
  if (accept === undefined || accept.trim() === '') return 'json';
  const ranges = parseAccept(accept);
  let chosen: { format: ListFormat; q: number; specificity: number } | null = null;
  for (const candidate of PREFERENCE) {
    const { q, specificity } = qualityOf(MEDIA_TYPES[candidate], ranges);
    if (q <= 0) continue;
    if (chosen === null || q > chosen.q || (q === chosen.q && specificity > chosen.specificity)) {
      chosen = { format: candidate, q, specificity };
    }
  }
  if (chosen === null) {
    const acceptable = LIST_FORMATS.map((f) => MEDIA_TYPES[f]);
    throw new ApiError(
      'NOT_ACCEPTABLE',
      `The Accept header allows none of the media types this endpoint serves (${acceptable.join(', ')}); accept one of them or choose with format=json|csv|geojson`,
      { acceptable },
    );
  }
  return chosen.format;
}

/** RFC 8288 `Link` value for a page: first, prev, next, last (prev/next only when they exist). */
export function linkHeader(links: PageLinks): string {
  const parts = [`<${links.first}>; rel="first"`];
  if (links.prev !== null) parts.push(`<${links.prev}>; rel="prev"`);
  if (links.next !== null) parts.push(`<${links.next}>; rel="next"`);
  parts.push(`<${links.last}>; rel="last"`);
  return parts.join(', ');
}

/**
 * Warnings as one header value: a JSON array of strings with every non-ASCII
 * character escaped, so any warning (they can quote parameter names the
 * client sent) is a valid header value that `JSON.parse` reads back.
 */
export function warningsHeader(warnings: readonly string[]): string {
  return JSON.stringify(warnings).replace(
    /[^\x20-\x7e]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The paging metadata of `meta` as response headers (for representations without a `meta`). */
export function setPagingHeaders(reply: FastifyReply, meta: PaginatedMeta): void {
  reply.header('Link', linkHeader(meta.links));
  reply.header('X-Total-Count', meta.total);
  reply.header('X-Page', meta.page);
  reply.header('X-Per-Page', meta.perPage);
  if (meta.warnings.length > 0) reply.header('X-Stoop-Warnings', warningsHeader(meta.warnings));
}

/** Adds `Accept` to Vary: the same URL answers differently by Accept. */
export function varyOnAccept(reply: FastifyReply): void {
  appendVary(reply, 'Accept');
}

/** Adds a request header to `Vary`, keeping the names already there (each once). */
export function appendVary(reply: FastifyReply, field: string): void {
  const vary = reply.getHeader('vary');
  if (vary === undefined) {
    reply.header('Vary', field);
    return;
  }
  const present = String(vary)
    .split(',')
    .some((name) => name.trim().toLowerCase() === field.toLowerCase());
  if (!present) reply.header('Vary', `${String(vary)}, ${field}`);
}

/**
 * Sends a CSV or GeoJSON page as a download named `<stem>.<ext>` (the stem is
 * built by the route from fixed words and digits, so it needs no quoting),
 * with the paging headers. The body is produced a slice at a time (see
 * listing-export.ts), so it is streamed: every check that can fail has run
 * before, and the headers above are final.
 */
export function sendExport(
  reply: FastifyReply,
  format: Exclude<ListFormat, 'json'>,
  chunks: AsyncIterable<string>,
  meta: PaginatedMeta,
  fileStem: string,
): FastifyReply {
  setPagingHeaders(reply, meta);
  reply.header('Content-Disposition', `attachment; filename="${fileStem}.${EXTENSIONS[format]}"`);
  return reply.type(CONTENT_TYPES[format]).send(Readable.from(chunks, { objectMode: false }));
}

// OWASP CSV injection: a cell starting with one of these is run as a formula by spreadsheets.
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** A CSV cell value: text, a number, a boolean, or nothing (an empty cell). */
export type CsvValue = string | number | boolean | null | undefined;

/**
 * One RFC 4180 field. Text starting with `=`, `+`, `-`, `@`, a tab or a CR
 * gets a leading `'` (the OWASP mitigation: spreadsheets show it as text);
 * numbers and booleans are written as JSON writes them and never prefixed.
 */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export interface CsvColumn<T> {
  name: string;
  value(row: T): CsvValue;
}

/** The CSV header row, ended by CRLF. */
export function csvHeader<T>(columns: readonly CsvColumn<T>[]): string {
  return `${columns.map((column) => csvField(column.name)).join(',')}\r\n`;
}

/** One CSV record per row, each ended by CRLF (RFC 4180 §2). */
export function csvRecords<T>(columns: readonly CsvColumn<T>[], rows: readonly T[]): string {
  let text = '';
  for (const row of rows) text += `${columns.map((column) => csvField(column.value(row))).join(',')}\r\n`;
  return text;
}
