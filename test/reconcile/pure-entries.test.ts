// Plan entries are plain data: each kind applies an entry from the entry itself, the project's
// documents and the context. Entries that went through JSON (as a saved plan's do) drive the
// same writes, in the same order, as the entries the plan returned, and hold no secret.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KIND_MODULES } from '../../src/reconcile/registry.js';
import type { KindModule, PassResult, PlanEntry } from '../../src/reconcile/types.js';
import { ORG, project, startHarness, type Harness } from './helpers/fleet.js';

const ENV = {
  DB_PASS: 'pure-entries-db-pass-51c0',
  SMTP_PASS: 'canary-smtp-pass-7d1e',
  ROOT_KEY: 'c0ffee00'.repeat(8),
  API_SECRET: 'canary-api-secret-92ab',
  WEBHOOK_SECRET: 'canary-webhook-secret-3f70',
};

const SHOP = project(
  'shop',
  `  auth:
    saml_enabled: true
    site_url: https://shop.example.com
    smtp_pass:
      valueFrom:
        env: SMTP_PASS
  storage:
    features:
      s3Protocol:
        enabled: false
  network_restrictions:
    dbAllowedCidrs: [10.0.0.0/8]
  cryptoext:
    root_key:
      valueFrom:
        env: ROOT_KEY
  read_replicas:
    - read_replica_region: us-west-1
`,
);

function secrets(names: string[]): string {
  const values = names.map((name) => `    ${name}:\n      valueFrom:\n        env: ${name}\n`).join('');
  return `apiVersion: reconciler/v1\nkind: Secrets\nmetadata:\n  name: shop-secrets\nspec:\n  project: shop\n  prune: true\n  values:\n${values}`;
}

function others(gitBranch: string, domain: string): string {
  return [
    `apiVersion: reconciler/v1\nkind: Function\nmetadata:\n  name: hello\nspec:\n  project: shop\n  source: functions/hello\n  entrypoint: index.ts\n  verify_jwt: false\n`,
    `apiVersion: reconciler/v1\nkind: SsoProvider\nmetadata:\n  name: corp\nspec:\n  project: shop\n  type: saml\n  metadata_url: https://idp.example.com/metadata\n  domains: [${domain}]\n`,
    `apiVersion: reconciler/v1\nkind: Branch\nmetadata:\n  name: dev\nspec:\n  project: shop\n  git_branch: ${gitBranch}\n`,
  ].join('---\n');
}

/** The registry's modules, each handing the engine its entries after a JSON round trip (recorded). */
function roundTripping(seen: string[]): KindModule[] {
  return KIND_MODULES.map((module) => ({
    ...module,
    async plan(scope, ctx) {
      const text = JSON.stringify(await module.plan(scope, ctx));
      seen.push(text);
      return JSON.parse(text) as PlanEntry[];
    },
  }));
}

/**
 * Three passes: create everything (a new project, planned before it exists); change a branch,
 * an SSO provider and the secrets (updates of live ids and a pruning delete); then a dry run.
 * Returns the writes each pass sent (method and route) and the results.
 */
async function scenario(h: Harness, kinds: readonly KindModule[]): Promise<{ writes: string[][]; results: PassResult[] }> {
  const writes: string[][] = [];
  const results: PassResult[] = [];
  const run = async (dryRun: boolean) => {
    const mark = h.emulator.requests().length;
    results.push(await h.pass({ kinds, dryRun }));
    writes.push(h.emulator.requests().slice(mark).filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.route}`));
  };
  await h.write({
    'org.yaml': ORG,
    'shop.yaml': SHOP,
    'secrets.yaml': secrets(['API_SECRET', 'WEBHOOK_SECRET']),
    'others.yaml': others('develop', 'example.com'),
    'functions/hello/index.ts': 'Deno.serve(() => new Response("hi"));\n',
  });
  await run(false);
  await h.write({ 'secrets.yaml': secrets(['API_SECRET']), 'others.yaml': others('feature-x', 'example.com, example.org') });
  await run(false);
  await run(true);
  return { writes, results };
}

let direct: Harness;
let saved: Harness;
beforeEach(async () => {
  direct = await startHarness(ENV);
  saved = await startHarness(ENV);
});
afterEach(async () => {
  await direct.close();
  await saved.close();
});

describe('plan entries are data', () => {
  it('entries that went through JSON apply the same writes in the same order, converge, and hold no secret', async () => {
    const seen: string[] = [];
    const expected = await scenario(direct, KIND_MODULES);
    const actual = await scenario(saved, roundTripping(seen));

    for (const result of [...expected.results, ...actual.results]) expect(result.result, JSON.stringify(result.outcomes)).toBe('success');
    expect(actual.writes).toEqual(expected.writes);
    // The scenario wrote through every kind: creations, then updates of live ids and a delete.
    expect(actual.writes[0]).toEqual([
      'POST /v1/organizations',
      'POST /v1/projects',
      'PATCH /v1/projects/{ref}/config/auth',
      'PATCH /v1/projects/{ref}/config/storage',
      'POST /v1/projects/{ref}/network-restrictions/apply',
      'PUT /v1/projects/{ref}/cryptoext',
      'POST /v1/projects/{ref}/read-replicas/setup',
      'POST /v1/projects/{ref}/secrets',
      'POST /v1/projects/{ref}/functions/deploy',
      'POST /v1/projects/{ref}/config/auth/sso/providers',
      'POST /v1/projects/{ref}/branches',
    ]);
    expect(actual.writes[1]).toEqual(['DELETE /v1/projects/{ref}/secrets', 'PUT /v1/projects/{ref}/config/auth/sso/providers/{provider_id}', 'PATCH /v1/branches/{branch_id}']);
    expect(actual.writes[2]).toEqual([]);
    expect(actual.results[2]!.plan.hasChanges).toBe(false);

    const planned = seen.join('\n');
    for (const [name, value] of Object.entries(ENV)) expect(planned, name).not.toContain(value);
  });
});
