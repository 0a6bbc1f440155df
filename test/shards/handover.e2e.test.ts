// Ownership is a property of the whole checkout, as users run shards: the built command, one
// process per shard, each with its own user's token, against one emulator. A project moved
// from one shard to another by its labels is handed over and adopted, never deleted, in either
// order of the one-shot runs and with both shard daemons running; a missing organization is
// created by one shard only.
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, expectExit, runCli, type CliRun } from '../e2e/helpers/cli.js';
import { DaemonProcess, type LogLine } from '../daemon/daemon-process.js';
import { GitSyncRepo } from '../daemon/git-repo.js';

const TEAMS = ['a', 'b', 'c'] as const;
const tokenOf = (team: string) => `token-of-${team}-0123456789`;

let emulator: RunningEmulator | undefined;
const daemons: DaemonProcess[] = [];
const repos: GitSyncRepo[] = [];
const roots: string[] = [];

beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const daemon of daemons.splice(0)) await daemon.stop();
  for (const repo of repos.splice(0)) await repo.close();
  await emulator?.close();
  emulator = undefined;
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

/** Three users; `Acme` (slug acmeslug) has users a and b as members. */
async function start(organizations: Array<{ name: string; slug: string; members: string[] }> = [{ name: 'Acme', slug: 'acmeslug', members: ['a', 'b'] }]): Promise<RunningEmulator> {
  emulator = await startEmulator({
    port: 0,
    speed: 600,
    rateLimit: { limit: 100_000, windowMs: 60_000 },
    seed: {
      users: TEAMS.map((t) => ({ name: `User ${t}`, email: `${t}@example.test`, tokens: [tokenOf(t)] })),
      organizations: organizations.map((o) => ({ name: o.name, slug: o.slug, members: o.members.map((t) => ({ user: `${t}@example.test`, role: 'Owner' as const })) })),
    },
  });
  return emulator;
}

const shardMap = (teams: readonly string[], extra = '') =>
  `${extra}shards:\n${teams.map((t) => `  - name: team-${t}\n    selector:\n      labels: { team: ${t} }\n    credentials:\n      tokenEnv: TOKEN_${t.toUpperCase()}\n`).join('')}`;

/** The checkout: `keep-a` (team a), `keep-b` (team b) and `mover` (deletion: delete, with a Secrets document) in team `moverTeam`. */
function checkout(moverTeam: string | undefined, keepATeam = 'a'): Record<string, string | null> {
  const project = (name: string, team: string, extra = '') =>
    `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: ${name}\n  labels: { team: ${team} }\nspec:\n  organization: acme\n  region: eu-west-1\n${extra}`;
  return {
    'shards.yaml': shardMap(['a', 'b']),
    'fleet.yaml': [
      'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec:\n  slug: acmeslug\n',
      project('keep-a', keepATeam),
      project('keep-b', 'b'),
    ].join('---\n'),
    'mover.yaml':
      moverTeam === undefined
        ? null
        : [
            project('mover', moverTeam, '  policy: { deletion: delete }\n'),
            'apiVersion: reconciler/v1\nkind: Secrets\nmetadata:\n  name: mover-secrets\nspec:\n  project: mover\n  values:\n    SMTP_KEY: { valueFrom: { env: MOVER_SMTP_KEY } }\n',
          ].join('---\n'),
  };
}

async function writeCheckout(dir: string, files: Record<string, string | null>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    if (text === null) await rm(join(dir, name), { force: true });
    else await writeFile(join(dir, name), text);
  }
}

async function tempCheckout(): Promise<{ dir: string; stateDir: string }> {
  const root = await mkdtemp(join(tmpdir(), 'handover-e2e-'));
  roots.push(root);
  const dir = join(root, 'manifests');
  await mkdir(dir, { recursive: true });
  return { dir, stateDir: join(root, 'state') };
}

function envFor(stateDir: string): NodeJS.ProcessEnv {
  return {
    MANAGEMENT_API_URL: emulator!.url,
    RECONCILE_STATE_DIR: stateDir,
    RECONCILE_RATE_LIMIT: '1000/1s',
    TOKEN_A: tokenOf('a'),
    TOKEN_B: tokenOf('b'),
    TOKEN_C: tokenOf('c'),
    MOVER_SMTP_KEY: 'smtp-key-value-9f2c',
  };
}

