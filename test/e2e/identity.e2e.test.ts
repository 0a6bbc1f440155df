// Identity, deletion and honest results, through the built command against the emulator
// (and, where the service misbehaves, a proxy in front of it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { assertBuilt, expectExit, filesBelow, runCli, type CliRun } from './helpers/cli.js';
import { startFaultyProxy, type FaultyProxy } from './helpers/proxy.js';

const CANARY_DB = 'canary-identity-db-7d21c9e04b';
const CANARY_SMTP = 'canary-identity-smtp-5f8a03be91';

let emulator: RunningEmulator;
let api: ApiClient;
let proxy: FaultyProxy;
let root: string;

const organization = (name: string) => `apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: ${name}\nspec: {}\n`;

function project(name: string, options: { org?: string; apiName?: string; ref?: string; deletion?: 'orphan' | 'delete'; extra?: string } = {}): string {
  return [
    'apiVersion: reconciler/v1',
    'kind: Project',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    `  organization: ${options.org ?? 'acme'}`,
    ...(options.apiName ? [`  name: ${options.apiName}`] : []),
    ...(options.ref ? [`  ref: ${options.ref}`] : []),
    '  region: eu-west-1',
    '  db_pass:',
    '    valueFrom:',
    '      env: ID_DB_PASS',
    ...(options.deletion ? ['  policy:', `    deletion: ${options.deletion}`] : []),
    options.extra ?? '',
  ].join('\n');
}

interface Workspace {
  dir: string;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  write(files: Record<string, string>): Promise<void>;
  remove(file: string): Promise<void>;
  run(args?: string[], env?: NodeJS.ProcessEnv): Promise<CliRun>;
  inventory(): Promise<{ projects: Record<string, { ref: string; name: string; organizationId: string }> }>;
}

async function workspace(name: string, baseUrl = emulator.url): Promise<Workspace> {
  const dir = join(root, name, 'manifests');
  const stateDir = join(root, name, 'state');
  await mkdir(dir, { recursive: true });
  const env = {
    MANAGEMENT_API_URL: baseUrl,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: stateDir,
    RECONCILE_RATE_LIMIT: '1000/1s',
    ID_DB_PASS: CANARY_DB,
    ID_SMTP_PASS: CANARY_SMTP,
  };
  return {
    dir, stateDir, env,
    async write(files) {
      for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
    },
    async remove(file) {
      await rm(join(dir, file));
    },
    run: (args = [], extra = {}) => runCli([dir, ...args], { ...env, ...extra }),
    inventory: async () => JSON.parse(await readFile(join(stateDir, 'inventory.json'), 'utf8')),
  };
}

const live = async () => api.api.listAllProjects();
const writes = (since: number, method: string, route: string) => emulator.requests().slice(since).filter((r) => r.method === method && r.route === route);

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  proxy = await startFaultyProxy(emulator.url);
  root = await mkdtemp(join(tmpdir(), 'identity-e2e-'));
});

afterAll(async () => {
  await proxy?.close();
  await api?.close();
  await emulator?.close();
  await rm(root, { recursive: true, force: true });
});

