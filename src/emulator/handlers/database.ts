import { badRequest, forbidden } from '../errors.js';
import type { PGlite, Results } from '@electric-sql/pglite';
import { modulesNamed, platformOnlyMessage } from '../extensions.js';
import { classifySql } from '../sql.js';
import { canWrite, created, ok, projectFor, type Handler } from './context.js';

/** A Postgres error as PGlite raises it. */
interface PostgresError {
  code?: string;
  message: string;
  position?: string;
  detail?: string;
  hint?: string;
}

function isPostgresError(error: unknown): error is PostgresError {
  return error instanceof Error && typeof (error as { code?: unknown }).code === 'string' && /^[0-9A-Z]{5}$/.test((error as unknown as { code: string }).code);
}

/**
 * The service's error for a failed statement, as psql prints it: `ERROR: <SQLSTATE>: <message>`,
 * then, when Postgres gives a position, the line of the query it is on and a caret under it
 * (`LINE 2: ...`), then DETAIL and HINT lines.
 */
export function describePostgresError(error: PostgresError, query: string): string {
  const lines = [`ERROR: ${error.code}: ${error.message}`];
  const position = Number(error.position);
  if (Number.isInteger(position) && position >= 1) {
    const before = [...query].slice(0, position - 1).join('');
    const lineNumber = before.split('\n').length;
    const column = [...before.slice(before.lastIndexOf('\n') + 1)].length;
    const prefix = `LINE ${lineNumber}: `;
    lines.push(`${prefix}${query.split('\n')[lineNumber - 1]}`, `${' '.repeat(prefix.length + column)}^`);
  }
  if (error.detail) lines.push(`DETAIL: ${error.detail}`);
  if (error.hint) lines.push(`HINT: ${error.hint}`);
  return lines.join('\n');
}

type Row = Record<string, unknown>;

/**
 * Runs a query on the project's database as the service does. Without `parameters` the text may
 * hold several statements (they run as one implicit transaction, the last one's rows answer);
 * with parameters, or in a read-only transaction, it is one statement. A read-only request runs
 * inside `BEGIN READ ONLY`, so Postgres itself refuses any write (SQLSTATE 25006).
 */
async function execute(db: PGlite, query: string, parameters: unknown[] | undefined, readOnly: boolean): Promise<Row[]> {
  const rowsOf = (result: Results | undefined): Row[] => (result?.rows ?? []) as Row[];
  try {
    if (!readOnly) {
      if (parameters !== undefined) return rowsOf(await db.query(query, parameters));
      return rowsOf((await db.exec(query)).at(-1));
    }
    await db.exec('BEGIN READ ONLY');
    try {
      return rowsOf(await db.query(query, parameters ?? []));
    } finally {
      await db.exec('ROLLBACK').catch(() => undefined);
    }
  } finally {
    // One session serves every request: nothing a request sets or leaves open reaches the next.
    if (db.isInTransaction()) await db.exec('ROLLBACK').catch(() => undefined);
    await db.exec('DISCARD ALL').catch(() => undefined);
  }
}

export const runQuery: Handler = async (context) => {
  const project = projectFor(context, { service: 'db' });
  if (project.status === 'INACTIVE') throw badRequest(`Project ${project.ref} is paused; restore it before running queries`);
  const { query, parameters, read_only } = context.body as { query: string; parameters?: unknown[]; read_only?: boolean };
  // The organization role is the service's own check, made before the database sees the query:
  // a Read-only member runs only a single statement that is evidently read-only.
  const writer = canWrite(context, project);
  if (!writer) {
    const sql = await classifySql(query);
    if (sql.unterminated) throw badRequest(`ERROR: 42601: unterminated ${sql.unterminated}`);
    if (sql.syntaxError) throw badRequest(`ERROR: 42601: ${sql.syntaxError}`);
    if (sql.statements === 0) throw badRequest('`query` holds no statement');
    if (!sql.readOnly) {
      throw forbidden(`Forbidden: your role in the organization (Read-only) can only run a single read-only statement (SELECT, SHOW, EXPLAIN or WITH ... SELECT); this query counts as writing: ${sql.reason}`);
    }
  }
  const readOnlyMode = project.readonly.enabled && !(project.readonly.overrideUntil !== null && project.readonly.overrideUntil > context.now);
  // The read_only flag, the read-only mode and a Read-only member's query: Postgres enforces all three.
  const readOnly = read_only === true || readOnlyMode || !writer;
  context.annotate?.({ sql: { readOnly } });
  try {
    const modules = readOnly ? [] : modulesNamed(query);
    const rows = await context.databases.use(project.ref, (db) => execute(db, query, parameters, readOnly), { wrote: !readOnly, modules });
    return created(rows);
  } catch (error) {
    if (!isPostgresError(error)) throw error;
    // One of the platform's extensions that the emulator lacks: say so, rather than "not installed on the system".
    const platformOnly = error.code === '0A000' ? platformOnlyMessage(error.message) : undefined;
    const message = describePostgresError(platformOnly ? { code: error.code, message: platformOnly, position: error.position } : error, query);
    if (readOnlyMode && error.code === '25006') throw badRequest(`${message}\nHINT: the database is in read-only mode; disable it temporarily to write`);
    throw badRequest(message);
  }
};