async function live(token = tokenOf('a')): Promise<Array<{ name: string; ref: string; organization_id: string }>> {
  const response = await fetch(`${emulator!.url}/v1/projects`, { headers: { authorization: `Bearer ${token}` } });
  return (await response.json()) as Array<{ name: string; ref: string; organization_id: string }>;
}

async function inventoryOf(stateDir: string, shard: string): Promise<Record<string, { ref: string }>> {
  const text = await readFile(join(stateDir, 'shards', shard, 'inventory.json'), 'utf8').catch(() => '{}');
  return ((JSON.parse(text) as { projects?: Record<string, { ref: string }> }).projects ?? {});
}

const projectDeletes = () => emulator!.requests().filter((r) => r.method === 'DELETE' && r.route === '/v1/projects/{ref}');
const projectCreates = () => emulator!.requests().filter((r) => r.method === 'POST' && r.route === '/v1/projects' && r.status === 201);

async function shard(team: string, dir: string, stateDir: string, ...args: string[]): Promise<CliRun> {
  return runCli([dir, '--shard', `team-${team}`, ...args], envFor(stateDir));
}

describe('a project moved between shards by its labels', () => {
  for (const order of ['old shard first', 'new shard first'] as const) {
    it(`is handed over and adopted, never deleted (one-shot runs, ${order}), and ends managed by the new shard`, async () => {
      await start();
      const { dir, stateDir } = await tempCheckout();
      await writeCheckout(dir, checkout('a'));
      expectExit(await shard('a', dir, stateDir), 0);
      expectExit(await shard('b', dir, stateDir), 0);
      const mover = (await live()).find((p) => p.name === 'mover')!;
      expect(mover).toBeDefined();
      expect(Object.keys(await inventoryOf(stateDir, 'team-a')).sort()).toEqual(['keep-a', 'mover']);

      // Only the labels change: the project now belongs to team-b.
      await writeCheckout(dir, checkout('b'));
      expectExit(await runCli(['validate', dir], {}), 0);

      // The old shard's plan shows the handover, in every output format.
      const text = await shard('a', dir, stateDir, '--dry-run');
      expectExit(text, 0);
      expect(text.stdout).toContain('handed over to shard `team-b`, which now owns `mover` (shards.yaml)');
      expect(text.stdout).toMatch(/shard: "team-a" -> "team-b"/);
      const markdown = await shard('a', dir, stateDir, '--dry-run', '--output', 'markdown');
      expect(markdown.stdout).toContain('handed over to shard `team-b`');
      const json = JSON.parse((await shard('a', dir, stateDir, '--dry-run', '--output', 'json')).stdout) as { entries: Array<{ id: string; action: string; changes: unknown[]; reason?: string }> };
      const entry = json.entries.find((e) => e.id === 'Project/mover')!;
      expect(entry).toMatchObject({ action: 'update', changes: [{ path: 'shard', before: 'team-a', after: 'team-b' }] });
      expect(entry.reason).toContain(`the live project ${mover.ref} is not touched`);

      const runs = order === 'old shard first' ? (['a', 'b'] as const) : (['b', 'a'] as const);
      for (const team of runs) {
        const run = await shard(team, dir, stateDir);
        expectExit(run, 0);
        if (team === 'a') expect(run.stderr).toMatch(/handed the project over to shard `team-b`/);
        if (team === 'b') expect(run.stderr).toMatch(/adopted the project into the inventory of shard `team-b`/);
      }
      expect(projectDeletes()).toHaveLength(0);
      expect(projectCreates()).toHaveLength(3);
      expect((await live()).filter((p) => p.name === 'mover')).toEqual([mover]);
      expect(Object.keys(await inventoryOf(stateDir, 'team-a'))).toEqual(['keep-a']);
      expect((await inventoryOf(stateDir, 'team-b')).mover?.ref).toBe(mover.ref);
      // Its secret moved with it: still there, and the new shard plans no change.
      const secrets = await fetch(`${emulator!.url}/v1/projects/${mover.ref}/secrets`, { headers: { authorization: `Bearer ${tokenOf('b')}` } });
      expect(((await secrets.json()) as Array<{ name: string }>).map((s) => s.name)).toContain('SMTP_KEY');
      for (const team of ['a', 'b']) expectExit(await shard(team, dir, stateDir, '--dry-run', '--detailed-exitcode'), 0);

      // Managed by the new shard: removed from the whole checkout under deletion: delete, only
      // team-b deletes it.
      await writeCheckout(dir, checkout(undefined));
      expectExit(await shard('a', dir, stateDir), 0);
      expect(projectDeletes()).toHaveLength(0);
      expectExit(await shard('b', dir, stateDir), 0);
      expect(projectDeletes().map((r) => [r.path, r.user])).toEqual([[`/v1/projects/${mover.ref}`, (await userId('b'))]]);
    }, 120_000);
  }

  it('is handed over and adopted, never deleted, with both shard daemons running, also when the old shard is left with no project', async () => {
    await start();
    const repo = await GitSyncRepo.create();
    repos.push(repo);
    const stateDir = join(repo.base, 'state');
    const first = await repo.commit(checkout('a'), 'mover in team-a');
    await repo.publish(first);
    const started = (team: string) => {
      const daemon = new DaemonProcess([repo.link, '--watch', '--shard', `team-${team}`, '--metrics-addr', '127.0.0.1:0', '--observe', 'none', '--log-format', 'json'], envFor(stateDir));
      daemons.push(daemon);
      return daemon;
    };
    const [a, b] = [started('a'), started('b')];
    const passOf = (daemon: DaemonProcess, revision: string, from = 0) =>
      daemon.waitFor((l: LogLine) => (l.msg === 'pass finished' || l.msg === 'pass finished with errors') && l.revision === revision, { from, timeoutMs: 60_000 });
    for (const daemon of [a, b]) expect((await passOf(daemon, first)).result).toBe('success');
    const mover = (await live()).find((p) => p.name === 'mover')!;
    expect(mover).toBeDefined();

    const [fromA, fromB] = [a.lines.length, b.lines.length];
    const moved = await repo.commit(checkout('b'), 'mover moves to team-b');
    await repo.publish(moved, first);
    for (const daemon of [a, b]) expect((await passOf(daemon, moved)).result).toBe('success');
    await a.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('handed the project over to shard `team-b`'), { from: fromA });
    await b.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('adopted the project into the inventory of shard `team-b`'), { from: fromB });

    expect(projectDeletes()).toHaveLength(0);
    expect((await live()).filter((p) => p.name === 'mover')).toEqual([mover]);
    expect(Object.keys(await inventoryOf(stateDir, 'team-a'))).toEqual(['keep-a']);
    expect((await inventoryOf(stateDir, 'team-b')).mover?.ref).toBe(mover.ref);

    // Its last project moves too: team-a declares nothing of its own now, and still hands it
    // over (its part of the checkout is empty, the checkout is not).
    const [againA, againB] = [a.lines.length, b.lines.length];
    const emptied = await repo.commit(checkout('b', 'b'), 'keep-a moves to team-b too');
    await repo.publish(emptied, moved);
    for (const daemon of [a, b]) expect((await passOf(daemon, emptied)).result).toBe('success');
    await a.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('handed the project over to shard `team-b`') && l.project === 'keep-a', { from: againA });
    await b.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('adopted the project into the inventory of shard `team-b`') && l.project === 'keep-a', { from: againB });
    expect(Object.keys(await inventoryOf(stateDir, 'team-a'))).toEqual([]);
    expect(Object.keys(await inventoryOf(stateDir, 'team-b')).sort()).toEqual(['keep-a', 'keep-b', 'mover']);
    expect(projectDeletes()).toHaveLength(0);
    expect(projectCreates()).toHaveLength(3);
  }, 150_000);
});

