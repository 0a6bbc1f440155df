// The Migrations module against the emulator's Postgres: a file that opts out of the
// transaction, the out-of-order rule, a recorded migration without a file, adoption of the
// platform CLI's table, the guard against a second application; then its metrics, its
// notification and the schema version in the status report.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { createProject, doc, projectDoc, startHarness, type Harness } from './harness.js';
import { applyKinds, planKinds } from '../support/project-pass.js';
import { migrationsKind } from '../../src/reconcile/kinds/migrations.js';
import { systemClock } from '../../src/util/clock.js';
import { openStateStore } from '../../src/reconcile/state.js';
import { PassState } from '../../src/reconcile/pass-state.js';
import { summarizePlan } from '../../src/reconcile/summary.js';
import { createMetrics } from '../../src/daemon/metrics.js';
import { eventsFromPass } from '../../src/notify/events.js';
import { buildStatusReport } from '../../src/reconcile/kinds/status-report.js';
import type { AnyDocument, ProjectDocument } from '../../src/manifests/types.js';
import type { ApplyOutcome, KindContext, PassResult, PlanEntry, ProjectScope } from '../../src/reconcile/types.js';

let h: Harness;
let ref: string;
let project: ProjectDocument;
let dirCount = 0;

/** A directory of migration files below the harness root, and a Migrations document for it. */
async function migrations(files: Record<string, string>, spec: Record<string, unknown> = {}): Promise<AnyDocument> {
  const path = `migrations-${++dirCount}`;
  await mkdir(join(h.root, path), { recursive: true });
  for (const [name, sql] of Object.entries(files)) await writeFile(join(h.root, path, name), sql);
  return doc('Migrations', `schema-${dirCount}`, { project: 'shop', path, ...spec }, h.root);
}

function context(documents: AnyDocument[]): KindContext {
  return {
    api: h.api,
    clock: systemClock,
    state: openStateStore(h.stateDir),
    documents: [project, ...documents],
    resolveSecret: async () => '',
    projectRefs: new Map([['shop', ref]]),
    pass: new PassState(),
    log: h.log,
  };
}

/** Plans, then (unless dry) applies the project's migrations through the engine's own steps. */
async function run(documents: AnyDocument[], dryRun = false): Promise<{ entries: PlanEntry[]; outcomes: ApplyOutcome[]; writing: number }> {
  const ctx = context(documents);
  const scope: ProjectScope = { name: 'shop', document: project, ref, status: 'ACTIVE_HEALTHY', documents };
  const work = await planKinds(scope, [migrationsKind], ctx, h.log);
  const entries = [...work.entries, ...work.failures];
  const since = h.emulator.requests().length;
  const outcomes = dryRun ? [] : (await applyKinds(work, [migrationsKind], ctx, systemClock, h.log)).outcomes;
  const writing = h.emulator.requests().slice(since).filter((r) => r.route === '/v1/projects/{ref}/database/query' && r.sql?.readOnly !== true).length;
  return { entries, outcomes, writing };
}

const sql = async (query: string) => (await h.api.runAQuery(ref, { query })) as unknown as Array<Record<string, unknown>>;
const byName = (entries: PlanEntry[]) => Object.fromEntries(entries.map((e) => [e.name.split('/')[1], e.action]));

