// docs/development.md, "Adding a sub-resource kind", says a new kind of a project is one module
// and its registry line. This registers a made-up sub-resource kind in memory (no file of the
// project changes): its module declares its document kind, schema and needed services, and the
// kind goes through validation, a plan and an apply against the emulator over real HTTP, with
// the schema generator, the types and the field reference picking it up.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { renderFieldReference } from '../../src/manifests/schema-docs.js';
import { buildSchemas, POLICY, PROJECT_REFERENCE, schemaFileOf } from '../../src/manifests/schema-source.js';
import { renderSchemaTypes } from '../../src/manifests/schema-typegen.js';
import type { AnyDocument, ManifestKind, ProjectDocument } from '../../src/manifests/types.js';
import { activeDocuments, projectDependency, refAtApply, sha256Hex, sourceOf } from '../../src/reconcile/kinds/common.js';
import { makeEntry } from '../../src/reconcile/diff.js';
import { servicesNeeded } from '../../src/reconcile/project-readiness.js';
import * as registry from '../../src/reconcile/registry.js';
import { CONFIG_SECTIONS, DOCUMENT_SCHEMAS, KIND_MODULES } from '../../src/reconcile/registry.js';
import * as resourceKinds from '../../src/reconcile/resource-kinds.js';
import type { KindModule, PassResult, PlanEntry, ResourceKind } from '../../src/reconcile/types.js';
import { silentLogger } from '../../src/util/logger.js';
import { REPO } from '../manifests/helpers.js';
import { ORG, project, runPassDriven, startHarness, type Harness } from '../reconcile/helpers/fleet.js';

/** A made-up document: a feature flag of a project, kept as the function secret `FLAG_<NAME>`. */
interface FlagDocument {
  kind: 'Flag';
  metadata: { name: string };
  spec: { project: string; value: 'on' | 'off' };
  source: AnyDocument['source'];
}

const FLAG = 'Flag' as ResourceKind;
const secretName = (flag: string) => `FLAG_${flag.toUpperCase().replace(/-/g, '_')}`;

/** The made-up kind's module: everything about it is here, as with the registry's kinds. */
const flagKind: KindModule = {
  kind: FLAG,
  document: {
    kind: 'Flag',
    description: 'A feature flag of a project.',
    defs: () => ({
      FlagSpec: {
        title: 'FlagSpec',
        description: 'A feature flag, on or off, that the project\'s functions read from their environment.',
        type: 'object',
        properties: { project: PROJECT_REFERENCE, value: { type: 'string', enum: ['on', 'off'], description: 'The flag\'s value.' }, policy: POLICY },
        required: ['project', 'value'],
        additionalProperties: false,
      },
    }),
  },
  // Functions read the flags: the project's REST service must be up before a flag is written.
  services: ['rest'],
  manages: (scope) => activeDocuments(scope, 'Flag' as ManifestKind).length > 0,
  async plan(scope, ctx) {
    const live = scope.ref === undefined ? [] : await ctx.api.listAllSecrets(scope.ref);
    return activeDocuments<AnyDocument>(scope, 'Flag' as ManifestKind).map((document) => {
      const flag = document as unknown as FlagDocument;
      const current = live.find((secret) => secret.name === secretName(flag.metadata.name));
      const base = { kind: FLAG, project: scope.name, name: flag.metadata.name, source: sourceOf(document), dependsOn: projectDependency(scope) };
      if (current?.value === sha256Hex(flag.spec.value)) return makeEntry({ ...base, changes: [] });
      return makeEntry({ ...base, action: current ? 'update' : 'create', changes: [{ path: 'value', after: flag.spec.value }] });
    });
  },
  async apply(entry, scope, ctx) {
    const document = activeDocuments<AnyDocument>(scope, 'Flag' as ManifestKind).find((d) => d.metadata.name === entry.name) as unknown as FlagDocument;
    await ctx.api.bulkCreateSecrets(refAtApply(scope, ctx), [{ name: secretName(entry.name), value: document.spec.value }], { priority: 'write' });
  },
};

