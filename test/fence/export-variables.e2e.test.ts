// `reconcile export --all` names each project's secret variables uniquely: projects whose names
// differ only in punctuation (`shop-eu`, `shop_eu`) must not share a variable, or no setting of
// the variables could plan "no change" and an apply would write one project's secrets into the other.
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { variablePrefixes } from '../../src/reconcile/export.js';
import { assertBuilt, expectExit, runCli } from '../e2e/helpers/cli.js';

let emulator: RunningEmulator;
let root: string;
let env: NodeJS.ProcessEnv;

const VALUES = {
  'shop-eu': { STRIPE_KEY: 'stripe-of-shop-dash-3c1f', SMTP_PASS: 'smtp-of-shop-dash-77aa' },
  shop_eu: { STRIPE_KEY: 'stripe-of-shop-underscore-9b02', SMTP_PASS: 'smtp-of-shop-underscore-41d5' },
} as const;

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({
    port: 0,
    speed: 600,
    rateLimit: { limit: 100_000, windowMs: 60_000 },
    seed: {
      organizations: [{ name: 'Acme', slug: 'acmeslug' }],
      projects: Object.entries(VALUES).map(([name, secrets]) => ({ name, organization: 'acmeslug', region: 'eu-west-1', status: 'ACTIVE_HEALTHY' as const, secrets: { ...secrets } })),
    },
  });
  root = await mkdtemp(join(tmpdir(), 'export-vars-'));
  env = { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: join(root, 'state'), RECONCILE_RATE_LIMIT: '1000/1s' };
});
afterAll(async () => {
  await emulator?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** Every `valueFrom.env` of the exported Secrets documents: variable -> [project, secret]. */
async function secretVariables(dir: string): Promise<Map<string, Array<[string, string]>>> {
  const variables = new Map<string, Array<[string, string]>>();
  for (const file of await readdir(dir)) {
    if (!file.endsWith('.yaml')) continue;
    for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
      const value = doc.toJS() as { kind?: string; spec?: { project?: string; values?: Record<string, { valueFrom: { env: string } }> } };
      if (value?.kind !== 'Secrets') continue;
      for (const [secret, ref] of Object.entries(value.spec?.values ?? {})) {
        variables.set(ref.valueFrom.env, [...(variables.get(ref.valueFrom.env) ?? []), [value.spec!.project!, secret]]);
      }
    }
  }
  return variables;
}

describe('export --all of projects whose names differ only in punctuation', () => {
  it('gives each project variables of its own, and the round trip (export, set the variables, plan) plans no change', async () => {
    const out = join(root, 'exported');
    const exported = await runCli(['export', '--all', '--out', out], env);
    expectExit(exported, 0);
    const variables = await secretVariables(out);
    // Four secrets, four variables: none is shared.
    expect([...variables.values()].every((owners) => owners.length === 1)).toBe(true);
    expect(variables.size).toBe(4);
    // The suffix is deterministic: the first eight hex digits of the SHA-256 of the manifest name.
    const prefixes = variablePrefixes(['shop-eu', 'shop_eu']);
    expect(prefixes.get('shop-eu')).toBe('SHOP_EU_8C4E0485');
    expect(prefixes.get('shop_eu')).toBe('SHOP_EU_23C65277');
    expect(prefixes.get('shop-eu')).not.toBe(prefixes.get('shop_eu'));
    expect([...variables.keys()].sort()).toEqual(
      [`${prefixes.get('shop-eu')}_SMTP_PASS`, `${prefixes.get('shop-eu')}_STRIPE_KEY`, `${prefixes.get('shop_eu')}_SMTP_PASS`, `${prefixes.get('shop_eu')}_STRIPE_KEY`].sort(),
    );
    // A name without a twin keeps the plain prefix.
    expect(variablePrefixes(['shop-eu', 'blog']).get('shop-eu')).toBe('SHOP_EU');

    const values: NodeJS.ProcessEnv = {};
    for (const [variable, [[project, secret]]] of variables as Map<string, Array<[keyof typeof VALUES, 'STRIPE_KEY' | 'SMTP_PASS']>>) values[variable] = VALUES[project][secret];
    const plan = await runCli([out, '--dry-run', '--detailed-exitcode'], { ...env, ...values });
    expectExit(plan, 0);
    expect(plan.stdout).toContain('Plan: 0 to create, 0 to update, 0 to delete');
  }, 60_000);

  it('a variable that would still name two values (a project `shop` with a secret EU_STRIPE_KEY beside `shop-eu`\'s STRIPE_KEY) is an error naming both, and nothing is written', async () => {
    const clash = await startEmulator({
      port: 0,
      speed: 600,
      rateLimit: { limit: 100_000, windowMs: 60_000 },
      seed: {
        organizations: [{ name: 'Acme', slug: 'acmeslug' }],
        projects: [
          { name: 'shop', organization: 'acmeslug', region: 'eu-west-1', status: 'ACTIVE_HEALTHY', secrets: { EU_STRIPE_KEY: 'one' } },
          { name: 'shop-eu', organization: 'acmeslug', region: 'eu-west-1', status: 'ACTIVE_HEALTHY', secrets: { STRIPE_KEY: 'two' } },
        ],
      },
    });
    try {
      const out = join(root, 'clash');
      const run = await runCli(['export', '--all', '--out', out], { ...env, MANAGEMENT_API_URL: clash.url, MANAGEMENT_API_TOKEN: clash.token });
      expectExit(run, 1);
      expect(run.stderr).toContain('the secret variable SHOP_EU_STRIPE_KEY would name two different values (shop: secret EU_STRIPE_KEY and shop-eu: secret STRIPE_KEY)');
      expect(run.stderr).toContain('nothing was written');
      await expect(readdir(out)).rejects.toThrow();
    } finally {
      await clash.close();
    }
  }, 60_000);
});
