// Saved plans through the built command against an emulator: `--dry-run --out FILE` writes the
// plan as data, `apply FILE` (run in the checkout) applies exactly it or refuses it whole,
// `show FILE` renders it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { assertBuilt, copyFixture, expectExit, runCli, transcript } from './helpers/cli.js';

const CANARY_DB = 'canary-plan-db-5e0a9c17b2';
const CANARY_SMTP = 'canary-plan-smtp-7d41e8a3f6';
const CANARY_SMTP_NEW = 'canary-plan-smtp-rotated-0c9b2f55d1';
const FIXTURE = 'test/fixtures/reconcile-e2e';

let emulator: RunningEmulator;
let api: ApiClient;
let dir: string;
let work: string;
let env: NodeJS.ProcessEnv;

const since = () => emulator.requests().length;
const apiRequests = (from: number) => emulator.requests().slice(from).filter((r) => !r.path.startsWith('/_emulator'));
const writesSince = (from: number) => apiRequests(from).filter((r) => r.method !== 'GET');
const routes = (from: number) => apiRequests(from).map((r) => `${r.method} ${r.route}`).sort();
const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd: dir, stdio: 'pipe' });

async function shopRef(): Promise<string> {
  return (await api.api.listAllProjects()).find((p) => p.name === 'shop')!.ref;
}

/** Out-of-band drift of two planned fields of shop. */
async function drift(): Promise<void> {
  const ref = await shopRef();
  await api.api.updateAuthServiceConfig(ref, { site_url: 'https://defaced.example' });
  await api.api.updateRestapiServiceConfig(ref, { max_rows: 7 });
}

async function planTo(file: string, extra: string[] = [], runEnv = env) {
  const run = await runCli([dir, '--dry-run', '--out', file, ...extra], runEnv);
  expect(run.code === 0 || run.code === 2).toBe(true);
  return run;
}

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  dir = await copyFixture(FIXTURE);
  work = await mkdtemp(join(tmpdir(), 'reconcile-plan-'));
  env = {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: join(work, 'state'),
    RECONCILE_RATE_LIMIT: '1000/1s',
    E2E_DB_PASS: CANARY_DB,
    E2E_SMTP_PASS: CANARY_SMTP,
  };
});

