import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { AnyDocument, ManifestSet } from '../manifests/types.js';
import { walkTree } from '../manifests/walk-tree.js';

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

async function hashFile(path: string): Promise<string> {
  // Not blocking on a FIFO swapped in after the walk: reading it fails instead.
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const hash = createHash('sha256');
    for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

/**
 * Digests every regular file below `root`, listed by the loader's walker (dot-files and
 * dot-directories such as `.git` left out; a tree it cannot list whole throws). Kept in memory
 * between revisions: git-sync deletes the old worktree, so the previous tree cannot be read
 * again to compare.
 */
export async function fingerprintTree(root: string): Promise<TreeFingerprint> {
  const files: TreeFingerprint = new Map();
  const walked = await walkTree(root, { maxFiles: MAX_FILES });
  if (walked.truncated) throw new TreeTooLargeError(root);
  for (const file of walked.files) {
    if (file.stats.isFile()) files.set(file.path, await hashFile(file.absolute));
  }
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

function toRelative(root: string, path: string): string {
  return relative(root, path).split(sep).join('/');
}

function fileRefs(value: unknown, out: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) fileRefs(item, out);
  } else if (value && typeof value === 'object') {
    const from = (value as { valueFrom?: { file?: unknown } }).valueFrom;
    if (from && typeof from.file === 'string') out.push(from.file);
    for (const item of Object.values(value)) fileRefs(item, out);
  }
}

/** The files (and directory prefixes, ending in `/`) whose content a document's desired state depends on. */
function dependencies(document: AnyDocument, root: string): string[] {
  const dir = isAbsolute(document.source.dir) ? document.source.dir : resolve(root, document.source.dir);
  // A document a ProjectSet made depends on the set's file and on its element's values files.
  const paths = [document.source.file, ...(document.source.set?.files ?? [])];
  const refs: string[] = [];
  fileRefs(document.spec, refs);
  for (const ref of refs) paths.push(toRelative(root, resolve(dir, ref)));
  if (document.kind === 'Function') {
    paths.push(`${toRelative(root, resolve(dir, document.spec.source))}/`);
    if (document.spec.import_map) paths.push(toRelative(root, resolve(dir, document.spec.source, document.spec.import_map)));
  }
  return paths;
}

function projectOf(document: AnyDocument): string | undefined {
  // A Rollout orders every project: its change is a pass over everything.
  if (document.kind === 'Organization' || document.kind === 'Rollout') return undefined;
  if (document.kind === 'Project') return document.metadata.name;
  return document.spec.project;
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
 * lives in, or depends on (function sources, referenced secret files), changed. Organizations
 * and removed projects are not per-project work, so they ask for a pass over everything.
 */
export function projectChanges(before: SourceSnapshot, after: SourceSnapshot): ProjectChanges {
  const files = changedFiles(before.files, after.files);
  const projects = new Set<string>();
  let everything = false;
  const afterProjects = new Set(projectNames(after.set));
  for (const name of projectNames(before.set)) if (!afterProjects.has(name)) everything = true;
  for (const { set } of [before, after]) {
    for (const document of set.documents) {
      if (!dependencies(document, set.root).some((dep) => touches(files, dep))) continue;
      const project = projectOf(document);
      if (project === undefined) everything = true;
      else projects.add(project);
    }
  }
  return { everything, projects, files };
}
