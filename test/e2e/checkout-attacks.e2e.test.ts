// Hostile checkouts through the built command against the emulator: what a migration file holds
// (NUL bytes, bytes that are not UTF-8) and what it links to (the secret file of a document
// that fails its schema). `validate` and a pass both refuse each one with an error naming the
// file, quote nothing of what a link names, and send no request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, expectCheckoutRefused, type CliRun } from './helpers/cli.js';

const CANARY = 'canaryvalue7f3e21';

let emulator: RunningEmulator;
let root: string;
let env: NodeJS.ProcessEnv;

const FLEET = (projectExtra = '') => `apiVersion: reconciler/v1
kind: Organization
metadata: { name: acme }
spec: {}
---
apiVersion: reconciler/v1
kind: Project
metadata: { name: shop }
spec:
  organization: acme
  region: eu-west-1
  db_pass: { valueFrom: { env: E2E_DB_PASS } }
  auth:
    smtp_pass: { valueFrom: { file: secrets/smtp } }${projectExtra}
---
apiVersion: reconciler/v1
kind: Migrations
metadata: { name: shop-schema }
spec: { project: shop, path: migrations }
`;

let made = 0;
/** A fresh checkout: the fleet, one good migration file, and a secret file holding `secret`. */
async function checkout(name: string, secret: string, projectExtra = ''): Promise<string> {
  const dir = join(root, `${name}-${++made}`);
  await mkdir(join(dir, 'migrations'), { recursive: true });
  await mkdir(join(dir, 'secrets'), { recursive: true });
  await writeFile(join(dir, 'fleet.yaml'), FLEET(projectExtra));
  await writeFile(join(dir, 'secrets', 'smtp'), secret);
  await writeFile(join(dir, 'migrations', '1_items.sql'), 'create table items (id int);\n');
  return dir;
}

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  root = await mkdtemp(join(tmpdir(), 'reconcile-checkout-attacks-'));
  env = { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: join(root, 'state'), E2E_DB_PASS: 'e2e-database-password-77aa' };
}, 60_000);

