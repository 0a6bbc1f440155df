// A kind is one module: a made-up kind whose documents read files of the checkout (seed-kind.ts,
// a file facet like Migrations'), with checks, a metric and a status fact of its own, is added
// with its module and one registry line, and nothing else. The registry line is the one mocked here
// (KIND_MODULES and SUB_RESOURCES with the kind appended); the daemon's change detection and the
// revision of a checkout without git then map a changed file of the kind to the projects the kind
// says, the daemon's metrics export its metric, the status record, the fleet view and `reconcile
// status` show its fact, the generated list of resource kinds names it, and loading a checkout runs
// its checks and reads its files (after the secret files are sealed), through the registry alone.
import { mkdtemp, rm, mkdir, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('../../src/reconcile/registry.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/reconcile/registry.js')>();
  const { seedKind } = await import('./seed-kind.js');
  return { ...original, SUB_RESOURCES: [...original.SUB_RESOURCES, seedKind], KIND_MODULES: [...original.KIND_MODULES, seedKind] };
});

import { projectChanges, snapshotFiles, type SourceSnapshot } from '../../src/daemon/change-set.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { buildSchemas } from '../../src/manifests/schema-source.js';
import { documentDependencies, revisionOfSet } from '../../src/reconcile/document-files.js';
import { CONFIG_SECTIONS, DOCUMENT_SCHEMAS, KIND_MODULES } from '../../src/reconcile/registry.js';
import { REPO } from '../manifests/helpers.js';
import { SEED_PENDING_METRIC, seedKind } from './seed-kind.js';
import { sha256Hex } from '../../src/reconcile/kinds/common.js';
import { createProject, projectDoc, runKinds, scope, startHarness, type KindsPass } from '../kinds/harness.js';
import { METRIC_DEFINITIONS, createMetrics } from '../../src/daemon/metrics.js';
import { emptyStatusRecord, foldPass } from '../../src/status/status-record.js';
import { buildFleetView } from '../../src/status/fleet-view.js';
import { renderFleetViewText } from '../../src/status/fleet-view-text.js';
import { buildStatusReport, renderStatusJson, renderStatusText } from '../../src/reconcile/kinds/status-report.js';
import { summarizePlan } from '../../src/reconcile/summary.js';
import { renderResourceKinds } from '../../src/tools/generate-schemas.js';
import type { PassResult } from '../../src/reconcile/types.js';

const openapi = JSON.parse(readFileSync(join(REPO, 'schemas/api/openapi.json'), 'utf8'));
/** The kind as the loader takes it before `npm run generate:schemas` has written its schema. */
const IN_MEMORY = { Seed: buildSchemas(openapi, CONFIG_SECTIONS, [...DOCUMENT_SCHEMAS, seedKind.document!]).Seed! };

const ORG = 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n';
const project = (name: string) => `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: ${name}\nspec:\n  organization: acme\n  region: eu-west-1\n`;
const SEED = `apiVersion: reconciler/v1
kind: Seed
metadata:
  name: fixtures
spec:
  projects: [shop, blog]
  directory: ../data/fixtures
`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kind-with-files-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

async function snapshot(): Promise<SourceSnapshot> {
  const set = await loadManifests(dir, { kinds: IN_MEMORY });
  expect(set.errors).toEqual([]);
  return { set, files: await snapshotFiles(set, dir) };
}