async function userId(team: string): Promise<string> {
  const info = (await (await fetch(`${emulator!.url}/_emulator/info`)).json()) as { users: Array<{ id: string; email: string }> };
  return info.users.find((u) => u.email === `${team}@example.test`)!.id;
}

describe('a missing organization shared by shards', () => {
  const fleet = (organization: string) =>
    [
      `apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: ${organization}\nspec: {}\n`,
      ...TEAMS.flatMap((t) => [0, 1].map((i) => `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: ${organization}-${t}${i}\n  labels: { team: ${t} }\nspec:\n  organization: ${organization}\n  region: eu-west-1\n`)),
    ].join('---\n');
  const organizationCreates = () => emulator!.requests().filter((r) => r.method === 'POST' && r.route === '/v1/organizations');

  it('three shards (three users) leave one organization holding all their projects: its owner creates it, the others wait until they are members', async () => {
    await start([]);
    const { dir, stateDir } = await tempCheckout();
    await writeCheckout(dir, { 'shards.yaml': shardMap(TEAMS), 'fleet.yaml': fleet('shared') });
    const env = { ...envFor(stateDir), RECONCILE_ORGANIZATION_WAIT: '120s' };
    // Shards b and c start first and wait (they look at the organization list again and again);
    // then the owner starts, all three running at once.
    const [userA, userB, userC] = [await userId('a'), await userId('b'), await userId('c')];
    const looks = (user: string) => emulator!.requests().filter((r) => r.method === 'GET' && r.route === '/v1/organizations' && r.user === user).length;
    const waiting = [runCli([dir, '--shard', 'team-b'], env), runCli([dir, '--shard', 'team-c'], env)];
    // (A shard that creates the organization itself instead of waiting ends this wait too.)
    while ((looks(userB) < 2 || looks(userC) < 2) && organizationCreates().length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const runs = [runCli([dir, '--shard', 'team-a'], env), ...waiting];
    // The operator's part: once the owner (team-a, the first shard in map order) has created
    // it, the other shards' users become members (the dashboard's invitation).
    while (!organizationCreates().some((r) => r.status === 201 && r.user === userA)) await new Promise((resolve) => setTimeout(resolve, 20));
    const slug = ((await (await fetch(`${emulator!.url}/v1/organizations`, { headers: { authorization: `Bearer ${tokenOf('a')}` } })).json()) as Array<{ id: string; name: string }>).find((o) => o.name === 'shared')!.id;
    for (const t of ['b', 'c']) {
      const added = await fetch(`${emulator!.url}/_emulator/organizations/${slug}/members`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: `${t}@example.test`, role: 'Developer' }) });
      expect(added.status).toBe(200);
    }
    const done = await Promise.all(runs);
    for (const run of done) expectExit(run, 0);
    for (const run of done.slice(1)) expect(run.stderr).toMatch(/waiting for organization `shared` \(created by shard `team-a`\)/);
    expect(organizationCreates().map((r) => [r.status, r.user])).toEqual([[201, await userId('a')]]);
    const projects = await live();
    expect(projects.map((p) => p.name).sort()).toEqual(TEAMS.flatMap((t) => [`shared-${t}0`, `shared-${t}1`]).sort());
    expect(new Set(projects.map((p) => p.organization_id))).toEqual(new Set([slug]));
    for (const t of TEAMS) expectExit(await runCli([dir, '--shard', `team-${t}`, '--dry-run', '--detailed-exitcode'], env), 0);
  }, 180_000);

  it('a shard that does not own a missing organization never creates it, and fails naming the organization and its owner', async () => {
    await start([]);
    const { dir, stateDir } = await tempCheckout();
    await writeCheckout(dir, { 'shards.yaml': shardMap(TEAMS, 'organizations:\n  solo: team-c\n'), 'fleet.yaml': fleet('solo') });
    const env = { ...envFor(stateDir), RECONCILE_ORGANIZATION_WAIT: '0s' };
    const run = await runCli([dir, '--shard', 'team-a', '--output', 'json'], env);
    expectExit(run, 1);
    const plan = JSON.parse(run.stdout) as { entries: Array<{ id: string; action: string; reason?: string }> };
    expect(plan.entries.find((e) => e.id === 'Organization/solo')).toMatchObject({
      action: 'blocked',
      reason: 'organization `solo` is not visible to this shard, and only shard `team-c` creates it (its owner in shards.yaml): once it exists, this shard\'s user must be a member of it',
    });
    expect(organizationCreates()).toHaveLength(0);
    expect(projectCreates()).toHaveLength(0);
    // The owner named in the map creates it, and only it.
    expectExit(await runCli([dir, '--shard', 'team-c'], env), 0);
    expect(organizationCreates().map((r) => [r.status, r.user])).toEqual([[201, await userId('c')]]);
  }, 120_000);
});