const WITH_FLAG = [...KIND_MODULES, flagKind];
const openapi = JSON.parse(readFileSync(join(REPO, 'schemas/api/openapi.json'), 'utf8'));
const schemas = buildSchemas(openapi, CONFIG_SECTIONS, [...DOCUMENT_SCHEMAS, flagKind.document!]);
/** The kind as the loader takes it before `npm run generate:schemas` has written its schema. */
const IN_MEMORY = { Flag: schemas.Flag! };

const flagDocument = (name: string, projectName: string, value: string) => `apiVersion: reconciler/v1
kind: Flag
metadata:
  name: ${name}
spec:
  project: ${projectName}
  value: ${value}
`;

describe('the list in docs/development.md, "Adding a sub-resource kind"', () => {
  const text = readFileSync(join(REPO, 'docs/development.md'), 'utf8');
  const section = text.slice(text.indexOf('<!-- section:adding-a-kind -->'), text.indexOf('<!-- /section:adding-a-kind -->'));

  it('names files that exist, and the lists it says to extend', () => {
    expect(section.length).toBeGreaterThan(1000);
    const paths = [...section.matchAll(/`((?:src|test|schemas|docs)\/[^`<]+)`/g)].map((match) => match[1]!);
    expect(paths.length).toBeGreaterThan(5);
    expect(paths.filter((path) => !existsSync(join(REPO, path)))).toEqual([]);
    expect(section).toContain('`SUB_RESOURCES`');
    expect(Array.isArray(registry.SUB_RESOURCES)).toBe(true);
    expect(section).toContain('`RESOURCE_KINDS`');
    expect(Array.isArray(resourceKinds.RESOURCE_KINDS)).toBe(true);
  });

  it('names every member the made-up module declares', () => {
    for (const member of Object.keys(flagKind)) expect(section, member).toContain(`\`${member}\``);
  });
});

describe('a sub-resource kind registered in one place: its schema', () => {
  it('gets a schema file, generated types and a field reference page of its own', () => {
    expect(schemaFileOf('Flag')).toBe('flag.schema.json');
    expect(schemas.Flag).toMatchObject({ title: 'Flag', $id: 'https://fleet-reconciler.dev/schemas/flag.schema.json', properties: { kind: { const: 'Flag' } } });
    expect(renderSchemaTypes({ 'schemas/flag.schema.json': schemas.Flag! }, 'test')).toMatch(/export type FlagSpec = \{[^}]*value: "on" \| "off";/s);
    const reference = renderFieldReference(schemas, ['Flag']).get('flag.md')!;
    expect(reference).toContain('# Flag');
    expect(reference).toContain("The flag's value.");
  });

  it('adds its services to what a new project waits for, only when the project has a document of it', () => {
    const shop = { apiVersion: 'reconciler/v1', kind: 'Project', metadata: { name: 'shop' }, spec: { organization: 'acme', region: 'eu-west-1' } } as ProjectDocument;
    const flag = { kind: 'Flag', metadata: { name: 'beta' }, spec: { project: 'shop', value: 'on' } } as unknown as AnyDocument;
    expect(servicesNeeded(shop, [flag], WITH_FLAG).sort()).toEqual(['db', 'rest']);
    expect(servicesNeeded(shop, [], WITH_FLAG)).toEqual(['db']);
    expect(servicesNeeded(shop, [{ ...flag, spec: { project: 'blog', value: 'on' } } as AnyDocument], WITH_FLAG)).toEqual(['db']);
  });
});

