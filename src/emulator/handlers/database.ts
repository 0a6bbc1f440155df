import { badRequest, forbidden } from '../errors.js';
import { classifySql, type SqlStatement } from '../sql.js';
import { canWrite, created, ok, projectFor, type Handler } from './context.js';

const KNOWN_STATEMENT = new Set([
  'select', 'with', 'show', 'explain', 'values', 'table', 'begin', 'commit', 'rollback', 'set', 'insert', 'update', 'delete', 'merge',
  'create', 'alter', 'drop', 'truncate', 'grant', 'revoke', 'comment', 'vacuum', 'reindex', 'cluster', 'refresh', 'copy', 'do', 'call',
]);

/**
 * There is no database behind the emulator: a query is checked (one known statement keyword
 * each, closed quotes and comments, read-only rules) and answers rows only for a few constant selects.
 */
function evaluate(statements: SqlStatement[], now: number, version: string): Array<Record<string, unknown>> {
  let rows: Array<Record<string, unknown>> = [];
  for (const statement of statements) {
    const first = statement.tokens[0]!;
    if (first.kind !== 'word' || !KNOWN_STATEMENT.has(first.value)) throw badRequest(`ERROR: 42601: syntax error at or near "${statement.text.split(/\s+/)[0]}"`);
    const constant = /^select\s+(-?\d+(?:\.\d+)?|'[^']*'|true|false|now\(\)|version\(\))(?:\s+as\s+("?)(\w+)\2)?$/i.exec(statement.text);
    if (constant) {
      const expression = constant[1]!;
      const name = constant[3] ?? (/^now/i.test(expression) ? 'now' : /^version/i.test(expression) ? 'version' : '?column?');
      let value: unknown;
      if (/^now\(\)$/i.test(expression)) value = new Date(now).toISOString();
      else if (/^version\(\)$/i.test(expression)) value = `PostgreSQL ${version.split('.').slice(0, 2).join('.')}`;
      else if (/^(true|false)$/i.test(expression)) value = expression.toLowerCase() === 'true';
      else if (expression.startsWith("'")) value = expression.slice(1, -1);
      else value = Number(expression);
      rows = [{ [name]: value }];
    } else {
      rows = [];
    }
  }
  return rows;
}

export const runQuery: Handler = (context) => {
  const project = projectFor(context, { service: 'db' });
  if (project.status === 'INACTIVE') throw badRequest(`Project ${project.ref} is paused; restore it before running queries`);
  const { query, read_only } = context.body as { query: string; read_only?: boolean };
  // One meaning of "writing" for the role, the `read_only` flag and the database's read-only mode.
  const sql = classifySql(query);
  if (sql.unterminated) throw badRequest(`ERROR: 42601: unterminated ${sql.unterminated}`);
  if (sql.statements.length === 0) throw badRequest('`query` holds no statement');
  if (!sql.readOnly && !canWrite(context, project)) {
    throw forbidden(`Forbidden: your role in the organization (Read-only) can only run a single read-only statement (SELECT, SHOW, EXPLAIN or WITH ... SELECT); this query counts as writing: ${sql.reason}`);
  }
  const readOnlyMode = project.readonly.enabled && !(project.readonly.overrideUntil !== null && project.readonly.overrideUntil > context.now);
  if (!sql.readOnly && read_only) throw badRequest(`ERROR: 25006: cannot execute a write statement in a read-only transaction (${sql.reason})`);
  if (!sql.readOnly && readOnlyMode) throw badRequest('ERROR: 25006: the database is in read-only mode; disable it temporarily to write');
  return created(evaluate(sql.statements, context.now, project.database.version));
};
export const generateTypes: Handler = (context) => {
  projectFor(context, { service: 'db' });
  const schemas = ((context.query.included_schemas as string | undefined) ?? 'public').split(',').map((s) => s.trim()).filter(Boolean);
  const body = schemas
    .map((schema) => `  ${JSON.stringify(schema)}: {\n    Tables: { [_ in never]: never }\n    Views: { [_ in never]: never }\n    Functions: { [_ in never]: never }\n    Enums: { [_ in never]: never }\n    CompositeTypes: { [_ in never]: never }\n  }`)
    .join('\n');
  const types = `export type Json = string | number | boolean | null | { [key: string]: Json | undefined } | Json[]\n\nexport type Database = {\n${body}\n}\n`;
  return ok({ types });
};

export const enableWebhooks: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  project.webhooksEnabled = true;
  return created({});
};
