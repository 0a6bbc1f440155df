// The Migrations kind with the histories real projects have, against the emulator's Postgres: the
// platform CLI's history (its statements, comments kept) adopted with no change and an edit still
// blocked; a history the reconciler wrote before the CLI's rule; the forms the CLI accepts (a
// BEGIN/COMMIT wrapper, a comment-only file, a last statement ending in a comment, a pg_dump
// header); and a failed migration backing off on scheduled re-checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createProject, doc, projectDoc, startHarness, type Harness } from './harness.js';
import { migrationsKind, RETRY_FIRST_MS, RETRY_MAX_MS, retryDelay } from '../../src/reconcile/kinds/migrations.js';
import { parseMigration } from '../../src/manifests/migrations.js';
import { cliSplit } from '../../src/manifests/sql-split.js';
import { ManualClock } from '../../src/util/clock.js';
import { openStateStore } from '../../src/reconcile/state.js';
import { PassState } from '../../src/reconcile/pass-state.js';
import type { AnyDocument, ProjectDocument } from '../../src/manifests/types.js';
import { summarizePlan } from '../../src/reconcile/summary.js';
import { emptyStatusRecord, foldPass } from '../../src/status/status-record.js';
import type { KindContext, PassResult, PlanEntry, ProjectScope } from '../../src/reconcile/types.js';

let h: Harness;
let ref: string;
let project: ProjectDocument;
let dirCount = 0;
const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));

async function migrations(files: Record<string, string>, table: string): Promise<AnyDocument> {
  const path = `adoption-${++dirCount}`;
  await mkdir(join(h.root, path), { recursive: true });
  for (const [name, sql] of Object.entries(files)) await writeFile(join(h.root, path, name), sql);
  return doc('Migrations', 'schema', { project: 'shop', path, table }, h.root);
}

/** Plans, then (unless dry) applies each create in order, as a project's apply does. */
async function run(documents: AnyDocument[], options: { dryRun?: boolean; scheduled?: boolean } = {}) {
  const ctx: KindContext = {
    api: h.api, clock, state: openStateStore(h.stateDir), documents: [project, ...documents], resolveSecret: async () => '',
    projectRefs: new Map([['shop', ref]]), pass: new PassState({ scheduled: options.scheduled ?? false }), log: h.log,
  };
  const scope: ProjectScope = { name: 'shop', document: project, ref, status: 'ACTIVE_HEALTHY', documents };
  const entries = await migrationsKind.plan(scope, ctx);
  const errors: string[] = [];
  if (!options.dryRun) {
    const done = new Set<string>();
    for (const entry of entries) {
      // As the engine does: a write waits for the entries it depends on.
      if (entry.action !== 'create' || (entry.dependsOn ?? []).some((id) => id.startsWith('Migration/') && !done.has(id))) continue;
      try {
        await migrationsKind.apply(entry, scope, ctx);
        done.add(entry.id);
      } catch (error) {
        errors.push((error as Error).message);
        break;
      }
    }
  }
  return { entries, errors };
}

const sql = async (query: string) => (await h.api.runAQuery(ref, { query })) as unknown as Array<Record<string, unknown>>;
const actions = (entries: PlanEntry[]) => Object.fromEntries(entries.map((e) => [e.name.split('/')[1], e.action]));
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** The rows the platform CLI writes for these files: its statements, split its way. */
async function cliHistory(table: string, files: Record<string, string>): Promise<void> {
  const rows = Object.entries(files).map(([file, text]) => {
    const [, version, name] = /^(\d+)_(.*)\.sql$/.exec(file)!;
    return `(${literal(version!)}, ${literal(name!)}, ARRAY[${cliSplit(text).map((s) => literal(s.text)).join(', ') || "''"}]::text[])`;
  });
  const [schema] = table.split('.');
  await sql(`create schema if not exists ${schema}; create table if not exists ${table} (version text not null primary key, statements text[], name text); insert into ${table} (version, name, statements) values ${rows.join(', ')}`);
}

