// The registry is the one table of managed kinds: Organization and Project are modules in it
// like every kind within a project, every kind a plan holds is declared by one of its
// modules, the schemas and the field reference cover its document kinds, and the kinds share
// one set of helpers and never know whether the pass is a dry run.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MANIFEST_KINDS } from '../../src/manifests/types.js';
import * as common from '../../src/reconcile/kinds/common.js';
import * as configErrors from '../../src/reconcile/kinds/config/errors.js';
import * as sectionPlan from '../../src/reconcile/kinds/config/section-plan.js';
import { CONFIG_SECTIONS, DOCUMENT_KINDS, FLEET_MODULES, KIND_MODULES, SUB_RESOURCES } from '../../src/reconcile/registry.js';
import type { ResourceKind } from '../../src/reconcile/types.js';
import { REPO } from '../manifests/helpers.js';
import { ORG, project, startHarness, type Harness } from './helpers/fleet.js';

const ENV = { DB_PASS: 'registry-db-pass-4e1a', SMTP_PASS: 'registry-smtp-pass-77c2', ROOT_KEY: 'ab12cd34'.repeat(8), API_SECRET: 'registry-api-secret-0b9d' };

const SHOP = project(
  'shop',
  `  paused: false
  prune:
    functions: true
    branches: true
  auth:
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

const OLD = project('old', `  policy:\n    deletion: delete\n`);

const SUB_RESOURCE_DOCUMENTS = [
  `apiVersion: reconciler/v1\nkind: Secrets\nmetadata:\n  name: shop-secrets\nspec:\n  project: shop\n  values:\n    API_SECRET:\n      valueFrom:\n        env: API_SECRET\n`,
  `apiVersion: reconciler/v1\nkind: Function\nmetadata:\n  name: hello\nspec:\n  project: shop\n  source: functions/hello\n  entrypoint: index.ts\n  verify_jwt: false\n`,
  `apiVersion: reconciler/v1\nkind: SsoProvider\nmetadata:\n  name: corp\nspec:\n  project: shop\n  type: saml\n  metadata_url: https://idp.example.com/metadata\n  domains: [example.com]\n`,
  `apiVersion: reconciler/v1\nkind: Branch\nmetadata:\n  name: dev\nspec:\n  project: shop\n  git_branch: develop\n`,
].join('---\n');

/** Every kind a registry module declares: what fleet-level modules produce, and each per-project module's kind. */
function declaredKinds(): Set<string> {
  return new Set<string>([...FLEET_MODULES.flatMap((module) => module.produces), ...KIND_MODULES.map((module) => module.kind)]);
}

async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map((entry) => (entry.isDirectory() ? filesBelow(join(dir, entry.name)) : Promise.resolve([join(dir, entry.name)]))));
  return nested.flat();
}

describe('the registry', () => {
  it('has Organization, then Project, as its fleet-level modules; Project produces its lifecycle', () => {
    expect(FLEET_MODULES.map((module) => module.kind)).toEqual(['Organization', 'Project']);
    expect(FLEET_MODULES.map((module) => [...module.produces])).toEqual([['Organization'], ['Project', 'ProjectLifecycle']]);
    expect(KIND_MODULES).toEqual([...CONFIG_SECTIONS, ...SUB_RESOURCES]);
    const kinds = [...FLEET_MODULES.flatMap((module) => module.produces), ...KIND_MODULES.map((module) => module.kind)];
    expect(new Set(kinds).size, 'no kind is declared by two modules').toBe(kinds.length);
    // The secrets module's kind is `Secret`: the union is computed from these literals.
    const secret: ResourceKind = SUB_RESOURCES[0].kind;
    expect(secret).toBe('Secret');
  });

  it('declares every manifest document kind once: the schemas and the field reference are generated for exactly these', () => {
    expect([...DOCUMENT_KINDS].sort()).toEqual([...MANIFEST_KINDS].sort());
    expect(DOCUMENT_KINDS).toEqual(['Organization', 'Project', 'Secrets', 'Function', 'SsoProvider', 'Branch']);
  });

  it('gives sections and sub-resources one set of helpers', () => {
    expect(Object.keys(sectionPlan)).not.toContain('isObserveOnly');
    expect(Object.keys(sectionPlan)).not.toContain('refForApply');
    expect(Object.keys(configErrors)).not.toContain('ProjectRefUnknownError');
    expect(typeof common.isObserveOnly).toBe('function');
    expect(typeof common.refAtApply).toBe('function');
    expect(typeof common.planPrune).toBe('function');
  });

  it('has no module that knows whether the pass is a dry run', async () => {
    const files = await filesBelow(join(REPO, 'src/reconcile/kinds'));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) expect(await readFile(file, 'utf8'), file).not.toContain('dryRun');
  });
});

describe('a full fleet plan', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness(ENV);
  });
  afterEach(async () => {
    await h.close();
  });

  it('holds only kinds a registry module declares, and every kind of the fleet, the lifecycle and the sub-resources', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': SHOP, 'old.yaml': OLD, 'others.yaml': SUB_RESOURCE_DOCUMENTS, 'functions/hello/index.ts': 'Deno.serve(() => new Response("hi"));\n' });
    const created = await h.pass();
    expect(created.result, JSON.stringify(created.outcomes)).toBe('success');

    // The next plan has a removal (old's manifest is gone), creations and updates of every kind.
    await h.remove('old.yaml');
    await h.write({ 'others.yaml': SUB_RESOURCE_DOCUMENTS.replace('git_branch: develop', 'git_branch: feature-x') });
    const planned = await h.pass({ dryRun: true });
    const declared = declaredKinds();
    const kinds = new Set(planned.plan.entries.map((entry) => entry.kind));
    for (const kind of kinds) expect(declared, kind).toContain(kind);
    for (const kind of ['Organization', 'Project', 'ProjectLifecycle', 'Secret', 'Function', 'SsoProvider', 'Branch', 'ProjectAuth', 'ProjectReadReplicas']) {
      expect(kinds, kind).toContain(kind);
    }
    const removal = planned.plan.entries.find((entry) => entry.id === 'Project/old');
    expect(removal?.action).toBe('delete');
    // The fleet-level entries come first, in registry order: organizations, projects, removals.
    expect(planned.plan.entries.slice(0, 3).map((entry) => entry.id)).toEqual(['Organization/acme', 'Project/shop', 'Project/old']);
  });
});