describe('a sub-resource kind registered in one place: validate, plan and apply', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ DB_PASS: 'adding-a-kind-db-pass-91c0' });
  });
  afterEach(async () => {
    await h.close();
  });

  const pass = async (dryRun: boolean): Promise<PassResult> => {
    const manifests = await loadManifests(h.dir, { kinds: IN_MEMORY });
    expect(manifests.errors).toEqual([]);
    return runPassDriven(h.clock, {
      manifests, client: h.client, stateDir: h.stateDir, dryRun, env: h.env, log: silentLogger, clock: h.clock,
      wait: { initialDelayMs: 1000, maxDelayMs: 5000 }, kinds: WITH_FLAG,
    });
  };
  const flagEntries = (result: PassResult): PlanEntry[] => result.plan.entries.filter((entry) => entry.kind === FLAG);

  it('validates its documents against its schema, its project reference and its names, with file, line and field', async () => {
    await h.write({
      'fleet.yaml': ORG,
      'shop.yaml': project('shop'),
      'flags/bad-value.yaml': flagDocument('beta', 'shop', 'maybe'),
      'flags/unknown-project.yaml': flagDocument('gamma', 'shopp', 'on'),
      'flags/twice.yaml': `${flagDocument('delta', 'shop', 'on')}---\n${flagDocument('delta', 'shop', 'off')}`,
    });
    const errors = (await loadManifests(h.dir, { kinds: IN_MEMORY })).errors.map((e) => ({ file: e.file, line: e.line, path: e.path, message: e.message }));
    expect(errors).toEqual([
      { file: 'flags/bad-value.yaml', line: 7, path: '/spec/value', message: 'expected one of `on`, `off`, got the string `maybe`' },
      { file: 'flags/twice.yaml', line: 12, path: '/metadata/name', message: 'duplicate Flag `delta` in project `shop`: also defined at flags/twice.yaml:4:9' },
      { file: 'flags/unknown-project.yaml', line: 6, path: '/spec/project', message: 'unknown project `shopp`: no Project document has this name' },
    ]);
    // Without its registration the kind is unknown: nothing else of the project knows it.
    const unregistered = (await loadManifests(h.dir)).errors.filter((e) => e.path === '/kind');
    expect(unregistered.map((e) => e.message)).toContain('unknown kind `Flag`: expected one of Organization, Project, Secrets, Migrations, Function, SsoProvider, Branch, Rollout, ProjectSet');
  });

  it('plans and applies its documents with a new project, reads them back, and then has nothing to do', async () => {
    await h.write({ 'fleet.yaml': ORG, 'shop.yaml': project('shop'), 'flags/beta.yaml': flagDocument('beta', 'shop', 'on') });

    const planned = await pass(true);
    expect(flagEntries(planned)).toEqual([
      expect.objectContaining({ id: 'Flag/shop/beta', action: 'create', changes: [{ path: 'value', after: 'on' }], dependsOn: ['Project/shop'] }),
    ]);
    expect(planned.outcomes).toEqual([]);

    const applied = await pass(false);
    expect(applied.result).toBe('success');
    expect(applied.outcomes.filter((o) => o.entryId === 'Flag/shop/beta')).toEqual([expect.objectContaining({ action: 'create', result: 'success' })]);
    expect(applied.outcomes.find((o) => o.action === 'verify')).toMatchObject({ entryId: 'Project/shop#verify', result: 'success' });
    const ref = applied.projects.find((p) => p.name === 'shop')!.ref!;
    const secrets = await h.client.api.listAllSecrets(ref);
    expect(secrets.find((s) => s.name === 'FLAG_BETA')?.value).toBe(sha256Hex('on'));

    const steady = await pass(true);
    expect(steady.plan.hasChanges).toBe(false);
    expect(flagEntries(steady)).toEqual([expect.objectContaining({ id: 'Flag/shop/beta', action: 'noop' })]);

    await h.write({ 'flags/beta.yaml': flagDocument('beta', 'shop', 'off') });
    const changed = await pass(false);
    expect(flagEntries(changed)).toEqual([expect.objectContaining({ action: 'update', changes: [{ path: 'value', after: 'off' }] })]);
    expect((await h.client.api.listAllSecrets(ref)).find((s) => s.name === 'FLAG_BETA')?.value).toBe(sha256Hex('off'));
  });
});
