// The emulator has no SQL engine, so it cannot know what a statement would change. It reads the
// text as Postgres would tokenise it (comments, quoted strings and identifiers, dollar quotes)
// and calls a query read-only only when that is evident: anything else counts as writing.

type SqlTokenKind = 'word' | 'quoted-identifier' | 'string' | 'number' | 'symbol';

interface SqlToken {
  kind: SqlTokenKind;
  /** Words lowercased; other tokens as written. */
  value: string;
}

export interface SqlStatement {
  /** The statement's text without the `;` that ends it, trimmed. */
  text: string;
  tokens: SqlToken[];
}

interface SqlReading {
  statements: SqlStatement[];
  /** Set when a quote, identifier, dollar quote or comment is never closed. */
  unterminated?: string;
}

interface SqlClassification extends SqlReading {
  readOnly: boolean;
  /** Why the query counts as writing (absent when read-only). */
  reason?: string;
}

const WORD_START = /[\p{L}_]/u;
const WORD_PART = /[\p{L}\p{N}_$]/u;

/** Splits a query into statements of tokens; never throws. */
function readSql(query: string): SqlReading {
  const statements: SqlStatement[] = [];
  let tokens: SqlToken[] = [];
  let start = 0;
  let i = 0;
  const finish = (end: number) => {
    const text = query.slice(start, end).trim();
    if (tokens.length > 0) statements.push({ text, tokens });
    tokens = [];
  };
  const unterminated = (what: string): SqlReading => {
    finish(query.length);
    return { statements, unterminated: what };
  };
  while (i < query.length) {
    const c = query[i]!;
    const next = query[i + 1];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '-' && next === '-') {
      const end = query.indexOf('\n', i);
      i = end === -1 ? query.length : end + 1;
    } else if (c === '/' && next === '*') {
      // Block comments nest in Postgres.
      let depth = 1;
      i += 2;
      while (i < query.length && depth > 0) {
        if (query.startsWith('/*', i)) {
          depth++;
          i += 2;
        } else if (query.startsWith('*/', i)) {
          depth--;
          i += 2;
        } else {
          i++;
        }
      }
      if (depth > 0) return unterminated('comment');
    } else if (c === "'") {
      const previous = tokens.at(-1);
      // E'...' strings take backslash escapes: E'\'' is one quote, not the end of the string.
      const escapes = previous?.kind === 'word' && previous.value === 'e' && query[i - 1]?.toLowerCase() === 'e';
      if (escapes) tokens.pop();
      let j = i + 1;
      let closed = false;
      while (j < query.length) {
        if (escapes && query[j] === '\\') j += 2;
        else if (query[j] === "'" && query[j + 1] === "'") j += 2;
        else if (query[j] === "'") {
          closed = true;
          break;
        } else j++;
      }
      if (!closed) return unterminated('quoted string');
      tokens.push({ kind: 'string', value: query.slice(i, j + 1) });
      i = j + 1;
    } else if (c === '"') {
      let j = i + 1;
      let closed = false;
      while (j < query.length) {
        if (query[j] === '"' && query[j + 1] === '"') j += 2;
        else if (query[j] === '"') {
          closed = true;
          break;
        } else j++;
      }
      if (!closed) return unterminated('quoted identifier');
      tokens.push({ kind: 'quoted-identifier', value: query.slice(i + 1, j).replaceAll('""', '"') });
      i = j + 1;
    } else if (c === '$' && /^\$(?:[\p{L}_][\p{L}\p{N}_]*)?\$/u.test(query.slice(i))) {
      const tag = /^\$(?:[\p{L}_][\p{L}\p{N}_]*)?\$/u.exec(query.slice(i))![0];
      const end = query.indexOf(tag, i + tag.length);
      if (end === -1) return unterminated('dollar-quoted string');
      tokens.push({ kind: 'string', value: query.slice(i, end + tag.length) });
      i = end + tag.length;
    } else if (WORD_START.test(c)) {
      let j = i + 1;
      while (j < query.length && WORD_PART.test(query[j]!)) j++;
      tokens.push({ kind: 'word', value: query.slice(i, j).toLowerCase() });
      i = j;
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(next ?? ''))) {
      let j = i + 1;
      while (j < query.length && /[0-9a-zA-Z_.]/.test(query[j]!)) j++;
      tokens.push({ kind: 'number', value: query.slice(i, j) });
      i = j;
    } else if (c === ';') {
      finish(i);
      start = i + 1;
      i++;
    } else {
      tokens.push({ kind: 'symbol', value: c });
      i++;
    }
  }
  finish(query.length);
  return { statements };
}

