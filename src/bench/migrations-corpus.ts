// Bench scenario over a corpus of migration directories (`npm run bench -- --only migrations
// --corpus DIR`; the full bench runs it over test/fixtures/migrations-corpus): each folder of DIR
// (or DIR itself when it holds .sql files) is the migrations directory of one project on the
// emulator. Each goes through validate, an apply, a no-change plan, and the adoption of the history
// the platform CLI would have written: before the apply, the CLI's rows (its statements, split its
// way) are written to `supabase_migrations.schema_migrations`, and a second Migrations document over
// the same files and that table must plan no change. Nothing of DIR is copied anywhere but a
// temporary directory.
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { DEFAULT_DURATIONS, startEmulator } from '../emulator/index.js';
import { createClient } from '../api/client.js';
import { staticToken } from '../api/auth.js';
import { loadManifests } from '../reconcile/load-manifests.js';
import { cliSplit } from '../manifests/sql-split.js';
import { runPass } from '../reconcile/engine.js';
import { silentLogger } from '../util/logger.js';
import type { PassResult } from '../reconcile/types.js';

const QUERY_ROUTE = '/v1/projects/{ref}/database/query';
const CLI_FILE = /^([0-9]+)_([^\n]*)\.sql$/;
const CLI_TABLE = 'supabase_migrations.schema_migrations';

export interface CorpusFolder {
  folder: string;
  files: number;
  /** Errors of validate (file:line:column message). */
  invalid: string[];
  applied: number;
  /** The first failure of the apply (the later files of the folder wait behind it). */
  failure?: string;
  /** The plan after the apply holds no change for the folder. */
  converged: boolean;
  /** Files whose CLI-written history row plans no change / files with such a row. */
  adopted: number;
  adoptable: number;
  writingQueries: number;
}

export interface CorpusFigures {
  folders: CorpusFolder[];
  files: number;
  applied: number;
  converged: number;
  adopted: number;
  adoptable: number;
  /** Writing requests per migration applied, over the folders that applied without a failure (undefined: none did). */
  writingQueriesPerMigration: number | undefined;
}

/** The folders of a corpus: DIR's subdirectories that hold .sql files, or DIR itself. */
async function corpusFolders(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  if (entries.some((e) => e.isFile() && e.name.endsWith('.sql'))) return [dir];
  const folders: string[] = [];
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const inside = await readdir(join(dir, entry.name));
    if (inside.some((name) => name.endsWith('.sql'))) folders.push(join(dir, entry.name));
  }
  return folders;
}

const literal = (text: string) => (text.includes('\\') ? `E'${text.replaceAll("'", "''").replaceAll('\\', '\\\\')}'` : `'${text.replaceAll("'", "''")}'`);

/** The insert the platform CLI's `db push` makes for each file of a folder (its rows only). */
async function cliHistoryQuery(folder: string): Promise<{ query: string; rows: number }> {
  const names = (await readdir(folder)).filter((name) => CLI_FILE.test(name)).sort();
  const rows: string[] = [];
  for (const name of names) {
    const [, version, migration] = CLI_FILE.exec(name) as unknown as [string, string, string];
    const statements = cliSplit(await readFile(join(folder, name), 'utf8')).map((s) => literal(s.text));
    rows.push(`(${literal(version)}, ${literal(migration)}, ARRAY[${statements.join(', ')}]::text[])`);
  }
  const create = `create schema if not exists supabase_migrations; create table if not exists ${CLI_TABLE} (version text not null primary key, statements text[], name text)`;
  return { query: rows.length ? `${create}; insert into ${CLI_TABLE} (version, name, statements) values ${rows.join(', ')}` : create, rows: rows.length };
}

