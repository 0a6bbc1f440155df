// The manifests tree is what the reconciler reads and deploys (manifests, function sources):
// a credential that lands there can be deployed as a function's file or committed. So the
// credential files (token file, refresh token file, notification and trigger secrets) are
// refused when they resolve inside it, and the one write primitive (state-fence.ts) refuses
// any write there, except below a dot-file or dot-directory (the state directory's default,
// `.reconcile`), which discovery and function sources leave out.
import { realpathSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep, isAbsolute } from 'node:path';

/**
 * The real path of `path`, symbolic links resolved; for a path that does not exist yet (a
 * refresh token file before its first write), the real path of its nearest existing ancestor
 * followed by the rest.
 */
export function realPathOf(path: string): string {
  let current = resolve(path);
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(current), ...rest.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return resolve(path);
      rest.push(basename(current));
      current = parent;
    }
  }
}

/** True when `path` resolves (symbolic links included) inside the tree at `root`. */
export function resolvesInside(root: string, path: string): boolean {
  const rel = relative(realPathOf(root), realPathOf(path));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The reason a credential file is refused, or undefined when it lies outside the manifests tree. */
export function credentialInsideTree(root: string, path: string): string | undefined {
  if (!resolvesInside(root, path)) return undefined;
  return `resolves inside the manifests tree (${realPathOf(path)}): a credential there can be deployed with a function or committed; keep it outside ${realPathOf(root)}`;
}

const protectedTrees = new Set<string>();

/** From now on, this process writes nothing inside `root` (dot-files and dot-directories aside). */
export function protectManifestsTree(root: string): void {
  protectedTrees.add(realPathOf(root));
}

export class ManifestsTreeWriteError extends Error {
  constructor(readonly path: string, readonly root: string) {
    super(`refusing to write ${path}: it lies inside the manifests tree ${root}, which the reconciler only reads`);
    this.name = 'ManifestsTreeWriteError';
  }
}

/** Throws ManifestsTreeWriteError when `path` lies in a protected manifests tree outside any dot-directory. */
export function assertOutsideManifests(path: string): void {
  if (protectedTrees.size === 0) return;
  const target = realPathOf(path);
  for (const root of protectedTrees) {
    const rel = relative(root, target);
    if (rel.startsWith('..') || isAbsolute(rel)) continue;
    if (rel !== '' && rel.split(sep).some((segment) => segment.startsWith('.'))) continue;
    throw new ManifestsTreeWriteError(path, root);
  }
}