beforeAll(async () => {
  h = await startHarness();
  ref = await createProject(h, 'shop');
  project = projectDoc('shop', ref, h.root);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe('Migrations against the emulator', () => {
  it('a file that opts out of the transaction is sent one statement per request, then the guarded history insert', async () => {
    const docs = [await migrations({
      '1_items.sql': 'create table items (id int primary key, name text);',
      '2_index.sql': '-- reconcile: no-transaction\ncreate index concurrently if not exists items_name on items (name);\n',
    })];
    const first = await run(docs);
    expect(first.outcomes.map((o) => o.result)).toEqual(['success', 'success']);
    // One request for the first, two for the second (its one statement, then the history).
    expect(first.writing).toBe(3);
    expect(first.entries.find((e) => e.name.endsWith('2_index'))!.changes).toContainEqual({ path: 'transaction', after: false });
    expect(await sql("select indexname from pg_indexes where tablename = 'items' order by 1")).toEqual([{ indexname: 'items_name' }, { indexname: 'items_pkey' }]);
    expect(byName((await run(docs, true)).entries)).toEqual({ '1_items': 'noop', '2_index': 'noop' });
  }, 120_000);

  it('refuses a new file older than the latest applied version unless outOfOrder, and reports a recorded migration with no file', async () => {
    const files = { '10_a.sql': 'create table a (id int);', '30_c.sql': 'create table c (id int);' };
    const table = { table: 'ooo.history' };
    await run([await migrations(files, table)]);
    const late = await run([await migrations({ ...files, '20_b.sql': 'create table b (id int);' }, table)]);
    expect(byName(late.entries)).toEqual({ '10_a': 'noop', '20_b': 'blocked', '30_c': 'noop' });
    expect(late.entries.find((e) => e.name.endsWith('20_b'))!.reason).toContain('older than the latest applied version 30');
    expect(late.writing).toBe(0);
    const allowed = await run([await migrations({ ...files, '20_b.sql': 'create table b (id int);' }, { ...table, outOfOrder: true })]);
    expect(byName(allowed.entries)['20_b']).toBe('create');
    expect(allowed.outcomes).toMatchObject([{ result: 'success' }]);
    const gone = await run([await migrations({ '10_a.sql': files['10_a.sql'] }, table)], true);
    const missing = gone.entries.find((e) => e.name.endsWith('30_c'))!;
    expect(missing.action).toBe('noop');
    expect(missing.reason).toMatch(/^recorded in ooo\.history, but no file in migrations-\d+ has version 30$/);
  }, 120_000);

  it('adopts a project migrated with the platform CLI by pointing at its table: recorded files are unchanged, a changed one is blocked with both digests', async () => {
    await sql(`create schema supabase_migrations;
      create table supabase_migrations.schema_migrations (version text not null primary key, statements text[], name text);
      create table cli_made (id int);
      insert into supabase_migrations.schema_migrations values ('20240101000000', array['create table cli_made (id int)'], 'cli_made')`);
    const table = { table: 'supabase_migrations.schema_migrations' };
    const adopted = await run([await migrations({ '20240101000000_cli_made.sql': '-- made with the CLI\ncreate table\n  cli_made (id int);\n', '20240201000000_next.sql': 'alter table cli_made add column note text;' }, table)]);
    expect(byName(adopted.entries)).toEqual({ '20240101000000_cli_made': 'noop', '20240201000000_next': 'create' });
    expect(adopted.outcomes).toMatchObject([{ result: 'success' }]);
    expect(await sql("select version, name from supabase_migrations.schema_migrations order by version")).toEqual([
      { version: '20240101000000', name: 'cli_made' },
      { version: '20240201000000', name: 'next' },
    ]);
    const edited = await run([await migrations({ '20240101000000_cli_made.sql': 'create table cli_made (id bigint);', '20240201000000_next.sql': 'alter table cli_made add column note text;' }, table)], true);
    const blocked = edited.entries.find((e) => e.name.endsWith('cli_made'))!;
    expect(blocked.action).toBe('blocked');
    expect(blocked.changes).toEqual([{ path: 'digest', before: expect.stringMatching(/^[0-9a-f]{64}$/), after: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect(blocked.reason).toMatch(/cli_made\.sql changed after it was applied \(recorded digest [0-9a-f]{12}, file digest [0-9a-f]{12}\)/);
  }, 120_000);

  it('a migration recorded by someone else after the plan is not applied again (the guard), and counts as applied', async () => {
    const docs = [await migrations({ '1_once.sql': 'create table guarded (id int);' }, { table: 'guard.history' })];
    const ctx = context(docs);
    const scope: ProjectScope = { name: 'shop', document: project, ref, status: 'ACTIVE_HEALTHY', documents: docs };
    const [entry] = await migrationsKind.plan(scope, ctx);
    expect(entry!.action).toBe('create');
    await sql("create schema guard; create table guard.history (version text not null primary key, statements text[], name text); insert into guard.history values ('1', array['create table guarded (id int)'], 'once')");
    await migrationsKind.apply(entry!, scope, ctx);
    expect(await sql("select count(*)::int as n from information_schema.tables where table_name = 'guarded'")).toEqual([{ n: 0 }]);
  }, 120_000);

  it('a failing migration leaves nothing behind: statements and history roll back together', async () => {
    const docs = [await migrations({ '1_two.sql': 'create table half (id int);\ncreate table half (id int);' }, { table: 'fail.history' })];
    const result = await run(docs);
    expect(result.outcomes).toMatchObject([{ result: 'failed', error: { type: 'MigrationFailedError', message: expect.stringMatching(/1_two\.sql: ERROR: 42P07: relation "half" already exists; nothing of it was applied$/) } }]);
    expect(await sql("select count(*)::int as n from information_schema.tables where table_name = 'half' or table_schema = 'fail'")).toEqual([{ n: 0 }]);
  }, 120_000);
});

describe('Migrations in the metrics, notifications and status', () => {
  const entry = (name: string, action: PlanEntry['action'], latest = '2'): PlanEntry => ({
    id: `Migration/shop/schema/${name}`, kind: 'Migration', project: 'shop', name: `schema/${name}`, action, changes: [], target: { latest },
  });
  const result = (): PassResult => {
    const entries = [entry('1_a', 'noop'), entry('2_b', 'blocked'), entry('3_c', 'create'), entry('4_d', 'create')];
    return {
      startedAt: 0, finishedAt: 1, dryRun: false, manifestErrors: [], plan: summarizePlan(entries), resources: [], requests: 3,
      projects: [{ name: 'shop', ref: 'abcdefghijklmnopqrst' }],
      outcomes: [
        { entryId: entries[1]!.id, kind: 'Migration', action: 'blocked', result: 'skipped', error: { type: 'Blocked', message: 'changed' } },
        { entryId: entries[2]!.id, kind: 'Migration', action: 'create', result: 'success' },
        { entryId: entries[3]!.id, kind: 'Migration', action: 'create', result: 'failed', error: { type: 'MigrationFailedError', message: 'migrations/4_d.sql: ERROR: 42701: column exists' } },
      ],
      result: 'failed',
    };
  };

  it('exports the pending migrations per project and each result', async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry, { processMetrics: false });
    metrics.recordPass(result());
    const text = await registry.metrics();
    expect(text).toContain('reconciler_migrations_pending{project="shop"} 1');
    expect(text).toContain('reconciler_migrations_applied_total{project="shop",result="applied"} 1');
    expect(text).toContain('reconciler_migrations_applied_total{project="shop",result="failed"} 1');
    expect(text).toContain('reconciler_migrations_applied_total{project="shop",result="blocked"} 1');
  });

  it('a failed migration is a resource_failed notification naming the file and the error', () => {
    const events = eventsFromPass(result(), { trigger: 'revision' } as Parameters<typeof eventsFromPass>[1], 1);
    expect(events).toContainEqual(expect.objectContaining({ type: 'resource_failed', resource: 'Migration/shop/schema/4_d', project: 'shop', reason: expect.stringContaining('migrations/4_d.sql: ERROR: 42701') }));
  });

  it('the status report shows the schema version and the pending migrations', () => {
    const report = buildStatusReport(result(), new Map(), 1);
    expect(report.projects.find((p) => p.name === 'shop')!.schema).toEqual({ version: '2', pending: 2 });
  });
});
