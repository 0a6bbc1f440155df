// Builds the chart README's values table from values.yaml: a key documented by a
// `# -- text` comment is one row (its whole value is the default); an undocumented map is
// descended into; an undocumented leaf is an error, so no value goes without a line.
import { readFileSync } from 'node:fs';
import { isMap, isPair, isScalar, parseDocument, type Pair, type YAMLMap } from 'yaml';

export interface ValueRow {
  key: string;
  type: string;
  default: string;
  description: string;
}

export const TABLE_BEGIN = '<!-- values-table:begin (generated from values.yaml by test/deploy/values-doc.ts) -->';
export const TABLE_END = '<!-- values-table:end -->';

/** The `-- ` part of a comment, with its continuation lines joined. */
function docOf(comment: string | null | undefined): string | undefined {
  if (!comment) return undefined;
  const lines = comment.split('\n').map((line) => line.replace(/^ ?/, ''));
  const start = lines.findLastIndex((line) => line.startsWith('-- '));
  if (start < 0) return undefined;
  return lines
    .slice(start)
    .map((line, index) => (index === 0 ? line.slice(3) : line).trim())
    .join(' ')
    .trim();
}

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'list';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'object';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return typeof value;
}

export function valuesRows(valuesFile: string): { rows: ValueRow[]; undocumented: string[] } {
  const document = parseDocument(readFileSync(valuesFile, 'utf8'));
  const rows: ValueRow[] = [];
  const undocumented: string[] = [];
  const walk = (map: YAMLMap, prefix: string, leading?: string | null) => {
    map.items.forEach((item, index) => {
      if (!isPair(item)) return;
      const pair = item as Pair;
      const keyNode = pair.key;
      const key = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
      const path = prefix ? `${prefix}.${key}` : key;
      // The yaml parser attaches the comment before a map's first key to the map or document.
      const comment = (isScalar(keyNode) ? keyNode.commentBefore : undefined) ?? (index === 0 ? leading : undefined);
      const description = docOf(comment);
      if (description !== undefined) {
        const value = (pair.value as { toJSON?: () => unknown } | null)?.toJSON?.() ?? null;
        rows.push({ key: path, type: typeOf(value), default: JSON.stringify(value), description });
      } else if (isMap(pair.value)) {
        walk(pair.value, path, pair.value.commentBefore);
      } else {
        undocumented.push(path);
      }
    });
  };
  if (!isMap(document.contents)) throw new Error(`${valuesFile}: the top level is not a map`);
  walk(document.contents, '', document.contents.commentBefore ?? document.commentBefore);
  return { rows, undocumented };
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

export function valuesTable(rows: ValueRow[]): string {
  const lines = ['| Key | Type | Default | Description |', '|---|---|---|---|'];
  for (const row of rows) {
    lines.push(`| \`${row.key}\` | ${row.type} | \`${cell(row.default)}\` | ${cell(row.description)} |`);
  }
  return `${TABLE_BEGIN}\n${lines.join('\n')}\n${TABLE_END}`;
}
