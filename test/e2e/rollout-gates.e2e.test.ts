// The gates of a Rollout judge what is live, through the built command against the emulator:
// a removed project is placed by the labels the inventory recorded when it was last applied
// (an old record without labels is held until approved), a change that takes a project out of
// a rule's selector is still held by it, and `kinds` names document kinds as aliases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, expectExit, runCli } from './helpers/cli.js';

let emulator: RunningEmulator;
let root: string;

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  root = await mkdtemp(join(tmpdir(), 'reconcile-rollout-gates-'));
});

afterAll(async () => {
  await emulator?.close();
  await rm(root, { recursive: true, force: true });
});

const ORG = 'apiVersion: reconciler/v1\nkind: Organization\nmetadata: { name: acme }\nspec: {}\n';

function project(name: string, labels: string, extra = ''): string {
  return `apiVersion: reconciler/v1
kind: Project
metadata:
  name: ${name}
  labels: ${labels}
spec:
  organization: acme
  region: eu-west-1
  db_pass: { valueFrom: { env: GATES_DB_PASS } }
  policy:
    deletion: delete
${extra}`;
}

// A window that is closed now and for years (29 February, 03:00).
const CLOSED = "'0 3 29 2 *'";

async function checkout(name: string, files: Record<string, string>): Promise<{ dir: string; env: NodeJS.ProcessEnv }> {
  const dir = join(root, name, 'manifests');
  await mkdir(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  const env = {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: join(root, name, 'state'),
    RECONCILE_RATE_LIMIT: '1000/1s',
    GATES_DB_PASS: 'gates-db-pass-51c2',
    NO_COLOR: '1',
  };
  return { dir, env };
}

async function liveNames(): Promise<string[]> {
  const response = await fetch(`${emulator.url}/v1/projects`, { headers: { authorization: `Bearer ${emulator.token}` } });
  return ((await response.json()) as Array<{ name: string; status: string }>).filter((p) => p.status !== 'REMOVED').map((p) => p.name).sort();
}

describe('a removed project under the gates', () => {
  it('is held by the approval rule and the window its recorded labels fall under, and held for approval when its record has no labels', async () => {
    const rollout = `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: fleet }
spec:
  approvals:
    - { name: enterprise-deletions, classes: [deletion], selector: { labels: { plan: enterprise } } }
  windows:
    - { name: tenant-nights, schedule: ${CLOSED}, duration: 1h, selector: { labels: { tier: tenant } }, classes: [deletion] }
`;
    const { dir, env } = await checkout('removed', {
      'org.yaml': ORG,
      'rollout.yaml': rollout,
      'gates-ent.yaml': project('gates-ent', '{ plan: enterprise }'),
      'gates-ten.yaml': project('gates-ten', '{ tier: tenant }'),
      'gates-old.yaml': project('gates-old', '{ plan: enterprise, tier: tenant }'),
      'gates-free.yaml': project('gates-free', '{ team: tools }'),
    });
    expectExit(await runCli([dir], env), 0);
    expect(await liveNames()).toEqual(['gates-ent', 'gates-free', 'gates-old', 'gates-ten']);
    const inventoryFile = join(env.RECONCILE_STATE_DIR!, 'inventory.json');
    const inventory = JSON.parse(await readFile(inventoryFile, 'utf8')) as { projects: Record<string, { labels?: Record<string, string> }> };
    expect(inventory.projects['gates-ent']!.labels).toEqual({ plan: 'enterprise' });
    // An inventory written before labels were recorded: the record of gates-old has none.
    delete inventory.projects['gates-old']!.labels;
    await writeFile(inventoryFile, JSON.stringify(inventory));

    for (const name of ['gates-ent', 'gates-ten', 'gates-old', 'gates-free']) await rm(join(dir, `${name}.yaml`));
    let run = await runCli([dir], env);
    expectExit(run, 0);
    // Only the project no rule selects is deleted; a second pass deletes nothing more.
    expect(await liveNames()).toEqual(['gates-ent', 'gates-old', 'gates-ten']);
    run = await runCli([dir], env);
    expectExit(run, 0);
    expect(await liveNames()).toEqual(['gates-ent', 'gates-old', 'gates-ten']);
    expect(run.stdout).toMatch(/Project\/gates-ent delete .*waiting for approval: needs approval \(enterprise-deletions\)/);
    expect(run.stdout).toMatch(/Project\/gates-ten delete .*waiting for a window: deletion: waits for maintenance window tenant-nights/);
    expect(run.stdout).toMatch(/Project\/gates-old delete .*waiting for approval: needs approval \(labels unknown .*held under enterprise-deletions, tenant-nights\): reconcile approve --revision content-[0-9a-f]{12} --project gates-old/);
    // The upgraded inventory keeps the labels of the projects still managed.
    const after = JSON.parse(await readFile(inventoryFile, 'utf8')) as { projects: Record<string, { labels?: Record<string, string> }> };
    expect(after.projects['gates-ten']!.labels).toEqual({ tier: 'tenant' });
  }, 120_000);
});

describe('a declared project whose labels change with the change', () => {
  it('is still held by the window and the rule its recorded labels fall under: a pause, a restore and a Postgres upgrade', async () => {
    const rollout = `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: fleet }
spec:
  approvals:
    - { name: enterprise-upgrades, classes: [postgres-major-upgrade], selector: { labels: { plan: enterprise } } }
  windows:
    - { name: tenant-nights, schedule: ${CLOSED}, duration: 1h, selector: { labels: { tier: tenant } } }
`;
    const { dir, env } = await checkout('relabelled', {
      'org.yaml': ORG,
      'rollout.yaml': rollout,
      'gates-pause.yaml': project('gates-pause', '{ tier: tenant }'),
      'gates-upgrade.yaml': project('gates-upgrade', '{ plan: enterprise }'),
      'gates-restore.yaml': project('gates-restore', '{ tier: tenant }', '  paused: true\n'),
      'gates-rename.yaml': project('gates-rename', '{ tier: tenant }'),
    });
    expectExit(await runCli([dir], env), 0);
    // Renamed in the same commit: its record is still under the former name when the gate looks.
    await rm(join(dir, 'gates-rename.yaml'));
    await writeFile(join(dir, 'gates-renamed.yaml'), project('gates-renamed', '{}', '  name: gates-rename\n  paused: true\n'));
    await writeFile(join(dir, 'gates-restore.yaml'), project('gates-restore', '{}', '  paused: false\n'));
    // One commit drops the labels and asks for the disruptive change.
    await writeFile(join(dir, 'gates-pause.yaml'), project('gates-pause', '{}', '  paused: true\n'));
    await writeFile(join(dir, 'gates-upgrade.yaml'), project('gates-upgrade', '{}', "  postgres_version: '17'\n"));
    const since = emulator.requests().length;
    // Twice: the first pass must not record the new labels while the change they would free is held.
    for (let pass = 0; pass < 2; pass++) {
      const run = await runCli([dir], env);
      expectExit(run, 0);
      expect(run.stdout).toMatch(/ProjectLifecycle\/gates-pause\/paused update .*waiting for a window: pause-restore: waits for maintenance window tenant-nights/);
      expect(run.stdout).toMatch(/ProjectPostgresVersion\/gates-upgrade\/postgres_version .*waiting for approval: needs approval \(enterprise-upgrades\)/);
      expect(run.stdout).toMatch(/ProjectLifecycle\/gates-restore\/paused update .*waiting for a window: pause-restore: waits for maintenance window tenant-nights/);
      expect(run.stdout).toMatch(/ProjectLifecycle\/gates-renamed\/paused update .*waiting for a window: pause-restore: waits for maintenance window tenant-nights/);
    }
    const writes = emulator.requests().slice(since).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));
    expect(writes.filter((r) => /\/(pause|restore|upgrade)$/.test(r.path))).toEqual([]);
  }, 120_000);
});

