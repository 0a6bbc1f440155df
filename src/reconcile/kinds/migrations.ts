// `Migrations`: ordered SQL files applied to the database of one project or of every project a
// selector matches, through `POST /v1/projects/{ref}/database/query`. The history is a table in
// each database (version, name, statements: the layout of the platform CLI's
// `supabase_migrations.schema_migrations`). One read of it per project and pass (read-only);
// one request per pending migration, which runs its statements, a guard that the version is not
// yet recorded and the history insert in one transaction under an advisory lock. Forward-only:
// an applied file that changed is blocked (drift, both digests), never re-run.
import { relative, resolve, sep } from 'node:path';
import { InvalidRequestError } from '../../api/errors.js';
import { CheckoutFiles } from '../../manifests/checkout-files.js';
import { compareVersions, loadedMigrations, migrationDigest, readMigrations, registerLoadedMigrations, sameMigration, type MigrationFile, type MigrationSet } from '../../manifests/migrations.js';
import { endsInLineComment, normalizeSql } from '../../manifests/sql-lexer.js';
import { POLICY, PROJECT_REFERENCE, type JsonSchema } from '../../manifests/schema-source.js';
import { API_VERSION, type AnyDocument, type MigrationsDocument, type ProjectDocument } from '../../manifests/types.js';
import { makeEntry } from '../diff.js';
import { textOf, type KindCheck, type LoadRead } from '../../manifests/load-facets.js';
import { didYouMean } from '../../manifests/suggest.js';
import type { KindContext, KindModule, PlanEntry, ProjectScope } from '../types.js';
import { migrationsFor, selectorMatches } from './migrations-index.js';
import { migrationsMetrics, migrationsRender, migrationsStatus } from './migrations-report.js';
import { checkoutRootOf, DocumentGoneError, isObserveOnly, projectDependency, refAtApply, sha256Hex, sourceOf } from './common.js';

/** The SQLSTATE the guard raises when the version is already recorded (another applier was first). */
export const ALREADY_RECORDED = 'RCM01';

/** A row of the history table. */
export interface HistoryRow {
  version: string;
  name: string | null;
  statements: string[] | null;
}

/** The history table of the Migrations kind when a document does not name one. */
export const DEFAULT_MIGRATIONS_TABLE = 'reconciler.schema_migrations';

/**
 * A failed migration backs off: scheduled drift re-checks try it again after 10 minutes (the
 * default drift interval), then 20, 40, then every hour. A new revision of the file, `reconcile
 * trigger` and every pass that is not a scheduled re-check try it at once.
 */
export const RETRY_FIRST_MS = 10 * 60_000;
export const RETRY_MAX_MS = 60 * 60_000;

/** The failures of one file of one document, in a project: which revision of it, how often, when to try again. */
export interface MigrationRetry {
  digest: string;
  failures: number;
  /** ms since epoch of the last failure, and of the next attempt a scheduled re-check makes. */
  failedAt: number;
  nextAttemptAt: number;
  error: string;
}

export function retryDelay(failures: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.max(0, Math.min(failures - 1, 16)));
}