export async function benchMigrationCorpus(dir: string): Promise<CorpusFigures> {
  const folders = await corpusFolders(resolve(dir));
  if (folders.length === 0) throw new Error(`${dir}: no folder of .sql files`);
  const emulator = await startEmulator({ port: 0, rateLimit: { limit: 100_000, windowMs: 1000 }, openDatabases: Math.min(4, folders.length) });
  const root = await mkdtemp(join(tmpdir(), 'bench-corpus-'));
  const stateDir = join(root, '.state');
  const manifestsDir = join(root, 'manifests');
  const client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 50_000, windowMs: 1000 }, stateDir });
  try {
    const api = client.api;
    const org = (await api.listAllOrganizations())[0]?.id ?? (await api.createAnOrganization({ name: 'corpus' })).id;
    const results: CorpusFolder[] = [];
    const docs: string[] = [`apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: corpus\nspec:\n  slug: ${org}\n`];
    const refs: string[] = [];
    for (const [i, folder] of folders.entries()) {
      const name = `corpus-${i}`;
      const created = await api.createAProject({ name, organization_id: org, region: 'eu-west-1', db_pass: `corpus-db-pass-${i}-longer` } as Parameters<typeof api.createAProject>[0]);
      refs.push(created.ref ?? created.id);
      emulator.advanceClock(DEFAULT_DURATIONS.projectCreate + DEFAULT_DURATIONS.servicesHealthy + 1);
      const path = `migrations/${i}-${basename(folder).replace(/[^A-Za-z0-9._-]/g, '_')}`;
      await mkdir(join(manifestsDir, path), { recursive: true });
      for (const file of await readdir(folder)) {
        if (file.endsWith('.sql') && (await stat(join(folder, file))).isFile()) await cp(join(folder, file), join(manifestsDir, path, file));
      }
      docs.push(`apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: ${name}\nspec:\n  organization: corpus\n  ref: ${refs[i]}\n  region: eu-west-1\n`);
      docs.push(`apiVersion: reconciler/v1\nkind: Migrations\nmetadata:\n  name: apply-${i}\nspec:\n  project: ${name}\n  path: ${path}\n`);
      docs.push(`apiVersion: reconciler/v1\nkind: Migrations\nmetadata:\n  name: adopt-${i}\nspec:\n  project: ${name}\n  path: ${path}\n  table: ${CLI_TABLE}\n`);
      const files = (await readdir(folder)).filter((f) => f.endsWith('.sql')).length;
      results.push({ folder: basename(folder), files, invalid: [], applied: 0, converged: false, adopted: 0, adoptable: 0, writingQueries: 0 });
    }
    await writeFile(join(manifestsDir, 'corpus.yaml'), docs.join('---\n'));

    // Validate: what `reconcile validate` reports, by folder.
    let manifests = await loadManifests(manifestsDir);
    for (const error of manifests.errors) {
      const index = /^migrations\/(\d+)-/.exec(error.file)?.[1];
      if (index !== undefined) results[Number(index)]!.invalid.push(`${error.file.replace(/^migrations\/\d+-/, '')}:${error.line}:${error.column} ${error.message}`);
      else throw new Error(`corpus manifests invalid: ${error.file}:${error.line} ${error.path} ${error.message}`);
    }
    const valid = results.map((r, i) => (r.invalid.length === 0 ? i : -1)).filter((i) => i >= 0);
    if (manifests.errors.length > 0) {
      // A folder that does not validate is left out: the others run.
      const kept = docs.filter((doc) => !/name: (apply|adopt)-(\d+)\n/.test(doc) || valid.includes(Number(/name: (?:apply|adopt)-(\d+)\n/.exec(doc)![1])));
      await writeFile(join(manifestsDir, 'corpus.yaml'), kept.join('---\n'));
      for (const [i, folder] of folders.entries()) if (!valid.includes(i)) await rm(join(manifestsDir, `migrations/${i}-${basename(folder).replace(/[^A-Za-z0-9._-]/g, '_')}`), { recursive: true });
      manifests = await loadManifests(manifestsDir);
    }

    // The history the CLI would have written, then the apply.
    for (const i of valid) {
      const history = await cliHistoryQuery(folders[i]!);
      await api.runAQuery(refs[i]!, { query: history.query });
      results[i]!.adoptable = history.rows;
    }
    const pass = async (dryRun: boolean): Promise<{ result: PassResult; requests: ReturnType<typeof emulator.requests> }> => {
      const since = emulator.requests().length;
      const result = await runPass({ manifests, client, stateDir, dryRun, env: {}, log: silentLogger, projects: valid.map((i) => `corpus-${i}`) });
      return { result, requests: emulator.requests().slice(since) };
    };
    const applied = await pass(false);
    for (const i of valid) {
      const r = results[i]!;
      const prefix = `Migration/corpus-${i}/apply-${i}/`;
      const outcomes = applied.result.outcomes.filter((o) => o.entryId.startsWith(prefix));
      r.applied = outcomes.filter((o) => o.action === 'create' && o.result === 'success').length;
      const failed = outcomes.find((o) => o.result === 'failed');
      if (failed) r.failure = failed.error?.message ?? 'failed';
      r.writingQueries = applied.requests.filter((q) => q.route === QUERY_ROUTE && q.sql?.readOnly !== true && q.path.includes(refs[i]!)).length;
    }
    const again = await pass(true);
    for (const i of valid) {
      const r = results[i]!;
      const entries = again.result.plan.entries.filter((e) => e.kind === 'Migration' && e.project === `corpus-${i}`);
      r.converged = entries.filter((e) => e.name.startsWith(`apply-${i}/`)).every((e) => e.action === 'noop') && r.failure === undefined;
      r.adopted = entries.filter((e) => e.name.startsWith(`adopt-${i}/`) && e.action === 'noop').length;
    }
    const sum = (pick: (r: CorpusFolder) => number) => results.reduce((n, r) => n + pick(r), 0);
    const appliedCount = sum((r) => r.applied);
    const clean = sum((r) => (r.failure ? 0 : r.applied));
    return {
      folders: results,
      files: sum((r) => r.files),
      applied: appliedCount,
      converged: results.filter((r) => r.converged).length,
      adopted: sum((r) => r.adopted),
      adoptable: sum((r) => r.adoptable),
      writingQueriesPerMigration: clean === 0 ? undefined : Number((sum((r) => (r.failure ? 0 : r.writingQueries)) / clean).toFixed(2)),
    };
  } finally {
    await client.close();
    await emulator.close();
    await rm(root, { recursive: true, force: true });
  }
}
