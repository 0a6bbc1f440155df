// The built `reconcile` command against an emulator started here, as a user (or CI) runs it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { assertBuilt, copyFixture, expectExit, filesBelow, runCli, transcript } from './helpers/cli.js';

const CANARY_DB = 'canary-e2e-db-4b1d7c29f0';
const CANARY_SMTP = 'canary-e2e-smtp-93ae61d2c7';
const FIXTURE = 'test/fixtures/reconcile-e2e';
const PROJECTS = ['blog', 'shop', 'web'];
/** Sections each fixture project manages: one GET each on a no-change pass. */
const SECTION_READS = ['/v1/projects/{ref}/config/auth', '/v1/projects/{ref}/restapi'];

let emulator: RunningEmulator;
let api: ApiClient;
let dir: string;
let stateDir: string;
let env: NodeJS.ProcessEnv;

const apiRequests = (since: number) => emulator.requests().slice(since).filter((r) => !r.path.startsWith('/_emulator'));

beforeAll(async () => {
  assertBuilt();
  // Lifecycles 600 times faster: a two-minute creation takes 0.2 s of the command's real waiting.
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  dir = await copyFixture(FIXTURE);
  stateDir = await mkdtemp(join(tmpdir(), 'reconcile-e2e-state-'));
  env = {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: stateDir,
    RECONCILE_RATE_LIMIT: '1000/1s',
    E2E_DB_PASS: CANARY_DB,
    E2E_SMTP_PASS: CANARY_SMTP,
  };
});

afterAll(async () => {
  await api?.close();
  await emulator?.close();
  await rm(dirname(dir), { recursive: true, force: true });
  await rm(stateDir, { recursive: true, force: true });
});

