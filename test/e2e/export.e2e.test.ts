// The built `reconcile export` against a live fleet with functions, SSO providers and
// branches, then the round trip: the export validates and, once its variables are set, a
// dry run over it plans no change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { ManualClock } from '../../src/util/clock.js';
import { CANARY_SECRET, CANARY_SMTP, completeFleet, exportSeed, HELLO_FILES } from '../reconcile/helpers/export-seed.js';
import { assertBuilt, expectExit, filesBelow, runCli, transcript } from './helpers/cli.js';

let emulator: RunningEmulator;
let api: ApiClient;
let clock: ManualClock;
let root: string;
let out: string;
let env: NodeJS.ProcessEnv;
/** The variables the export's references name, set to the live values. */
let adoptEnv: NodeJS.ProcessEnv;

const apiRequests = (since: number) => emulator.requests().slice(since).filter((r) => !r.path.startsWith('/_emulator'));

interface JsonEntry {
  kind: string;
  name: string;
  action: string;
  changes: Array<{ path: string }>;
}

beforeAll(async () => {
  assertBuilt();
  clock = new ManualClock(Date.now());
  emulator = await startEmulator({ port: 0, clock, seed: exportSeed(), rateLimit: { limit: 100_000, windowMs: 60_000 } });
  api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  await completeFleet(api, clock);
  root = await mkdtemp(join(tmpdir(), 'reconcile-export-e2e-'));
  out = join(root, 'exported');
  env = {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: join(root, 'state'),
    RECONCILE_RATE_LIMIT: '1000/1s',
  };
  adoptEnv = { ...env, RECONCILE_STATE_DIR: join(root, 'adopt-state'), SHOP_SMTP_PASS: CANARY_SMTP, SHOP_STRIPE_KEY: CANARY_SECRET };
});