afterAll(async () => {
  await emulator?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** validate and a pass both refuse the checkout with `expected`, never print the canary or a stack trace, and send no request. */
function expectRefused(dir: string, expected: RegExp): Promise<CliRun[]> {
  return expectCheckoutRefused(dir, expected, { env, requests: () => emulator.requests(), never: [CANARY, /\n\s+at .+\.js:\d+/] });
}

describe('what a migration file holds', () => {
  it('a migration file with NUL bytes is refused as binary, at the file', async () => {
    const dir = await checkout('binary', 'smtp-password\n');
    await writeFile(join(dir, 'migrations', '2_blob.sql'), Buffer.from('create table blob (id int);\0\u0001\u0002 drop table items;\n', 'latin1'));
    await expectRefused(dir, /migrations\/2_blob\.sql:1:1.*is a binary file \(it contains NUL bytes\), not SQL/);
  }, 120_000);

  it('a migration file that is not UTF-8 is refused at the file, never applied with replaced characters', async () => {
    const dir = await checkout('latin1', 'smtp-password\n');
    // `café` in Latin-1: one byte 0xE9, which is no UTF-8.
    await writeFile(join(dir, 'migrations', '2_names.sql'), Buffer.from("create table names (n text default 'caf\u00e9');\n", 'latin1'));
    await expectRefused(dir, /migrations\/2_names\.sql:1:1.*is not valid UTF-8 text/);
  }, 120_000);
});

describe('what a migration file is named', () => {
  it('a migration file whose name holds a bidirectional control is refused, never shown reordered in a plan', async () => {
    const dir = await checkout('bidi-name', 'smtp-password\n');
    // Shown as `2_abctxt.sql` by a terminal, the override reversing what follows it.
    await writeFile(join(dir, 'migrations', '2_abc\u202elqs.txt.sql'), 'create table z (id int);\n');
    const runs = await expectRefused(dir, /migrations\/2_abc\?lqs\.txt\.sql:1:1.*a migration file name holds a control character: rename it/);
    for (const run of runs) expect(run.stdout + run.stderr).not.toContain('\u202e');
  }, 120_000);
});

describe('what a migration file links to', () => {
  it('a migration file that links to the secret file of a document failing its schema is refused, and the secret never printed', async () => {
    // Postgres's message for this text names the dotted name unquoted: read as SQL, it would be printed.
    const dir = await checkout('invalid-owner', `select * from a.b.c.${CANARY}\n`, '\n  unknown_field: 1');
    await symlink(join(dir, 'secrets', 'smtp'), join(dir, 'migrations', '2_x.sql'));
    const runs = await expectRefused(dir, /migrations\/2_x\.sql:1:1.*is the secret file fleet\.yaml names \(valueFrom\.file\)/);
    for (const run of runs) expect(run.stdout + run.stderr).toMatch(/fleet\.yaml:\d+:\d+ \/spec\/unknown_field: unknown field/);
  }, 120_000);

  it('a migration file that links to another file of the checkout is reported without the names Postgres quotes unquoted', async () => {
    const dir = await checkout('env-link', 'smtp-password\n');
    await writeFile(join(dir, '.env'), `create type a.b.c.${CANARY} as (x int);\n`);
    await symlink(join(dir, '.env'), join(dir, 'migrations', '2_x.sql'));
    await expectRefused(dir, /migrations\/2_x\.sql:1:\d+.*SQL syntax error: improper qualified name \(too many dotted names\)/);
  }, 120_000);

  it('a manifest file that links to the secret file of a document failing its schema is refused, and the secret never printed', async () => {
    const dir = await checkout('invalid-owner-yaml', `kind: ${CANARY}\n`, '\n  unknown_field: 1');
    await symlink(join(dir, 'secrets', 'smtp'), join(dir, 'leak.yaml'));
    await expectRefused(dir, /leak\.yaml:1:1.*is the secret file fleet\.yaml names \(valueFrom\.file\)/);
  }, 120_000);
});

describe('what a values file of a ProjectSet links to', () => {
  const SET = `apiVersion: reconciler/v1
kind: Organization
metadata: { name: acme }
spec: {}
---
apiVersion: reconciler/v1
kind: ProjectSet
metadata: { name: tenants }
spec:
  generators:
    - values: { path: tenants }
  template:
    metadata: { name: "\${tenant}-prod" }
    spec:
      organization: acme
      region: eu-west-1
      db_pass: { valueFrom: { file: "secrets/\${tenant}" } }
`;

  it("a values file that links to a tenant's secret file, in a set that fails, is refused and the secret never printed", async () => {
    const dir = join(root, `values-link-${++made}`);
    await mkdir(join(dir, 'tenants'), { recursive: true });
    await mkdir(join(dir, 'secrets'), { recursive: true });
    await writeFile(join(dir, 'fleet.yaml'), SET);
    await writeFile(join(dir, 'tenants', 'a.yaml'), 'tenant: a\n');
    // The secret parses as a values mapping whose key is invalid: the set fails, and its error would quote the key.
    await writeFile(join(dir, 'secrets', 'a'), `tenant: b\nkey: "not a key ${CANARY}"\n`);
    await symlink(join(dir, 'secrets', 'a'), join(dir, 'tenants', 'b.yaml'));
    await expectRefused(dir, /tenants\/b\.yaml:1:1.*is the secret file fleet\.yaml names \(valueFrom\.file\)/);
  }, 120_000);
});

describe('a document that passed its schema and breaks its check', () => {
  it('a Rollout window whose schedule makes the cron reader throw is a located error, not a crash', async () => {
    const dir = await checkout('rollout-schedule', 'smtp-password\n');
    await writeFile(join(dir, 'rollout.yaml'), `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: fleet }
spec:
  windows:
    - name: nights
      schedule: '0-99999999999 * * * *'
      duration: 3h
      selector: { labels: { tier: a } }
`);
    await expectRefused(dir, /rollout\.yaml:7:\d+ \/spec\/windows\/0\/schedule: not a cron expression/);
  }, 120_000);
});
