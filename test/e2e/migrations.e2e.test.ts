// The Migrations kind through the built command against the emulator, whose query endpoint is a
// real Postgres per project (PGlite): a selector applies ordered files to five projects, a second
// pass writes nothing, an edited applied file is blocked, a failing migration changes nothing of
// its project while the others converge, overlapping applies and a lost answer apply each
// migration once, a saved plan is refused after another migration was applied, a dry run only
// reads, and validate locates a syntax error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { assertBuilt, expectExit, runCli } from './helpers/cli.js';

const TENANTS = ['t1', 't2', 't3', 't4', 't5'];
let emulator: RunningEmulator;
let api: ApiClient;
let dir: string;
let work: string;
let env: NodeJS.ProcessEnv;
const refs = new Map<string, string>();

const since = () => emulator.requests().length;
const queriesSince = (from: number) => emulator.requests().slice(from).filter((r) => r.route === '/v1/projects/{ref}/database/query');
const writingQueriesSince = (from: number) => queriesSince(from).filter((r) => r.sql?.readOnly !== true);
const migrationFile = (name: string, sql: string) => writeFile(join(dir, 'migrations/tenant', name), sql);

async function sql(project: string, query: string): Promise<Array<Record<string, unknown>>> {
  return (await api.api.runAQuery(refs.get(project)!, { query })) as unknown as Array<Record<string, unknown>>;
}
const tables = async (project: string) => (await sql(project, "select table_name from information_schema.tables where table_schema = 'public' order by 1")).map((r) => r.table_name);
const history = async (project: string) => (await sql(project, 'select version from reconciler.schema_migrations order by version')).map((r) => r.version);

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 }, openDatabases: TENANTS.length + 1 });
  api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  const root = await mkdtemp(join(tmpdir(), 'reconcile-migrations-'));
  dir = join(root, 'manifests');
  work = join(root, 'work');
  await mkdir(join(dir, 'migrations/tenant'), { recursive: true });
  await mkdir(work);
  const projects = TENANTS.map((name) => `---
apiVersion: reconciler/v1
kind: Project
metadata: { name: ${name}, labels: { tier: tenant } }
spec: { organization: acme, region: eu-west-1, db_pass: { valueFrom: { env: E2E_DB_PASS } } }
`);
  await writeFile(join(dir, 'fleet.yaml'), `apiVersion: reconciler/v1
kind: Organization
metadata: { name: acme }
spec: {}
${projects.join('')}---
apiVersion: reconciler/v1
kind: Project
metadata: { name: other, labels: { tier: internal } }
spec: { organization: acme, region: eu-west-1, db_pass: { valueFrom: { env: E2E_DB_PASS } } }
---
apiVersion: reconciler/v1
kind: Migrations
metadata: { name: tenant-schema }
spec:
  selector: { labels: { tier: tenant } }
  path: migrations/tenant
`);
  await migrationFile('20260101000000_items.sql', '-- the catalogue\ncreate table items (id bigint generated always as identity primary key, name text not null);\n');
  await migrationFile('20260102000000_orders.sql', 'create table orders (id bigint primary key, item bigint references items (id));\ncreate index orders_item on orders (item);\n');
  await migrationFile('20260103000000_counter.sql', "create table applied (note text);\ninsert into applied values ('once');\n");
  env = {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: join(work, 'state'),
    RECONCILE_RATE_LIMIT: '1000/1s',
    // A project's first query starts its database (WebAssembly Postgres): on a busy machine
    // that can take longer than the default wait for an answer.
    RECONCILE_HTTP_TIMEOUT: '120s',
    E2E_DB_PASS: 'e2e-database-password-4f1c',
  };
}, 120_000);

afterAll(async () => {
  await api?.close();
  await emulator?.close();
  if (dir) await rm(join(dir, '..'), { recursive: true, force: true });
});