describe('renaming a Project manifest under deletion: delete', () => {
  it.each([
    ['the same spec.name', 'ren-a', false],
    ['an explicit spec.ref', 'ren-b', true],
  ])('with %s deletes nothing, moves the inventory record, and the next pass has no change', async (_, name, byRef) => {
    const w = await workspace(name);
    await w.write({ 'org.yaml': organization('acme'), 'p.yaml': project(name, { apiName: name, deletion: 'delete' }) });
    expectExit(await w.run(), 0);
    const ref = (await w.inventory()).projects[name]!.ref;

    await w.write({ 'p.yaml': project(`${name}-renamed`, { apiName: name, deletion: 'delete', ...(byRef ? { ref } : {}) }) });
    const dry = await w.run(['--dry-run', '--output', 'json']);
    expectExit(dry, 0);
    const plan = JSON.parse(dry.stdout);
    expect(plan.summary).toMatchObject({ create: 0, delete: 0, update: 1, blocked: 0 });
    expect(plan.entries.find((e: { id: string }) => e.id === `Project/${name}-renamed`)).toMatchObject({
      action: 'update',
      changes: [{ path: 'metadata.name', before: name, after: `${name}-renamed` }],
    });

    const since = emulator.requests().length;
    const applied = await w.run();
    expectExit(applied, 0);
    expect(applied.stdout).toContain(`renamed from \`${name}\``);
    expect(writes(since, 'DELETE', '/v1/projects/{ref}')).toEqual([]);
    expect(writes(since, 'POST', '/v1/projects')).toEqual([]);
    expect((await live()).filter((p) => p.name === name).map((p) => p.ref)).toEqual([ref]);
    const inventory = await w.inventory();
    expect(inventory.projects[name]).toBeUndefined();
    expect(inventory.projects[`${name}-renamed`]).toMatchObject({ ref, name });

    const again = await w.run(['--dry-run', '--detailed-exitcode']);
    expectExit(again, 0);
    expect(again.stdout).toContain('No changes.');

    // Removing the renamed document is what deletes the project.
    await w.remove('p.yaml');
    const removed = await w.run();
    expectExit(removed, 0);
    expect((await live()).some((p) => p.ref === ref)).toBe(false);
  });
});

describe('a function deploy the service acknowledges and does not apply', () => {
  it('fails the pass (exit 1) and names the function in text, json and markdown', async () => {
    const w = await workspace('dropped', proxy.url);
    await mkdir(join(w.dir, 'hello'), { recursive: true });
    await w.write({
      'org.yaml': organization('acme'),
      'p.yaml': project('fn-p'),
      'hello/index.ts': 'export default () => new Response("hello");\n',
      'fn.yaml': 'apiVersion: reconciler/v1\nkind: Function\nmetadata:\n  name: hello\nspec:\n  project: fn-p\n  source: ./hello\n  entrypoint: index.ts\n',
    });
    proxy.mode = 'drop-deploy';
    try {
      const text = await w.run();
      expectExit(text, 1);
      expect(proxy.dropped).toContain('hello');
      expect(text.stdout).toMatch(/x Function\/fn-p\/hello failed: still differs after the apply \(sources/);
      expect(text.stdout).toContain('Result: failed');

      const json = await w.run(['--output', 'json']);
      expectExit(json, 1);
      const doc = JSON.parse(json.stdout);
      expect(doc.result).toBe('failed');
      expect(doc.outcomes).toContainEqual(
        expect.objectContaining({ entryId: 'Function/fn-p/hello', result: 'failed', error: expect.objectContaining({ type: 'StillDiffersError' }) }),
      );
      expect(doc.resources).toContainEqual(expect.objectContaining({ id: 'Function/fn-p/hello', state: 'failed' }));

      const markdown = await w.run(['--output', 'markdown']);
      expectExit(markdown, 1);
      expect(markdown.stdout).toContain('`Function/fn-p/hello` failed: still differs after the apply');
      expect(markdown.stdout).toContain('Result: **failed**.');
      // The status record (the one record of a pass) names the failure.
      const recorded = JSON.parse(await readFile(join(w.stateDir, 'status.json'), 'utf8'));
      expect(recorded.projects['fn-p'].resources).toContainEqual(expect.objectContaining({ kind: 'Function', name: 'hello', state: 'failed' }));
    } finally {
      proxy.mode = 'forward';
    }
    // Once the service applies it, the pass succeeds.
    expectExit(await w.run(), 0);
  });
});

describe('a project moved to another organization', () => {
  it('is blocked and named; the inventory keeps its organization; a new project of the second organization is created there', async () => {
    const w = await workspace('move');
    await w.write({ 'org.yaml': organization('acme') + '---\n' + organization('beta'), 'p.yaml': project('mv-p') });
    expectExit(await w.run(), 0);
    const before = await w.inventory();
    const acmeId = before.projects['mv-p']!.organizationId;

    await w.write({ 'p.yaml': project('mv-p', { org: 'beta' }), 'q.yaml': project('nw-p', { org: 'beta' }) });
    const since = emulator.requests().length;
    const run = await w.run();
    expectExit(run, 1);
    expect(run.stdout).toContain('! Project/mv-p');
    expect(run.stdout).toMatch(/the manifest declares `beta` \([^)]+\): a project cannot move between organizations/);
    expect(writes(since, 'POST', '/v1/projects')).toHaveLength(1);
    const projects = await live();
    const moved = projects.filter((p) => p.name === 'mv-p');
    expect(moved).toHaveLength(1);
    expect(moved[0]!.organization_id).toBe(acmeId);
    const created = projects.find((p) => p.name === 'nw-p')!;
    expect(created.organization_id).not.toBe(acmeId);
    const inventory = await w.inventory();
    expect(inventory.projects['mv-p']!.organizationId).toBe(acmeId);
    expect(inventory.projects['nw-p']!.organizationId).toBe(created.organization_id);
  });
});

