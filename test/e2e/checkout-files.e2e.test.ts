// What a migration file may point at, through the built command against the emulator: a file
// of the migrations directory that is a symbolic link out of the checkout (to a token, to a
// harmless-looking `.sql` file), a migrations directory that links out, and a `..` path are all
// refused by `validate` and by a pass before any request; the error names the link and never
// quotes what the file holds. A link that stays inside the checkout is read as the file it names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, expectCheckoutRefused, expectExit, runCli } from './helpers/cli.js';

const TOKEN = 'sbp_0123456789abcdef0123456789abcdef01234567';
const OUTSIDE_SQL = 'create table exfiltrated (secret text);';

let emulator: RunningEmulator;
let root: string;
let env: NodeJS.ProcessEnv;

const MANIFESTS = (path: string) => `apiVersion: reconciler/v1
kind: Organization
metadata: { name: acme }
spec: {}
---
apiVersion: reconciler/v1
kind: Project
metadata: { name: shop, labels: { tier: tenant } }
spec: { organization: acme, region: eu-west-1, db_pass: { valueFrom: { env: E2E_DB_PASS } } }
---
apiVersion: reconciler/v1
kind: Migrations
metadata: { name: shop-schema }
spec:
  project: shop
  path: ${path}
`;

/** A fresh checkout beside an outside directory holding a token and a `.sql` file. */
let made = 0;
async function checkout(name: string, path: string): Promise<string> {
  const base = join(root, `${name}-${++made}`);
  const dir = join(base, 'manifests');
  await mkdir(join(dir, '.migrations'), { recursive: true });
  await mkdir(join(base, 'outside'), { recursive: true });
  await writeFile(join(base, 'outside', 'api-token'), `${TOKEN}\n`);
  await writeFile(join(base, 'outside', '3_extra.sql'), `${OUTSIDE_SQL}\n`);
  await writeFile(join(dir, 'fleet.yaml'), MANIFESTS(path));
  await writeFile(join(dir, '.migrations', '1_items.sql'), 'create table items (id int);\n');
  return dir;
}

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  root = await mkdtemp(join(tmpdir(), 'reconcile-checkout-files-'));
  env = {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: join(root, 'state'),
    E2E_DB_PASS: 'e2e-database-password-77aa',
  };
}, 60_000);

afterAll(async () => {
  await emulator?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** validate and a pass both refuse the checkout, naming `expected`, quoting nothing of the outside files, sending nothing. */
async function expectRefused(dir: string, expected: RegExp): Promise<void> {
  await expectCheckoutRefused(dir, expected, { env, requests: () => emulator.requests(), never: [TOKEN, 'sbp_', 'exfiltrated'] });
}

describe('what a migration file may point at', () => {
  it('a migration file that links to a token outside the checkout is refused, and the token is never printed', async () => {
    const dir = await checkout('token-link', '.migrations');
    await symlink(join(dir, '..', 'outside', 'api-token'), join(dir, '.migrations', '2_x.sql'));
    await expectRefused(dir, /\.migrations\/2_x\.sql.*symbolic link that leaves the manifests directory/);
  }, 120_000);

  it('a migration file that links to a valid `.sql` file outside the checkout is neither planned nor applied', async () => {
    const dir = await checkout('sql-link', '.migrations');
    await symlink(join(dir, '..', 'outside', '3_extra.sql'), join(dir, '.migrations', '3_extra.sql'));
    await expectRefused(dir, /\.migrations\/3_extra\.sql.*symbolic link that leaves the manifests directory/);
  }, 120_000);

  it('a migrations directory that links out of the checkout, and a `..` path, are refused at the document', async () => {
    // A dot-directory: discovery leaves it out, so only the Migrations document reads it.
    const linked = await checkout('dir-link', '.linked');
    await symlink(join(linked, '..', 'outside'), join(linked, '.linked'));
    await expectRefused(linked, /fleet\.yaml.*path `\.linked` links outside the manifests directory: migrations are read from the checkout only/);
    const dotted = await checkout('dot-dot', '../outside');
    await expectRefused(dotted, /fleet\.yaml.*path `\.\.\/outside` lies outside the manifests directory: migrations are read from the checkout only/);
  }, 120_000);

  it('a migration file that links to a secret file of the checkout (valueFrom.file) is refused, and the secret never printed', async () => {
    const dir = await checkout('secret-link', '.migrations');
    await mkdir(join(dir, 'secrets'));
    await writeFile(join(dir, 'secrets', 'smtp'), `${TOKEN}\n`);
    await writeFile(join(dir, 'smtp.yaml'), `apiVersion: reconciler/v1
kind: Secrets
metadata: { name: shop-secrets }
spec:
  project: shop
  values:
    SMTP_PASSWORD: { valueFrom: { file: secrets/smtp } }
`);
    await symlink(join(dir, 'secrets', 'smtp'), join(dir, '.migrations', '2_x.sql'));
    await expectRefused(dir, /\.migrations\/2_x\.sql.*is the secret file smtp\.yaml names \(valueFrom\.file\)/);
  }, 120_000);

  it("a migration file that links to the reconciler's own token file in the checkout is refused, and the token never printed", async () => {
    const dir = await checkout('own-token-link', '.migrations');
    await writeFile(join(dir, '.token'), `${emulator.token}\n`);
    await symlink(join(dir, '.token'), join(dir, '.migrations', '2_x.sql'));
    const from = emulator.requests().length;
    const { MANAGEMENT_API_TOKEN: _token, ...withoutToken } = env;
    const runs = [await runCli(['validate', dir, '--token-file', join(dir, '.token')], {}), await runCli([dir], { ...withoutToken, MANAGEMENT_API_TOKEN_FILE: join(dir, '.token') })];
    for (const run of runs) {
      expectExit(run, 1);
      const output = run.stdout + run.stderr;
      expect(output).toMatch(/\.migrations\/2_x\.sql.*is one of the reconciler's own credential files/);
      expect(output).not.toContain(emulator.token);
    }
    expect(emulator.requests().slice(from)).toEqual([]);
  }, 120_000);

  it('a migration file that links to another file of the checkout (a .env) is reported by line and column, never quoting it', async () => {
    const dir = await checkout('env-link', '.migrations');
    await writeFile(join(dir, '.env'), `${TOKEN}\n`);
    await symlink(join(dir, '.env'), join(dir, '.migrations', '2_x.sql'));
    await expectRefused(dir, /\.migrations\/2_x\.sql:1:1.*SQL syntax error: syntax error/);
  }, 120_000);

  it('a link that stays inside the checkout is read as the file it names', async () => {
    const dir = await checkout('inside-link', '.migrations');
    await mkdir(join(dir, 'sql'));
    await writeFile(join(dir, 'sql', 'shared.sql'), 'create table shared (id int);\n');
    await symlink(join(dir, 'sql', 'shared.sql'), join(dir, '.migrations', '2_shared.sql'));
    const validate = await runCli(['validate', dir], {});
    expectExit(validate, 0);
  }, 120_000);
});