afterAll(async () => {
  await api?.close();
  await emulator?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('reconcile export (built command)', () => {
  it('writes the manifests and every live function\'s sources under functions/<project>/<slug>/', async () => {
    const run = await runCli(['export', '--all', '--out', out], env);
    expectExit(run, 0);
    const files = await filesBelow(out);
    const names = files.map((f) => f.path.slice(out.length + 1)).sort();
    expect(names).toEqual(
      [
        'blog.yaml',
        'organizations.yaml',
        'shop.yaml',
        ...Object.keys(HELLO_FILES).map((p) => `functions/shop/hello/${p}`),
        'functions/shop/webhook/main.ts',
        'functions/blog/hello/index.ts',
      ].sort(),
    );
    for (const [path, content] of Object.entries(HELLO_FILES)) expect(await readFile(join(out, 'functions/shop/hello', path), 'utf8')).toBe(content);
    expect(run.stderr).toContain(`wrote ${names.length} files to ${out}`);
    const shop = await readFile(join(out, 'shop.yaml'), 'utf8');
    expect(shop).toContain('kind: Function');
    expect(shop).toContain('source: functions/shop/hello');
    expect(shop).toContain('kind: SsoProvider');
    expect(shop).toContain('name: acme.example');
    expect(shop).toContain('kind: Branch');
    expect(shop).toContain('name: staging');
    // The default branch is the project itself, the removed function is gone.
    expect(shop).not.toContain('name: main');
    expect(shop).not.toContain('retired');
    expect(shop).toContain('env: SHOP_STRIPE_KEY');
  });

  it('the export validates; a plan needs the secrets\' variables first, and names the missing ones', async () => {
    const run = await runCli(['validate', out], {});
    expectExit(run, 0);
    const unset = await runCli([out, '--dry-run', '--detailed-exitcode'], { ...env, RECONCILE_STATE_DIR: join(root, 'unset-state') });
    expectExit(unset, 1);
    expect(`${unset.stdout}${unset.stderr}`).toContain('env:SHOP_STRIPE_KEY');
  });

  it('a dry run over the adopted export plans no change for any kind, and sends GET requests only', async () => {
    const since = emulator.requests().length;
    const run = await runCli([out, '--dry-run', '--detailed-exitcode', '--output', 'json'], adoptEnv);
    expectExit(run, 0);
    const sent = apiRequests(since);
    expect(sent.every((r) => r.method === 'GET')).toBe(true);
    const entries = JSON.parse(run.stdout).entries as JsonEntry[];
    expect(entries.filter((e) => e.action !== 'noop')).toEqual([]);
    // The round trip covered the new kinds: they were planned, and they matched.
    const planned = (kind: string) => entries.filter((e) => e.kind === kind).map((e) => e.name).sort();
    expect(planned('Function')).toEqual(['hello', 'hello', 'webhook']);
    expect(planned('SsoProvider')).toEqual(['acme.example', 'partner.example']);
    expect(planned('Branch')).toEqual(['preview-42', 'staging']);
    // Without a record of a deploy, each function's live sources were read once and compared.
    expect(sent.filter((r) => r.route === '/v1/projects/{ref}/functions/{function_slug}/body')).toHaveLength(3);

    const text = await runCli([out, '--dry-run', '--detailed-exitcode'], adoptEnv);
    expectExit(text, 0);
    expect(text.stdout).toContain('No changes.');
  });

  it('after adoption, a change made out of band to a function, a provider or a branch shows as drift (exit 2)', async () => {
    const shop = (await api.api.listAllProjects()).find((p) => p.name === 'shop')!;
    await api.api.updateAFunction(shop.ref, 'hello', { verify_jwt: true } as never);
    const staging = (await api.api.listAllBranches(shop.ref)).find((b) => b.name === 'staging')!;
    await api.api.updateABranchConfig(staging.id, { persistent: false });
    const acme = (await api.api.listAllSsoProvider(shop.ref)).items.find((p) => p.domains?.some((d) => d.domain === 'acme.example'))!;
    await api.api.updateASsoProvider(shop.ref, acme.id, { attribute_mapping: { keys: { email: { name: 'email' } } } });
    const run = await runCli([out, '--dry-run', '--detailed-exitcode', '--output', 'json'], adoptEnv);
    expectExit(run, 2);
    const changed = (JSON.parse(run.stdout).entries as JsonEntry[]).filter((e) => e.action !== 'noop');
    const summary = changed.map((e) => [e.kind, e.name, e.action, e.changes.map((c) => c.path)]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(summary).toEqual([
      ['Branch', 'staging', 'update', ['persistent']],
      ['Function', 'hello', 'update', ['verify_jwt']],
      ['SsoProvider', 'acme.example', 'update', ['attribute_mapping']],
    ]);
    // Put it back through the exported manifests.
    expectExit(await runCli([out], adoptEnv), 0);
    expectExit(await runCli([out, '--dry-run', '--detailed-exitcode'], adoptEnv), 0);
  });

  it('exporting again into the same directory works; a stray file in a function directory is refused, nothing written', async () => {
    expectExit(await runCli(['export', '--all', '--out', out], env), 0);
    const stray = join(out, 'functions/shop/hello/stale.ts');
    await writeFile(stray, 'old\n');
    const before = await readFile(join(out, 'shop.yaml'), 'utf8');
    await writeFile(join(out, 'shop.yaml'), `${before}# local edit\n`);
    const run = await runCli(['export', '--all', '--out', out], env);
    expectExit(run, 1);
    expect(run.stderr).toContain('functions/shop/hello/stale.ts');
    expect(run.stderr).toContain('Nothing was written.');
    expect(await readFile(join(out, 'shop.yaml'), 'utf8')).toBe(`${before}# local edit\n`);
    await rm(stray);
    await writeFile(join(out, 'shop.yaml'), before);
  });

  it('to stdout: functions are left out (their sources are files), and stderr says so', async () => {
    const since = emulator.requests().length;
    const run = await runCli(['export', '--project', 'shop'], env);
    expectExit(run, 0);
    expect(run.stdout).not.toContain('kind: Function');
    expect(run.stdout).toContain('kind: SsoProvider');
    expect(run.stdout).toContain('kind: Branch');
    expect(run.stderr).toContain('2 functions not exported (shop/hello, shop/webhook): function sources are files, give --out DIR to export them');
    expect(apiRequests(since).filter((r) => r.route.endsWith('/body'))).toEqual([]);
  });

  it('refuses a function whose file names leave its directory, naming it, and writes nothing', async () => {
    const bad = await startEmulator({
      port: 0,
      seed: {
        organizations: [{ slug: 'acme', name: 'acme' }],
        projects: [
          {
            name: 'shop',
            organization: 'acme',
            functions: [{ slug: 'evil', entrypoint_path: 'index.ts', files: { 'index.ts': 'x', '../../../escaped.ts': 'y' } }],
          },
        ],
      },
    });
    try {
      const target = join(root, 'refused', 'out');
      const run = await runCli(['export', '--all', '--out', target], { ...env, MANAGEMENT_API_URL: bad.url, MANAGEMENT_API_TOKEN: bad.token });
      expectExit(run, 1);
      expect(run.stderr).toContain('project `shop`, function `evil`: file name `../../../escaped.ts` from the service leaves the function directory');
      expect(run.stderr).toContain('nothing was written');
      expect(existsSync(join(root, 'refused'))).toBe(false);
      expect(existsSync(join(root, 'escaped.ts'))).toBe(false);
    } finally {
      await bad.close();
    }
  });

  it('no secret value appears in any output stream or exported file', async () => {
    expect(transcript.length).toBeGreaterThan(0);
    for (const text of transcript) {
      expect(text).not.toContain(CANARY_SECRET);
      expect(text).not.toContain(CANARY_SMTP);
    }
    for (const file of await filesBelow(root)) {
      expect(file.text, file.path).not.toContain(CANARY_SECRET);
      expect(file.text, file.path).not.toContain(CANARY_SMTP);
    }
  });
});

describe('reconcile export of a fleet with projects the service cannot read (built command)', () => {
  let fleet: RunningEmulator;
  let fleetClock: ManualClock;
  let dir: string;
  let fleetEnv: NodeJS.ProcessEnv;
  let brokenRef: string;
  let startingRef: string;

  const createProject = async (name: string): Promise<string> => {
    const response = await fetch(`${fleet.url}/v1/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fleet.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, organization_id: 'fleetorg', region: 'eu-west-1', db_pass: 'pw-123456-long' }),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { ref: string }).ref;
  };
  const statusOf = async (ref: string): Promise<string> => {
    const response = await fetch(`${fleet.url}/v1/projects/${ref}`, { headers: { authorization: `Bearer ${fleet.token}` } });
    return ((await response.json()) as { status: string }).status;
  };

  beforeAll(async () => {
    fleetClock = new ManualClock(Date.now());
    fleet = await startEmulator({
      port: 0,
      clock: fleetClock,
      rateLimit: { limit: 100_000, windowMs: 60_000 },
      seed: {
        organizations: [{ slug: 'fleetorg', name: 'fleet' }],
        projects: [
          {
            name: 'healthy',
            organization: 'fleetorg',
            region: 'eu-west-1',
            config: { auth: { site_url: 'https://healthy.example' } },
            secrets: { API_KEY: CANARY_SECRET },
            functions: [{ slug: 'hello', files: { 'index.ts': 'export {};\n' } }],
          },
        ],
      },
    });
    // A creation that fails (the emulator's lifecycle fault), then one still coming up.
    fleet.setFaults({ lifecycleFailures: { create: 1 } });
    brokenRef = await createProject('broken');
    fleet.advanceUntilIdle();
    fleet.setFaults({});
    startingRef = await createProject('starting');
    expect(await statusOf(brokenRef)).toBe('INIT_FAILED');
    expect(await statusOf(startingRef)).toBe('COMING_UP');
    dir = await mkdtemp(join(tmpdir(), 'reconcile-export-unreadable-'));
    fleetEnv = { MANAGEMENT_API_URL: fleet.url, MANAGEMENT_API_TOKEN: fleet.token, RECONCILE_STATE_DIR: join(dir, 'state'), RECONCILE_RATE_LIMIT: '1000/1s' };
  });

  afterAll(async () => {
    await fleet?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const bareProject = (name: string, ref: string) =>
    `kind: Project\nmetadata:\n  name: ${name}\nspec:\n  organization: fleet\n  ref: ${ref}\n  region: eu-west-1\n`;

  it('--all: exports the rest of the fleet normally and the unreadable projects as a bare Project, warning about each (exit 0)', async () => {
    const since = fleet.requests().length;
    const target = join(dir, 'all');
    const run = await runCli(['export', '--all', '--out', target], fleetEnv);
    expectExit(run, 0);
    expect(run.stderr).toContain(`reconcile export: warning: project broken (${brokenRef}) is INIT_FAILED`);
    expect(run.stderr).toContain(`reconcile export: warning: project starting (${startingRef}) is COMING_UP`);
    expect(run.stderr).not.toContain('project healthy');
    const names = (await filesBelow(target)).map((f) => f.path.slice(target.length + 1)).sort();
    expect(names).toEqual(['broken.yaml', 'functions/healthy/hello/index.ts', 'healthy.yaml', 'organizations.yaml', 'starting.yaml']);
    const broken = await readFile(join(target, 'broken.yaml'), 'utf8');
    expect(broken).toContain(bareProject('broken', brokenRef));
    expect(broken.match(/^kind: /gm)).toEqual(['kind: ']);
    expect(await readFile(join(target, 'starting.yaml'), 'utf8')).toContain(bareProject('starting', startingRef));
    const healthy = await readFile(join(target, 'healthy.yaml'), 'utf8');
    expect(healthy).toContain('site_url: https://healthy.example');
    expect(healthy).toContain('kind: Secrets');
    expect(healthy).toContain('kind: Function');
    // Nothing of the unreadable projects was asked for beyond the project list.
    const paths = fleet.requests().slice(since).map((r) => r.path);
    expect(paths.filter((p) => p.includes(brokenRef) || p.includes(startingRef))).toEqual([]);
    expect(paths.some((p) => p.includes('/config/auth'))).toBe(true);
  });

  it('--project REF of an unreadable project: the bare Project and its Organization, with the warning (exit 0)', async () => {
    const run = await runCli(['export', '--project', brokenRef], fleetEnv);
    expectExit(run, 0);
    expect(run.stderr).toContain(`reconcile export: warning: project broken (${brokenRef}) is INIT_FAILED`);
    expect(run.stdout).toContain('kind: Organization');
    expect(run.stdout).toContain(bareProject('broken', brokenRef));
    expect(run.stdout.match(/^kind: /gm)).toHaveLength(2);
  });
});