describe('a kind with files, added as its module and one registry line', () => {
  beforeEach(async () => {
    await write({
      'fleet.yaml': ORG,
      'projects/shop.yaml': project('shop'),
      'projects/blog.yaml': project('blog'),
      'projects/docs.yaml': project('docs'),
      'seeds/fixtures.yaml': SEED,
      'data/fixtures/users.csv': 'id,name\n1,ada\n',
      'data/other.csv': 'unrelated\n',
    });
  });

  it('is in the registry the rest of the code reads', () => {
    expect(KIND_MODULES).toContain(seedKind);
  });

  it('says which files a document reads and which projects they affect, through the registry', async () => {
    const { set } = await snapshot();
    const seed = set.documents.find((d) => d.kind === ('Seed' as never))!;
    expect(documentDependencies(seed, set)).toEqual({ paths: ['seeds/fixtures.yaml', 'data/fixtures/'], projects: ['shop', 'blog'] });
  });

  it('maps a changed, added or removed file of the kind to the projects the kind names, and no other', async () => {
    const before = await snapshot();
    await write({ 'data/fixtures/users.csv': 'id,name\n1,ada\n2,grace\n' });
    const changed = projectChanges(before, await snapshot());
    expect(changed).toEqual({ everything: false, projects: new Set(['shop', 'blog']), files: new Set(['data/fixtures/users.csv']) });

    const beforeAdd = await snapshot();
    await write({ 'data/fixtures/orders.csv': 'id\n' });
    expect(projectChanges(beforeAdd, await snapshot()).projects).toEqual(new Set(['shop', 'blog']));

    const beforeRemove = await snapshot();
    await rm(join(dir, 'data/fixtures/orders.csv'));
    expect(projectChanges(beforeRemove, await snapshot())).toEqual({ everything: false, projects: new Set(['shop', 'blog']), files: new Set(['data/fixtures/orders.csv']) });

    // A file beside the directory is read by no document: no project changes.
    const beforeOther = await snapshot();
    await write({ 'data/other.csv': 'still unrelated\n' });
    expect(projectChanges(beforeOther, await snapshot())).toEqual({ everything: false, projects: new Set(), files: new Set(['data/other.csv']) });
  });

  it('follows the document: naming another project moves the change to it', async () => {
    await write({ 'seeds/fixtures.yaml': SEED.replace('[shop, blog]', '[docs]') });
    const before = await snapshot();
    await write({ 'data/fixtures/users.csv': 'id,name\n' });
    expect(projectChanges(before, await snapshot()).projects).toEqual(new Set(['docs']));
  });

  it('makes a changed file a new revision of a checkout without git', async () => {
    const first = await revisionOfSet(await loadManifests(dir, { kinds: IN_MEMORY }));
    await write({ 'data/other.csv': 'read by nothing\n' });
    expect(await revisionOfSet(await loadManifests(dir, { kinds: IN_MEMORY }))).toBe(first);
    await write({ 'data/fixtures/users.csv': 'id,name\n9,zed\n' });
    expect(await revisionOfSet(await loadManifests(dir, { kinds: IN_MEMORY }))).not.toBe(first);
  });
});

describe('a kind\'s checks and the files it reads at load time, through the registry line alone', () => {
  beforeEach(async () => {
    await write({
      'fleet.yaml': ORG,
      'projects/shop.yaml': project('shop'),
      'projects/blog.yaml': project('blog'),
      'data/fixtures/users.csv': 'id,name\n1,ada\n',
    });
  });

  const errorsOf = async () => (await loadManifests(dir, { kinds: IN_MEMORY })).errors;

  it('locates a project the document names that no Project document declares', async () => {
    await write({ 'seeds/fixtures.yaml': SEED.replace('[shop, blog]', '[shop, blg]') });
    expect(await errorsOf()).toEqual([
      { file: 'seeds/fixtures.yaml', line: 6, column: 20, path: '/spec/projects/1', message: 'unknown project `blg`: no Project document has this name', hint: 'did you mean `blog`?' },
    ]);
  });

  it('locates a second document that claims the same directory, naming the first', async () => {
    await write({ 'seeds/fixtures.yaml': SEED, 'seeds/again.yaml': SEED.replace('name: fixtures', 'name: again').replace('../data/fixtures', '../data/fixtures/') });
    expect(await errorsOf()).toEqual([
      { file: 'seeds/fixtures.yaml', line: 7, column: 14, path: '/spec/directory', message: 'the directory `../data/fixtures` is seeded twice: also by seeds/again.yaml:7:14' },
    ]);
  });

  it('locates a directory that does not exist at the field that names it', async () => {
    await write({ 'seeds/fixtures.yaml': SEED.replace('../data/fixtures', '../data/missing') });
    expect(await errorsOf()).toEqual([
      { file: 'seeds/fixtures.yaml', line: 7, column: 14, path: '/spec/directory', message: 'seed directory `../data/missing` does not exist' },
    ]);
  });

  it('names a file of the directory that is not valid, and reads the others through the checkout', async () => {
    await write({ 'seeds/fixtures.yaml': SEED });
    await writeFile(join(dir, 'data/fixtures/broken.csv'), Buffer.from([0x69, 0x64, 0x0a, 0xff, 0xfe]));
    expect(await errorsOf()).toEqual([{ file: 'data/fixtures/broken.csv', line: 1, column: 1, path: '', message: 'a seed file is UTF-8 text: this one is not' }]);
    await rm(join(dir, 'data/fixtures/broken.csv'));
    const set = await loadManifests(dir, { kinds: IN_MEMORY });
    expect(set.errors).toEqual([]);
    // Read at load time: the loader recorded the file for the revision.
    expect([...(set.inputs?.keys() ?? [])]).toContain('data/fixtures/users.csv');
  });

  it('reads no file a secret reference names as a seed file', async () => {
    await write({
      'seeds/fixtures.yaml': SEED,
      'secrets/shop.yaml': 'apiVersion: reconciler/v1\nkind: Secrets\nmetadata:\n  name: shop-secrets\nspec:\n  project: shop\n  values:\n    TOKEN:\n      valueFrom:\n        file: ../data/fixtures/users.csv\n',
    });
    const errors = await errorsOf();
    expect(errors).toEqual([
      { file: 'data/fixtures/users.csv', line: 1, column: 1, path: '', message: 'the file is the secret file secrets/shop.yaml names (valueFrom.file): a secret is read only as a secret reference' },
    ]);
    expect(JSON.stringify(errors)).not.toContain('ada');
  });
});