function retryKey(project: string): string {
  return `migration-retries/${project.replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

function retryName(doc: string, version: string): string {
  return `${doc}/${version}`;
}

async function readRetries(ctx: Pick<KindContext, 'state'>, project: string): Promise<Record<string, MigrationRetry>> {
  return (await ctx.state.get<Record<string, MigrationRetry>>(retryKey(project))) ?? {};
}

/** Records a failure (or, with `error` undefined, a success) of a file in the project's retry record. */
async function noteAttempt(ctx: KindContext, project: string, doc: string, file: MigrationFile, error?: string): Promise<MigrationRetry | undefined> {
  const retries = await readRetries(ctx, project);
  const name = retryName(doc, file.version);
  if (error === undefined) {
    if (!(name in retries)) return undefined;
    delete retries[name];
    await ctx.state.set(retryKey(project), retries);
    return undefined;
  }
  const now = ctx.clock.now();
  const before = retries[name];
  const failures = before && before.digest === file.digest ? before.failures + 1 : 1;
  const retry = { digest: file.digest, failures, failedAt: now, nextAttemptAt: now + retryDelay(failures), error };
  retries[name] = retry;
  await ctx.state.set(retryKey(project), retries);
  return retry;
}

function migrationsDefs(): Record<string, JsonSchema> {
  return {
    MigrationsSpec: {
      title: 'MigrationsSpec',
      description: 'Ordered SQL migration files applied to one project or to every project a selector matches.',
      type: 'object',
      properties: {
        project: { ...PROJECT_REFERENCE, description: 'metadata.name of the one Project document the migrations apply to (or give `selector`).' },
        selector: {
          description: 'Every Project document that matches (all the labels given, and the organization when given); the same selector as the shard map. Give `project` or `selector`, not both.',
          $ref: '#/$defs/ProjectSelector',
        },
        path: {
          type: 'string',
          minLength: 1,
          description: 'Directory of the migration files, relative to this file and inside the manifests directory: `<version>_<name>.sql`, applied in version order (the version is digits, for example a timestamp).',
        },
        table: {
          type: 'string',
          pattern: '^[a-z_][a-z0-9_]*\\.[a-z_][a-z0-9_]*$',
          default: DEFAULT_MIGRATIONS_TABLE,
          description: 'The history table in each database, `schema.table`, with the columns version, name and statements (the layout of the platform CLI\'s `supabase_migrations.schema_migrations`, which can be named here to adopt a project migrated with the CLI). Created when missing.',
        },
        outOfOrder: {
          type: 'boolean',
          default: false,
          description: 'Apply a pending file whose version is older than the latest applied one (refused by default).',
        },
        policy: POLICY,
      },
      required: ['path'],
      additionalProperties: false,
    },
    ProjectSelector: {
      title: 'ProjectSelector',
      description: 'Selects Project documents by their labels and organization.',
      type: 'object',
      properties: {
        labels: {
          type: 'object',
          additionalProperties: { type: 'string' },
          minProperties: 1,
          description: 'Labels (metadata.labels) a project must all have, with these values.',
        },
        organization: { type: 'string', minLength: 1, description: 'metadata.name of the Organization the project must be in.' },
      },
      minProperties: 1,
      additionalProperties: false,
    },
  };
}

/** The Migrations documents that apply to a project: naming it, or with a selector that matches it (through an index of the set). */
export function migrationsOf(project: { name: string; document: ProjectDocument }, documents: readonly AnyDocument[]): MigrationsDocument[] {
  return migrationsFor(project, documents);
}

/** The Project manifest names a Migrations document names or selects, suspended or not. */
function selectedProjects(doc: MigrationsDocument, documents: readonly AnyDocument[]): string[] {
  return documents
    .filter((d): d is ProjectDocument => d.kind === 'Project')
    .filter((project) => (doc.spec.project !== undefined ? doc.spec.project === project.metadata.name : doc.spec.selector !== undefined && selectorMatches(doc.spec.selector, project)))
    .map((project) => project.metadata.name);
}

/** Path of a directory a document names, relative to the checkout's root, ending in `/`. */
function directoryOf(doc: AnyDocument, path: string, root: string): string {
  return `${relative(root, resolve(doc.source.dir, path)).split(sep).join('/')}/`;
}

export function tableOf(doc: MigrationsDocument): string {
  return doc.spec.table ?? DEFAULT_MIGRATIONS_TABLE;
}

/**
 * The files of each document: those its revision read when it was loaded, else read once per
 * pass through the checkout's walker (shared through the pass's memory, `ctx.pass`).
 */
export function migrationFiles(doc: MigrationsDocument, ctx: Pick<KindContext, 'pass'>): Promise<MigrationSet> {
  const files = ctx.pass.shared('migrations:files', () => new Map<MigrationsDocument, Promise<MigrationSet>>());
  let set = files.get(doc);
  if (!set) {
    const where = { file: doc.source.file, line: doc.source.line, column: doc.source.column, path: '/spec/path' };
    const loaded = loadedMigrations(doc);
    set = loaded ? Promise.resolve(loaded) : CheckoutFiles.at(checkoutRootOf(doc)).then((checkout) => readMigrations(checkout, doc.source.dir, doc.spec.path, where));
    files.set(doc, set);
  }
  return set;
}

function options(ctx: KindContext) {
  return ctx.signal ? { signal: ctx.signal } : {};
}

/** One read of the history (a read-only query); a table that does not exist yet is an empty history. */
export async function readHistory(api: KindContext['api'], ref: string, table: string, signal?: AbortSignal): Promise<HistoryRow[]> {
  try {
    const rows = (await api.runAQuery(
      ref,
      { query: `select version, name, statements from ${table} order by version`, read_only: true },
      signal ? { signal } : {},
    )) as unknown as HistoryRow[];
    return rows.map((row) => ({ version: String(row.version), name: row.name ?? null, statements: Array.isArray(row.statements) ? row.statements.map(String) : null }));
  } catch (error) {
    if (error instanceof InvalidRequestError && /^ERROR: (42P01|3F000):/.test(error.serviceMessage ?? '')) return [];
    throw error;
  }
}

/** What a saved plan holds of the history it was planned against. */
export function historyDigest(rows: readonly HistoryRow[]): string {
  return sha256Hex(JSON.stringify(rows.map((row) => [row.version, row.name, row.statements ? migrationDigest(row.statements) : null])));
}

function entryName(doc: MigrationsDocument, version: string, name: string | null): string {
  return `${doc.metadata.name}/${version}_${name ?? ''}`;
}

/** Exactly one of a project or a selector, and a selector's organization exists. */
const checkMigrations: KindCheck = (entries, check) => {
  for (const entry of entries) {
    const selector = entry.spec.selector as { organization?: unknown } | undefined;
    if ((textOf(entry.spec.project) === undefined) === (selector === undefined)) {
      check.error(entry, '/spec', 'give exactly one of `project` (one project) or `selector` (every project it matches)');
    }
    const organization = textOf(selector?.organization);
    if (organization !== undefined && !check.organizationNames.has(organization)) {
      check.error(entry, '/spec/selector/organization', `unknown organization \`${organization}\`: no Organization document has this name`, didYouMean(organization, check.organizationNames));
    }
  }
};

