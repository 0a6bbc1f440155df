// Shards by identity, as users run them: the built command, one process per shard, each with
// its own user's token, against one emulator.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RequestLogEntry, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, expectExit, runCli } from '../e2e/helpers/cli.js';

const TEAMS = ['a', 'b', 'c'] as const;
const PER_TEAM = 15;
const WINDOW_MS = 1000;
const BUDGET = 20;

let emulator: RunningEmulator;
const roots: string[] = [];

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({
    port: 0,
    speed: 600,
    // The emulator allows more than each shard's budget: any excess would be the reconciler's.
    rateLimit: { limit: 1000, windowMs: WINDOW_MS },
    seed: {
      users: TEAMS.map((t) => ({ name: `User ${t}`, email: `${t}@example.test`, tokens: [`token-of-${t}-0123456789`] })),
      organizations: [{ name: 'Acme', slug: 'acmeslug', members: TEAMS.map((t) => ({ user: `${t}@example.test`, role: 'Owner' as const })) }],
    },
  });
});
afterAll(async () => {
  await emulator?.close();
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

const SHARD_MAP = `shards:
${TEAMS.map((t) => `  - name: team-${t}\n    selector:\n      labels: { team: ${t} }\n    credentials:\n      tokenEnv: TOKEN_${t.toUpperCase()}\n    rateLimit: ${BUDGET}/1s`).join('\n')}
`;

async function fleet(shardMap: string, teams: (i: number) => string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'shards-e2e-'));
  roots.push(root);
  const dir = join(root, 'manifests');
  await mkdir(dir, { recursive: true });
  const docs = ['apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec:\n  slug: acmeslug\n'];
  for (let i = 0; i < TEAMS.length * PER_TEAM; i++) {
    docs.push(`apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: p-${String(i).padStart(2, '0')}\n  labels: { team: ${teams(i)} }\nspec:\n  organization: acme\n  region: eu-west-1\n`);
  }
  await writeFile(join(dir, 'fleet.yaml'), docs.join('---\n'));
  await writeFile(join(dir, 'shards.yaml'), shardMap);
  return dir;
}

/** The most requests of one user whose arrival falls within any window of WINDOW_MS. */
function busiestWindow(log: RequestLogEntry[]): Map<string, number> {
  const byUser = new Map<string, number[]>();
  for (const entry of log) {
    if (!entry.user || entry.path.startsWith('/_emulator')) continue;
    byUser.set(entry.user, [...(byUser.get(entry.user) ?? []), entry.time]);
  }
  const busiest = new Map<string, number>();
  for (const [user, times] of byUser) {
    times.sort((x, y) => x - y);
    let most = 0;
    let start = 0;
    for (let end = 0; end < times.length; end++) {
      while (times[end]! - times[start]! >= WINDOW_MS) start++;
      most = Math.max(most, end - start + 1);
    }
    busiest.set(user, most);
  }
  return busiest;
}

describe('shards', () => {
  it('refuses a shard map that leaves a project without an owner, naming the project and the shards', async () => {
    const dir = await fleet(SHARD_MAP, (i) => (i === 7 ? 'nobody' : TEAMS[i % 3]!));
    const validate = await runCli(['validate', dir], {});
    expectExit(validate, 1);
    expect(validate.stdout).toMatch(/fleet\.yaml:\d+:\d+ \/metadata\/labels: project `p-07` is matched by no shard of shards\.yaml \(shards: team-a, team-b, team-c\)/);
    const run = await runCli([dir, '--shard', 'team-a'], { MANAGEMENT_API_URL: emulator.url, TOKEN_A: 'token-of-a-0123456789', RECONCILE_STATE_DIR: join(dir, '..', 'state') });
    expectExit(run, 1);
    expect(run.stderr).toMatch(/project `p-07` is matched by no shard/);
    expect(emulator.requests().filter((r) => r.method === 'POST')).toHaveLength(0);
  }, 60_000);

  it('refuses a shard map in which two shards match one project, naming both', async () => {
    const overlapping = `${SHARD_MAP}  - name: everything-in-acme\n    selector:\n      organization: acme\n      labels: { team: b }\n    credentials:\n      tokenEnv: TOKEN_B\n`;
    const dir = await fleet(overlapping, (i) => TEAMS[i % 3]!);
    const validate = await runCli(['validate', dir], {});
    expectExit(validate, 1);
    expect(validate.stdout).toMatch(/project `p-01` is matched by 2 shards of shards\.yaml: team-b, everything-in-acme/);
    expect(validate.stdout).not.toMatch(/p-00/);
  }, 60_000);

  it('three shards as three processes with three users converge a fleet of 45 projects, each user within its budget', async () => {
    const dir = await fleet(SHARD_MAP, (i) => TEAMS[i % 3]!);
    expectExit(await runCli(['validate', dir], {}), 0);
    const env = {
      MANAGEMENT_API_URL: emulator.url,
      RECONCILE_STATE_DIR: join(dir, '..', 'state'),
      TOKEN_A: 'token-of-a-0123456789',
      TOKEN_B: 'token-of-b-0123456789',
      TOKEN_C: 'token-of-c-0123456789',
    };
    const since = emulator.requests().length;
    const runs = await Promise.all(TEAMS.map((t) => runCli([dir, '--shard', `team-${t}`], env)));
    for (const run of runs) expectExit(run, 0);
    const log = emulator.requests().slice(since);
    // Every shard wrote with its own user's token, and only its own projects.
    const creates = log.filter((r) => r.method === 'POST' && r.route === '/v1/projects' && r.status === 201);
    expect(creates).toHaveLength(45);
    expect(new Set(log.filter((r) => !r.path.startsWith('/_emulator')).map((r) => r.user)).size).toBe(3);
    for (const [user, most] of busiestWindow(log)) expect(most, `user ${user}`).toBeLessThanOrEqual(BUDGET);

    const response = await fetch(`${emulator.url}/v1/projects`, { headers: { authorization: 'Bearer token-of-a-0123456789' } });
    const names = ((await response.json()) as Array<{ name: string }>).map((p) => p.name).sort();
    expect(names).toEqual(Array.from({ length: 45 }, (_, i) => `p-${String(i).padStart(2, '0')}`));
    // Converged: a dry run of each shard plans nothing.
    for (const t of TEAMS) expectExit(await runCli([dir, '--shard', `team-${t}`, '--dry-run', '--detailed-exitcode'], env), 0);
  }, 240_000);
});
