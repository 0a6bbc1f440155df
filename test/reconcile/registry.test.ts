// The registry is the one table of managed kinds: Organization and Project are modules in it
// like every kind within a project (they build their own export documents and record their own
// inventory), every kind a plan holds is declared by one of its modules, the schemas and the
// field reference cover its document kinds, and the kinds share one set of helpers and never
// know whether the pass is a dry run.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OrganizationResponseV1, V1ProjectWithDatabaseResponse } from '../../src/api/types.js';
import type { ManagementApi } from '../../src/api/endpoints.js';
import { MANIFEST_KINDS, type OrganizationDocument, type ProjectDocument } from '../../src/manifests/types.js';
import type { IntentLog } from '../../src/reconcile/intents.js';
import type { Inventory } from '../../src/reconcile/inventory.js';
import type { FleetObservation } from '../../src/reconcile/observe.js';
import { organizationUnit } from '../../src/reconcile/kinds/organization.js';
import { projectUnit } from '../../src/reconcile/kinds/project.js';
import * as common from '../../src/reconcile/kinds/common.js';
import * as configErrors from '../../src/reconcile/kinds/config/errors.js';
import * as sectionPlan from '../../src/reconcile/kinds/config/section-plan.js';
import { CONFIG_SECTIONS, DOCUMENT_KINDS, FLEET_MODULES, KIND_MODULES, SUB_RESOURCES } from '../../src/reconcile/registry.js';
import type { FleetApplyContext, FleetExportContext, FleetExportDocument } from '../../src/reconcile/fleet.js';
import type { Logger, ResourceKind } from '../../src/reconcile/types.js';
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
    expect(DOCUMENT_KINDS).toEqual(['Organization', 'Project', 'Secrets', 'Migrations', 'Function', 'SsoProvider', 'Branch', 'Rollout', 'ProjectSet']);
  });

  it('gives sections and sub-resources one set of helpers', () => {
    expect(Object.keys(sectionPlan)).not.toContain('isObserveOnly');
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

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function liveProject(ref: string, name: string, organization: string, status: string): V1ProjectWithDatabaseResponse {
  return {
    id: ref, ref, name, organization_id: organization, organization_slug: organization, region: 'us-east-1', created_at: '2026-01-01T00:00:00Z', status,
    database: { host: `db.${ref}.example.com`, version: '15.8', postgres_engine: '15', release_channel: 'ga' },
  };
}

/** Every document the fleet-level modules export, in registry order, through one context. */
async function fleetExport(context: FleetExportContext): Promise<FleetExportDocument[]> {
  const out: FleetExportDocument[] = [];
  for (const module of FLEET_MODULES) for await (const item of module.exportDocuments(context)) out.push(item);
  return out;
}

describe('the fleet-level modules', () => {
  it('build the Organization and Project documents of an export and record the inventory: export.ts and the engine walk them', async () => {
    for (const module of FLEET_MODULES) {
      expect(typeof module.exportDocuments, module.kind).toBe('function');
      expect(typeof module.record, module.kind).toBe('function');
    }
    const exporter = await readFile(join(REPO, 'src/reconcile/export.ts'), 'utf8');
    expect(exporter).not.toMatch(/kind: '(Organization|Project)'/);
    expect(exporter).not.toContain('API_VERSION');
    expect(exporter).toContain('FLEET_MODULES');
    const engine = await readFile(join(REPO, 'src/reconcile/engine.ts'), 'utf8');
    expect(engine).not.toMatch(/inventory\.(organizations|projects)\[/);
    expect(engine).not.toMatch(/intents\.clear(Organization|Project)/);
    expect(engine).toContain('module.record(');
  });

  it('export the organizations in use (two of one name told apart by slug), then each project, without a read for one that is paused or not running', async () => {
    const sectionReads: string[] = [];
    const context: FleetExportContext = {
      // A paused or starting project's configuration is never read: any request fails the test.
      api: {} as ManagementApi,
      projects: [liveProject('aaaa', 'shop', 'org-a', 'INACTIVE'), liveProject('bbbb', 'blog', 'org-b', 'COMING_UP'), liveProject('cccc', 'lost', 'org-hidden', 'ACTIVE_HEALTHY')],
      organizations: [
        { id: 'org-a', slug: 'org-a', name: 'acme' },
        { id: 'org-b', slug: 'org-b', name: 'acme' },
        { id: 'org-c', slug: 'org-c', name: 'unused' },
      ] as OrganizationResponseV1[],
      projectNames: new Map([['aaaa', 'shop'], ['bbbb', 'blog'], ['cccc', 'lost']]),
      organizationNames: new Map(),
      sections: CONFIG_SECTIONS,
      sectionContexts: (_project, name) => (section) => {
        sectionReads.push(`${name}/${section}`);
        throw new Error('no section is read');
      },
      log: silent,
    };
    const items = await fleetExport(context);
    expect(items).toEqual([
      { document: { apiVersion: 'reconciler/v1', kind: 'Organization', metadata: { name: 'acme-org-a' }, spec: { slug: 'org-a' } } },
      { document: { apiVersion: 'reconciler/v1', kind: 'Organization', metadata: { name: 'acme-org-b' }, spec: { slug: 'org-b' } } },
      {
        document: { apiVersion: 'reconciler/v1', kind: 'Project', metadata: { name: 'shop' }, spec: { organization: 'acme-org-a', ref: 'aaaa', region: 'us-east-1', paused: true } },
        project: { ref: 'aaaa', name: 'shop', status: 'INACTIVE', state: 'paused' },
      },
      {
        document: { apiVersion: 'reconciler/v1', kind: 'Project', metadata: { name: 'blog' }, spec: { organization: 'acme-org-b', ref: 'bbbb', region: 'us-east-1' } },
        project: { ref: 'bbbb', name: 'blog', status: 'COMING_UP', state: 'unreadable' },
      },
    ]);
    expect(context.organizationNames).toEqual(new Map([['org-a', 'acme-org-a'], ['org-b', 'acme-org-b']]));
    expect(sectionReads).toEqual([]);
  });

  it('record confirmed organizations, the projects found or created, and drop the records of vanished and orphaned projects', async () => {
    const source = { file: 'fleet.yaml', line: 1 };
    const orgDocument = (name: string): OrganizationDocument => ({ apiVersion: 'reconciler/v1', kind: 'Organization', metadata: { name }, spec: {}, source }) as OrganizationDocument;
    const projectDocument = (name: string): ProjectDocument =>
      ({ apiVersion: 'reconciler/v1', kind: 'Project', metadata: { name }, spec: { organization: 'acme', region: 'us-east-1' }, source }) as ProjectDocument;
    const inventory: Inventory = {
      version: 1,
      updatedAt: 0,
      organizations: {},
      projects: {
        shop: { ref: 'aaaa', name: 'shop', organization: 'acme', organizationId: 'org-a', deletion: 'orphan', management: 'full', file: 'old.yaml', origin: 'created', since: 5 },
        gone: { ref: 'dddd', name: 'gone', organization: 'acme', organizationId: 'org-a', deletion: 'delete', management: 'full', file: 'gone.yaml', origin: 'adopted', since: 5 },
        orphaned: { ref: 'eeee', name: 'orphaned', organization: 'acme', organizationId: 'org-a', deletion: 'orphan', management: 'full', file: 'o.yaml', origin: 'adopted', since: 5 },
      },
      resources: [],
    };
    const acme = organizationUnit(orgDocument('acme'), inventory);
    acme.id = 'org-a';
    acme.confirmed = true;
    const other = organizationUnit(orgDocument('other'), inventory);
    const shop = projectUnit(projectDocument('shop'));
    shop.live = liveProject('aaaa', 'shop', 'org-a', 'ACTIVE_HEALTHY');
    shop.foundBy = 'inventory';
    const blog = projectUnit(projectDocument('blog'));
    blog.live = liveProject('bbbb', 'blog', 'org-a', 'ACTIVE_HEALTHY');
    blog.foundBy = 'name';
    const fleet = {
      organizations: [acme, other],
      projects: [shop, blog],
      removals: [{ name: 'orphaned', live: liveProject('eeee', 'orphaned', 'org-a', 'ACTIVE_HEALTHY'), entry: { id: 'Project/orphaned', kind: 'Project', name: 'orphaned', action: 'noop', changes: [] } }],
      vanished: ['gone'],
    } as unknown as FleetObservation;
    const cleared: string[] = [];
    const intents = {
      clearOrganization: async (name: string) => void cleared.push(`Organization/${name}`),
      clearProject: async (name: string) => void cleared.push(`Project/${name}`),
    } as unknown as IntentLog;
    const context = { fleet, inventory, intents, projectRefs: new Map([['shop', 'aaaa'], ['blog', 'bbbb']]) } as unknown as FleetApplyContext;
    for (const module of FLEET_MODULES) await module.record(context, 100);

    expect(inventory.organizations).toEqual({ acme: { id: 'org-a', name: 'acme' } });
    expect(inventory.projects).toEqual({
      // The labels of the manifest the record was written from (none here), for the rollout's selectors.
      shop: { ref: 'aaaa', name: 'shop', organization: 'acme', organizationId: 'org-a', deletion: 'orphan', management: 'full', file: 'fleet.yaml', labels: {}, origin: 'created', since: 5 },
      blog: { ref: 'bbbb', name: 'blog', organization: 'acme', organizationId: 'org-a', deletion: 'orphan', management: 'full', file: 'fleet.yaml', labels: {}, origin: 'adopted', since: 100 },
    });
    // Only a project found by name (or by its creation intent) had an intent to clear.
    expect(cleared).toEqual(['Organization/acme', 'Project/blog']);
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