describe('Migrations through the built command', () => {
  it('applies three files through a selector to five projects: one request per migration, the tables in every database', async () => {
    const from = since();
    const run = await runCli([dir], env);
    expectExit(run, 0);
    for (const project of (await api.api.listAllProjects())) refs.set(project.name, project.ref);
    // One writing request per migration and project; the untagged project gets none.
    expect(writingQueriesSince(from)).toHaveLength(3 * TENANTS.length);
    expect(writingQueriesSince(from).some((r) => r.path.includes(refs.get('other')!))).toBe(false);
    for (const tenant of TENANTS) {
      expect(await tables(tenant)).toEqual(['applied', 'items', 'orders']);
      expect(await history(tenant)).toEqual(['20260101000000', '20260102000000', '20260103000000']);
    }
    expect(await tables('other')).toEqual([]);
  }, 300_000);

  it('a second apply sends no writing query: one history read per project', async () => {
    const from = since();
    const run = await runCli([dir], env);
    expectExit(run, 0);
    expect(writingQueriesSince(from)).toEqual([]);
    expect(queriesSince(from)).toHaveLength(TENANTS.length);
    // The status the passes recorded shows each project's schema version (no request).
    const before = since();
    const status = await runCli(['status', dir], env);
    expectExit(status, 0);
    expect(emulator.requests().slice(before)).toEqual([]);
    expect(status.stdout).toMatch(/Schema versions \(Migrations\)\n\s+PROJECT\s+VERSION\n(\s+t[1-5]\s+20260103000000\n){5}/);
    const json = JSON.parse((await runCli(['status', dir, '--output', 'json'], env)).stdout) as { projects: Array<{ name: string; schemaVersion?: string }> };
    expect(json.projects.find((p) => p.name === 'other')!.schemaVersion).toBeUndefined();
    expect(json.projects.find((p) => p.name === 't1')!.schemaVersion).toBe('20260103000000');
  }, 300_000);

  it('a dry run sends only read-only queries; a saved plan is refused once another migration was applied', async () => {
    await migrationFile('20260104000000_prices.sql', 'alter table items add column price numeric;\n');
    const plan = join(work, 'plan.json');
    const from = since();
    const dry = await runCli([dir, '--dry-run', '--detailed-exitcode', '--out', plan, '--output', 'markdown'], env);
    expectExit(dry, 2);
    expect(queriesSince(from).length).toBe(TENANTS.length);
    expect(queriesSince(from).every((r) => r.sql?.readOnly === true)).toBe(true);
    // The markdown shows each pending file's SQL, folded.
    expect(dry.stdout).toContain('<summary>migrations/tenant/20260104000000_prices.sql');
    expect(dry.stdout).toContain('alter table items add column price numeric;');
    // Another checkout (a state directory of its own) applies the migration to one project first.
    const other = { ...env, RECONCILE_STATE_DIR: join(work, 'state-other') };
    expectExit(await runCli([dir], other), 0);
    const before = since();
    const refused = await runCli(['apply', plan, dir], env);
    expectExit(refused, 1);
    expect(writingQueriesSince(before)).toEqual([]);
    expect(refused.stdout).toContain('Migration/t1/tenant-schema/20260104000000_prices');
    expect(refused.stderr).toContain('the saved plan is refused');
  }, 300_000);

  it('an edited applied file is blocked and named, never run again', async () => {
    await migrationFile('20260102000000_orders.sql', 'create table orders (id bigint primary key, item bigint references items (id), qty int);\ncreate index orders_item on orders (item);\n');
    const from = since();
    const run = await runCli([dir], env);
    expectExit(run, 1);
    expect(writingQueriesSince(from)).toEqual([]);
    expect(run.stdout).toContain('Migration/t1/tenant-schema/20260102000000_orders');
    expect(run.stdout).toContain('migrations/tenant/20260102000000_orders.sql changed after it was applied');
    await migrationFile('20260102000000_orders.sql', 'create table orders (id bigint primary key, item bigint references items (id));\ncreate index orders_item on orders (item);\n');
    expectExit(await runCli([dir], env), 0);
  }, 300_000);

  it('a migration that fails at run time changes nothing of its project, names the file and the error; the others converge', async () => {
    // t3 got a column out of band, so the migration's second statement fails there only.
    await sql('t3', 'alter table items add column sku text');
    await migrationFile('20260105000000_sku.sql', 'create table skus (code text primary key);\nalter table items add column sku text;\n');
    const run = await runCli([dir], env);
    expectExit(run, 1);
    expect(run.stdout + run.stderr).toContain('migrations/tenant/20260105000000_sku.sql: ERROR: 42701: column "sku" of relation "items" already exists');
    expect(await tables('t3')).not.toContain('skus');
    expect(await history('t3')).not.toContain('20260105000000');
    for (const tenant of TENANTS.filter((t) => t !== 't3')) {
      expect(await tables(tenant)).toContain('skus');
      expect(await history(tenant)).toContain('20260105000000');
    }
    // Repaired by hand, the next pass applies it there too.
    await sql('t3', 'alter table items drop column sku');
    expectExit(await runCli([dir], env), 0);
    expect(await history('t3')).toContain('20260105000000');
  }, 300_000);

  it('two overlapping applies with separate state directories and a lost answer apply each migration exactly once', async () => {
    await migrationFile('20260106000000_again.sql', "insert into applied values ('sixth');\n");
    emulator.setFaults({ seed: 3, rules: [{ route: '/v1/projects/{ref}/database/query', method: 'POST', lostAnswerRate: 0.5, maxFaults: 2 }] });
    const [first, second] = await Promise.all([
      runCli([dir], { ...env, RECONCILE_STATE_DIR: join(work, 'state-a') }),
      runCli([dir], { ...env, RECONCILE_STATE_DIR: join(work, 'state-b') }),
    ]);
    expect(emulator.requests().filter((r) => r.fault === 'lost-answer').length).toBeGreaterThan(0);
    emulator.setFaults({});
    // A run that lost an answer fails; the next one finds the migration recorded.
    expect([first.code, second.code].every((code) => code === 0 || code === 1)).toBe(true);
    expectExit(await runCli([dir], env), 0);
    for (const tenant of TENANTS) {
      expect(await sql(tenant, "select note, count(*)::int as n from applied group by note order by note")).toEqual([{ note: 'once', n: 1 }, { note: 'sixth', n: 1 }]);
      expect((await history(tenant)).filter((v) => v === '20260106000000')).toHaveLength(1);
    }
  }, 300_000);

  it('export writes a Migrations document and one file per recorded migration from the history', async () => {
    const out = join(work, 'export');
    const run = await runCli(['export', '--project', refs.get('t2')!, '--out', out], env);
    expectExit(run, 0);
    const yaml = await readFile(join(out, 't2.yaml'), 'utf8');
    expect(yaml).toContain('kind: Migrations');
    expect(yaml).toContain('path: migrations/t2');
    expect((await readdir(join(out, 'migrations/t2'))).sort()).toEqual([
      '20260101000000_items.sql', '20260102000000_orders.sql', '20260103000000_counter.sql', '20260104000000_prices.sql', '20260105000000_sku.sql', '20260106000000_again.sql',
    ]);
    expect(await readFile(join(out, 'migrations/t2/20260102000000_orders.sql'), 'utf8')).toBe('create table orders (id bigint primary key, item bigint references items (id));\n\ncreate index orders_item on orders (item);\n');
  }, 300_000);

  it('validate locates a syntax error in a migration file: file, line and column', async () => {
    await migrationFile('20260107000000_broken.sql', 'create table ok (id int);\ncreate tabel broken (id int);\n');
    const from = since();
    const run = await runCli(['validate', dir], {});
    expectExit(run, 1);
    expect(run.stdout + run.stderr).toMatch(/migrations\/tenant\/20260107000000_broken\.sql:2:8\b.*syntax error at or near "tabel"/);
    // A pass refuses the checkout whole: nothing is sent.
    const pass = await runCli([dir], env);
    expectExit(pass, 1);
    expect(emulator.requests().slice(from)).toEqual([]);
    await rm(join(dir, 'migrations/tenant/20260107000000_broken.sql'));
  }, 300_000);
});
