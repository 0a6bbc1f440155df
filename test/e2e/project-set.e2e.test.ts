// ProjectSet through the built command against the emulator: a values directory of 50 tenants
// converges; a template change is planned once for the 50; a removed tenant goes by its
// deletion policy (and a Rollout's approval rule); a changed name template is a blocked rename,
// never a deletion; a reordered list plans nothing; and bad sets are refused with errors that
// name the template and the element.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { assertBuilt, expectExit, runCli, type CliRun } from './helpers/cli.js';

const CANARY = 'canary-project-set-3f9c1e77ab';

let emulator: RunningEmulator;
let api: ApiClient;
let root: string;

const ORGANIZATION = 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: fleet\nspec: {}\n';

interface Workspace {
  dir: string;
  write(files: Record<string, string>): Promise<void>;
  remove(file: string): Promise<void>;
  run(args?: string[], env?: NodeJS.ProcessEnv): Promise<CliRun>;
  inventory(): Promise<{ projects: Record<string, { ref: string; name: string; set?: { name: string; key: string } }> }>;
}

let workspaces = 0;

/** A manifests directory and a state directory of their own (a repeated test gets new ones). */
async function workspace(name: string): Promise<Workspace> {
  const own = `${name}-${++workspaces}`;
  const dir = join(root, own, 'manifests');
  const stateDir = join(root, own, 'state');
  await mkdir(dir, { recursive: true });
  const env = { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: stateDir, RECONCILE_RATE_LIMIT: '1000/1s', SET_DB_PASS: CANARY };
  return {
    dir,
    async write(files) {
      for (const [file, text] of Object.entries(files)) {
        await mkdir(dirname(join(dir, file)), { recursive: true });
        await writeFile(join(dir, file), text);
      }
    },
    remove: (file) => rm(join(dir, file)),
    run: (args = [], extra = {}) => runCli([dir, ...args], { ...env, ...extra }),
    inventory: async () => JSON.parse(await readFile(join(stateDir, 'inventory.json'), 'utf8')),
  };
}

/** A set reading the values directory `tenants/`, with the restapi section's max_rows from the template. */
function valuesSet(options: { maxRows?: number; deletion?: 'orphan' | 'delete'; name?: string } = {}): string {
  return `apiVersion: reconciler/v1
kind: ProjectSet
metadata: { name: tenants }
spec:
  generators:
    - values: { path: tenants }
  template:
    metadata:
      name: "${options.name ?? '${tenant}-prod'}"
      labels: { tier: tenant, ring: "\${ring}" }
    spec:
      organization: fleet
      region: eu-west-1
      db_pass: { valueFrom: { env: SET_DB_PASS } }
      restapi: { max_rows: ${options.maxRows ?? 1000} }
      policy: { deletion: ${options.deletion ?? 'orphan'} }
`;
}

function listSet(elements: string[], options: { name?: string; deletion?: 'orphan' | 'delete' } = {}): string {
  return `apiVersion: reconciler/v1
kind: ProjectSet
metadata: { name: shops }
spec:
  generators:
    - list:
        keyField: shop
        elements:
${elements.map((shop) => `          - { shop: ${shop} }`).join('\n')}
  template:
    metadata: { name: "${options.name ?? 'shop-${shop}'}", labels: { tier: shop } }
    spec:
      organization: fleet
      region: eu-west-1
      db_pass: { valueFrom: { env: SET_DB_PASS } }
      policy: { deletion: ${options.deletion ?? 'orphan'} }
`;
}

const live = async () => api.api.listAllProjects();
const requestsSince = (since: number, method: string, route: string) => emulator.requests().slice(since).filter((r) => r.method === method && r.route === route);

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  root = await mkdtemp(join(tmpdir(), 'project-set-e2e-'));
});

