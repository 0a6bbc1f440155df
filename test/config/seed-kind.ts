// A made-up kind whose documents read files of the checkout, like Migrations: a `Seed` names a
// directory and the projects it seeds; each file below the directory becomes the project secret
// `SEED_<FILE>`. Everything about the kind is in this module: its checks (every project it names
// exists, a directory is seeded by one document), its file facet (the files, read when the
// checkout is loaded: each is UTF-8 text), its metric (the files not written yet, by project) and
// its status fact (the files written of all), as Migrations declares its checks, its files, its
// metrics and the schema version.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { TreeWalkError } from '../../src/manifests/checkout-files.js';
import type { KindCheck, LoadRead } from '../../src/manifests/load-facets.js';
import { didYouMean } from '../../src/manifests/suggest.js';
import type { AnyDocument, ManifestError, ManifestKind } from '../../src/manifests/types.js';
import { POLICY } from '../../src/manifests/schema-source.js';
import { makeEntry } from '../../src/reconcile/diff.js';
import { projectDependency, refAtApply, sha256Hex, sourceOf } from '../../src/reconcile/kinds/common.js';
import type { KindModule, PassResult, PlanEntry, ProjectScope, ResourceKind } from '../../src/reconcile/types.js';

export interface SeedDocument {
  kind: 'Seed';
  metadata: { name: string };
  spec: { projects: string[]; directory: string };
  source: AnyDocument['source'];
}

export const SEED = 'Seed' as ResourceKind;
const secretName = (file: string) => `SEED_${file.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

/** The Seed documents (of all `documents`) that seed the project. */
function seedsOf(project: string, documents: readonly AnyDocument[]): SeedDocument[] {
  return documents.filter((d) => d.kind === ('Seed' as ManifestKind)).map((d) => d as unknown as SeedDocument).filter((d) => d.spec.projects.includes(project));
}

/** Each project a Seed names is a Project of the checkout; a directory is seeded by one Seed. */
const checkSeeds: KindCheck = (entries, check) => {
  for (const entry of entries) {
    const projects = Array.isArray(entry.spec.projects) ? entry.spec.projects : [];
    projects.forEach((project, index) => {
      if (typeof project === 'string' && !check.projectNames.has(project)) {
        check.error(entry, `/spec/projects/${index}`, `unknown project \`${project}\`: no Project document has this name`, didYouMean(project, check.projectNames));
      }
    });
    const directory = typeof entry.spec.directory === 'string' ? relative(check.root, resolve(entry.dir, entry.spec.directory)) : undefined;
    check.claim('seed-directory', directory, entry, '/spec/directory', (first) => `the directory \`${entry.spec.directory as string}\` is seeded twice: also by ${check.where(first, '/spec/directory')}`);
  }
};

const UTF8 = new TextDecoder('utf-8', { fatal: true });
/** The files each loaded Seed document read when its checkout was loaded: a pass writes those. */
const loaded = new WeakMap<object, Map<string, string>>();

function utf8(bytes: Uint8Array): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The files of a seed's directory, read through the checkout's walker when the checkout is loaded: each is UTF-8 text. */
const readSeedFiles: LoadRead = async (document, { checkout, at }) => {
  const seed = document as unknown as SeedDocument;
  const found = checkout.directory(seed.source.dir, seed.spec.directory);
  if ('problem' in found) return [{ ...at('/spec/directory'), message: `seed directory ${found.detail}` }];
  let entries;
  try {
    entries = await checkout.entries(found.absolute);
  } catch (error) {
    if (!(error instanceof TreeWalkError)) throw error;
    return [{ file: error.path, line: 1, column: 1, path: '', message: error.message }];
  }
  const files = new Map<string, string>();
  const errors: ManifestError[] = [];
  for (const entry of entries) {
    const read = checkout.read(entry.absolute, 1024 * 1024);
    const text = 'problem' in read ? undefined : utf8(read.bytes);
    if ('problem' in read) errors.push({ file: entry.path, line: 1, column: 1, path: '', message: `the file ${read.detail}` });
    else if (text === undefined) errors.push({ file: entry.path, line: 1, column: 1, path: '', message: 'a seed file is UTF-8 text: this one is not' });
    else files.set(entry.name, text);
  }
  if (errors.length === 0) loaded.set(document, files);
  return errors;
};

/** The files of a seed, by name, with their content: those read when it was loaded, else read now. */
async function seedFiles(seed: SeedDocument): Promise<Map<string, string>> {
  const read = loaded.get(seed);
  if (read) return read;
  const directory = resolve(seed.source.dir, seed.spec.directory);
  const files = new Map<string, string>();
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    if (entry.isFile()) files.set(entry.name, await readFile(join(directory, entry.name), 'utf8'));
  }
  return files;
}