const PROFILES = `-- Profiles of the users.
-- One row per user.
create table profiles (
  id uuid primary key,
  username text unique, -- shown in the app
  updated_at timestamptz
);

/* Row level security */
alter table profiles enable row level security;

create function touch() returns trigger language plpgsql as $$
begin
  new.updated_at := now(); -- keep it fresh
  return new;
end;
$$;
-- done
`;

beforeAll(async () => {
  h = await startHarness();
  ref = await createProject(h, 'shop');
  project = projectDoc('shop', ref, h.root);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe('Migrations with the histories of real projects', () => {
  it('adopts the platform CLI\'s history: no change; comments and white space are no change; an edited token is blocked', async () => {
    const table = 'cli_a.schema_migrations';
    const files = { '20240101000000_profiles.sql': PROFILES };
    await sql(PROFILES);
    await cliHistory(table, files);
    expect(actions((await run([await migrations(files, table)], { dryRun: true })).entries)).toEqual({ '20240101000000_profiles': 'noop' });
    const reformatted = PROFILES.replace('-- Profiles of the users.', '-- The profiles.').replace('create table profiles (\n  id', 'create table profiles(\n    id').replace('/* Row level security */\n', '');
    expect(actions((await run([await migrations({ '20240101000000_profiles.sql': reformatted }, table)], { dryRun: true })).entries)).toEqual({ '20240101000000_profiles': 'noop' });
    const edited = (await run([await migrations({ '20240101000000_profiles.sql': PROFILES.replace('username text unique', 'username text') }, table)], { dryRun: true })).entries;
    expect(edited[0]).toMatchObject({ action: 'blocked', reason: expect.stringContaining('changed after it was applied') });
  }, 120_000);

  it('a history the reconciler wrote before the CLI\'s rule (Postgres\'s statements) still plans no change', async () => {
    const parsed = await parseMigration(PROFILES, 'x.sql');
    await sql(`create schema legacy; create table legacy.history (version text not null primary key, statements text[], name text);
      insert into legacy.history values ('1', ARRAY[${parsed.legacy.map(literal).join(', ')}]::text[], 'profiles')`);
    expect(actions((await run([await migrations({ '1_profiles.sql': PROFILES }, 'legacy.history')], { dryRun: true })).entries)).toEqual({ '1_profiles': 'noop' });
  }, 120_000);

  it('applies what the CLI accepts: a BEGIN/COMMIT wrapper, a comment-only file, a last statement ending in a comment, a pg_dump header', async () => {
    const files = {
      '1_wrapped.sql': "begin;\n  create table wrapped (id int);\n  insert into wrapped values (1);\ncommit;\n",
      '2_nothing.sql': '-- Nothing to do here yet.\n',
      '3_tail.sql': 'create table tail (id int);\ninsert into tail values (1) -- the first row',
      '4_dump.sql': "SET statement_timeout = 0;\nSET standard_conforming_strings = on;\nSELECT pg_catalog.set_config('search_path', '', false);\nCREATE TABLE public.dumped (note text DEFAULT 'a\\b');\nRESET ALL;\nSELECT pg_catalog.set_config('search_path', '', false);\n",
      '5_after.sql': 'create table after_dump (id int);\n',
    };
    const result = await run([await migrations(files, 'accept.history')]);
    expect(result.errors).toEqual([]);
    expect(result.entries.map((e) => e.action)).toEqual(['create', 'create', 'create', 'create', 'create']);
    // The dump's search_path did not reach the next migration: its table is in public.
    expect(await sql("select table_name from information_schema.tables where table_schema = 'public' and table_name in ('wrapped', 'tail', 'dumped', 'after_dump') order by 1")).toEqual(
      [{ table_name: 'after_dump' }, { table_name: 'dumped' }, { table_name: 'tail' }, { table_name: 'wrapped' }]);
    // The history holds the statements as the CLI records them, BEGIN and COMMIT included.
    const rows = await sql("select version, statements from accept.history order by version");
    expect(rows[0]!.statements).toEqual(['begin', 'create table wrapped (id int)', 'insert into wrapped values (1)', 'commit']);
    expect(rows[1]!.statements).toEqual(['-- Nothing to do here yet.']);
    expect(rows[2]!.statements).toEqual(['create table tail (id int)', 'insert into tail values (1) -- the first row']);
    expect(actions((await run([await migrations(files, 'accept.history')], { dryRun: true })).entries)).toEqual({ '1_wrapped': 'noop', '2_nothing': 'noop', '3_tail': 'noop', '4_dump': 'noop', '5_after': 'noop' });
  }, 120_000);

  it('a failed migration backs off on scheduled re-checks (10 min doubling to 1 h); a pass by hand or a new revision of the file tries at once', async () => {
    expect([1, 2, 3, 4, 5].map(retryDelay)).toEqual([RETRY_FIRST_MS, 2 * RETRY_FIRST_MS, 4 * RETRY_FIRST_MS, RETRY_MAX_MS, RETRY_MAX_MS]);
    const broken = { '1_broken.sql': 'create table broken (id int);\ninsert into broken values (1, 2);\n', '2_next.sql': 'create table next_one (id int);\n' };
    const docs = [await migrations(broken, 'backoff.history')];
    const first = await run(docs, { scheduled: true });
    expect(first.errors).toEqual([expect.stringContaining('1_broken.sql: ERROR: 42601: INSERT has more expressions than target columns')]);
    // A scheduled re-check before the time: not tried, and the plan says when it will be.
    const waiting = await run(docs, { scheduled: true });
    expect(waiting.errors).toEqual([]);
    expect(waiting.entries.map((e) => e.action)).toEqual(['blocked', 'create']);
    expect(waiting.entries[0]!.reason).toMatch(/failed once \(.*INSERT has more expressions.*\); next attempt at 2026-06-01T12:10:00\.000Z .* `reconcile trigger` tries it at once$/);
    expect(waiting.entries[1]!.dependsOn).toContain(waiting.entries[0]!.id);
    // The status record (what `reconcile status` and GET /status show) carries the next attempt.
    const pass: PassResult = { startedAt: 0, finishedAt: 1, dryRun: false, manifestErrors: [], plan: summarizePlan(waiting.entries), outcomes: [], resources: [], projects: [{ name: 'shop', ref }], result: 'failed', requests: 1 };
    expect(foldPass(emptyStatusRecord(), pass, {}, clock.now()).projects.shop!.pending).toContainEqual(expect.objectContaining({
      id: waiting.entries[0]!.id, waitingFor: 'blocked', reason: expect.stringContaining('next attempt at 2026-06-01T12:10:00.000Z'),
    }));
    // A pass that is not a scheduled re-check tries at once, and fails a second time: 20 minutes.
    expect((await run(docs)).errors).toHaveLength(1);
    await clock.advance(RETRY_FIRST_MS + 1);
    expect((await run(docs, { scheduled: true, dryRun: true })).entries[0]!.reason).toMatch(/failed 2 times .* next attempt at 2026-06-01T12:20:00\.000Z/);
    // A new revision of the file is tried at once, and applies.
    const fixed = [await migrations({ ...broken, '1_broken.sql': 'create table broken (id int, other int);\ninsert into broken values (1, 2);\n' }, 'backoff.history')];
    const retried = await run(fixed, { scheduled: true });
    expect(retried.errors).toEqual([]);
    expect(retried.entries.map((e) => e.action)).toEqual(['create', 'create']);
    expect(actions((await run(fixed, { scheduled: true, dryRun: true })).entries)).toEqual({ '1_broken': 'noop', '2_next': 'noop' });
  }, 120_000);
});
