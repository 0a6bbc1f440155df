import { badRequest } from '../errors.js';
import { created, ok, projectFor, type Handler } from './context.js';

const WRITE_STATEMENT = /^\s*(insert|update|delete|create|alter|drop|truncate|grant|revoke|comment|vacuum|reindex|cluster|refresh|copy|do|call)\b/i;
const KNOWN_STATEMENT = /^\s*(select|with|show|explain|values|begin|commit|rollback|set|insert|update|delete|create|alter|drop|truncate|grant|revoke|comment|vacuum|reindex|cluster|refresh|copy|do|call)\b/i;

/**
 * There is no database behind the emulator: a query is checked (one known statement keyword,
 * balanced quotes, read-only rules) and answers rows only for a few constant selects.
 */
function evaluate(query: string, now: number, version: string): Array<Record<string, unknown>> {
  const statements = query.split(';').map((s) => s.trim()).filter(Boolean);
  if (statements.length === 0) throw badRequest('`query` holds no statement');
  let rows: Array<Record<string, unknown>> = [];
  for (const statement of statements) {
    if (!KNOWN_STATEMENT.test(statement)) throw badRequest(`ERROR: 42601: syntax error at or near "${statement.split(/\s+/)[0]}"`);
    if ((statement.match(/'/g) ?? []).length % 2 !== 0) throw badRequest('ERROR: 42601: unterminated quoted string');
    const constant = /^select\s+(-?\d+(?:\.\d+)?|'[^']*'|true|false|now\(\)|version\(\))(?:\s+as\s+("?)(\w+)\2)?$/i.exec(statement);
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
  const readOnlyMode = project.readonly.enabled && !(project.readonly.overrideUntil !== null && project.readonly.overrideUntil > context.now);
  const writes = query.split(';').some((s) => WRITE_STATEMENT.test(s));
  if (writes && read_only) throw badRequest('ERROR: 25006: cannot execute a write statement in a read-only transaction');
  if (writes && readOnlyMode) throw badRequest('ERROR: 25006: the database is in read-only mode; disable it temporarily to write');
  return created(evaluate(query, context.now, project.database.version));
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
