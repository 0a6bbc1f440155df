// A revision is its documents and every file they read, with git or without: the walker records
// the manifests and migration files the loader reads, the revision of a checkout without git
// hashes them and the function sources a pass reads, and the daemon's change detection asks the
// kinds (the registry's file facets) which projects a changed file concerns.
import { readFileSync } from 'node:fs';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { projectChanges, snapshotFiles } from '../../src/daemon/change-set.js';
import { documentDependencies, revisionOfSet } from '../../src/reconcile/document-files.js';
import { KIND_MODULES } from '../../src/reconcile/registry.js';

const FLEET = `apiVersion: reconciler/v1
kind: Organization
metadata: { name: acme }
spec: {}
---
apiVersion: reconciler/v1
kind: Project
metadata: { name: t1, labels: { tier: tenant } }
spec: { organization: acme, region: eu-west-1 }
---
apiVersion: reconciler/v1
kind: Project
metadata: { name: t2, labels: { tier: tenant } }
spec: { organization: acme, region: eu-west-1 }
---
apiVersion: reconciler/v1
kind: Project
metadata: { name: internal, labels: { tier: internal } }
spec: { organization: acme, region: eu-west-1 }
---
apiVersion: reconciler/v1
kind: Migrations
metadata: { name: tenant-schema }
spec:
  selector: { labels: { tier: tenant } }
  path: .migrations
---
apiVersion: reconciler/v1
kind: Function
metadata: { name: hello }
spec: { project: internal, source: functions/hello, entrypoint: index.ts }
`;

let base: string;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'document-files-'));
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function tree(name: string, files: Record<string, string>): Promise<string> {
  const root = join(base, name);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return root;
}

const FILES = {
  'fleet.yaml': FLEET,
  '.migrations/1_items.sql': 'create table items (id int);\n',
  'functions/hello/index.ts': 'export default 1;\n',
};

async function loaded(name: string, files: Record<string, string>) {
  const set = await loadManifests(await tree(name, files));
  expect(set.errors).toEqual([]);
  return set;
}

describe('the revision of a checkout without git', () => {
  it('records every file the loader read, a migrations directory below a dot-directory included', async () => {
    const set = await loaded('r1', FILES);
    expect(set.revision).toBeUndefined();
    expect([...set.inputs!.keys()]).toEqual(['.migrations/1_items.sql', 'fleet.yaml']);
  });

  it('is the same for the same files, and changes with a new migration file or a changed function source', async () => {
    const one = await revisionOfSet(await loaded('a', FILES));
    expect(await revisionOfSet(await loaded('b', FILES))).toBe(one);
    const migration = await revisionOfSet(await loaded('c', { ...FILES, '.migrations/2_orders.sql': 'create table orders (id int);\n' }));
    const source = await revisionOfSet(await loaded('d', { ...FILES, 'functions/hello/index.ts': 'export default 2;\n' }));
    expect(one).toMatch(/^content-[0-9a-f]{12}$/);
    expect(new Set([one, migration, source]).size).toBe(3);
  });

  it('a link out of the checkout in a function source makes no digest of the outside file', async () => {
    const outside = await tree('outside', { 'token': 'sbp_secret\n' });
    const root = await tree('linked', FILES);
    await symlink(join(outside, 'token'), join(root, 'functions/hello/token.ts'));
    const set = await loadManifests(root);
    // The loader refuses it (discovery walks every directory): nothing is planned from such a tree.
    expect(set.errors.map((error) => error.message).join('\n')).toMatch(/functions\/hello\/token\.ts.*leaves/);
  });
});

describe('which projects a change concerns (the kinds say)', () => {
  it('a Migrations document with a selector concerns the projects it selects', async () => {
    const set = await loaded('deps', FILES);
    const migrations = set.documents.find((document) => document.kind === 'Migrations')!;
    expect(documentDependencies(migrations, set)).toEqual({ paths: ['fleet.yaml', '.migrations/'], projects: ['t1', 't2'] });
    const fn = set.documents.find((document) => document.kind === 'Function')!;
    expect(documentDependencies(fn, set)).toEqual({ paths: ['fleet.yaml', 'functions/hello/'], projects: ['internal'] });
  });

  it('a commit that only adds a migration file changes the projects its document selects, and no other', async () => {
    const before = await loaded('before', FILES);
    const after = await loaded('after', { ...FILES, '.migrations/2_orders.sql': 'create table orders (id int);\n' });
    const changes = projectChanges(
      { set: before, files: await snapshotFiles(before, before.root) },
      { set: after, files: await snapshotFiles(after, after.root) },
    );
    expect(changes.everything).toBe(false);
    expect([...changes.projects].sort()).toEqual(['t1', 't2']);
    expect([...changes.files]).toEqual(['.migrations/2_orders.sql']);
  });
});

describe('the change detection asks the kinds', () => {
  it('names no kind with files itself: the kinds that read files declare them in their module', () => {
    const withFiles = KIND_MODULES.filter((module) => 'files' in module && module.files !== undefined).map((module) => module.document?.kind);
    expect(withFiles.sort()).toEqual(['Function', 'Migrations']);
    for (const file of ['../../src/daemon/change-set.ts', '../../src/reconcile/document-files.ts', '../../src/daemon/controller.ts']) {
      const text = readFileSync(new URL(file, import.meta.url), 'utf8');
      for (const kind of withFiles) expect(text, `${file} names ${kind}`).not.toMatch(new RegExp(`'${kind}'`));
    }
  });
});
