// The organization role is checked before a query reaches the database, from its text alone, as
// the service does: the query is parsed by Postgres's own parser (libpg-query, the same major as
// the emulator's Postgres) and counts as read-only only when that is evident from its parse tree;
// anything else counts as writing.
import type { ParseResult } from 'libpg-query';
import { postgresParser } from '../manifests/pg-parser.js';

export interface SqlClassification {
  readOnly: boolean;
  /** Why the query counts as writing (absent when read-only). */
  reason?: string;
  /** Statements in the query (0 when it does not parse). */
  statements: number;
  /** Set when a quoted string, identifier, dollar quote or comment is never closed. */
  unterminated?: string;
  /** Postgres's syntax error, when the query does not parse (and nothing is unterminated). */
  syntaxError?: string;
}


/** Functions known to read only: a call to any other function counts as writing (nextval, set_config, ...). */
const READ_ONLY_FUNCTIONS = new Set([
  'count', 'sum', 'avg', 'min', 'max', 'bool_and', 'bool_or', 'every', 'string_agg', 'array_agg', 'json_agg', 'jsonb_agg',
  'json_object_agg', 'jsonb_object_agg', 'json_build_object', 'jsonb_build_object', 'json_build_array', 'jsonb_build_array',
  'to_json', 'to_jsonb', 'row_to_json', 'jsonb_pretty', 'json_typeof', 'jsonb_typeof', 'now', 'version', 'current_setting',
  'current_database', 'current_schema', 'current_schemas', 'lower', 'upper', 'length', 'char_length', 'octet_length',
  'concat', 'concat_ws', 'format', 'replace', 'split_part', 'left', 'right', 'substr', 'strpos', 'abs', 'round', 'floor',
  'ceil', 'ceiling', 'mod', 'power', 'sqrt', 'trunc', 'to_char', 'to_timestamp', 'to_date', 'to_number', 'date_trunc',
  'date_part', 'age', 'pg_size_pretty', 'pg_database_size', 'pg_total_relation_size', 'pg_relation_size', 'pg_table_size',
  'pg_indexes_size', 'has_table_privilege', 'has_schema_privilege', 'has_database_privilege', 'pg_get_userbyid',
  'obj_description', 'col_description', 'format_type', 'pg_get_viewdef', 'pg_get_constraintdef', 'pg_get_indexdef',
  'pg_get_functiondef', 'pg_get_function_arguments', 'pg_get_function_result', 'unnest', 'generate_series', 'array_length',
  'array_to_string', 'string_to_array', 'array_position', 'cardinality', 'regexp_replace', 'regexp_match', 'regexp_matches',
  'md5', 'encode', 'decode', 'quote_ident', 'quote_literal', 'btrim', 'ltrim', 'rtrim', 'lpad', 'rpad', 'initcap', 'reverse',
  'starts_with', 'extract', 'position', 'substring', 'overlay', 'timezone', 'coalesce', 'nullif', 'greatest', 'least',
]);

type Node = Record<string, unknown>;

const WRITING_STATEMENTS: Record<string, string> = { InsertStmt: 'INSERT', UpdateStmt: 'UPDATE', DeleteStmt: 'DELETE', MergeStmt: 'MERGE' };

/** Why a node (or anything below it) writes, or undefined. */
function writingBelow(node: unknown): string | undefined {
  if (Array.isArray(node)) {
    for (const item of node) {
      const reason = writingBelow(item);
      if (reason) return reason;
    }
    return undefined;
  }
  if (node === null || typeof node !== 'object') return undefined;
  for (const [key, value] of Object.entries(node as Node)) {
    if (WRITING_STATEMENTS[key]) return `it contains \`${WRITING_STATEMENTS[key]}\``;
    if (key === 'intoClause' && value) return 'it contains `INTO`';
    if (key === 'lockingClause' && Array.isArray(value) && value.length > 0) {
      const strength = String(((value[0] as Node).LockingClause as Node | undefined)?.strength ?? '');
      const words: Record<string, string> = { LCS_FORUPDATE: 'FOR UPDATE', LCS_FORNOKEYUPDATE: 'FOR NO KEY UPDATE', LCS_FORSHARE: 'FOR SHARE', LCS_FORKEYSHARE: 'FOR KEY SHARE' };
      return `it locks rows (\`${words[strength] ?? 'FOR UPDATE'}\`)`;
    }
    if (key === 'FuncCall') {
      const names = (((value as Node).funcname ?? []) as Node[]).map((part) => String((part.String as Node | undefined)?.sval ?? ''));
      const name = names.at(-1)!;
      const schema = names.length > 1 ? names.at(-2) : undefined;
      if (schema !== undefined && schema !== 'pg_catalog') return `it calls \`${schema}.${name}\`, which is not known to be read-only`;
      if (!READ_ONLY_FUNCTIONS.has(name)) return `it calls \`${name}\`, which is not known to be read-only`;
    }
    const reason = writingBelow(value);
    if (reason) return reason;
  }
  return undefined;
}

function writingReason(statement: Node): string | undefined {
  const [kind] = Object.keys(statement);
  const body = statement[kind!] as Node;
  if (kind === 'VariableShowStmt') return undefined;
  if (kind === 'ExplainStmt') {
    // EXPLAIN ANALYZE runs its statement.
    const options = ((body.options ?? []) as Node[]).map((option) => String((option.DefElem as Node | undefined)?.defname ?? ''));
    if (options.includes('analyze')) return 'it contains `ANALYZE`';
    return writingReason(body.query as Node);
  }
  if (kind !== 'SelectStmt') return 'it is not a SELECT, SHOW, EXPLAIN or WITH ... SELECT statement';
  return writingBelow(body);
}

const UNTERMINATED: Record<string, string> = {
  'quoted string': 'quoted string', 'quoted identifier': 'quoted identifier', 'dollar-quoted string': 'dollar-quoted string', '/* comment': 'comment',
};

/**
 * A query is read-only when it is one SELECT (VALUES and TABLE are SELECTs to Postgres), SHOW or
 * EXPLAIN (without ANALYZE) of one, with no data-modifying WITH, no INTO, no row lock and no
 * call to a function outside a list of known read-only ones (bare or `pg_catalog.`). Everything
 * else counts as writing.
 */
export async function classifySql(query: string): Promise<SqlClassification> {
  const { parse } = await postgresParser();
  let tree: ParseResult;
  try {
    tree = await parse(query);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/^Query cannot be empty/.test(message)) return { readOnly: false, reason: 'it holds no statement', statements: 0 };
    const unterminated = /^unterminated (quoted string|quoted identifier|dollar-quoted string|\/\* comment)/.exec(message)?.[1];
    if (unterminated) return { readOnly: false, reason: `a ${UNTERMINATED[unterminated]} is never closed`, statements: 0, unterminated: UNTERMINATED[unterminated] };
    return { readOnly: false, reason: 'it does not parse', statements: 0, syntaxError: message };
  }
  const statements = (tree.stmts ?? []).map((raw) => raw.stmt as unknown as Node);
  const writing = (reason: string): SqlClassification => ({ readOnly: false, reason, statements: statements.length });
  if (statements.length === 0) return writing('it holds no statement');
  if (statements.length > 1) return writing('it holds more than one statement');
  const reason = writingReason(statements[0]!);
  return reason ? writing(reason) : { readOnly: true, statements: 1 };
}