describe('reconcile (built command, against the emulator)', () => {
  it('applies the manifests from empty and exits 0', async () => {
    const run = await runCli([dir], env);
    expect(run.stderr).not.toMatch(/"level":"error"/);
    expectExit(run, 0);
    expect(run.stdout).toContain('+ Organization/acme');
    expect(run.stdout).toContain('+ Project/shop');
    expect(run.stdout).toMatch(/Apply: \d+ succeeded, 0 failed, 0 skipped\./);
    // The apply counts writes only: exactly the plan's changes. The readiness waits of the
    // three new projects have their own line, and no log line calls them a change.
    const plan = /Plan: (\d+) to create, (\d+) to update, (\d+) to delete/.exec(run.stdout)!;
    const applied = /Apply: (\d+) succeeded/.exec(run.stdout)!;
    expect(Number(applied[1])).toBe(Number(plan[1]) + Number(plan[2]) + Number(plan[3]));
    expect(run.stdout).toContain('Waited for 3 projects to become ready: 3 ready.');
    const readyLines = run.stderr.split('\n').filter((line) => line.includes('#ready'));
    expect(readyLines).toHaveLength(3);
    for (const line of readyLines) expect(JSON.parse(line)).toMatchObject({ action: 'wait', result: 'success', msg: 'project ready' });
    expect((await api.api.listAllProjects()).map((p) => p.name).sort()).toEqual(PROJECTS);
    expect(emulator.requests().filter((r) => r.method === 'POST' && r.route === '/v1/projects')).toHaveLength(3);
  });

  it('then plans no change: --dry-run --detailed-exitcode exits 0, with one project list and one GET per managed section', async () => {
    const since = emulator.requests().length;
    const run = await runCli([dir, '--dry-run', '--detailed-exitcode'], env);
    expectExit(run, 0);
    expect(run.stdout).toContain('No changes.');
    const sent = apiRequests(since);
    expect(sent.every((r) => r.method === 'GET')).toBe(true);
    const expected = ['/v1/projects', ...PROJECTS.flatMap(() => SECTION_READS)].sort();
    expect(sent.map((r) => r.route).sort()).toEqual(expected);
  });

  it('shows a change made out of band as exactly that drift, and exits 2', async () => {
    const shop = (await api.api.listAllProjects()).find((p) => p.name === 'shop')!;
    await api.api.updateAuthServiceConfig(shop.ref, { site_url: 'https://defaced.example', jwt_exp: 120 });
    const since = emulator.requests().length;
    const run = await runCli([dir, '--dry-run', '--detailed-exitcode', '--output', 'json'], env);
    expectExit(run, 2);
    const doc = JSON.parse(run.stdout);
    const changed = doc.entries.filter((e: { action: string }) => e.action !== 'noop');
    expect(changed).toEqual([
      expect.objectContaining({
        id: 'ProjectAuth/shop/auth',
        action: 'update',
        changes: [{ path: 'auth.site_url', sensitive: false, before: 'https://defaced.example', after: 'https://shop.example' }],
      }),
    ]);
    expect(apiRequests(since).every((r) => r.method === 'GET')).toBe(true);

    const text = await runCli([dir, '--dry-run', '--detailed-exitcode'], env);
    expectExit(text, 2);
    expect(text.stdout).toContain('~ ProjectAuth/shop/auth');
    expect(text.stdout).toContain('~ auth.site_url: "https://defaced.example" -> "https://shop.example"');
    expect(text.stdout).toContain('Plan: 0 to create, 1 to update, 0 to delete, 0 blocked.');
  });

  it('repairs the drift on apply (exit 0), leaving fields the manifests do not mention alone', async () => {
    const run = await runCli([dir], env);
    expectExit(run, 0);
    const shop = (await api.api.listAllProjects()).find((p) => p.name === 'shop')!;
    const auth = await api.api.getAuthServiceConfig(shop.ref);
    expect(auth.site_url).toBe('https://shop.example');
    expect(auth.jwt_exp).toBe(120);
    const again = await runCli([dir, '--dry-run', '--detailed-exitcode'], env);
    expectExit(again, 0);
  });

  it('writes the plan as a pull-request comment with --output markdown', async () => {
    const shop = (await api.api.listAllProjects()).find((p) => p.name === 'shop')!;
    await api.api.updateAuthServiceConfig(shop.ref, { site_url: 'https://defaced.example' });
    const run = await runCli([dir, '--dry-run', '--output', 'markdown'], env);
    expectExit(run, 0);
    expect(run.stdout.split('\n')[0]).toMatch(/^### Manifests `.+` against http:\/\/127\.0\.0\.1:\d+$/);
    expect(run.stdout.split('\n')[2]).toMatch(/^\*\*Plan: 0 to create, 1 to update, 0 to delete, 0 blocked\*\* \(dry run/);
    expect(run.stdout).toContain('<details>');
    expectExit(await runCli([dir], env), 0);
  });

  it('deletes nothing when a manifest is removed under the default policy', async () => {
    await rm(join(dir, 'web.yaml'));
    const since = emulator.requests().length;
    const run = await runCli([dir], env);
    expectExit(run, 0);
    expect(run.stdout).toContain('Project/web');
    expect(run.stdout).toContain('deletion policy `orphan`');
    expect(apiRequests(since).filter((r) => r.method === 'DELETE')).toEqual([]);
    expect((await api.api.listAllProjects()).map((p) => p.name).sort()).toEqual(PROJECTS);
  });

  it('exports the live fleet as manifests that validate and, once their variables are set, plan no change', async () => {
    const out = join(dirname(dir), 'exported');
    const exported = await runCli(['export', '--all', '--out', out], env);
    expectExit(exported, 0);
    const files = await filesBelow(out);
    expect(files.map((f) => f.path.slice(out.length + 1)).sort()).toEqual(['blog.yaml', 'organizations.yaml', 'shop.yaml', 'web.yaml']);
    const shop = files.find((f) => f.path.endsWith('shop.yaml'))!.text;
    expect(shop).toContain('kind: Project');
    expect(shop).toMatch(/ref: [a-z]+/);
    expect(shop).toContain('env: SHOP_SMTP_PASS');
    expect(shop).not.toContain(CANARY_SMTP);
    const validated = await runCli(['validate', out], {});
    expectExit(validated, 0);
    const adoptEnv = { ...env, BLOG_SMTP_PASS: CANARY_SMTP, SHOP_SMTP_PASS: CANARY_SMTP, WEB_SMTP_PASS: CANARY_SMTP, RECONCILE_STATE_DIR: join(dirname(dir), 'adopt-state') };
    const plan = await runCli([out, '--dry-run', '--detailed-exitcode'], adoptEnv);
    expect(plan.stdout).toContain('No changes.');
    expectExit(plan, 0);
  });

  it('exits 1 and sends nothing when the manifests are invalid', async () => {
    await writeFile(join(dir, 'broken.yaml'), 'apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: broken\nspec:\n  organization: acme\n  region: eu-west-1\n  auth:\n    site_ur: x\n');
    const since = emulator.requests().length;
    const run = await runCli([dir, '--dry-run', '--detailed-exitcode'], env);
    expectExit(run, 1);
    expect(run.stdout).toContain('broken.yaml');
    expect(apiRequests(since)).toEqual([]);
    await rm(join(dir, 'broken.yaml'));
  });

  it('rejects an unknown --output value with exit 1', async () => {
    const run = await runCli([dir, '--output', 'yaml'], env);
    expectExit(run, 1);
    expect(run.stderr).toContain('--output: expected one of text, json, markdown, got `yaml`');
  });
});

describe('a pass that cannot observe the fleet (built command, wrong token)', () => {
  it.each([
    ['--dry-run', ['--dry-run']],
    ['apply', []],
  ])('says it could not observe and names the 401, never that the live state matches, and exits 1 (%s)', async (_name, flags) => {
    const since = emulator.requests().length;
    const run = await runCli([dir, ...flags], { ...env, MANAGEMENT_API_TOKEN: 'pat_wrong_e2e_token' });
    expectExit(run, 1);
    expect(run.stdout).toMatch(/^Could not observe the fleet: UnauthorizedError: GET \/v1\/projects: 401 .*\. Nothing was planned or applied\.$/m);
    expect(run.stdout).not.toMatch(/matches|No changes/);
    expect(run.stdout).toContain('Result: failed (1 API request).');
    expect(run.stdout + run.stderr).not.toContain('pat_wrong_e2e_token');
    expect(apiRequests(since).map((r) => `${r.method} ${r.route} ${r.status}`)).toEqual(['GET /v1/projects 401']);
  });

  it('as markdown and as JSON too', async () => {
    const wrong = { ...env, MANAGEMENT_API_TOKEN: 'pat_wrong_e2e_token' };
    const md = await runCli([dir, '--dry-run', '--output', 'markdown'], wrong);
    expectExit(md, 1);
    expect(md.stdout).toMatch(/^### Manifests .*\n\n\*\*Could not observe the fleet: UnauthorizedError: GET \/v1\/projects: 401 /);
    expect(md.stdout).not.toMatch(/matches|No changes/);
    const json = await runCli([dir, '--dry-run', '--output', 'json'], wrong);
    expectExit(json, 1);
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ version: 1, result: 'failed', entries: [], outcomes: [{ entryId: 'Project/*', result: 'failed', error: { type: 'UnauthorizedError' } }] });
    expect(doc.outcomes[0].error.message).toMatch(/^GET \/v1\/projects: 401 /);
    expect(json.stdout).not.toContain('pat_wrong_e2e_token');
  });
});

describe('a project created under faults (built command)', () => {
  it('is created exactly once, and configured only after it is healthy', async () => {
    // Creation takes 20 emulated minutes (2 s at this speed); answers get lost; reads fail now and then.
    const slow = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 }, durations: { projectCreate: 1_200_000 } });
    const state = await mkdtemp(join(tmpdir(), 'reconcile-e2e-faults-'));
    try {
      slow.setFaults({
        seed: 11,
        rules: [
          { route: '/v1/projects', method: 'POST', lostAnswerRate: 1, maxFaults: 1 },
          { route: '/v1/organizations', method: 'POST', lostAnswerRate: 1, maxFaults: 1 },
          { route: '/v1/projects/{ref}', method: 'GET', errorRate: 0.5, maxFaults: 3 },
          { route: '/v1/projects/{ref}/health', method: 'GET', errorRate: 0.5, maxFaults: 3 },
          { route: '/v1/projects/{ref}/config/auth', method: 'GET', errorRate: 0.3, maxFaults: 2 },
        ],
      });
      const faultsDir = await copyFixture(FIXTURE);
      const runEnv = { ...env, MANAGEMENT_API_URL: slow.url, MANAGEMENT_API_TOKEN: slow.token, RECONCILE_STATE_DIR: state };
      const run = await runCli([faultsDir], runEnv);
      expectExit(run, 0);
      const log = slow.requests();
      expect(log.filter((r) => r.method === 'POST' && r.route === '/v1/projects').length).toBe(3);
      expect(log.filter((r) => r.method === 'POST' && r.route === '/v1/organizations').length).toBe(1);
      const client = await createClient({ baseUrl: slow.url, auth: staticToken(slow.token) });
      const names = (await client.api.listAllProjects()).map((p) => p.name).sort();
      await client.close();
      expect(names).toEqual(PROJECTS);
      // Every configuration write came after that project's services reported healthy.
      for (const write of log.filter((r) => r.method !== 'GET' && /^\/v1\/projects\/[^/]+\/(config|restapi)/.test(r.path))) {
        const ref = write.path.split('/')[3]!;
        const at = log.indexOf(write);
        const healthy = log.findIndex((r, i) => i < at && r.path.startsWith(`/v1/projects/${ref}/health`) && r.status === 200);
        expect(healthy, `${write.method} ${write.path}`).toBeGreaterThan(-1);
        expect(write.status).toBeLessThan(400);
      }
      await rm(dirname(faultsDir), { recursive: true, force: true });
    } finally {
      await slow.close();
      await rm(state, { recursive: true, force: true });
    }
  });
});