/** The metric the kind declares. */
export const SEED_PENDING_METRIC = 'reconciler_seed_files_pending';

/** Each project's Seed files after a pass, and how many of them are not written (planned as a write the pass did not make). */
function seedCounts(result: PassResult): Map<string, { files: number; pending: number }> {
  const written = new Set(result.outcomes.filter((o) => o.result === 'success').map((o) => o.entryId));
  const counts = new Map<string, { files: number; pending: number }>();
  for (const entry of result.plan.entries) {
    if (entry.kind !== SEED || entry.project === undefined) continue;
    const count = counts.get(entry.project) ?? { files: 0, pending: 0 };
    count.files += 1;
    if (entry.action !== 'noop' && !written.has(entry.id)) count.pending += 1;
    counts.set(entry.project, count);
  }
  return counts;
}

export const seedKind: KindModule = {
  kind: SEED,
  document: {
    kind: 'Seed',
    description: 'Files a project is seeded with, one secret a file.',
    defs: () => ({
      SeedSpec: {
        title: 'SeedSpec',
        description: 'A directory of the checkout whose files become secrets of the projects named.',
        type: 'object',
        properties: {
          projects: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, description: 'metadata.name of each Project the files seed.' },
          directory: { type: 'string', minLength: 1, description: 'The directory, relative to the manifest file.' },
          policy: POLICY,
        },
        required: ['projects', 'directory'],
        additionalProperties: false,
      },
    }),
  },
  checks: checkSeeds,
  files: {
    readAt: 'load',
    read: readSeedFiles,
    reads: (document, root) => {
      const seed = document as unknown as SeedDocument;
      return [`${relative(root, resolve(root, seed.source.dir, seed.spec.directory)).split(sep).join('/')}/`];
    },
    affects: (document, documents) => {
      const declared = new Set(documents.filter((d) => d.kind === 'Project').map((d) => d.metadata.name));
      return (document as unknown as SeedDocument).spec.projects.filter((name) => declared.has(name));
    },
  },
  metrics: {
    definitions: { [SEED_PENDING_METRIC]: { type: 'gauge', labels: ['project'], help: 'Files of the Seed documents not yet written to the project.' } },
    record(result, projects, series) {
      for (const name of projects ?? result.projects.map((p) => p.name)) series.remove(SEED_PENDING_METRIC, { project: name });
      for (const [project, count] of seedCounts(result)) series.set(SEED_PENDING_METRIC, { project }, count.pending);
    },
  },
  status: {
    facts: (result) => new Map([...seedCounts(result)].map(([project, count]) => [project, { seededFiles: `${count.files - count.pending}/${count.files}` }])),
    fields: ['seededFiles'],
    table: { heading: 'Seeded files (Seed)', columns: ['WRITTEN'], row: (facts) => (facts.seededFiles === undefined ? undefined : [String(facts.seededFiles)]) },
    report: {
      field: 'seed',
      of: (entries: readonly PlanEntry[]) => (entries.length === 0 ? undefined : { files: entries.length, toWrite: entries.filter((e) => e.action !== 'noop').length }),
      lines: (value) => [`Seed: ${(value as { files: number }).files} files, ${(value as { toWrite: number }).toWrite} to write`],
    },
  },
  manages: (scope, ctx) => seedsOf(scope.name, ctx.documents).length > 0,
  async plan(scope: ProjectScope, ctx) {
    const live = scope.ref === undefined ? [] : await ctx.api.listAllSecrets(scope.ref);
    const entries = [];
    for (const seed of seedsOf(scope.name, ctx.documents)) {
      for (const [file, content] of await seedFiles(seed)) {
        const current = live.find((secret) => secret.name === secretName(file));
        const base = { kind: SEED, project: scope.name, name: `${seed.metadata.name}/${file}`, source: sourceOf(seed as unknown as AnyDocument), dependsOn: projectDependency(scope) };
        if (current?.value === sha256Hex(content)) entries.push(makeEntry({ ...base, changes: [] }));
        else entries.push(makeEntry({ ...base, action: current ? 'update' : 'create', changes: [{ path: 'content', after: sha256Hex(content) }] }));
      }
    }
    return entries;
  },
  async apply(entry, scope, ctx) {
    const [seedName, file] = entry.name.split('/') as [string, string];
    const seed = seedsOf(scope.name, ctx.documents).find((d) => d.metadata.name === seedName)!;
    const content = (await seedFiles(seed)).get(file);
    if (content === undefined) throw new Error(`Seed \`${seedName}\`: \`${file}\` is gone from \`${seed.spec.directory}\``);
    await ctx.api.bulkCreateSecrets(refAtApply(scope, ctx), [{ name: secretName(file), value: content }], { priority: 'write' });
  },
};