describe('the closed vocabulary', () => {
  it('holds a migration under `kinds: [Migrations]` and an ssl_enforcement change in a closed window', async () => {
    const rollout = `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: fleet }
spec:
  approvals:
    - { name: schema-changes, kinds: [Migrations] }
  windows:
    - { name: nights, schedule: ${CLOSED}, duration: 1h, classes: [postgres-restart] }
`;
    const { dir, env } = await checkout('vocabulary', {
      'org.yaml': ORG,
      'rollout.yaml': rollout,
      'gates-db.yaml': project('gates-db', '{ tier: tenant }'),
    });
    expectExit(await runCli([dir], env), 0);
    await writeFile(join(dir, 'gates-db.yaml'), project('gates-db', '{ tier: tenant }', '  ssl_enforcement: { database: true }\n'));
    await writeFile(join(dir, 'schema.yaml'), 'apiVersion: reconciler/v1\nkind: Migrations\nmetadata: { name: schema }\nspec:\n  project: gates-db\n  path: migrations\n');
    await mkdir(join(dir, 'migrations'));
    await writeFile(join(dir, 'migrations', '20260101000000_items.sql'), 'create table items (id bigint primary key);\n');
    const since = emulator.requests().length;
    const run = await runCli([dir], env);
    expectExit(run, 0);
    expect(run.stdout).toMatch(/ProjectSslEnforcement\/gates-db\/ssl_enforcement update .*waiting for a window: postgres-restart: waits for maintenance window nights/);
    expect(run.stdout).toMatch(/Migration\/gates-db\/schema\/20260101000000_items .*waiting for approval: needs approval \(schema-changes\)/);
    const writes = emulator.requests().slice(since).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));
    expect(writes.filter((r) => r.path.endsWith('/ssl-enforcement'))).toEqual([]);
    // The migration did not run: its table does not exist.
    const projects = (await (await fetch(`${emulator.url}/v1/projects`, { headers: { authorization: `Bearer ${emulator.token}` } })).json()) as Array<{ name: string; ref?: string; id: string }>;
    const ref = projects.find((p) => p.name === 'gates-db')!;
    const query = await fetch(`${emulator.url}/v1/projects/${ref.ref ?? ref.id}/database/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${emulator.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: "select count(*)::int as n from information_schema.tables where table_name = 'items'", read_only: true }),
    });
    expect(await query.json()).toEqual([{ n: 0 }]);
  }, 120_000);
});

describe('changing the rules in the same commit as a guarded change', () => {
  const RULED = `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: fleet }
spec:
  approvals:
    - { name: enterprise-deletions, classes: [deletion], selector: { labels: { plan: enterprise } } }
`;
  // The same Rollout without its approval rule (a window that never holds a deletion stays).
  const LOOSENED = `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: fleet }
spec:
  windows:
    - { name: nights, schedule: ${CLOSED}, duration: 1h, classes: [postgres-restart] }
`;

  it('holds the deletion for approval when the Rollout is removed with the project', async () => {
    const { dir, env } = await checkout('rollout-removed', {
      'org.yaml': ORG,
      'rollout.yaml': RULED,
      'rules-ent.yaml': project('rules-ent', '{ plan: enterprise }'),
    });
    expectExit(await runCli([dir], env), 0);
    expect(await liveNames()).toContain('rules-ent');
    await rm(join(dir, 'rollout.yaml'));
    await rm(join(dir, 'rules-ent.yaml'));
    // Twice: the first pass must not record the removal while the change it would free is held.
    for (let pass = 0; pass < 2; pass++) {
      const run = await runCli([dir], env);
      expectExit(run, 0);
      expect(run.stdout).toMatch(
        /Project\/rules-ent delete .*waiting for approval: needs approval \(enterprise-deletions; the Rollout fleet was removed in this revision; its approval rule enterprise-deletions still holds changes of this revision\): reconcile approve --revision content-[0-9a-f]{12}/,
      );
      expect(await liveNames()).toContain('rules-ent');
    }
  }, 120_000);

  it('holds the deletion when only the approval rule is removed with it, and no longer once a revision without the rule was applied', async () => {
    const { dir, env } = await checkout('rule-removed', {
      'org.yaml': ORG,
      'rollout.yaml': RULED,
      'rules-one.yaml': project('rules-one', '{ plan: enterprise }'),
      'rules-two.yaml': project('rules-two', '{ plan: enterprise }'),
    });
    expectExit(await runCli([dir], env), 0);
    const recorded = JSON.parse(await readFile(join(env.RECONCILE_STATE_DIR!, 'rollout-rules.json'), 'utf8')) as { rules: { rollout: string; approvals: Array<{ name: string }> } };
    expect(recorded.rules.rollout).toBe('fleet');
    expect(recorded.rules.approvals.map((rule) => rule.name)).toEqual(['enterprise-deletions']);

    // One commit removes the rule and the project it guards.
    await writeFile(join(dir, 'rollout.yaml'), LOOSENED);
    const removed = await readFile(join(dir, 'rules-one.yaml'), 'utf8');
    await rm(join(dir, 'rules-one.yaml'));
    for (let pass = 0; pass < 2; pass++) {
      const run = await runCli([dir], env);
      expectExit(run, 0);
      expect(run.stdout).toMatch(
        /Project\/rules-one delete .*waiting for approval: needs approval \(enterprise-deletions; the approval rule enterprise-deletions was removed in this revision; it still holds changes of this revision\)/,
      );
      expect(await liveNames()).toEqual(expect.arrayContaining(['rules-one', 'rules-two']));
    }
    // A dry run says the same and records nothing.
    const dry = await runCli(['--dry-run', dir], env);
    expectExit(dry, 0);
    expect(dry.stdout).toMatch(/Project\/rules-one delete .*needs approval \(enterprise-deletions; the approval rule enterprise-deletions was removed/);

    // The next commit brings the project back (nothing held): that revision is applied whole,
    // and its rules (no approval rule) become the rules as last applied.
    await writeFile(join(dir, 'rules-one.yaml'), removed);
    expectExit(await runCli([dir], env), 0);
    const after = JSON.parse(await readFile(join(env.RECONCILE_STATE_DIR!, 'rollout-rules.json'), 'utf8')) as { rules: { approvals: unknown[] } };
    expect(after.rules.approvals).toEqual([]);
    // A deletion in the revision after it is no longer held by the removed rule.
    await rm(join(dir, 'rules-two.yaml'));
    const run = await runCli([dir], env);
    expectExit(run, 0);
    expect(run.stdout).not.toMatch(/needs approval/);
    expect(await liveNames()).not.toContain('rules-two');
    expect(await liveNames()).toContain('rules-one');
  }, 180_000);

  it('reads a state directory without the record: the first pass records the rules and holds nothing extra, later commits are held', async () => {
    const { dir, env } = await checkout('rules-upgraded', {
      'org.yaml': ORG,
      'rollout.yaml': RULED,
      'rules-old.yaml': project('rules-old', '{ plan: enterprise }'),
    });
    expectExit(await runCli([dir], env), 0);
    // A state directory written before the rules were recorded.
    const file = join(env.RECONCILE_STATE_DIR!, 'rollout-rules.json');
    await rm(file);
    const first = await runCli([dir], env);
    expectExit(first, 0);
    expect(first.stdout).not.toMatch(/waiting for/);
    expect((JSON.parse(await readFile(file, 'utf8')) as { rules: { rollout: string } }).rules.rollout).toBe('fleet');
    await writeFile(join(dir, 'rollout.yaml'), LOOSENED);
    await rm(join(dir, 'rules-old.yaml'));
    const run = await runCli([dir], env);
    expectExit(run, 0);
    expect(run.stdout).toMatch(/Project\/rules-old delete .*needs approval \(enterprise-deletions; the approval rule enterprise-deletions was removed in this revision/);
    expect(await liveNames()).toContain('rules-old');
  }, 120_000);
});
