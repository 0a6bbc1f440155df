import type { ManifestSet } from '../manifests/types.js';
import { CheckoutFiles } from '../manifests/checkout-files.js';
import { documentDependencies, revisionInputs } from '../reconcile/document-files.js';

/** Content digests of every file of a checkout, by path relative to its root. */
export type TreeFingerprint = Map<string, string>;

/** Refuses to hash pathological trees; a pass over everything is then the safe answer. */
const MAX_FILES = 50_000;

class TreeTooLargeError extends Error {
  constructor(readonly root: string) {
    super(`More than ${MAX_FILES} files below ${root}`);
    this.name = 'TreeTooLargeError';
  }
}

/**
 * Digests every regular file below `root`, listed by the loader's walker (dot-files and
 * dot-directories such as `.git` left out; a tree it cannot list whole throws). Kept in memory
 * between revisions: git-sync deletes the old worktree, so the previous tree cannot be read
 * again to compare.
 */
export async function fingerprintTree(root: string): Promise<TreeFingerprint> {
  const checkout = CheckoutFiles.resolved(root);
  const files: TreeFingerprint = new Map();
  const walked = await checkout.walk(root, { maxFiles: MAX_FILES });
  if (walked.truncated) throw new TreeTooLargeError(root);
  for (const file of walked.files) {
    if (file.stats.isFile()) files.set(file.path, await checkout.hash(file.absolute, Number.MAX_SAFE_INTEGER, Number(file.stats.size)));
  }
  return files;
}

/**
 * The digests a revision is compared by: every file of the visible tree, and every file its
 * documents read as the checkout's walker recorded them (a migrations directory below a
 * dot-directory, `.migrations/`, included).
 */
export async function snapshotFiles(set: ManifestSet, root: string): Promise<TreeFingerprint> {
  const files = await fingerprintTree(root);
  for (const [path, digest] of await revisionInputs(set)) files.set(path, digest);
  return files;
}

/** Paths (relative to the root, `/`-separated) whose files changed, appeared or disappeared. */
function changedFiles(before: TreeFingerprint, after: TreeFingerprint): Set<string> {
  const changed = new Set<string>();
  for (const [path, digest] of after) if (before.get(path) !== digest) changed.add(path);
  for (const path of before.keys()) if (!after.has(path)) changed.add(path);
  return changed;
}

export interface SourceSnapshot {
  set: ManifestSet;
  files: TreeFingerprint;
}

interface ProjectChanges {
  /** True when the change reaches beyond single projects (organizations, removed projects): a pass over everything. */
  everything: boolean;
  /** Project manifest names whose desired state may have changed. */
  projects: Set<string>;
  /** Every changed file. */
  files: Set<string>;
}

function touches(changed: Set<string>, dependency: string): boolean {
  if (!dependency.endsWith('/')) return changed.has(dependency);
  for (const path of changed) if (path.startsWith(dependency)) return true;
  return false;
}

/** Project manifest names of a set. */
export function projectNames(set: ManifestSet): string[] {
  return set.documents.filter((d) => d.kind === 'Project').map((d) => d.metadata.name);
}

/**
 * Which projects a new revision changes: a project changes when a file that one of its documents
 * lives in, or reads (what its kind declares: migration files, function sources; referenced
 * secret files), changed. Which projects a document concerns is its kind's to say (the
 * registry's file facets, src/reconcile/document-files.ts): a Migrations document with a
 * selector concerns the projects it selects. Organizations, the Rollout and removed projects
 * are not per-project work, so they ask for a pass over everything.
 */
export function projectChanges(before: SourceSnapshot, after: SourceSnapshot): ProjectChanges {
  const files = changedFiles(before.files, after.files);
  const projects = new Set<string>();
  let everything = false;
  const afterProjects = new Set(projectNames(after.set));
  for (const name of projectNames(before.set)) if (!afterProjects.has(name)) everything = true;
  for (const { set } of [before, after]) {
    for (const document of set.documents) {
      const dependencies = documentDependencies(document, set);
      if (!dependencies.paths.some((dep) => touches(files, dep))) continue;
      if (dependencies.projects === 'all') everything = true;
      else for (const project of dependencies.projects) projects.add(project);
    }
  }
  return { everything, projects, files };
}