describe('secrets never leak', () => {
  it('no canary value appears in any output stream, the state directories or any file written', async () => {
    expect(transcript.length).toBeGreaterThan(0);
    for (const text of transcript) {
      expect(text).not.toContain(CANARY_DB);
      expect(text).not.toContain(CANARY_SMTP);
    }
    // The manifests' parent holds everything else the runs wrote: the export and its state directory.
    for (const file of [...(await filesBelow(stateDir)), ...(await filesBelow(dirname(dir)))]) {
      expect(file.text, file.path).not.toContain(CANARY_DB);
      expect(file.text, file.path).not.toContain(CANARY_SMTP);
    }
  });
});

describe('--sandbox (the quick start)', () => {
  it('runs the manifests against an in-process emulator with placeholders for unset references', async () => {
    const run = await runCli([FIXTURE, '--sandbox'], { RECONCILE_STATE_DIR: '' });
    expectExit(run, 0);
    expect(run.stdout).toContain('+ Project/shop');
    expect(run.stdout).toMatch(/Apply: \d+ succeeded, 0 failed, 0 skipped\./);
    expect(run.stderr).toContain('env:E2E_SMTP_PASS');
    expect(run.stderr).toContain('placeholder');
  });

  it('refuses unresolved references outside the sandbox, naming them (exit 1)', async () => {
    const state = await mkdtemp(join(tmpdir(), 'reconcile-e2e-refuse-'));
    const run = await runCli([FIXTURE, '--dry-run'], { MANAGEMENT_API_URL: 'http://127.0.0.1:9', MANAGEMENT_API_TOKEN: 'unused-token', RECONCILE_STATE_DIR: state });
    await rm(state, { recursive: true, force: true });
    expectExit(run, 1);
    expect(run.stdout).toContain('env:E2E_SMTP_PASS');
    expect(run.stdout).toContain('nothing was planned or applied');
  });
});
