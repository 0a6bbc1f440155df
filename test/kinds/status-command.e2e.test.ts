// End to end, as a user runs it: the built command (`node dist/cli/bin.js`, after `npx tsc -p .`)
// against the emulator over loopback HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DURATIONS, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';

const BIN = new URL('../../dist/cli/bin.js', import.meta.url).pathname;
const CANARY = 'status-canary-5e1f0a9b7c3d';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('reconcile status and reconcile branch (built command)', () => {
  let emulator: RunningEmulator;
  let client: ApiClient;
  let dir: string;
  let ref: string;
  let otherRef: string;
  const outputs: string[] = [];

  const run = (args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [BIN, ...args],
        {
          cwd: dir,
          env: {
            PATH: process.env.PATH,
            MANAGEMENT_API_URL: emulator.url,
            MANAGEMENT_API_TOKEN: emulator.token,
            RECONCILE_RATE_LIMIT: '500/1s',
            RECONCILE_STATE_DIR: join(dir, '.state'),
            SHOP_SECRET: CANARY,
          },
        },
        (error, stdout, stderr) => {
          outputs.push(stdout, stderr);
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
        },
      );
    });

  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error('dist/cli/bin.js is missing: run `npx tsc -p .` first');
    emulator = await startEmulator({ port: 0, rateLimit: { limit: 600, windowMs: 1000 } });
    client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 500, windowMs: 1000 } });
    const api = client.api;
    const org = (await api.listAllOrganizations())[0]?.id ?? (await api.createAnOrganization({ name: 'status-org' })).id;
    const created = await api.createAProject({ name: 'shop', organization_id: org, region: 'eu-west-1', db_pass: 'status-db-pass-1234' } as Parameters<typeof api.createAProject>[0]);
    ref = (created as { ref?: string }).ref ?? created.id;
    const second = await api.createAProject({ name: 'other', organization_id: org, region: 'eu-west-1', db_pass: 'other-db-pass-1234' } as Parameters<typeof api.createAProject>[0]);
    otherRef = (second as { ref?: string }).ref ?? second.id;
    emulator.advanceClock(DEFAULT_DURATIONS.projectCreate + DEFAULT_DURATIONS.servicesHealthy + 1);
    expect((await api.getProject(ref)).status).toBe('ACTIVE_HEALTHY');

    dir = await mkdtemp(join(tmpdir(), 'status-cmd-'));
    await mkdir(join(dir, 'manifests', 'functions', 'hello'), { recursive: true });
    await writeFile(join(dir, 'manifests', 'functions', 'hello', 'index.ts'), 'Deno.serve(() => new Response("hi"));\n');
    await writeFile(
      join(dir, 'manifests', 'shop.yaml'),
      [
        `apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: org\nspec:\n  slug: ${org}\n`,
        `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: shop\nspec:\n  organization: org\n  ref: ${ref}\n  region: eu-west-1\n  auth:\n    saml_enabled: true\n`,
        `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: other\nspec:\n  organization: org\n  ref: ${otherRef}\n  region: eu-west-1\n`,
        `apiVersion: reconciler/v1\nkind: Secrets\nmetadata:\n  name: shop-secrets\nspec:\n  project: shop\n  values:\n    API_SECRET:\n      valueFrom:\n        env: SHOP_SECRET\n`,
        `apiVersion: reconciler/v1\nkind: Function\nmetadata:\n  name: hello\nspec:\n  project: shop\n  source: functions/hello\n  entrypoint: index.ts\n  verify_jwt: false\n`,
        `apiVersion: reconciler/v1\nkind: SsoProvider\nmetadata:\n  name: corp\nspec:\n  project: shop\n  type: saml\n  metadata_url: https://idp.example.com/metadata\n  domains: [example.com]\n`,
        `apiVersion: reconciler/v1\nkind: Branch\nmetadata:\n  name: dev\nspec:\n  project: shop\n  git_branch: develop\n`,
      ].join('---\n'),
    );
  });
  afterAll(async () => {
    await client?.close();
    await emulator?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('before any apply, status shows every declared resource as drifted, to be created, and exits 0', async () => {
    const result = await run(['status', 'manifests', '--live', '--output', 'json']);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const report = JSON.parse(result.stdout);
    const shop = report.projects.find((p: { name: string }) => p.name === 'shop');
    const states = Object.fromEntries(shop.resources.map((r: { id: string; state: string; message?: string }) => [r.id, `${r.state}: ${r.message}`]));
    expect(states).toMatchObject({
      'Secret/shop/API_SECRET': 'drifted: to be created',
      'Function/shop/hello': 'drifted: to be created',
      'SsoProvider/shop/corp': 'drifted: to be created',
      'Branch/shop/dev': 'drifted: to be created',
    });
    expect(shop.resources.find((r: { id: string }) => r.id === 'Project/shop')).toBeDefined();
    expect(shop.observed.ref).toBe(ref);
    expect(shop.observed.health.length).toBeGreaterThan(0);
    expect(Array.isArray(shop.observed.apiKeys)).toBe(true);
    for (const key of shop.observed.apiKeys) expect(Object.keys(key).sort()).toEqual(expect.arrayContaining(['name']));
    expect(JSON.stringify(shop.observed.apiKeys)).not.toMatch(/api_key|hash/);
  });

  it('after an apply everything is in sync; a change made out of band shows as drift with its fields', async () => {
    const apply = await run(['manifests']);
    expect(apply.code, apply.stderr).toBe(0);
    const pending = JSON.parse((await run(['status', 'manifests', '--live', '--output', 'json'])).stdout).projects.find((p: { name: string }) => p.name === 'shop').resources.find((r: { id: string }) => r.id === 'Branch/shop/dev');
    expect(pending).toMatchObject({ state: 'pending', message: 'branch status CREATING_PROJECT' });
    emulator.advanceClock(DEFAULT_DURATIONS.branchStep * 4); // the branch finishes setting up
    const clean = await run(['status', 'manifests', '--live', '--output', 'json']);
    expect(clean.code).toBe(0);
    const shop = JSON.parse(clean.stdout).projects.find((p: { name: string }) => p.name === 'shop');
    expect(shop.resources.filter((r: { state: string }) => r.state !== 'in_sync')).toEqual([]);
    expect(shop.resources.every((r: { observedAt?: string }) => typeof r.observedAt === 'string')).toBe(true);

    await client.api.bulkCreateSecrets(ref, [{ name: 'API_SECRET', value: 'edited-by-hand' }]);
    const branch = (await client.api.listAllBranches(ref)).find((b) => b.name === 'dev')!;
    await client.api.updateABranchConfig(branch.id, { git_branch: 'hotfix' });
    const drifted = await run(['status', 'manifests', '--live']);
    expect(drifted.code).toBe(0);
    expect(drifted.stdout).toMatch(/Secret\s+API_SECRET\s+drifted\s+\S+\s+fields: value/);
    expect(drifted.stdout).toMatch(/Branch\s+dev\s+drifted\s+\S+\s+fields: git_branch/);
    expect(drifted.stdout).toMatch(/Function\s+hello\s+in_sync/);
    expect(drifted.stdout).toContain('Observed only');
    expect(drifted.stdout).toMatch(/health: \d+\/\d+ services healthy/);

    // The plan of the drift, in every format, shows the secret as changed and never its value.
    for (const format of ['json', 'markdown', 'text']) {
      const plan = await run(['manifests', '--dry-run', '--detailed-exitcode', '--output', format]);
      expect(plan.code, plan.stderr).toBe(2);
      expect(plan.stdout).toContain('API_SECRET');
    }
  });

  it('branch push finds the branch by name and prints the workflow run id; an unknown branch exits 1', async () => {
    const pushed = await run(['branch', 'push', 'dev', '--project', 'shop', '--manifests', 'manifests']);
    expect(pushed.stderr).toBe('');
    expect(pushed.code).toBe(0);
    expect(pushed.stdout).toMatch(new RegExp(`^branch dev of project ${ref}: push started, workflow run \\S+\\n$`));
    const reset = await run(['branch', 'reset', 'dev', '--project', ref, '--output', 'json']);
    expect(reset.code).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({ action: 'reset', project: ref, branch: 'dev' });
    const missing = await run(['branch', 'push', 'nope', '--project', ref]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no branch `nope`');
    const usage = await run(['branch', 'merge', 'dev', '--project', ref]);
    expect(usage.code).toBe(1);
  });

  it('--project limits the report to one project; an unknown name is a usage error', async () => {
    const all = await run(['status', 'manifests', '--live', '--output', 'json']);
    expect(JSON.parse(all.stdout).projects.map((p: { name: string }) => p.name)).toEqual(['other', 'shop']);
    const since = emulator.requests().length;
    const one = await run(['status', 'manifests', '--live', '--project', 'shop', '--output', 'json']);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout).projects.map((p: { name: string }) => p.name)).toEqual(['shop']);
    expect(emulator.requests().slice(since).filter((r) => r.path.includes(otherRef))).toEqual([]);
    const unknown = await run(['status', 'manifests', '--live', '--project', 'nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('--project `nope` names no Project manifest');
  });

  it('invalid manifests: status reads nothing, names file, line and field, and exits 1', async () => {
    await mkdir(join(dir, 'broken'), { recursive: true });
    await writeFile(join(dir, 'broken', 'a.yaml'), 'apiVersion: reconciler/v1\nkind: Secrets\nmetadata:\n  name: s\nspec:\n  project: shop\n  valuez: {}\n');
    const since = emulator.requests().length;
    const result = await run(['status', 'broken', '--live']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/a\.yaml:\d+:\d+/);
    expect(result.stderr).toContain('nothing was read');
    expect(emulator.requests().length).toBe(since);
  });

  it('the canary secret value never appears in any output stream or in the state directory', async () => {
    const state: string[] = [];
    for (const entry of await readdir(join(dir, '.state'), { withFileTypes: true, recursive: true })) {
      if (entry.isFile()) state.push(await readFile(join(entry.parentPath, entry.name), 'utf8'));
    }
    const everything = [...outputs, ...state].join('\n');
    expect(everything).not.toContain(CANARY);
  });
});