afterAll(async () => {
  await api?.close();
  await emulator?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('a ProjectSet over a values directory of 50 tenants', () => {
  it('converges, then plans a template change once for the 50 projects, then releases and holds removed tenants by their policy', async () => {
    const w = await workspace('fifty');
    const tenants = Array.from({ length: 50 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    await w.write({
      'org.yaml': ORGANIZATION,
      'set.yaml': valuesSet(),
      ...Object.fromEntries(tenants.map((tenant, i) => [`tenants/${tenant}.yaml`, `tenant: ${tenant}\nring: ${i < 5 ? 'canary' : 'late'}\n`])),
    });
    const rendered = await runCli(['render', w.dir], {});
    expectExit(rendered, 0);
    expect(rendered.stdout.match(/^kind: Project$/gm)).toHaveLength(50);
    expect(rendered.stdout).toContain('# Project t07-prod: ProjectSet tenants (set.yaml:');

    expectExit(await w.run(), 0);
    const names = (await live()).map((p) => p.name);
    for (const tenant of tenants) expect(names).toContain(`${tenant}-prod`);
    const inventory = await w.inventory();
    expect(inventory.projects['t07-prod']!.set).toEqual({ name: 'tenants', key: 't07' });
    const again = await w.run(['--dry-run', '--detailed-exitcode']);
    expectExit(again, 0);
    expect(again.stdout).toContain('No changes.');

    // A template change: 50 updates, shown once.
    await w.write({ 'set.yaml': valuesSet({ maxRows: 2000 }) });
    const text = await w.run(['--dry-run']);
    expectExit(text, 0);
    expect(text.stdout.match(/ProjectSet tenants: ProjectRestapi\/\*\/restapi/g)).toHaveLength(1);
    expect(text.stdout).toContain('50 projects: t00-prod, t01-prod, t02-prod, t03-prod, t04-prod, and 45 more, 50 write requests');
    expect(text.stdout).toContain('max_rows: 1000 -> 2000');
    expect(text.stdout.match(/max_rows/g)).toHaveLength(1);
    const json = JSON.parse((await w.run(['--dry-run', '--output', 'json'])).stdout);
    expect(json.summary).toMatchObject({ create: 0, update: 50, delete: 0, blocked: 0 });
    expect(json.entries.find((e: { id: string }) => e.id === 'ProjectRestapi/t07-prod/restapi').source.set).toEqual({ name: 'tenants', key: 't07' });
    const markdown = (await w.run(['--dry-run', '--output', 'markdown'])).stdout;
    expect(markdown).toContain('| `~` | ProjectSet `tenants`: `ProjectRestapi/*/restapi` | update | 50 projects: t00-prod');
    expect(markdown).toContain('<details><summary>ProjectSet tenants: ProjectRestapi/*/restapi, 50 projects, 50 write requests</summary>');
    // One tenant's own change names that tenant.
    await w.write({ 'set.yaml': valuesSet(), 'tenants/t03.yaml': 'tenant: t03\nring: late\noverrides:\n  spec: { restapi: { max_rows: 5000 } }\n' });
    const one = await w.run(['--dry-run']);
    expect(one.stdout).toContain('~ ProjectRestapi/t03-prod/restapi update  [ProjectSet tenants, element t03]');
    await w.write({ 'tenants/t03.yaml': 'tenant: t03\nring: late\n' });

    // Removed under `deletion: orphan`: released, never deleted.
    const orphanRef = inventory.projects['t49-prod']!.ref;
    await w.remove('tenants/t49.yaml');
    const released = await w.run();
    expectExit(released, 0);
    expect(released.stdout).toContain('element `t49` of ProjectSet `tenants` removed; deletion policy `orphan`');
    expect((await live()).some((p) => p.ref === orphanRef)).toBe(true);
    expect((await w.inventory()).projects['t49-prod']).toBeUndefined();

    // Under `deletion: delete` and a Rollout rule for deletions: the deletion waits for its approval.
    await w.write({ 'set.yaml': valuesSet({ deletion: 'delete' }), 'rollout.yaml': 'apiVersion: reconciler/v1\nkind: Rollout\nmetadata: { name: fleet }\nspec:\n  approvals:\n    - { name: deletions, classes: [deletion] }\n' });
    expectExit(await w.run(), 0);
    const deleteRef = (await w.inventory()).projects['t48-prod']!.ref;
    await w.remove('tenants/t48.yaml');
    const since = emulator.requests().length;
    const held = await w.run();
    expect(held.stdout).toContain('- Project/t48-prod delete');
    expect(held.stdout).toContain('waiting for approval');
    expect(held.stdout).toContain('element `t48` of ProjectSet `tenants` removed; deletion policy `delete`');
    expect(requestsSince(since, 'DELETE', '/v1/projects/{ref}')).toEqual([]);
    expect((await live()).some((p) => p.ref === deleteRef)).toBe(true);
    for (const run of [text, released, held]) expect(`${run.stdout}${run.stderr}`).not.toContain(CANARY);
  }, 300_000);
});

describe('a ProjectSet written as a list', () => {
  it('plans nothing for a reordered list, and blocks a changed name template without a deletion or a creation', async () => {
    const w = await workspace('list');
    await w.write({ 'org.yaml': ORGANIZATION, 'set.yaml': listSet(['north', 'south', 'east'], { deletion: 'delete' }) });
    expectExit(await w.run(), 0);
    await w.write({ 'set.yaml': listSet(['east', 'north', 'south'], { deletion: 'delete' }) });
    const reordered = await w.run(['--dry-run', '--detailed-exitcode']);
    expectExit(reordered, 0);
    expect(reordered.stdout).toContain('No changes.');

    await w.write({ 'set.yaml': listSet(['east', 'north', 'south'], { deletion: 'delete', name: 'store-${shop}' }) });
    const renamed = JSON.parse((await w.run(['--dry-run', '--output', 'json'])).stdout);
    expect(renamed.summary).toMatchObject({ create: 0, delete: 0, blocked: 3 });
    const blocked = renamed.entries.find((e: { id: string }) => e.id === 'Project/store-north');
    expect(blocked).toMatchObject({ action: 'blocked', changes: [{ path: 'name', before: 'shop-north', after: 'store-north' }] });
    expect(blocked.reason).toContain('ProjectSet `shops`: the name template now gives the project of this element another name');
    expect(blocked.reason).toContain('cannot rename a project');
    const since = emulator.requests().length;
    const text = await w.run();
    expect(text.stdout).toContain('! ProjectSet shops: Project/* blocked  (ProjectSet `shops`: the name template now');
    expect(text.stdout).toContain('3 projects: store-east, store-north, store-south');
    expect(text.stdout).toContain('~ name: "shop-north" -> "store-north"');
    expect(requestsSince(since, 'DELETE', '/v1/projects/{ref}')).toEqual([]);
    expect(requestsSince(since, 'POST', '/v1/projects')).toEqual([]);
    expect(Object.keys((await w.inventory()).projects).sort()).toEqual(['shop-east', 'shop-north', 'shop-south']);

    // A changed key (and so name) is a removal and an addition, shown as such.
    await w.write({ 'set.yaml': listSet(['west', 'north', 'south'], { deletion: 'delete' }) });
    const rekeyed = JSON.parse((await w.run(['--dry-run', '--output', 'json'])).stdout);
    expect(rekeyed.summary).toMatchObject({ create: 1, delete: 1, blocked: 0 });
    expect(rekeyed.entries.find((e: { id: string }) => e.id === 'Project/shop-east')).toMatchObject({ action: 'delete', reason: 'element `east` of ProjectSet `shops` removed; deletion policy `delete`', source: { set: { name: 'shops', key: 'east' } } });
    expect(rekeyed.entries.find((e: { id: string }) => e.id === 'Project/shop-west')).toMatchObject({ action: 'create', source: { set: { name: 'shops', key: 'west' } } });
  }, 120_000);
});

describe('a ProjectSet with errors', () => {
  const run = async (name: string, files: Record<string, string>, env: NodeJS.ProcessEnv = {}) => {
    const w = await workspace(name);
    await w.write({ 'org.yaml': ORGANIZATION, ...files });
    return w.run(['--dry-run'], env);
  };

  it('refuses two elements that make one project, naming both', async () => {
    const result = await run('duplicate', { 'set.yaml': listSet(['north', 'south'], { name: 'shop' }) });
    expectExit(result, 1);
    expect(result.stdout).toMatch(/set\.yaml:\d+:\d+ \/spec\/template\/metadata\/name: two elements make the project `shop`: element 0 of spec\.generators\[0\]\.list \(set\.yaml:9\) and element 1 of spec\.generators\[0\]\.list \(set\.yaml:10\)/);
  });

  it('refuses a missing secret, naming the tenant', async () => {
    const set = listSet(['north']).replace('env: SET_DB_PASS', 'env: "DB_PASS_${shop}"');
    const result = await run('secret', { 'set.yaml': set });
    expectExit(result, 1);
    expect(result.stdout).toContain('env:DB_PASS_NORTH');
    expect(result.stdout).toContain('(ProjectSet `shops`, element `north`: element 0 of spec.generators[0].list (set.yaml:9))');
  });

  it('refuses a set over its limit', async () => {
    const set = listSet(['a1', 'a2', 'a3']).replace('spec:\n  generators:', 'spec:\n  maxProjects: 2\n  generators:');
    const result = await run('limit', { 'set.yaml': set });
    expectExit(result, 1);
    expect(result.stdout).toContain('set.yaml:5:16 /spec/maxProjects: the generators make 3 projects, more than this set\'s limit of 2');
  });

  it('locates a generated document that fails its schema in the template and the element', async () => {
    const result = await run('schema', {
      'set.yaml': valuesSet().replace('max_rows: 1000', 'max_rows: "${rows}"'),
      'tenants/acme.yaml': 'tenant: acme\nring: early\nrows: many\n',
    });
    expectExit(result, 1);
    expect(result.stdout).toMatch(/set\.yaml:15:\d+ \/spec\/restapi\/max_rows: .*got the string `many` \(ProjectSet `tenants`, element `acme`: tenants\/acme\.yaml:1\)/);
  });

  it('refuses an unknown variable, naming the template line and the element', async () => {
    const result = await run('unknown', { 'set.yaml': listSet(['north']).replace('shop-${shop}', 'shop-${shopp}') });
    expectExit(result, 1);
    expect(result.stdout).toContain('unknown variable `shopp` (ProjectSet `shops`, element `north`');
    expect(result.stdout).toContain('did you mean `shop`?');
  });
});