describe('a kind with files, through the real plan and apply steps', () => {
  it('plans one entry a file, applies them in registry order, and then has nothing to do', async () => {
    const h = await startHarness();
    try {
      await mkdir(join(h.root, 'data'), { recursive: true });
      await writeFile(join(h.root, 'data', 'users.csv'), 'id,name\n1,ada\n');
      const ref = await createProject(h, 'shop');
      const shop = projectDoc('shop', ref, h.root);
      const seed = { apiVersion: 'reconciler/v1', kind: 'Seed', metadata: { name: 'fixtures' }, spec: { projects: ['shop'], directory: 'data' }, source: { file: 'seed.yaml', line: 1, column: 1, dir: h.root } } as never;
      const first = await runKinds(h, [scope(shop, [seed])], { dryRun: false });
      expect(first.entries.filter((e) => e.kind === seedKind.kind)).toEqual([expect.objectContaining({ id: 'Seed/shop/fixtures/users.csv', action: 'create' })]);
      expect(first.outcomes).toEqual([expect.objectContaining({ entryId: 'Seed/shop/fixtures/users.csv', result: 'success' })]);
      expect(first.steps).toEqual([expect.objectContaining({ entryId: 'Project/shop#verify', result: 'success' })]);
      expect((await h.api.listAllSecrets(ref)).find((s) => s.name === 'SEED_USERS_CSV')?.value).toBe(sha256Hex('id,name\n1,ada\n'));
      const steady = await runKinds(h, [scope(shop, [seed])], { dryRun: true });
      expect(steady.entries.map((e) => e.action)).toEqual(['noop']);
    } finally {
      await h.close();
    }
  });

  it('writes the files its revision read when the checkout was loaded, not a later state of them', async () => {
    const h = await startHarness();
    try {
      const ref = await createProject(h, 'shop');
      const checkout = join(h.root, 'checkout');
      await mkdir(join(checkout, 'data'), { recursive: true });
      await writeFile(join(checkout, 'fleet.yaml'), ORG);
      await writeFile(join(checkout, 'shop.yaml'), project('shop'));
      await writeFile(join(checkout, 'seed.yaml'), SEED.replace('[shop, blog]', '[shop]').replace('../data/fixtures', 'data'));
      await writeFile(join(checkout, 'data', 'users.csv'), 'id,name\n1,ada\n');
      const set = await loadManifests(checkout, { kinds: IN_MEMORY });
      expect(set.errors).toEqual([]);
      const seed = set.documents.find((d) => d.kind === ('Seed' as never))!;
      await writeFile(join(checkout, 'data', 'users.csv'), 'id,name\n1,ada\n2,grace\n');
      const applied = await runKinds(h, [scope(projectDoc('shop', ref, checkout), [seed])], { dryRun: false });
      expect(applied.outcomes).toEqual([expect.objectContaining({ entryId: 'Seed/shop/fixtures/users.csv', result: 'success' })]);
      expect((await h.api.listAllSecrets(ref)).find((s) => s.name === 'SEED_USERS_CSV')?.value).toBe(sha256Hex('id,name\n1,ada\n'));
    } finally {
      await h.close();
    }
  });
});

