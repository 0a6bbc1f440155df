// Configuration sections through the BUILT command (`node dist/cli/bin.js`), as a user runs it,
// against an emulator started here: masked secrets and the root key rule end to end, and no
// secret in any output stream or state file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { authSecretDigest } from '../../src/reconcile/kinds/config/hmac-digest.js';
import { assertBuilt, filesBelow, runCli, transcript } from '../e2e/helpers/cli.js';

const CANARY_SMTP = 'canary-cmd-smtp-6a0f3e91';
const CANARY_DB = 'canary-cmd-db-2c7d51aa';
const ROOT_KEY = 'c0de5eed'.repeat(8);
const OTHER_KEY = '0ddba11d'.repeat(8);
const OUT_OF_BAND = 'canary-cmd-oob-9e13b7';

let emulator: RunningEmulator;
let api: ApiClient;
let root: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  root = await mkdtemp(join(tmpdir(), 'config-cmd-'));
  await mkdir(join(root, 'manifests'));
  await writeFile(
    join(root, 'manifests', 'fleet.yaml'),
    [
      'apiVersion: reconciler/v1',
      'kind: Organization',
      'metadata: {name: vault-org}',
      'spec: {}',
      '---',
      'apiVersion: reconciler/v1',
      'kind: Project',
      'metadata: {name: vault-app}',
      'spec:',
      '  organization: vault-org',
      '  region: eu-west-1',
      '  db_pass: {valueFrom: {env: CMD_DB_PASS}}',
      '  auth:',
      '    site_url: https://vault.example.com',
      '    smtp_host: smtp.vault.example.com',
      '    smtp_pass: {valueFrom: {env: CMD_SMTP_PASS}}',
      '  network_restrictions:',
      '    dbAllowedCidrs: [192.0.2.10/32, 10.20.0.0/16]',
      '  cryptoext:',
      '    root_key: {valueFrom: {env: CMD_ROOT_KEY}}',
      '',
    ].join('\n'),
  );
  env = {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: join(root, 'state'),
    RECONCILE_RATE_LIMIT: '1000/1s',
    CMD_DB_PASS: CANARY_DB,
    CMD_SMTP_PASS: CANARY_SMTP,
    CMD_ROOT_KEY: ROOT_KEY,
  };
});

afterAll(async () => {
  await api?.close();
  await emulator?.close();
  await rm(root, { recursive: true, force: true });
});

describe('config sections through the built command', () => {
  it('applies a new project with a root key and a masked secret, then plans no change', async () => {
    const dir = join(root, 'manifests');
    const run = await runCli([dir], env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('auth.smtp_pass: (sensitive value changed)');
    const ref = (await api.api.listAllProjects()).find((p) => p.name === 'vault-app')!.ref;
    expect((await api.api.getCryptoextConfig(ref)).root_key).toBe(ROOT_KEY);
    expect(((await api.api.getAuthServiceConfig(ref)) as unknown as Record<string, unknown>).smtp_pass).toBe(authSecretDigest(CANARY_SMTP, ref));

    const since = emulator.requests().length;
    const dry = await runCli([dir, '--dry-run', '--detailed-exitcode'], env);
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(dry.stdout).toContain('No changes.');
    const sent = emulator.requests().slice(since).filter((r) => !r.path.startsWith('/_emulator'));
    expect(sent.map((r) => r.route).sort()).toEqual(
      ['/v1/projects', '/v1/projects/{ref}/config/auth', '/v1/projects/{ref}/network-restrictions', '/v1/projects/{ref}/cryptoext'].sort(),
    );
  });

  it('shows a masked secret changed out of band as sensitive drift (exit 2) and repairs it', async () => {
    const dir = join(root, 'manifests');
    const ref = (await api.api.listAllProjects()).find((p) => p.name === 'vault-app')!.ref;
    await api.api.updateAuthServiceConfig(ref, { smtp_pass: OUT_OF_BAND });
    const dry = await runCli([dir, '--dry-run', '--detailed-exitcode'], env);
    expect(dry.code, dry.stdout + dry.stderr).toBe(2);
    expect(dry.stdout).toContain('~ auth.smtp_pass: (sensitive value changed)');
    expect(dry.stdout).not.toContain('site_url');

    const apply = await runCli([dir], env);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(((await api.api.getAuthServiceConfig(ref)) as unknown as Record<string, unknown>).smtp_pass).toBe(authSecretDigest(CANARY_SMTP, ref));
  });

  it('blocks a root key changed out of band until the manifest confirms, and never shows a key', async () => {
    const dir = join(root, 'manifests');
    const ref = (await api.api.listAllProjects()).find((p) => p.name === 'vault-app')!.ref;
    await api.api.updateCryptoextConfig(ref, { root_key: OTHER_KEY });
    const markdown = await runCli([dir, '--dry-run', '--output', 'markdown'], env);
    expect(markdown.stdout).toContain('ProjectCryptoext/vault-app/cryptoext');
    expect(markdown.stdout).toContain('confirm_root_key_change');
    const apply = await runCli([dir], env);
    expect(apply.code).toBe(1);
    expect((await api.api.getCryptoextConfig(ref)).root_key).toBe(OTHER_KEY);

    // The manifest confirms: applied, and in sync afterwards.
    await appendFile(join(dir, 'fleet.yaml'), '    confirm_root_key_change: "I understand encrypted data may become unreadable"\n');
    const confirmed = await runCli([dir], env);
    expect(confirmed.code, confirmed.stdout + confirmed.stderr).toBe(0);
    expect((await api.api.getCryptoextConfig(ref)).root_key).toBe(ROOT_KEY);
    expect((await runCli([dir, '--dry-run', '--detailed-exitcode'], env)).code).toBe(0);
  });

  it('leaves no secret in any output stream or state file', async () => {
    const files = await filesBelow(join(root, 'state'));
    expect(files.length).toBeGreaterThan(0);
    const everything = [...transcript, ...files.map((f) => f.text)].join('\n');
    for (const secret of [CANARY_SMTP, CANARY_DB, ROOT_KEY, OTHER_KEY, OUT_OF_BAND]) expect(everything).not.toContain(secret);
  });
});
