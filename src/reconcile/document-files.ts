// What each document of a revision reads of the checkout and which projects a change to it
// concerns, asked of the registry's kinds (KindModule.files), never decided here by kind name.
// Two users: the daemon's change detection (which projects a new revision changes) and the
// revision of a checkout without git (its documents and every file they read).
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CheckoutFiles, CheckoutReadError, TreeWalkError } from '../manifests/checkout-files.js';
import type { AnyDocument, ManifestSet } from '../manifests/types.js';
import { KIND_MODULES } from './registry.js';
import { contentRevision } from './rollout/gate.js';
import type { KindFiles } from './types.js';

/** The file facet of each document kind that declares one. */
const FILES_BY_DOCUMENT: ReadonlyMap<string, KindFiles> = new Map(
  KIND_MODULES.flatMap((module): Array<[string, KindFiles]> => {
    const files = (module as { files?: KindFiles }).files;
    return module.document && files ? [[module.document.kind, files]] : [];
  }),
);

/** What a document's desired state depends on, and whom a change to it concerns. */
export interface DocumentDependencies {
  /** Paths relative to the checkout's root, `/`-separated; one ending in `/` stands for everything below it. */
  paths: string[];
  /** Project manifest names, or `all`: a document of the fleet (an Organization, the Rollout) orders every project. */
  projects: string[] | 'all';
}

function toRelative(root: string, path: string): string {
  return relative(root, path).split(sep).join('/');
}

/** Files named by `valueFrom.file` (a secret's file: read under the reference rules, refs.ts). */
function fileRefs(value: unknown, out: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) fileRefs(item, out);
  } else if (value && typeof value === 'object') {
    const from = (value as { valueFrom?: { file?: unknown } }).valueFrom;
    if (from && typeof from.file === 'string') out.push(from.file);
    for (const item of Object.values(value)) fileRefs(item, out);
  }
}

/** The projects a document concerns when its kind declares no file facet. */
function defaultProjects(document: AnyDocument): string[] | 'all' {
  if (document.kind === 'Project') return [document.metadata.name];
  const project = (document.spec as { project?: unknown }).project;
  return typeof project === 'string' ? [project] : 'all';
}

/** What `document` (of `set`) reads, and the projects a change to it or to those files concerns. */
export function documentDependencies(document: AnyDocument, set: Pick<ManifestSet, 'root' | 'documents'>): DocumentDependencies {
  const root = set.root;
  const dir = isAbsolute(document.source.dir) ? document.source.dir : resolve(root, document.source.dir);
  // A document a ProjectSet made depends on the set's file and on its element's values files.
  const paths = [document.source.file, ...(document.source.set?.files ?? [])];
  const refs: string[] = [];
  fileRefs(document.spec, refs);
  for (const ref of refs) paths.push(toRelative(root, resolve(dir, ref)));
  const facet = FILES_BY_DOCUMENT.get(document.kind);
  if (facet) paths.push(...facet.reads(document, root));
  return { paths, projects: facet ? facet.affects(document, set.documents) : defaultProjects(document) };
}

/** Largest file hashed for the revision (a function's whole sources are capped at 20 MiB). */
const MAX_HASHED_BYTES = 20 * 1024 * 1024;

const inputsOf = new WeakMap<ManifestSet, Promise<ReadonlyMap<string, string>>>();

/**
 * Every file the set's documents read, with its digest: what the loader recorded (manifests,
 * migration files), and the files a pass reads (function sources), hashed now through the
 * checkout's walker. A file or directory that cannot be read counts by the reason it cannot.
 */
export function revisionInputs(set: ManifestSet): Promise<ReadonlyMap<string, string>> {
  let inputs = inputsOf.get(set);
  if (!inputs) {
    inputs = readPassInputs(set);
    inputsOf.set(set, inputs);
  }
  return inputs;
}

async function readPassInputs(set: ManifestSet): Promise<ReadonlyMap<string, string>> {
  const checkout = CheckoutFiles.resolved(set.root);
  const problems = new Map<string, string>();
  const directories = new Set<string>();
  for (const document of set.documents) {
    const facet = FILES_BY_DOCUMENT.get(document.kind);
    if (facet?.readAt !== 'pass') continue;
    for (const path of facet.reads(document, set.root)) if (path.endsWith('/')) directories.add(path);
  }
  for (const path of [...directories].sort()) {
    try {
      const walked = await checkout.walk(join(set.root, path));
      for (const file of walked.files) {
        if (!file.stats.isFile()) {
          problems.set(checkout.relative(file.absolute), 'not-regular');
          continue;
        }
        await checkout.hash(file.absolute, MAX_HASHED_BYTES, Number(file.stats.size)).catch((error: unknown) => {
          if (!(error instanceof CheckoutReadError)) throw error;
          problems.set(checkout.relative(file.absolute), error.problem);
        });
      }
    } catch (error) {
      if (!(error instanceof TreeWalkError)) throw error;
      problems.set(path, error.problem);
    }
  }
  return new Map([...(set.inputs ?? []), ...checkout.inputs(), ...[...problems].map(([path, problem]): [string, string] => [path, `unreadable:${problem}`])]);
}

/**
 * The revision of a set: its commit, or for a checkout without git a digest of its documents
 * and every file they read (a new migration file or a changed function source is a new revision).
 */
export async function revisionOfSet(set: ManifestSet): Promise<string> {
  return set.revision ?? contentRevision(set.documents, await revisionInputs(set));
}