/** A pass of one project made of the kinds' own plan and apply (the engine's steps). */
function passOf(run: KindsPass, project: { name: string; ref: string }, dryRun: boolean, at: number): PassResult {
  return {
    startedAt: at,
    finishedAt: at,
    dryRun,
    manifestErrors: [],
    plan: summarizePlan(run.entries),
    outcomes: run.outcomes,
    resources: [],
    projects: [{ name: project.name, ref: project.ref, status: 'ACTIVE_HEALTHY', observedAt: at }],
    result: 'success',
    requests: 0,
  };
}

describe('a kind with a metric and a status fact, added as its module and one registry line', () => {
  it('is in the list of resource kinds `npm run generate:schemas` writes, after the registry\'s others', () => {
    expect(renderResourceKinds()).toContain("  'Branch',\n  'Seed',\n] as const;\n");
  });

  it('exports its metric, keeps and shows its fact, from the plan and apply of the kind itself', async () => {
    const h = await startHarness();
    try {
      await mkdir(join(h.root, 'data'), { recursive: true });
      await writeFile(join(h.root, 'data', 'users.csv'), 'id,name\n1,ada\n');
      await writeFile(join(h.root, 'data', 'orders.csv'), 'id\n');
      const ref = await createProject(h, 'shop');
      const shop = projectDoc('shop', ref, h.root);
      const seed = { apiVersion: 'reconciler/v1', kind: 'Seed', metadata: { name: 'fixtures' }, spec: { projects: ['shop'], directory: 'data' }, source: { file: 'seed.yaml', line: 1, column: 1, dir: h.root } } as never;
      const metrics = createMetrics(undefined, { processMetrics: false });
      const T = Date.UTC(2026, 0, 1);

      // A dry run: both files planned, none written.
      const planned = passOf(await runKinds(h, [scope(shop, [seed])], { dryRun: true }), { name: 'shop', ref }, true, T);
      expect(METRIC_DEFINITIONS).toHaveProperty(SEED_PENDING_METRIC, seedKind.metrics!.definitions[SEED_PENDING_METRIC]);
      metrics.recordPass(planned);
      const text = await metrics.render();
      expect(text).toContain(`# HELP ${SEED_PENDING_METRIC} Files of the Seed documents not yet written to the project.\n# TYPE ${SEED_PENDING_METRIC} gauge\n${SEED_PENDING_METRIC}{project="shop"} 2\n`);
      const report = buildStatusReport(planned, new Map(), T);
      expect(JSON.parse(renderStatusJson(report)).projects[0].seed).toEqual({ files: 2, toWrite: 2 });
      expect(renderStatusText(report, { color: false })).toContain('\n  Seed: 2 files, 2 to write\n');
      let record = foldPass(emptyStatusRecord(), planned, {}, T);
      expect(record.projects.shop!.seededFiles).toBe('0/2');

      // The apply writes both: nothing pending, every file written, in the record and the view.
      const applied = passOf(await runKinds(h, [scope(shop, [seed])], { dryRun: false }), { name: 'shop', ref }, false, T + 1000);
      metrics.recordPass(applied);
      expect(await metrics.render()).toContain(`${SEED_PENDING_METRIC}{project="shop"} 0\n`);
      record = foldPass(record, applied, {}, T + 1000);
      expect(JSON.parse(JSON.stringify(record)).projects.shop.seededFiles).toBe('2/2');
      const view = buildFleetView(record, { now: T + 2000, source: 'state-dir' });
      expect(view.projects[0]).toMatchObject({ name: 'shop', seededFiles: '2/2' });
      expect(renderFleetViewText(view, { color: false, from: 'the state directory' })).toMatch(/\n\nSeeded files \(Seed\)\n {2}PROJECT +WRITTEN\n {2}shop +2\/2\n/);
    } finally {
      await h.close();
    }
  });
});