const TS_TYPES: Record<string, string> = {
  int2: 'number', int4: 'number', int8: 'number', float4: 'number', float8: 'number', numeric: 'number', oid: 'number',
  bool: 'boolean', json: 'Json', jsonb: 'Json',
};

function tsType(udt: string): string {
  if (udt.startsWith('_')) return `${tsType(udt.slice(1))}[]`;
  return TS_TYPES[udt] ?? 'string';
}

/** The tables and views of the schemas, with their columns, read from the project's own catalog. */
async function catalog(db: PGlite, schemas: string[]): Promise<Array<{ schema: string; name: string; view: boolean; columns: Array<{ name: string; udt: string; nullable: boolean }> }>> {
  const { rows } = await db.query<{ table_schema: string; table_name: string; table_type: string; columns: Array<{ name: string; udt: string; nullable: boolean }> }>(
    `select t.table_schema, t.table_name, t.table_type,
            coalesce(json_agg(json_build_object('name', c.column_name, 'udt', c.udt_name, 'nullable', c.is_nullable = 'YES') order by c.ordinal_position) filter (where c.column_name is not null), '[]') as columns
       from information_schema.tables t
       left join information_schema.columns c on c.table_schema = t.table_schema and c.table_name = t.table_name
      where t.table_schema = any($1::text[])
      group by t.table_schema, t.table_name, t.table_type
      order by t.table_schema, t.table_name`,
    [schemas],
  );
  return rows.map((row) => ({ schema: row.table_schema, name: row.table_name, view: row.table_type === 'VIEW', columns: row.columns }));
}

export const generateTypes: Handler = async (context) => {
  const project = projectFor(context, { service: 'db' });
  const schemas = ((context.query.included_schemas as string | undefined) ?? 'public').split(',').map((s) => s.trim()).filter(Boolean);
  // A project that has never received a query has the template's empty schemas: no database is made for it here.
  const tables = context.databases.has(project.ref) ? await context.databases.use(project.ref, (db) => catalog(db, schemas), { wrote: false }) : [];
  const none = '{ [_ in never]: never }';
  const relations = (schema: string, view: boolean) => {
    const own = tables.filter((t) => t.schema === schema && t.view === view);
    if (own.length === 0) return none;
    const body = own
      .map((t) => `      ${JSON.stringify(t.name)}: {\n        Row: {\n${t.columns.map((c) => `          ${JSON.stringify(c.name)}: ${tsType(c.udt)}${c.nullable ? ' | null' : ''}`).join('\n')}\n        }\n      }`)
      .join('\n');
    return `{\n${body}\n    }`;
  };
  const body = schemas
    .map((schema) => `  ${JSON.stringify(schema)}: {\n    Tables: ${relations(schema, false)}\n    Views: ${relations(schema, true)}\n    Functions: ${none}\n    Enums: ${none}\n    CompositeTypes: ${none}\n  }`)
    .join('\n');
  const types = `export type Json = string | number | boolean | null | { [key: string]: Json | undefined } | Json[]\n\nexport type Database = {\n${body}\n}\n`;
  return ok({ types });
};

export const enableWebhooks: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  project.webhooksEnabled = true;
  return created({});
};
