// The migration corpus (test/fixtures/migrations-corpus: folders written in the patterns of
// applications built on the platform) through the built command against the emulator, one
// project per folder: `reconcile validate`, an apply, a plan with no change, and the adoption of
// the history the platform CLI would have written (its rows, its statements split its way, in
// `supabase_migrations.schema_migrations`, planned by a second Migrations document over the same
// files: no change).
//
// The folders marked PLATFORM use the platform's database (its roles, the `auth`, `storage` and
// `extensions` schemas, the `supabase_realtime` publication). They are expected to apply when the
// emulator's databases have them (the test looks for the `auth` schema), and to fail on their
// first file, naming what is missing, while they do not. Everything else holds either way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DURATIONS, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { cliSplit } from '../../src/manifests/sql-split.js';
import { assertBuilt, expectExit, REPO, runCli } from './helpers/cli.js';

const CORPUS = join(REPO, 'test/fixtures/migrations-corpus');
const FOLDERS = ['billing', 'tenants', 'todo-app', 'storage-files', 'schema-dump'];
const PLATFORM = new Set(['todo-app', 'storage-files', 'schema-dump']);
const QUERY = '/v1/projects/{ref}/database/query';

let emulator: RunningEmulator;
let api: ApiClient;
let root: string;
let dir: string;
let env: NodeJS.ProcessEnv;
let platform = false;
const refs = new Map<string, string>();
const files = new Map<string, string[]>();

const sql = async (folder: string, query: string) => (await api.api.runAQuery(refs.get(folder)!, { query })) as unknown as Array<Record<string, unknown>>;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
/** The folders expected to apply on this emulator. */
const applying = () => FOLDERS.filter((folder) => platform || !PLATFORM.has(folder));

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, rateLimit: { limit: 100_000, windowMs: 60_000 }, openDatabases: FOLDERS.length });
  api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  root = await mkdtemp(join(tmpdir(), 'reconcile-corpus-'));
  dir = join(root, 'manifests');
  const org = (await api.api.listAllOrganizations())[0]?.id ?? (await api.api.createAnOrganization({ name: 'corpus' })).id;
  const docs = [`apiVersion: reconciler/v1\nkind: Organization\nmetadata: { name: corpus }\nspec: { slug: ${org} }\n`];
  for (const folder of FOLDERS) {
    const created = await api.api.createAProject({ name: folder, organization_id: org, region: 'eu-west-1', db_pass: 'corpus-database-password-4f1c' } as Parameters<typeof api.api.createAProject>[0]);
    refs.set(folder, created.ref ?? created.id);
    emulator.advanceClock(DEFAULT_DURATIONS.projectCreate + DEFAULT_DURATIONS.servicesHealthy + 1);
    await mkdir(join(dir, 'migrations', folder), { recursive: true });
    await cp(join(CORPUS, folder), join(dir, 'migrations', folder), { recursive: true });
    files.set(folder, (await readdir(join(CORPUS, folder))).filter((name) => name.endsWith('.sql')).sort());
    docs.push(`apiVersion: reconciler/v1\nkind: Project\nmetadata: { name: ${folder} }\nspec: { organization: corpus, ref: ${refs.get(folder)}, region: eu-west-1 }\n`);
    docs.push(`apiVersion: reconciler/v1\nkind: Migrations\nmetadata: { name: ${folder}-schema }\nspec: { project: ${folder}, path: migrations/${folder} }\n`);
    docs.push(`apiVersion: reconciler/v1\nkind: Migrations\nmetadata: { name: ${folder}-cli }\nspec: { project: ${folder}, path: migrations/${folder}, table: supabase_migrations.schema_migrations }\n`);
  }
  await writeFile(join(dir, 'corpus.yaml'), docs.join('---\n'));
  env = {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: join(root, 'state'),
    RECONCILE_RATE_LIMIT: '1000/1s',
    RECONCILE_HTTP_TIMEOUT: '120s',
  };
  platform = (await sql(FOLDERS[0]!, "select count(*)::int as n from pg_namespace where nspname = 'auth'"))[0]!.n === 1;
}, 300_000);

afterAll(async () => {
  await api?.close();
  await emulator?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('the migration corpus through the built command', () => {
  it('validate accepts every folder, offline', async () => {
    const run = await runCli(['validate', dir], {});
    expectExit(run, 0);
  }, 120_000);

  it('the history the CLI would have written for each folder plans no change', async () => {
    for (const folder of FOLDERS) {
      const rows = [];
      for (const name of files.get(folder)!) {
        const [, version, migration] = /^(\d+)_(.*)\.sql$/.exec(name)!;
        const statements = cliSplit(await readFile(join(CORPUS, folder, name), 'utf8')).map((s) => literal(s.text));
        rows.push(`(${literal(version!)}, ${literal(migration!)}, ARRAY[${statements.join(', ')}]::text[])`);
      }
      await sql(folder, `create schema supabase_migrations; create table supabase_migrations.schema_migrations (version text not null primary key, statements text[], name text);
        insert into supabase_migrations.schema_migrations (version, name, statements) values ${rows.join(', ')}`);
    }
    const run = await runCli([dir, '--dry-run', '--output', 'json'], env);
    const entries = JSON.parse(run.stdout).entries as Array<{ id: string; action: string }>;
    for (const folder of FOLDERS) {
      const adopted = entries.filter((e) => e.id.startsWith(`Migration/${folder}/${folder}-cli/`));
      expect(adopted.map((e) => e.action), folder).toEqual(files.get(folder)!.map(() => 'noop'));
    }
  }, 300_000);

  it('applies each folder, one writing request per migration; a folder that needs the platform\'s database names what it lacks until it has it', async () => {
    const from = emulator.requests().length;
    const run = await runCli([dir], env);
    expectExit(run, platform ? 0 : 1);
    const writes = emulator.requests().slice(from).filter((r) => r.route === QUERY && r.sql?.readOnly !== true);
    for (const folder of FOLDERS) {
      const recorded = (await sql(folder, 'select version from reconciler.schema_migrations order by version').catch(() => [])).map((r) => r.version);
      if (applying().includes(folder)) {
        expect(recorded, folder).toEqual(files.get(folder)!.map((name) => name.split('_')[0]));
        expect(writes.filter((r) => r.path.includes(refs.get(folder)!)), folder).toHaveLength(files.get(folder)!.length);
      } else {
        expect(recorded, folder).toEqual([]);
        expect(run.stdout + run.stderr).toMatch(new RegExp(`migrations/${folder}/\\d+_\\w+\\.sql: ERROR: \\w+: (schema "auth" does not exist|extension "[^"]+" is not available|role "\\w+" does not exist)`));
      }
    }
  }, 600_000);

  it('a second plan holds no change for every folder that applied', async () => {
    const run = await runCli([dir, '--dry-run', '--detailed-exitcode', '--output', 'json'], env);
    expectExit(run, platform ? 0 : 2);
    const entries = JSON.parse(run.stdout).entries as Array<{ id: string; action: string }>;
    for (const folder of applying()) {
      expect(entries.filter((e) => e.id.startsWith(`Migration/${folder}/`)).map((e) => e.action), folder).toEqual([...files.get(folder)!, ...files.get(folder)!].map(() => 'noop'));
    }
  }, 300_000);
});
