// What `validate` (and every pass) refuses in a Rollout, through the built command: waves that
// span shards (the chart's three-shard example with the docs' canary example), a wave that
// selects no project, a kind that does not exist, a rule name with control characters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { REPO, assertBuilt, expectExit, runCli } from './helpers/cli.js';

let root: string;

beforeAll(async () => {
  assertBuilt();
  root = await mkdtemp(join(tmpdir(), 'reconcile-rollout-validate-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const ORG = 'apiVersion: reconciler/v1\nkind: Organization\nmetadata: { name: acme }\nspec: {}\n';

function project(name: string, labels: string): string {
  return `apiVersion: reconciler/v1
kind: Project
metadata:
  name: ${name}
  labels: ${labels}
spec:
  organization: acme
  region: eu-west-1
  db_pass: { valueFrom: { env: VALIDATE_DB_PASS } }
`;
}

/** The docs' example Rollout (the first YAML block of the rollouts page). */
async function docsRollout(): Promise<string> {
  const page = await readFile(join(REPO, 'docs/rollouts.md'), 'utf8');
  const block = /```yaml\n([\s\S]*?)```/.exec(page)![1]!;
  expect(block).toContain('kind: Rollout');
  return block;
}

async function checkout(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  return dir;
}

/** Three shards by `team`, a canary in team a, tenants everywhere: the docs' and the chart's layout. */
async function threeShards(name: string, rollouts: Record<string, string>): Promise<string> {
  const dir = await checkout(name, {
    'org.yaml': ORG,
    ...rollouts,
    'demo.yaml': project('acme-internal-demo', '{ team: a, ring: canary, tier: tenant }'),
    'shop.yaml': project('shop', '{ team: a, tier: tenant }'),
    'blog.yaml': project('blog', '{ team: b, tier: tenant, plan: enterprise }'),
    'wiki.yaml': project('wiki', '{ team: c, tier: tenant }'),
  });
  await copyFile(join(REPO, 'helm/examples/three-shards/shards.yaml'), join(dir, 'shards.yaml'));
  return dir;
}

describe('a rollout across shards', () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  });
  afterAll(async () => {
    await emulator?.close();
  });

  it('is refused by validate and by a shard\'s apply before anything is written, naming the shards', async () => {
    const dir = await threeShards('across', { 'rollout.yaml': await docsRollout() });
    const validate = await runCli(['validate', dir], {});
    expectExit(validate, 1);
    expect(validate.stdout + validate.stderr).toMatch(/the waves of Rollout `tenants` select projects of 3 shards of shards\.yaml \(canary: team-a; .*tenants: team-a, team-b, team-c.*\).*one Rollout per shard, each with `spec.shard` and its own canary wave/);

    // The shard without the canary does not go ahead: nothing is applied.
    const tokenFile = join(root, 'token');
    await writeFile(tokenFile, emulator.token);
    const since = emulator.requests().length;
    const apply = await runCli([dir, '--shard', 'team-b'], { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN_FILE: tokenFile, RECONCILE_STATE_DIR: join(root, 'across-state'), VALIDATE_DB_PASS: 'validate-db-pass-7f01' });
    expectExit(apply, 1);
    expect(apply.stdout).toContain('select projects of 3 shards');
    expect(emulator.requests().slice(since).filter((r) => r.method !== 'GET')).toEqual([]);
  }, 60_000);

  it('accepts one Rollout per shard, each with its own canary, and refuses a second one for the same shard or a shard the map lacks', async () => {
    const rollout = (name: string, shard: string, canary: string) => `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: ${name} }
spec:
  shard: ${shard}
  waves:
    - { name: canary, selector: { labels: { ring: ${canary} } } }
`;
    const files = {
      'rollout-a.yaml': rollout('team-a', 'team-a', 'canary'),
      'rollout-b.yaml': rollout('team-b', 'team-b', 'canary-b'),
    };
    const dir = await threeShards('per-shard', files);
    await writeFile(join(dir, 'blog.yaml'), project('blog', '{ team: b, ring: canary-b, tier: tenant }'));
    expectExit(await runCli(['validate', dir], {}), 0);

    await writeFile(join(dir, 'rollout-c.yaml'), rollout('again', 'team-a', 'canary'));
    await writeFile(join(dir, 'rollout-d.yaml'), rollout('nowhere', 'team-z', 'canary'));
    const refused = await runCli(['validate', dir], {});
    expectExit(refused, 1);
    const out = refused.stdout + refused.stderr;
    expect(out).toContain('a second Rollout document for shard `team-a`');
    expect(out).toContain('Rollout `nowhere` names shard `team-z`: no shard of that name in shards.yaml (shards: team-a, team-b, team-c)');
  }, 60_000);
});

describe('the closed vocabulary of a Rollout', () => {
  it('refuses a wave that selects no project, an unknown kind (with a suggestion) and a name with control characters', async () => {
    const dir = await checkout('vocabulary', {
      'org.yaml': ORG,
      'demo.yaml': project('demo', '{ ring: canary }'),
      'rollout.yaml': `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: tenants }
spec:
  waves:
    - { name: canary, selector: { labels: { ring: canery } } }
  approvals:
    - { name: schema, kinds: [Migraton] }
    - { name: "ok\\u001b[2A\\u001b[Jx", classes: [deletion] }
`,
    });
    const run = await runCli(['validate', dir], {});
    expectExit(run, 1);
    const out = run.stdout + run.stderr;
    expect(out).toContain('Migraton');
    expect(out).toMatch(/did you mean `?Migration`?/);
    expect(out).toMatch(/\/spec\/approvals\/1\/name/);
    expect(out).not.toContain('\u001b[2A');

    // With the other errors fixed, the empty wave is still refused.
    await writeFile(join(dir, 'rollout.yaml'), `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: tenants }
spec:
  waves:
    - { name: canary, selector: { labels: { ring: canery } } }
  approvals:
    - { name: schema, kinds: [Migrations] }
`);
    const empty = await runCli(['validate', dir], {});
    expectExit(empty, 1);
    expect(empty.stdout + empty.stderr).toContain('wave `canary` of Rollout `tenants` selects no project');
  }, 60_000);
});