afterAll(async () => {
  await api?.close();
  await emulator?.close();
  await rm(dirname(dir), { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

describe('saved plans (built command, against the emulator)', () => {
  it('saves a plan from empty and applies exactly its entries: creations, readiness waits and read-backs are steps, not a second plan', async () => {
    const file = join(work, 'create.json');
    await planTo(file);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved).toMatchObject({ format: 'fleet-reconciler/plan', version: 1 });
    const planned = new Map<string, string>(saved.result.plan.entries.map((e: { id: string; action: string }) => [e.id, e.action]));

    const from = since();
    const run = await runCli(['apply', file, '--output', 'json'], env, dir);
    expectExit(run, 0);
    const doc = JSON.parse(run.stdout);
    expect(doc.result).toBe('success');
    // Every write outcome is a saved entry with its saved action; the waits are the new projects' `#ready` steps.
    const writes = doc.outcomes.filter((o: { action: string }) => o.action !== 'wait' && o.action !== 'verify');
    expect(writes.length).toBeGreaterThan(0);
    for (const o of writes) expect(planned.get(o.entryId)).toBe(o.action);
    const changes = [...planned].filter(([, action]) => action === 'create' || action === 'update' || action === 'delete').map(([id]) => id).sort();
    expect(writes.map((o: { entryId: string }) => o.entryId).sort()).toEqual(changes);
    expect(doc.outcomes.filter((o: { action: string }) => o.action === 'wait').map((o: { entryId: string }) => o.entryId).sort()).toEqual(['Project/blog#ready', 'Project/shop#ready', 'Project/web#ready']);
    // The read-back of each new project's writes is a step too: it confirms, it plans nothing.
    expect(doc.outcomes.filter((o: { action: string }) => o.action === 'verify').map((o: { entryId: string; result: string }) => `${o.entryId} ${o.result}`).sort()).toEqual(
      ['Project/blog#verify success', 'Project/shop#verify success', 'Project/web#verify success'],
    );
    expect(writesSince(from).filter((r) => r.method === 'POST' && r.route === '/v1/projects')).toHaveLength(3);

    const again = await runCli([dir, '--dry-run', '--detailed-exitcode'], env);
    expectExit(again, 0);
  });

  it('sends the same requests (method and route) as a direct apply of the same change', async () => {
    await drift();
    const direct = since();
    expectExit(await runCli([dir], env), 0);
    const directRoutes = routes(direct);

    await drift();
    const file = join(work, 'drift.json');
    await planTo(file);
    const from = since();
    const run = await runCli(['apply', file], env, dir);
    expectExit(run, 0);
    expect(routes(from)).toEqual(directRoutes);
    expect(run.stdout).toContain('~ ProjectAuth/shop/auth');
    expect(run.stdout).toContain('Apply: 2 succeeded, 0 failed, 0 skipped.');
  });

  it('refuses a plan whose planned field changed out of band: nothing written, the resource named', async () => {
    await drift();
    const file = join(work, 'stale.json');
    await planTo(file);
    await api.api.updateAuthServiceConfig(await shopRef(), { site_url: 'https://defaced-again.example' });
    const from = since();
    const run = await runCli(['apply', file], env, dir);
    expectExit(run, 1);
    expect(writesSince(from)).toEqual([]);
    expect(run.stdout).toContain('ProjectAuth/shop/auth');
    expect(run.stdout).toContain('auth.site_url');
    expect(run.stderr).toContain('the saved plan is refused');
    expect(run.stdout).toContain('The saved plan is refused (1 reason below): nothing was applied.');
    // Headed as refused, never as applied.
    expect(run.stdout).toMatch(/^Plan \(refused: nothing was applied\)/);
    expect(run.stdout).not.toContain('applied: outcomes below');
    // The refused plan left the drift as it was; a fresh plan applies it.
    expectExit(await runCli([dir], env), 0);
  });

  it("refuses a plan when a secret reference's value changed after planning, before any request", async () => {
    const file = join(work, 'secret.json');
    await planTo(file);
    const from = since();
    const run = await runCli(['apply', file], { ...env, E2E_SMTP_PASS: CANARY_SMTP_NEW }, dir);
    expectExit(run, 1);
    expect(apiRequests(from)).toEqual([]);
    expect(run.stdout).toMatch(/shop\.yaml:\d+ \/spec\/auth\/smtp_pass/);
    expect(run.stdout).toContain('env:E2E_SMTP_PASS now resolves to a different value');
  });

  it('refuses a plan made from other manifest content, or at another revision', async () => {
    const file = join(work, 'content.json');
    await planTo(file);
    const shop = join(dir, 'shop.yaml');
    const original = await readFile(shop, 'utf8');
    await writeFile(shop, original.replace('max_rows: 500', 'max_rows: 501'));
    const from = since();
    const changed = await runCli(['apply', file], env, dir);
    expectExit(changed, 1);
    expect(apiRequests(from)).toEqual([]);
    expect(changed.stdout).toContain('differs from the content the plan was made from');
    await writeFile(shop, original);

    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'one');
    const atOne = join(work, 'revision.json');
    await planTo(atOne);
    await writeFile(join(dir, 'NOTES.txt'), 'not a manifest\n');
    git('add', '-A');
    git('commit', '-qm', 'two');
    const moved = await runCli(['apply', atOne], env, dir);
    expectExit(moved, 1);
    expect(moved.stdout).toMatch(/the manifests are at revision [0-9a-f]{40}, the plan was made at [0-9a-f]{40}/);
  });

  it('refuses a plan older than --max-plan-age (default 24h)', async () => {
    const file = join(work, 'old.json');
    await planTo(file);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    saved.createdAt = new Date(Date.now() - 25 * 3_600_000).toISOString();
    await writeFile(file, JSON.stringify(saved));
    const from = since();
    const old = await runCli(['apply', file], env, dir);
    expectExit(old, 1);
    expect(apiRequests(from)).toEqual([]);
    expect(old.stdout).toContain('older than --max-plan-age 24h');
    // Within a longer allowance it applies.
    expectExit(await runCli(['apply', file, '--max-plan-age', '48h'], env, dir), 0);
  });

  it('shows a saved plan exactly as the dry run rendered it', async () => {
    await drift();
    const file = join(work, 'show.json');
    const markdown = await planTo(file, ['--output', 'markdown']);
    const shown = await runCli(['show', file, '--output', 'markdown'], env);
    expectExit(shown, 0);
    expect(shown.stdout).toBe(markdown.stdout);
    const text = await planTo(join(work, 'show-text.json'));
    const shownText = await runCli(['show', join(work, 'show-text.json')], env);
    expect(shownText.stdout).toBe(text.stdout);
  });

  it('names the file and the field of a plan file that is not a plan', async () => {
    const file = join(work, 'bad.json');
    await writeFile(file, JSON.stringify({ format: 'fleet-reconciler/plan', version: 1, createdAt: 'x' }));
    const run = await runCli(['show', file], env);
    expectExit(run, 1);
    expect(run.stderr).toContain(`${file}: /: missing field`);
  });

  it('never writes a secret value into a plan file, or any output', async () => {
    for (const name of ['create.json', 'drift.json', 'stale.json', 'secret.json', 'content.json', 'revision.json', 'show.json']) {
      const text = await readFile(join(work, name), 'utf8');
      for (const canary of [CANARY_DB, CANARY_SMTP, CANARY_SMTP_NEW]) expect(text).not.toContain(canary);
    }
    for (const stream of transcript) for (const canary of [CANARY_DB, CANARY_SMTP, CANARY_SMTP_NEW]) expect(stream).not.toContain(canary);
  });
});