/** The statements a read-only query may start with. */
const READ_ONLY_FIRST_WORDS = new Set(['select', 'show', 'explain', 'with', 'values', 'table']);

/**
 * Words that make any statement writing wherever they stand: data-modifying CTEs, SELECT INTO,
 * row locks (FOR UPDATE), EXPLAIN ANALYZE (which runs the statement), and statements EXPLAIN
 * can wrap.
 */
const WRITING_WORDS = new Set([
  'insert', 'update', 'delete', 'merge', 'into', 'create', 'drop', 'alter', 'truncate', 'grant', 'revoke', 'copy', 'call',
  'analyze', 'analyse', 'lock', 'execute', 'prepare', 'notify', 'listen', 'refresh', 'vacuum', 'cluster', 'reindex', 'import',
]);

/** Words that take a parenthesis as grammar or a type modifier, not as a function call. */
const GRAMMAR_BEFORE_PARENTHESIS = new Set([
  'select', 'from', 'where', 'and', 'or', 'not', 'in', 'exists', 'any', 'all', 'some', 'array', 'row', 'values', 'as', 'join',
  'lateral', 'on', 'using', 'over', 'filter', 'within', 'when', 'then', 'else', 'by', 'having', 'distinct', 'is', 'between',
  'like', 'ilike', 'to', 'case', 'union', 'intersect', 'except', 'limit', 'offset', 'group', 'order', 'partition',
  'cast', 'coalesce', 'nullif', 'greatest', 'least', 'extract', 'position', 'substring', 'trim', 'overlay', 'interval',
  'numeric', 'decimal', 'varchar', 'char', 'character', 'varying', 'bit', 'float', 'time', 'timestamp', 'explain',
]);

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
  'starts_with',
]);

function writingReason(statement: SqlStatement): string | undefined {
  const { tokens } = statement;
  const first = tokens[0]!;
  if (first.kind !== 'word' || !READ_ONLY_FIRST_WORDS.has(first.value)) {
    return `it is not a SELECT, SHOW, EXPLAIN or WITH ... SELECT statement`;
  }
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    const next = tokens[index + 1];
    if (token.kind === 'word' && WRITING_WORDS.has(token.value)) return `it contains \`${token.value.toUpperCase()}\``;
    if (token.kind === 'word' && token.value === 'share' && ['for', 'key'].includes(tokens[index - 1]?.value ?? '')) return 'it locks rows (`FOR SHARE`)';
    if (next?.kind !== 'symbol' || next.value !== '(') continue;
    if (token.kind === 'quoted-identifier') return `it calls \`"${token.value}"\`, which is not known to be read-only`;
    if (token.kind !== 'word' || GRAMMAR_BEFORE_PARENTHESIS.has(token.value)) continue;
    const schema = tokens[index - 1]?.value === '.' ? tokens[index - 2] : undefined;
    if (schema && !(schema.kind === 'word' && schema.value === 'pg_catalog')) {
      return `it calls \`${schema.value}.${token.value}\`, which is not known to be read-only`;
    }
    if (!READ_ONLY_FUNCTIONS.has(token.value)) return `it calls \`${token.value}\`, which is not known to be read-only`;
  }
  return undefined;
}

/**
 * A query is read-only when it is one statement starting with SELECT, SHOW, EXPLAIN, WITH, VALUES
 * or TABLE, with no writing word (INSERT, UPDATE, INTO, FOR UPDATE, ANALYZE, ...) and no call
 * to a function outside a list of known read-only ones. Everything else counts as writing.
 */
export function classifySql(query: string): SqlClassification {
  const reading = readSql(query);
  const writing = (reason: string): SqlClassification => ({ ...reading, readOnly: false, reason });
  if (reading.unterminated) return writing(`a ${reading.unterminated} is never closed`);
  if (reading.statements.length === 0) return writing('it holds no statement');
  if (reading.statements.length > 1) return writing('it holds more than one statement');
  const reason = writingReason(reading.statements[0]!);
  return reason ? writing(reason) : { ...reading, readOnly: true };
}