describe('a changed spec.name', () => {
  it('is planned as a blocked change, the same with and without a state directory, and never creates a second project', async () => {
    const w = await workspace('name');
    await w.write({ 'org.yaml': organization('acme'), 'p.yaml': project('nm-p') });
    expectExit(await w.run(), 0);

    await w.write({ 'p.yaml': project('nm-p', { apiName: 'nm-renamed' }) });
    const entryOf = (run: CliRun) => JSON.parse(run.stdout).entries.find((e: { id: string }) => e.id === 'Project/nm-p');
    const withState = await w.run(['--dry-run', '--output', 'json']);
    const withoutState = await w.run(['--dry-run', '--output', 'json'], { RECONCILE_STATE_DIR: join(root, 'name', 'empty-state') });
    expectExit(withState, 1);
    expectExit(withoutState, 1);
    expect(entryOf(withState)).toMatchObject({ action: 'blocked', changes: [{ path: 'name', before: 'nm-p', after: 'nm-renamed' }] });
    expect(entryOf(withState).reason).toContain('the API has no call that renames a project');
    expect(entryOf(withoutState)).toEqual(entryOf(withState));

    const since = emulator.requests().length;
    for (const stateDir of [w.stateDir, join(root, 'name', 'empty-state-2')]) {
      const run = await w.run([], { RECONCILE_STATE_DIR: stateDir });
      expectExit(run, 1);
      expect(run.stdout).toContain('! Project/nm-p');
    }
    expect(writes(since, 'POST', '/v1/projects')).toEqual([]);
    expect((await live()).filter((p) => p.name === 'nm-p' || p.name === 'nm-renamed').map((p) => p.name)).toEqual(['nm-p']);
  });
});

describe('a service message that quotes the request', () => {
  it('never shows a resolved secret or a generated password in stdout, stderr or the state directory', async () => {
    const w = await workspace('echo', proxy.url);
    await w.write({ 'org.yaml': organization('acme'), 'p.yaml': project('ec-p') });
    expectExit(await w.run(), 0);
    // Now the echo meets the auth write of ec-p (smtp_pass) and the create of ec-g (a generated password).
    await w.write({
      'p.yaml': project('ec-p', { extra: '  auth:\n    smtp_host: smtp.example\n    smtp_pass:\n      valueFrom:\n        env: ID_SMTP_PASS\n' }),
      'g.yaml': 'apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: ec-g\nspec:\n  organization: acme\n  region: eu-west-1\n',
    });
    proxy.mode = 'echo-writes';
    proxy.echoed.length = 0;
    let runs: CliRun[];
    try {
      runs = [await w.run(), await w.run(['--output', 'json']), await w.run(['--output', 'markdown'])];
    } finally {
      proxy.mode = 'forward';
    }
    const echoed = proxy.echoed.join('\n');
    expect(echoed).toContain(CANARY_SMTP);
    const generated = [...echoed.matchAll(/"db_pass":"([^"]+)"/g)].map((m) => m[1]!);
    expect(generated.length).toBeGreaterThan(0);
    for (const run of runs) {
      expectExit(run, 1);
      expect(run.stdout + run.stderr).toContain('[redacted]');
    }
    const everything = [...runs.flatMap((r) => [r.stdout, r.stderr]), ...(await filesBelow(w.stateDir)).map((f) => f.text)].join('\n');
    for (const secret of [CANARY_SMTP, CANARY_DB, ...generated]) expect(everything).not.toContain(secret);
  });
});
