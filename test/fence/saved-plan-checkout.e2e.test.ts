// `reconcile apply plan.json` applies the checkout it runs in, never the directory recorded in
// the plan: the plan file comes from the pull request's job, which runs the pull request's code.
import { cp, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, expectExit, runCli } from '../e2e/helpers/cli.js';

let emulator: RunningEmulator;
let root: string;
let env: NodeJS.ProcessEnv;

function fleet(project: string): string {
  return [
    'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n',
    `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: ${project}\nspec:\n  organization: acme\n  region: eu-west-1\n`,
  ].join('---\n');
}

async function checkout(name: string, project: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'fleet.yaml'), fleet(project));
  return dir;
}

const projectNames = async () =>
  ((await (await fetch(`${emulator.url}/v1/projects`, { headers: { authorization: `Bearer ${emulator.token}` } })).json()) as Array<{ name: string }>).map((p) => p.name).sort();

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  root = await mkdtemp(join(tmpdir(), 'plan-checkout-'));
  env = { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: join(root, 'state'), RECONCILE_RATE_LIMIT: '1000/1s' };
});
afterAll(async () => {
  await emulator?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('apply plan.json', () => {
  it('run in another checkout than the plan\'s directory, applies nothing from the plan\'s directory: a differing checkout refuses it', async () => {
    // The pull request's job plans its own directory (say, code that declares another project).
    const other = await checkout('pull-request', 'intruder');
    const plan = join(root, 'intruder-plan.json');
    expect([0, 2]).toContain((await runCli([other, '--dry-run', '--out', plan], env)).code);
    // The trusted job runs in its checkout, which declares `shop`.
    const trusted = await checkout('trusted', 'shop');
    const sent = emulator.requests().length;
    const run = await runCli(['apply', plan], env, trusted);
    expectExit(run, 1);
    expect(run.stderr).toContain(`applying the saved plan ${plan} to the checkout ${trusted} at revision (none: not a git checkout)`);
    expect(run.stdout + run.stderr).toContain(`the content of the manifests in ${trusted} differs from the content the plan was made from`);
    expect(emulator.requests().slice(sent).filter((r) => r.method !== 'GET')).toEqual([]);
    expect(await projectNames()).toEqual([]);
  }, 60_000);

  it('made in a copy of the checkout elsewhere, applies the checkout it runs in (the plan\'s directory is gone) and names it; an explicit directory is applied too', async () => {
    const trusted = await checkout('trusted-2', 'shop');
    const copy = join(root, 'copy-elsewhere');
    await cp(trusted, copy, { recursive: true });
    const plan = join(root, 'shop-plan.json');
    expect((await runCli([copy, '--dry-run', '--out', plan], env)).code).toBe(0);
    await rm(copy, { recursive: true });
    const run = await runCli(['apply', plan], env, trusted);
    expectExit(run, 0);
    expect(run.stderr).toContain(`applied the saved plan ${plan} to the checkout ${trusted} at revision (none: not a git checkout)`);
    expect(await projectNames()).toEqual(['shop']);

    // With a directory argument, that directory is the checkout (the working directory is not read).
    const second = await checkout('trusted-3', 'blog');
    await cp(second, join(root, 'copy-3'), { recursive: true });
    const plan3 = join(root, 'blog-plan.json');
    expect((await runCli([join(root, 'copy-3'), '--dry-run', '--out', plan3], env)).code).toBe(0);
    const explicit = await runCli(['apply', plan3, second], env, root);
    expectExit(explicit, 0);
    expect(explicit.stderr).toContain(`to the checkout ${second} at revision`);
    expect(await projectNames()).toEqual(['blog', 'shop']);
  }, 60_000);
});
