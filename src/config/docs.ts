import { KindGuard, type TSchema } from '@sinclair/typebox';
import { TIERS } from '../domain/tiers.ts';
import {
  CONFIG_GROUPS,
  type Declaration,
  type DeclaredName,
  DerivedDefault,
  ENVIRONMENT,
  isTierDeclaration,
  literalsOf,
  TIER_PLACEHOLDER,
} from './declaration.ts';

/**
 * The README's Configuration table, rendered from the declaration. README.md
 * holds it between these markers; `npm run docs:config` rewrites it there and
 * test/config.test.ts fails while the two differ.
 */
export const CONFIG_TABLE_START = '<!-- config:start -->';
export const CONFIG_TABLE_END = '<!-- config:end -->';

/** Markdown: one table, a bold row opening each group, then the conventions every row relies on. */
export function renderConfigurationTable(): string {
  const entries = Object.entries(ENVIRONMENT) as [DeclaredName, Declaration][];
  const rows = ['| variable | default | accepts | meaning |', '|---|---|---|---|'];
  for (const [group, title] of Object.entries(CONFIG_GROUPS)) {
    rows.push(`| **${title}** | | | |`);
    for (const [name, declaration] of entries) {
      if (declaration.group !== group) continue;
      rows.push(
        `| \`${name}\` | ${defaultCell(declaration)} | ${acceptsCell(declaration)} | ${cell(declaration.description)} |`,
      );
    }
  }
  return [
    ...rows,
    '',
    'Unset and empty mean the default. Booleans accept `true`/`false`, `1`/`0`, `yes`/`no` and `on`/`off`, in any',
    `case. \`${TIER_PLACEHOLDER}\` is one of ${TIERS.map((tier) => `\`${tier}\``).join(', ')}.`,
  ].join('\n');
}

/** README.md with its configuration block replaced by `table`; throws when a marker is missing. */
export function withConfigurationTable(readme: string, table: string): string {
  const { before, after } = splitAtMarkers(readme);
  return `${before}${CONFIG_TABLE_START}\n${table}\n${CONFIG_TABLE_END}${after}`;
}

/** What README.md currently holds between the markers (the table, without the markers). */
export function configurationTableIn(readme: string): string {
  const { inside } = splitAtMarkers(readme);
  return inside.replace(/^\n/, '').replace(/\n$/, '');
}

function splitAtMarkers(readme: string): { before: string; inside: string; after: string } {
  const start = readme.indexOf(CONFIG_TABLE_START);
  const end = readme.indexOf(CONFIG_TABLE_END);
  if (start === -1 || end === -1 || end < start) {
    throw new Error(
      `README.md needs the markers ${CONFIG_TABLE_START} and ${CONFIG_TABLE_END}, in that order`,
    );
  }
  return {
    before: readme.slice(0, start),
    inside: readme.slice(start + CONFIG_TABLE_START.length, end),
    after: readme.slice(end + CONFIG_TABLE_END.length),
  };
}

function defaultCell(declaration: Declaration): string {
  if (isTierDeclaration(declaration)) {
    return TIERS.map((tier) => `${tier} \`${declaration.defaultByTier[tier]}\``).join(', ');
  }
  if (declaration.default === undefined) return '(none)';
  if (declaration.default instanceof DerivedDefault) return `\`${declaration.default.rule}\``;
  return `\`${String(declaration.default)}\``;
}

function acceptsCell(declaration: Declaration): string {
  if (!isTierDeclaration(declaration) && declaration.accepts !== undefined) return cell(declaration.accepts);
  return acceptedBySchema(declaration.type);
}

/** Accepted values worded from the schema alone (numbers, booleans, enums). */
function acceptedBySchema(schema: TSchema): string {
  if (KindGuard.IsInteger(schema) || KindGuard.IsNumber(schema)) {
    const kind = KindGuard.IsInteger(schema) ? 'integer' : 'number';
    if (schema.minimum !== undefined && schema.maximum !== undefined) {
      return `${kind} ${schema.minimum}–${schema.maximum}`;
    }
    if (schema.minimum !== undefined) return `${kind} ≥ ${schema.minimum}`;
    if (schema.maximum !== undefined) return `${kind} ≤ ${schema.maximum}`;
    return kind;
  }
  if (KindGuard.IsBoolean(schema)) return 'boolean';
  if (KindGuard.IsUnion(schema)) {
    return literalsOf(schema)
      .map((literal) => `\`${literal}\``)
      .join(', ');
  }
  if (KindGuard.IsString(schema) && schema.pattern !== undefined) return `matches \`${schema.pattern}\``;
  if (KindGuard.IsString(schema) && schema.format !== undefined) return schema.format;
  return 'text';
}

/**
 * Text made safe inside a table cell: a pipe would end the cell, and `<…>`
 * outside a code span would be read as HTML.
 */
function cell(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, index) => (index % 2 === 1 ? part : part.replaceAll('<', '&lt;')))
    .join('')
    .replaceAll('|', '\\|');
}