/**
 * Every migration file of a document parses (Postgres's own parser), located in the SQL file;
 * the pass applies the files this revision read, not a later state of the directory.
 */
const readMigrationFiles: LoadRead = async (document, { checkout, at }) => {
  const doc = document as MigrationsDocument;
  const migrations = await readMigrations(checkout, doc.source.dir, doc.spec.path, at('/spec/path'));
  if (migrations.errors.length === 0) registerLoadedMigrations(doc, migrations);
  return migrations.errors;
};

export const migrationsKind: KindModule<'Migration'> = {
  kind: 'Migration',
  document: {
    kind: 'Migrations',
    description: 'Ordered SQL migrations of the database of one project or of every project a selector matches.',
    defs: migrationsDefs,
  },
  checks: checkMigrations,
  // Its SQL files, read and recorded by the loader; a new or changed file concerns every project the document selects.
  files: {
    readAt: 'load',
    read: readMigrationFiles,
    reads: (doc, root) => [directoryOf(doc, (doc as MigrationsDocument).spec.path, root)],
    affects: (doc, documents) => selectedProjects(doc as MigrationsDocument, documents),
  },
  // Pending and applied migrations by project, the schema version each project is left at, the SQL of a pending file.
  metrics: migrationsMetrics,
  status: migrationsStatus,
  render: migrationsRender,
  manages(project, ctx) {
    return migrationsOf(project, ctx.documents).length > 0;
  },
  async plan(project, ctx) {
    const docs = migrationsOf(project, ctx.documents);
    const planned: PlanEntry[] = [];
    const byTable = new Map<string, MigrationsDocument>();
    for (const doc of docs) {
      const table = tableOf(doc);
      const first = byTable.get(table);
      if (first) {
        planned.push(
          makeEntry({ kind: 'Migration', project: project.name, name: `${doc.metadata.name}/*`, changes: [], action: 'blocked', source: sourceOf(doc),
            reason: `Migrations \`${first.metadata.name}\` already keeps its history in ${table} for this project: give this document a table of its own` }),
        );
        continue;
      }
      byTable.set(table, doc);
      planned.push(...(await planDocument(doc, project, ctx)));
    }
    return planned;
  },
  async apply(entry, project, ctx) {
    const target = entry.target as { document: string; table: string; version: string; name: string; digest: string } | undefined;
    if (!target) throw new Error(`${entry.id} has no target: it cannot be applied`);
    const doc = migrationsOf(project, ctx.documents).find((d) => d.metadata.name === target.document);
    if (!doc) throw new DocumentGoneError('Migrations', target.document, project.name);
    const set = await migrationFiles(doc, ctx);
    const file = set.files.find((f) => f.version === target.version);
    if (!file || file.digest !== target.digest) throw new Error(`${file?.file ?? `migration ${target.version}`} changed since the plan was made: plan again`);
    const ref = refAtApply(project, ctx);
    const send = (query: string) => ctx.api.runAQuery(ref, { query }, { priority: 'write', ...options(ctx) });
    try {
      if (file.noTransaction) {
        // Outside a transaction: each statement is a request of its own, then the guarded history insert.
        for (const statement of file.run) await send(statement);
        await send(recordQuery(target.table, file, []));
      } else {
        await send(recordQuery(target.table, file, file.run));
      }
      ctx.log.info({ project: project.name, migration: file.file, version: file.version }, 'migration applied');
    } catch (error) {
      if (error instanceof InvalidRequestError && (error.serviceMessage ?? '').startsWith(`ERROR: ${ALREADY_RECORDED}:`)) {
        // Another applier (or this one, before a lost answer) recorded it first: applied once, not again.
        ctx.log.info({ project: project.name, migration: file.file, version: file.version }, 'migration already recorded: not applied again');
        await noteAttempt(ctx, project.name, doc.metadata.name, file);
        return;
      }
      const failed = new MigrationFailedError(file, error);
      // Only what the database answered backs off: a request that never reached it is retried as any write is.
      if (error instanceof InvalidRequestError) {
        const retry = await noteAttempt(ctx, project.name, doc.metadata.name, file, failed.message);
        if (retry) ctx.log.warn({ project: project.name, migration: file.file, failures: retry.failures, nextAttemptAt: new Date(retry.nextAttemptAt).toISOString() }, 'migration failed: scheduled re-checks back off');
      }
      throw failed;
    }
    await noteAttempt(ctx, project.name, doc.metadata.name, file);
  },
  async exportDocuments({ api, ref, name, read }) {
    const rows = await read(() => readHistory(api, ref, DEFAULT_MIGRATIONS_TABLE), 'migrations history');
    const recorded = (rows ?? []).filter((row) => Array.isArray(row.statements) && row.statements.length > 0);
    if (recorded.length === 0) return { documents: [] };
    const path = `migrations/${name.replace(/[^A-Za-z0-9._-]+/g, '-')}`;
    return {
      documents: [{ apiVersion: API_VERSION, kind: 'Migrations', metadata: { name: `${name}-schema` }, spec: { project: name, path } }],
      files: recorded.map((row) => ({
        path: `${path}/${row.version}_${(row.name ?? 'migration').replace(/[^A-Za-z0-9_.-]/g, '_')}.sql`,
        content: new TextEncoder().encode(`${row.statements!.map(terminated).join('\n\n')}\n`),
      })),
    };
  },
};

