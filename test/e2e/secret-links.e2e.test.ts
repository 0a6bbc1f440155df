// A checkout file that is a secret file named by `valueFrom.file` under another name (a hard
// link, or a symbolic link that stays inside the checkout), through the built command against
// the emulator: a manifest file, a migration file and a function's source file are refused by
// `validate` and by a pass, naming the file and the document; the secret is never printed,
// never written to the state directory and never uploaded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { link, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, expectExit, runCli } from './helpers/cli.js';

const SECRET = 'kind-of-secret-smtp-password-5e1f';

let emulator: RunningEmulator;
let root: string;

const FLEET = `apiVersion: reconciler/v1
kind: Organization
metadata: { name: acme }
spec: {}
---
apiVersion: reconciler/v1
kind: Project
metadata: { name: shop }
spec: { organization: acme, region: eu-west-1, db_pass: { valueFrom: { env: E2E_DB_PASS } } }
---
apiVersion: reconciler/v1
kind: Secrets
metadata: { name: shop-secrets }
spec:
  project: shop
  values:
    SMTP_PASSWORD: { valueFrom: { file: secrets/smtp } }
---
apiVersion: reconciler/v1
kind: Function
metadata: { name: hello }
spec: { project: shop, source: ./fn/hello, entrypoint: index.ts }
---
apiVersion: reconciler/v1
kind: Migrations
metadata: { name: shop-schema }
spec: { project: shop, path: .migrations }
`;

let made = 0;
/** A checkout whose secret file, read as YAML, is a document of an unknown kind named by the secret. */
async function checkout(): Promise<string> {
  const dir = join(root, `checkout-${++made}`, 'manifests');
  await mkdir(join(dir, 'secrets'), { recursive: true });
  await mkdir(join(dir, 'fn', 'hello'), { recursive: true });
  await mkdir(join(dir, '.migrations'), { recursive: true });
  await writeFile(join(dir, 'fleet.yaml'), FLEET);
  await writeFile(join(dir, 'secrets', 'smtp'), `kind: ${SECRET}\n`);
  await writeFile(join(dir, 'fn', 'hello', 'index.ts'), 'Deno.serve(() => new Response("hi"));\n');
  await writeFile(join(dir, '.migrations', '1_items.sql'), 'create table items (id int);\n');
  return dir;
}

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  root = await mkdtemp(join(tmpdir(), 'reconcile-secret-links-'));
}, 60_000);

afterAll(async () => {
  await emulator?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function stateText(stateDir: string): Promise<string> {
  const entries = await readdir(stateDir, { recursive: true, withFileTypes: true }).catch(() => []);
  const texts = await Promise.all(entries.filter((e) => e.isFile()).map((e) => readFile(join(e.parentPath, e.name), 'utf8')));
  return texts.join('\n');
}

/**
 * `validate` (when it reads the file: it never reads function sources) and an apply both fail
 * naming `expected`; the secret is nowhere in their output, a saved plan or the state directory.
 */
async function expectRefused(dir: string, expected: RegExp, validateReads = true): Promise<void> {
  const stateDir = join(dir, '..', 'state');
  const env = { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: stateDir, E2E_DB_PASS: 'e2e-database-password-77aa' };
  const validate = await runCli(['validate', dir], {});
  expectExit(validate, validateReads ? 1 : 0);
  const plan = await runCli([dir, '--dry-run', '--out', join(dir, '..', 'plan.json')], env);
  const pass = await runCli([dir, '--yes'], env);
  expectExit(pass, 1);
  for (const run of [validate, plan, pass]) {
    const output = run.stdout + run.stderr;
    if (run !== validate || validateReads) expect(output).toMatch(expected);
    expect(output).not.toContain(SECRET);
  }
  expect(await stateText(stateDir)).not.toContain(SECRET);
  expect(await readFile(join(dir, '..', 'plan.json'), 'utf8').catch(() => '')).not.toContain(SECRET);
}

describe('a checkout file that is a secret file under another name', () => {
  it('a manifest file hard-linked to the secret file is refused, and no error quotes it', async () => {
    const dir = await checkout();
    await link(join(dir, 'secrets', 'smtp'), join(dir, 'evil.yaml'));
    await expectRefused(dir, /evil\.yaml.*is the secret file fleet\.yaml names \(valueFrom\.file\)/);
  }, 120_000);

  it('a migration file hard-linked to the secret file is refused', async () => {
    const dir = await checkout();
    await link(join(dir, 'secrets', 'smtp'), join(dir, '.migrations', '2_x.sql'));
    await expectRefused(dir, /\.migrations\/2_x\.sql.*is the secret file fleet\.yaml names \(valueFrom\.file\)/);
  }, 120_000);

  for (const how of ['hard link', 'symbolic link'] as const) {
    it(`a function's source file that is a ${how} to the secret file is refused, and nothing is uploaded`, async () => {
      const dir = await checkout();
      const target = join(dir, 'fn', 'hello', 'creds.txt');
      if (how === 'hard link') await link(join(dir, 'secrets', 'smtp'), target);
      else await symlink(join(dir, 'secrets', 'smtp'), target);
      const from = emulator.requests().length;
      // A symbolic link is refused as one that leaves the source directory already.
      const why = how === 'hard link' ? 'is the secret file fleet\\.yaml names \\(valueFrom\\.file\\)' : 'is a symbolic link that leaves the source directory';
      await expectRefused(dir, new RegExp(`Function/shop/hello blocked.*\`creds\\.txt\` ${why}`), false);
      expect(emulator.requests().slice(from).filter((request) => /functions\/deploy/.test(request.route))).toEqual([]);
    }, 120_000);
  }

  it('the same checkout without a link applies, and the function is deployed', async () => {
    const dir = await checkout();
    const env = { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: join(dir, '..', 'state'), E2E_DB_PASS: 'e2e-database-password-77aa' };
    const pass = await runCli([dir, '--yes'], env);
    expectExit(pass, 0);
    expect(pass.stdout).toMatch(/\+ Function\/shop\/hello create/);
  }, 120_000);
});
