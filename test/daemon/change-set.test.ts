import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fingerprintTree, projectChanges, type SourceSnapshot } from '../../src/daemon/change-set.js';
import type { AnyDocument, ManifestSet } from '../../src/manifests/types.js';

function doc(root: string, kind: AnyDocument['kind'], name: string, file: string, spec: Record<string, unknown>): AnyDocument {
  return { apiVersion: 'reconciler/v1', kind, metadata: { name }, spec, source: { file, line: 1, column: 1, dir: join(root, file, '..') } } as AnyDocument;
}

async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

describe('projectChanges', () => {
  let base: string;
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'reconciler-changes-'));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  async function snapshot(name: string, files: Record<string, string>, documents: (root: string) => AnyDocument[]): Promise<SourceSnapshot> {
    const root = join(base, name);
    await write(root, files);
    const set: ManifestSet = { root, documents: documents(root), errors: [] };
    return { set, files: await fingerprintTree(root) };
  }

  const layout = (root: string) => [
    doc(root, 'Organization', 'acme', 'orgs.yaml', {}),
    doc(root, 'Project', 'shop', 'shop/project.yaml', { organization: 'acme', region: 'eu' }),
    doc(root, 'Secrets', 'shop-secrets', 'shop/project.yaml', { project: 'shop', values: { KEY: { valueFrom: { file: '../keys/shop.key' } } } }),
    doc(root, 'Function', 'hello', 'shop/functions.yaml', { project: 'shop', source: 'functions/hello', entrypoint: 'index.ts' }),
    doc(root, 'Project', 'blog', 'blog/project.yaml', { organization: 'acme', region: 'eu' }),
  ];
  const files = {
    'orgs.yaml': 'orgs',
    'shop/project.yaml': 'shop',
    'shop/functions.yaml': 'fns',
    'shop/functions/hello/index.ts': 'export {}',
    'keys/shop.key': 'k1',
    'blog/project.yaml': 'blog',
    'README.md': 'readme',
  };

  it('maps a changed values file of a ProjectSet to the one project its element makes', async () => {
    const tenants = (root: string) => ['acme', 'globex'].map((tenant) => {
      const project = doc(root, 'Project', `${tenant}-prod`, 'tenants.yaml', { organization: 'acme', region: 'eu' });
      project.source.set = { set: 'tenants', key: tenant, element: `tenants/${tenant}.yaml:1`, files: [`tenants/${tenant}.yaml`] };
      return project;
    });
    const setFiles = { 'tenants.yaml': 'set', 'tenants/acme.yaml': 'tenant: acme', 'tenants/globex.yaml': 'tenant: globex' };
    const before = await snapshot('s1', setFiles, tenants);
    const after = await snapshot('s2', { ...setFiles, 'tenants/globex.yaml': 'tenant: globex\npool: 2' }, tenants);
    expect([...projectChanges(before, after).projects]).toEqual(['globex-prod']);
    const template = await snapshot('s3', { ...setFiles, 'tenants.yaml': 'set, changed' }, tenants);
    expect([...projectChanges(before, template).projects].sort()).toEqual(['acme-prod', 'globex-prod']);
  });

  it('maps a function source change to its project only', async () => {
    const before = await snapshot('r1', files, layout);
    const after = await snapshot('r2', { ...files, 'shop/functions/hello/index.ts': 'export const x = 1' }, layout);
    const changes = projectChanges(before, after);
    expect(changes.everything).toBe(false);
    expect([...changes.projects]).toEqual(['shop']);
  });

  it('maps a referenced secret file to the project that references it', async () => {
    const before = await snapshot('r1', files, layout);
    const after = await snapshot('r2', { ...files, 'keys/shop.key': 'k2' }, layout);
    expect([...projectChanges(before, after).projects]).toEqual(['shop']);
  });

  it('ignores files no document depends on', async () => {
    const before = await snapshot('r1', files, layout);
    const after = await snapshot('r2', { ...files, 'README.md': 'new readme' }, layout);
    const changes = projectChanges(before, after);
    expect(changes).toMatchObject({ everything: false });
    expect([...changes.projects]).toEqual([]);
    expect([...changes.files]).toEqual(['README.md']);
  });

  it('asks for everything when an organization changes or a project disappears', async () => {
    const before = await snapshot('r1', files, layout);
    const orgChanged = await snapshot('r2', { ...files, 'orgs.yaml': 'orgs v2' }, layout);
    expect(projectChanges(before, orgChanged).everything).toBe(true);
    const withoutBlog = (root: string) => layout(root).filter((d) => d.metadata.name !== 'blog');
    const { 'blog/project.yaml': _, ...rest } = files;
    const removed = await snapshot('r3', rest, withoutBlog);
    expect(projectChanges(before, removed).everything).toBe(true);
  });
});