/** The plan of one document for one project: one entry per file, and one per recorded migration without a file. */
async function planDocument(doc: MigrationsDocument, project: ProjectScope, ctx: KindContext): Promise<PlanEntry[]> {
  const set = await migrationFiles(doc, ctx);
  if (set.errors.length > 0) throw new Error(set.errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`).join('; '));
  const table = tableOf(doc);
  const observeOnly = isObserveOnly(doc);
  const history = project.ref ? await readHistory(ctx.api, project.ref, table, ctx.signal) : [];
  const recorded = new Map(history.map((row) => [row.version, row]));
  const latest = history.reduce<string | undefined>((max, row) => (max === undefined || compareVersions(row.version, max) > 0 ? row.version : max), undefined);
  const base = { kind: 'Migration' as const, project: project.name, source: sourceOf(doc), ...(observeOnly ? { observeOnly } : {}) };
  const against = historyDigest(history);
  const retries = await readRetries(ctx, project.name);
  const applied = latest === undefined ? {} : { latest };
  const planned: PlanEntry[] = [];
  let previous: string | undefined;
  for (const file of set.files) {
    const name = entryName(doc, file.version, file.name);
    const row = recorded.get(file.version);
    const target = { document: doc.metadata.name, table, version: file.version, name: file.name, file: file.file, digest: file.digest, history: against, ...applied };
    if (row) {
      if (row.statements === null || row.statements.length === 0) {
        planned.push(makeEntry({ ...base, name, changes: [], target, reason: `applied (recorded in ${table} without statements: the file is not compared)` }));
        continue;
      }
      const recordedDigest = migrationDigest(row.statements);
      if (!sameMigration(row.statements, file)) {
        planned.push(makeEntry({ ...base, name, action: 'blocked', target,
          changes: [{ path: 'digest', before: recordedDigest, after: file.digest }],
          reason: `${file.file} changed after it was applied (recorded digest ${recordedDigest.slice(0, 12)}, file digest ${file.digest.slice(0, 12)}): an applied migration is never run again; restore the file and add a new migration` }));
        continue;
      }
      planned.push(makeEntry({ ...base, name, changes: [], target }));
      continue;
    }
    const retry = retries[retryName(doc.metadata.name, file.version)];
    if (retry && retry.digest === file.digest && ctx.pass.scheduled && ctx.clock.now() < retry.nextAttemptAt) {
      // Failed before, unchanged since, and this is a scheduled re-check: not again before its time.
      const entry = makeEntry({ ...base, name, action: 'blocked', changes: [{ path: 'version', after: file.version }],
        dependsOn: [...projectDependency(project), ...(previous ? [previous] : [])],
        target: { ...target, failures: retry.failures, nextAttemptAt: retry.nextAttemptAt },
        reason: `${file.file} failed ${retry.failures === 1 ? 'once' : `${retry.failures} times`} (${retry.error}); next attempt at ${new Date(retry.nextAttemptAt).toISOString()} (a failed migration backs off on drift re-checks: 10 min, doubling up to 1 h); a new revision of the file or \`reconcile trigger\` tries it at once` });
      planned.push(entry);
      previous = entry.id;
      continue;
    }
    if (latest !== undefined && compareVersions(file.version, latest) < 0 && doc.spec.outOfOrder !== true) {
      planned.push(makeEntry({ ...base, name, action: 'blocked', target, changes: [{ path: 'version', after: file.version }],
        reason: `${file.file} is older than the latest applied version ${latest}: set outOfOrder: true to apply it anyway` }));
      continue;
    }
    const entry = makeEntry({
      ...base,
      name,
      action: 'create',
      changes: [
        { path: 'version', after: file.version },
        { path: 'digest', after: file.digest },
        { path: 'statements', after: file.run.length },
        ...(file.noTransaction ? [{ path: 'transaction', after: false }] : []),
      ],
      reason: `pending: ${file.file}`,
      // Each migration waits for the one before it: a failed one stops the rest of the project's.
      dependsOn: [...projectDependency(project), ...(previous ? [previous] : [])],
      target: { ...target, statements: file.run.length, sql: file.run.map((statement) => `${statement};`).join('\n\n') },
    });
    // A file marked disruptive waits for a rollout's maintenance window (docs/rollouts.md).
    if (file.disruptive) entry.changeClasses = ['disruptive-migration'];
    planned.push(entry);
    previous = entry.id;
  }
  const files = new Set(set.files.map((f) => f.version));
  for (const row of history) {
    if (files.has(row.version)) continue;
    ctx.log.warn({ project: project.name, table, version: row.version }, 'a recorded migration has no file');
    planned.push(makeEntry({ ...base, name: entryName(doc, row.version, row.name), changes: [], target: { document: doc.metadata.name, table, version: row.version, history: against, ...applied },
      reason: `recorded in ${table}, but no file in ${doc.spec.path} has version ${row.version}` }));
  }
  return planned;
}

/** A SQL string literal, whatever a file set standard_conforming_strings to (E'...' when it holds a backslash). */
function literal(text: string): string {
  const quoted = text.replaceAll("'", "''");
  return text.includes('\\') ? `E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/**
 * A recorded statement written back as a file's text: its `;`, after a line break when it ends
 * in a line comment (the CLI splits the text back into the same statements).
 */
function terminated(statement: string): string {
  if (normalizeSql(statement) === '') return statement;
  return endsInLineComment(statement) ? `${statement}\n;` : `${statement.replace(/;\s*$/, '')};`;
}

/**
 * The one request of a migration, built from whole statements (each ends at its last token, so
 * the `;` after it is never inside a comment): the session's settings reset as the CLI does
 * before each migration (`RESET ALL`: a file's `SET` does not reach the next one); then, in one
 * transaction, under an advisory lock on the history table, create the table when missing,
 * refuse (SQLSTATE RCM01) when the version is recorded already, run the statements, record the
 * migration with the statements as the CLI records them. Any error rolls all of it back.
 */
export function recordQuery(table: string, file: MigrationFile, statements: readonly string[]): string {
  const [schema] = table.split('.');
  return [
    'RESET ALL',
    'BEGIN',
    `SELECT pg_advisory_xact_lock(hashtext(${literal(table)}))`,
    `CREATE SCHEMA IF NOT EXISTS ${schema}`,
    `CREATE TABLE IF NOT EXISTS ${table} (version text NOT NULL PRIMARY KEY, statements text[], name text)`,
    `DO $reconcile$ BEGIN IF EXISTS (SELECT 1 FROM ${table} WHERE version = ${literal(file.version)}) THEN RAISE EXCEPTION USING ERRCODE = '${ALREADY_RECORDED}', MESSAGE = ${literal(`migration ${file.version} is already recorded in ${table}`)}; END IF; END $reconcile$`,
    ...statements,
    `INSERT INTO ${table} (version, name, statements) VALUES (${literal(file.version)}, ${literal(file.name)}, ARRAY[${file.statements.map(literal).join(', ')}]::text[])`,
    'COMMIT',
  ].map((statement) => `${statement};`).join('\n');
}

/** A migration the database refused: names the file and the Postgres error. */
export class MigrationFailedError extends Error {
  readonly file: string;
  constructor(file: MigrationFile, cause: unknown) {
    const message = cause instanceof InvalidRequestError && cause.serviceMessage ? cause.serviceMessage.split('\n')[0]! : (cause as Error).message;
    super(`${file.file}: ${message}; nothing of it was applied${file.noTransaction ? ' (except the statements before the failing one: the file runs without a transaction)' : ''}`, { cause });
    this.name = 'MigrationFailedError';
    this.file = file.file;
  }
}
